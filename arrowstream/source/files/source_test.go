package files

import (
	"context"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/apache/arrow/go/v17/arrow"

	"github.com/arrowstream/arrowstream/vector"
	vt "github.com/arrowstream/arrowstream/vector/vectortest"
)

// fiveFiles writes a.csv..e.csv, oldest first, 10 bytes each.
func fiveFiles(t *testing.T, dir string) {
	for i, n := range []string{"a", "b", "c", "d", "e"} {
		writeFile(t, dir, n+".csv", strings.Repeat("9", 4)+","+n+"xxx\n", i*60)
	}
}

func TestAdmissionControl(t *testing.T) {
	tests := []struct {
		name string
		opts map[string]string
		want [][]string
	}{
		{name: "no limit", opts: map[string]string{}, want: [][]string{{"a.csv", "b.csv", "c.csv", "d.csv", "e.csv"}}},
		{name: "maxFilesPerTrigger", opts: map[string]string{"maxFilesPerTrigger": "2"}, want: [][]string{{"a.csv", "b.csv"}, {"c.csv", "d.csv"}, {"e.csv"}}},
		{name: "maxBytesPerTrigger", opts: map[string]string{"maxBytesPerTrigger": "25"}, want: [][]string{{"a.csv", "b.csv"}, {"c.csv", "d.csv"}, {"e.csv"}}},
		{name: "maxBytesPerTrigger smaller than a file", opts: map[string]string{"maxBytesPerTrigger": "1"}, want: [][]string{{"a.csv"}, {"b.csv"}, {"c.csv"}, {"d.csv"}, {"e.csv"}}},
		{name: "latestFirst", opts: map[string]string{"maxFilesPerTrigger": "2", "latestFirst": "true"}, want: [][]string{{"e.csv", "d.csv"}, {"c.csv", "b.csv"}, {"a.csv"}}},
		{name: "glob", opts: map[string]string{"path": "[bd].csv"}, want: [][]string{{"b.csv", "d.csv"}}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			mem := vt.NewAllocator(t)
			dir := t.TempDir()
			fiveFiles(t, dir)
			writeFile(t, dir, ".hidden.csv", "1,x\n", 0)
			writeFile(t, dir, "_SUCCESS", "", 0)
			opts := map[string]string{"path": dir}
			for k, v := range tc.opts {
				opts[k] = v
			}
			if p, ok := tc.opts["path"]; ok {
				opts["path"] = filepath.Join(dir, p)
			}
			s := newTestSource(t, mem, CSV, testSchema, opts)
			if got := triggerFiles(t, s); !reflect.DeepEqual(got, tc.want) {
				t.Fatalf("triggers %v, want %v", got, tc.want)
			}
		})
	}
}

func TestMaxFileAge(t *testing.T) {
	mem := vt.NewAllocator(t)
	dir := t.TempDir()
	writeFile(t, dir, "old.csv", "1,a\n", 0)
	s := newTestSource(t, mem, CSV, testSchema, map[string]string{"path": dir, "maxFileAge": "1h"})
	// The first discovery takes every file, whatever its age.
	if got := triggerFiles(t, s); !reflect.DeepEqual(got, [][]string{{"old.csv"}}) {
		t.Fatalf("first triggers %v", got)
	}
	writeFile(t, dir, "new.csv", "2,b\n", 3*3600)
	writeFile(t, dir, "late.csv", "3,c\n", 10) // older than newest - 1h: ignored
	ctx := context.Background()
	if _, err := s.LatestOffset(ctx); err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, f := range s.entries[s.latest] {
		names = append(names, filepath.Base(f.Path))
	}
	if !reflect.DeepEqual(names, []string{"new.csv"}) {
		t.Fatalf("second discovery %v", names)
	}
}

// TestSeenFilesLogRestart: a new source over the same checkpoint knows the
// files already assigned to entries and replays an entry with the same
// files.
func TestSeenFilesLogRestart(t *testing.T) {
	mem := vt.NewAllocator(t)
	dir, ck := t.TempDir(), t.TempDir()
	ctx := context.Background()
	writeFile(t, dir, "a.csv", "1,a\n", 0)
	writeFile(t, dir, "b.csv", "2,b\n", 1)
	open := func() *Source {
		o, _ := ParseOptions(CSV, map[string]string{"path": dir, "maxFilesPerTrigger": "1"})
		s, err := NewSource(mem, testSchema, o)
		if err != nil {
			t.Fatal(err)
		}
		if err := s.SetCheckpointDir(ck); err != nil {
			t.Fatal(err)
		}
		return s
	}
	s := open()
	end, err := s.LatestOffset(ctx)
	if err != nil || string(end) != `{"logOffset":1}` {
		t.Fatalf("offset %s, %v", end, err)
	}
	s2 := open()
	writeFile(t, dir, "c.csv", "3,c\n", 2)
	end2, err := s2.LatestOffset(ctx)
	if err != nil || string(end2) != `{"logOffset":2}` {
		t.Fatalf("after restart offset %s, %v (a.csv and b.csv must not be logged twice)", end2, err)
	}
	op, err := s2.Read(ctx, []byte(`{"logOffset":0}`), end2)
	if err != nil {
		t.Fatal(err)
	}
	rows, err := drain(t, op)
	if err != nil || !vt.RowsEqual([]vt.Row{{int64(2), "b"}, {int64(3), "c"}}, rows) {
		t.Fatalf("rows %v, %v", rows, err)
	}
	if _, err := s2.Read(ctx, nil, []byte(`{"logOffset":9}`)); err == nil {
		t.Fatal("reading entries that were never logged must fail")
	}
	if _, err := s2.Read(ctx, nil, []byte(`7`)); err == nil {
		t.Fatal("a foreign offset must fail")
	}
}

