package files

import (
	"strings"
	"testing"
	"time"
)

func TestParseOptions(t *testing.T) {
	tests := []struct {
		name    string
		opts    map[string]string
		check   func(o Options) bool
		wantErr string
	}{
		{name: "defaults", opts: map[string]string{"path": "/d"}, check: func(o Options) bool {
			return o.Mode == Permissive && o.CorruptColumn == "_corrupt_record" && o.MaxFileAge == 7*24*time.Hour && o.Sep == ',' && o.CleanSource == CleanOff
		}},
		{name: "keys ignore case", opts: map[string]string{"PATH": "/d", "MaxFilesPerTrigger": "3", "latestfirst": "true", "mode": "dropmalformed"}, check: func(o Options) bool {
			return o.Path == "/d" && o.MaxFilesPerTrigger == 3 && o.LatestFirst && o.Mode == DropMalformed
		}},
		{name: "maxFileAge in days", opts: map[string]string{"path": "/d", "maxFileAge": "2d"}, check: func(o Options) bool { return o.MaxFileAge == 48*time.Hour }},
		{name: "maxFileAge go duration", opts: map[string]string{"path": "/d", "maxFileAge": "90m"}, check: func(o Options) bool { return o.MaxFileAge == 90*time.Minute }},
		{name: "separator", opts: map[string]string{"path": "/d", "sep": ";"}, check: func(o Options) bool { return o.Sep == ';' }},
		{name: "archive", opts: map[string]string{"path": "/d", "cleanSource": "ARCHIVE", "sourceArchiveDir": "/a"}, check: func(o Options) bool { return o.CleanSource == CleanArchive }},
		{name: "no path", opts: map[string]string{}, wantErr: "option path is required"},
		{name: "bad maxFilesPerTrigger", opts: map[string]string{"path": "/d", "maxFilesPerTrigger": "0"}, wantErr: "maxFilesPerTrigger"},
		{name: "bad maxBytesPerTrigger", opts: map[string]string{"path": "/d", "maxBytesPerTrigger": "x"}, wantErr: "maxBytesPerTrigger"},
		{name: "bad latestFirst", opts: map[string]string{"path": "/d", "latestFirst": "maybe"}, wantErr: "latestFirst"},
		{name: "bad maxFileAge", opts: map[string]string{"path": "/d", "maxFileAge": "old"}, wantErr: "maxFileAge"},
		{name: "bad mode", opts: map[string]string{"path": "/d", "mode": "LENIENT"}, wantErr: "PERMISSIVE, DROPMALFORMED or FAILFAST"},
		{name: "bad cleanSource", opts: map[string]string{"path": "/d", "cleanSource": "move"}, wantErr: "archive, delete or off"},
		{name: "archive without dir", opts: map[string]string{"path": "/d", "cleanSource": "archive"}, wantErr: "sourceArchiveDir"},
		{name: "bad separator", opts: map[string]string{"path": "/d", "sep": ";;"}, wantErr: "one character"},
		{name: "unknown option", opts: map[string]string{"path": "/d", "multiLine": "true"}, wantErr: "multiLine"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			o, err := ParseOptions(CSV, tc.opts)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("error %v, want one containing %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if !tc.check(o) {
				t.Fatalf("options %+v", o)
			}
		})
	}
}

func TestParseSinkOptions(t *testing.T) {
	tests := []struct {
		name    string
		opts    map[string]string
		wantErr string
	}{
		{name: "path and writer options", opts: map[string]string{"path": "/o", "checkpointLocation": "/c", "compression": "zstd", "maxRecordsPerFile": "10"}},
		{name: "no path", opts: map[string]string{}, wantErr: "path is required"},
		{name: "bad compression", opts: map[string]string{"path": "/o", "compression": "brotli9"}, wantErr: "compression"},
		{name: "bad maxRecordsPerFile", opts: map[string]string{"path": "/o", "maxRecordsPerFile": "-1"}, wantErr: "maxRecordsPerFile"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := ParseSinkOptions(Parquet, tc.opts)
			if tc.wantErr == "" && err != nil || tc.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tc.wantErr)) {
				t.Fatalf("error %v, want %q", err, tc.wantErr)
			}
		})
	}
}
