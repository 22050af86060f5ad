package files

import (
	"errors"
	"strconv"
	"strings"
	"testing"

	"github.com/apache/arrow/go/v17/arrow"

	vt "github.com/arrowstream/arrowstream/vector/vectortest"
)

// The malformed-input directory: one CSV and one JSON file with good and
// broken lines (a bad number, a wrong field count, an unterminated quote, a
// truncated object).
const badCSV = "1,a\n2,b\nx,c\n4,d\n5\n6,\"f\n7,g\n"

const badJSON = `{"id":1,"name":"a"}
{"id":"x","name":"b"}
{"id":3,"name":"c"}
{"id":4,
{"id":5,"name":"e"}
[1,2]
{"id":7,"name":"g"}
`

func TestMalformedModes(t *testing.T) {
	tests := []struct {
		name    string
		format  Format
		schema  *arrow.Schema
		mode    Mode
		want    []vt.Row
		bad     int64  // malformed rows counted
		wantErr string // FAILFAST
	}{
		{name: "csv permissive with corrupt column", format: CSV, schema: corruptSchema, mode: Permissive, bad: 3, want: []vt.Row{
			{int64(1), "a", nil}, {int64(2), "b", nil}, {nil, nil, "x,c"}, {int64(4), "d", nil}, {nil, nil, "5"}, {nil, nil, `6,"f`}, {int64(7), "g", nil},
		}},
		{name: "csv permissive", format: CSV, schema: testSchema, mode: Permissive, bad: 3, want: []vt.Row{
			{int64(1), "a"}, {int64(2), "b"}, {nil, nil}, {int64(4), "d"}, {nil, nil}, {nil, nil}, {int64(7), "g"},
		}},
		{name: "csv dropmalformed", format: CSV, schema: corruptSchema, mode: DropMalformed, bad: 3, want: []vt.Row{
			{int64(1), "a", nil}, {int64(2), "b", nil}, {int64(4), "d", nil}, {int64(7), "g", nil},
		}},
		{name: "csv failfast", format: CSV, schema: testSchema, mode: FailFast, wantErr: "bad.csv line 3 column id (value \"x\")"},
		{name: "json permissive with corrupt column", format: JSON, schema: corruptSchema, mode: Permissive, bad: 3, want: []vt.Row{
			{int64(1), "a", nil}, {nil, nil, `{"id":"x","name":"b"}`}, {int64(3), "c", nil}, {nil, nil, `{"id":4,`}, {int64(5), "e", nil}, {nil, nil, "[1,2]"}, {int64(7), "g", nil},
		}},
		{name: "json dropmalformed", format: JSON, schema: testSchema, mode: DropMalformed, bad: 3, want: []vt.Row{
			{int64(1), "a"}, {int64(3), "c"}, {int64(5), "e"}, {int64(7), "g"},
		}},
		{name: "json failfast", format: JSON, schema: testSchema, mode: FailFast, wantErr: "bad.json line 2 column id (value \"x\")"},
	}
	for _, tc := range tests {
		for _, chunk := range []string{"1", "12", "30", "1048576"} {
			t.Run(tc.name+"/chunk"+chunk, func(t *testing.T) {
				mem := vt.NewAllocator(t)
				dir := t.TempDir()
				text := badCSV
				if tc.format == JSON {
					text = badJSON
				}
				writeFile(t, dir, "bad."+string(tc.format), text, 0)
				s := newTestSource(t, mem, tc.format, tc.schema, map[string]string{"path": dir, "mode": string(tc.mode), "chunkBytes": chunk})
				rows, err := readAll(t, s)
				if tc.wantErr != "" {
					if err == nil || !strings.Contains(err.Error(), tc.wantErr) || !errors.Is(err, ErrMalformed) {
						t.Fatalf("error %v, want one containing %q", err, tc.wantErr)
					}
					return
				}
				if err != nil {
					t.Fatal(err)
				}
				if !vt.RowsEqual(tc.want, rows) {
					t.Fatalf("rows\n got %v\nwant %v", rows, tc.want)
				}
				m := s.Metrics()
				if m["numMalformedRows"] != strconv.FormatInt(tc.bad, 10) {
					t.Fatalf("metrics %v, want %d malformed", m, tc.bad)
				}
			})
		}
	}
}

// TestMalformedLongRecordErrorBounded: FAILFAST's error for a record of
// megabytes names the file, the line and the column, and quotes at most
// maxCauseBytes of the decoder's message (which quoted the record whole,
// twice: a 4 MiB line made an 8 MiB error, logged at every restart of a
// streaming table reading it and kept in its status).
func TestMalformedLongRecordErrorBounded(t *testing.T) {
	for _, format := range []Format{CSV, JSON} {
		t.Run(string(format), func(t *testing.T) {
			mem := vt.NewAllocator(t)
			dir := t.TempDir()
			long := strings.Repeat("n", 4<<20)
			line := "1,a\n" + long + ",b\n"
			if format == JSON {
				line = `{"id":1,"name":"a"}` + "\n" + `{"id":"` + long + `","name":"b"` + "\n"
			}
			writeFile(t, dir, "big."+string(format), line, 0)
			s := newTestSource(t, mem, format, testSchema, map[string]string{"path": dir, "mode": string(FailFast)})
			_, err := readAll(t, s)
			if err == nil || !errors.Is(err, ErrMalformed) || !strings.Contains(err.Error(), "big."+string(format)+" line 2") {
				t.Fatalf("error %.300v, want a malformed line 2 of big.%s", err, format)
			}
			if n := len(err.Error()); n > 2*maxCauseBytes {
				t.Fatalf("the error is %d bytes long, want at most %d: %.200s", n, 2*maxCauseBytes, err)
			}
		})
	}
}