func TestCleanSource(t *testing.T) {
	for _, mode := range []string{"delete", "archive"} {
		t.Run(mode, func(t *testing.T) {
			mem := vt.NewAllocator(t)
			dir, arch := t.TempDir(), t.TempDir()
			p := writeFile(t, dir, "a.csv", "1,a\n", 0)
			opts := map[string]string{"path": dir, "cleanSource": mode, "sourceArchiveDir": arch}
			s := newTestSource(t, mem, CSV, testSchema, opts)
			ctx := context.Background()
			end, err := s.LatestOffset(ctx)
			if err != nil {
				t.Fatal(err)
			}
			if err := s.Commit(ctx, end); err != nil {
				t.Fatal(err)
			}
			if _, err := os.Stat(p); !os.IsNotExist(err) {
				t.Fatalf("%s still there after commit: %v", p, err)
			}
			abs, _ := filepath.Abs(p)
			_, err = os.Stat(filepath.Join(arch, abs))
			if (mode == "archive") != (err == nil) {
				t.Fatalf("archived copy: %v", err)
			}
			if err := s.Commit(ctx, end); err != nil {
				t.Fatalf("committing again (after a restart) must not fail: %v", err)
			}
		})
	}
	o, _ := ParseOptions(CSV, map[string]string{"path": "/data/in", "cleanSource": "archive", "sourceArchiveDir": "/data/in/archive"})
	if _, err := NewSource(nil, testSchema, o); err == nil || !strings.Contains(err.Error(), "inside the source path") {
		t.Fatalf("archive dir inside the source: %v", err)
	}
}

func TestSchemaInference(t *testing.T) {
	tests := []struct {
		name    string
		format  Format
		text    string
		opts    map[string]string
		want    string
		wantErr string
	}{
		{name: "csv header strings", format: CSV, text: "id,name\n1,a\n", opts: map[string]string{"header": "true"}, want: "id:utf8,name:utf8"},
		{name: "csv header inferSchema", format: CSV, text: "id,score,ok,name\n1,2.5,true,a\n", opts: map[string]string{"header": "true", "inferSchema": "true"}, want: "id:int64,score:float64,ok:bool,name:utf8"},
		{name: "csv no header", format: CSV, text: "1,a\n", want: "_c0:utf8,_c1:utf8"},
		{name: "json sorted and widened", format: JSON, text: `{"b":"x","a":1}` + "\n" + `{"a":1.5,"c":true}` + "\n", want: "a:float64,b:utf8,c:bool"},
		{name: "json nested needs a schema", format: JSON, text: `{"a":{"b":1}}` + "\n", wantErr: "nested"},
		{name: "no files", format: Parquet, wantErr: "it must be specified manually"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			if tc.text != "" {
				writeFile(t, dir, "f."+string(tc.format), tc.text, 0)
			}
			opts := map[string]string{"path": dir}
			for k, v := range tc.opts {
				opts[k] = v
			}
			o, err := ParseOptions(tc.format, opts)
			if err != nil {
				t.Fatal(err)
			}
			s, err := NewSource(vt.NewAllocator(t), nil, o)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("error %v, want %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got := schemaString(s.Schema()); got != tc.want {
				t.Fatalf("schema %s, want %s", got, tc.want)
			}
			rows, err := readAll(t, s)
			if err != nil || len(rows) == 0 {
				t.Fatalf("read with the inferred schema: %v %v", rows, err)
			}
		})
	}
}

func schemaString(s *arrow.Schema) string {
	var parts []string
	for _, f := range s.Fields() {
		parts = append(parts, f.Name+":"+f.Type.String())
	}
	return strings.Join(parts, ",")
}

func TestUnsupportedCSVType(t *testing.T) {
	schema := arrow.NewSchema([]arrow.Field{{Name: "l", Type: arrow.MapOf(vector.String, vector.String)}}, nil)
	o, _ := ParseOptions(CSV, map[string]string{"path": t.TempDir()})
	if _, err := NewSource(vt.NewAllocator(t), schema, o); err == nil {
		t.Fatal("a map column cannot be read from CSV")
	}
}
