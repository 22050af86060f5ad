package files

import (
	"bytes"
	"context"
	"errors"
	"io"
	"strings"
	"testing"
	"testing/iotest"

	"github.com/apache/arrow/go/v17/arrow"
	"github.com/apache/arrow/go/v17/arrow/array"

	"github.com/arrowstream/arrowstream/internal/testutil/poisonmem"
	"github.com/arrowstream/arrowstream/vector"
)

// fuzzLines decodes data as a whole file in every mode and chunk size: it
// must return rows or an error (FAILFAST: ErrMalformed), never panic, and
// leave no allocated byte behind.
func fuzzLines(t *testing.T, format Format, data []byte) {
	schema := arrow.NewSchema([]arrow.Field{
		{Name: "id", Type: vector.Int64, Nullable: true},
		{Name: "x", Type: vector.Float64, Nullable: true},
		{Name: "name", Type: vector.String, Nullable: true},
		{Name: "_corrupt_record", Type: vector.String, Nullable: true},
	}, nil)
	for _, mode := range []Mode{Permissive, DropMalformed, FailFast} {
		for _, chunk := range []int{1, 40, DefaultChunkBytes} {
			mem := poisonmem.New()
			o := Options{Format: format, Path: "fuzz", Mode: mode, CorruptColumn: "_corrupt_record", Sep: ',', ChunkBytes: chunk, Header: chunk == 40}
			s, err := NewSource(mem, schema, o)
			if err != nil {
				t.Fatal(err)
			}
			whole := drainLines(t, s.lineOperator("fuzz."+string(format), data))
			// The same file read as a stream, a few bytes per read, must
			// give the same records and the same error.
			streamed := drainLines(t, s.streamLines("fuzz."+string(format), io.NopCloser(iotest.HalfReader(bytes.NewReader(data)))))
			if whole.err != streamed.err || len(whole.recs) != len(streamed.recs) {
				t.Fatalf("mode %s chunk %d: whole read gave %d records, error %q; streamed %d, %q", mode, chunk, len(whole.recs), whole.err, len(streamed.recs), streamed.err)
			}
			for i := range whole.recs {
				if !array.RecordApproxEqual(whole.recs[i], streamed.recs[i], array.WithNaNsEqual(true), array.WithAbsTolerance(0)) {
					t.Fatalf("mode %s chunk %d: record %d differs:\n%v\nstreamed:\n%v", mode, chunk, i, whole.recs[i], streamed.recs[i])
				}
			}
			whole.release()
			streamed.release()
			op := s.lineOperator("fuzz."+string(format), data)
			var rows int64
			for {
				rec, err := op.Next(context.Background())
				if err != nil {
					if mode != FailFast && !isEOF(err) {
						t.Fatalf("mode %s: %v", mode, err)
					}
					if mode == FailFast && !isEOF(err) && !errors.Is(err, ErrMalformed) {
						t.Fatalf("FAILFAST error does not wrap ErrMalformed: %v", err)
					}
					break
				}
				if !rec.Schema().Equal(schema) {
					t.Fatalf("record schema %s", rec.Schema())
				}
				rows += rec.NumRows()
				rec.Release()
			}
			op.Close()
			if got := s.stats.malformed.Load(); mode == DropMalformed && got < 0 {
				t.Fatalf("malformed count %d", got)
			}
			mem.AssertSize(t, 0)
		}
	}
}

func isEOF(err error) bool { return errors.Is(err, io.EOF) }

// drained is what an operator gave: its records and its final error
// ("" at EOF).
type drained struct {
	recs []arrow.Record
	err  string
}

func (d drained) release() {
	for _, r := range d.recs {
		r.Release()
	}
}

// drainLines reads op to its end and closes it.
func drainLines(t *testing.T, op *lineFile) drained {
	t.Helper()
	defer op.Close()
	var d drained
	for {
		rec, err := op.Next(context.Background())
		if err != nil {
			if !isEOF(err) {
				d.err = err.Error()
			}
			return d
		}
		d.recs = append(d.recs, rec)
	}
}

func FuzzCSVFile(f *testing.F) {
	for _, seed := range []string{badCSV, "1,2.5,a\n2,,b\n", "\"q\"\"x\",1,2\n", "1,2,3,4,5\n", "\xef\xbb\xbf1,1,a\r\n", ",,\n\n\n", "1,1e400,\"\n"} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, data []byte) { fuzzLines(t, CSV, data) })
}

func FuzzJSONFile(f *testing.F) {
	for _, seed := range []string{badJSON, `{"id":1,"x":2.5,"name":"a"}`, `{"id":null}` + "\n" + `{}`, `{"id":1}{"id":2}`, `{"x":"NaN"}`, `"str"`, `{"id":99999999999999999999}`, `{"name":{"a":1}}`} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, data []byte) { fuzzLines(t, JSON, data) })
}

// FuzzManifest: a manifest entry is outside input for a reader of the
// directory; any bytes give files or an error.
func FuzzManifest(f *testing.F) {
	f.Add([]byte(`{"path":"part-00000-0.parquet","size":10,"rows":2,"modificationTime":1}` + "\n"))
	f.Add([]byte(`{"path":"../escape"}`))
	f.Add([]byte("\n\n{"))
	f.Fuzz(func(t *testing.T, data []byte) {
		files, err := decodeManifest("fuzz", data)
		for _, mf := range files {
			if err == nil && (mf.Path == "" || mf.Path == ".." || strings.ContainsRune(mf.Path, '/')) {
				t.Fatalf("accepted file name %q", mf.Path)
			}
		}
	})
}

// FuzzOffset: offsets come from the checkpoint's offset log.
func FuzzOffset(f *testing.F) {
	for _, seed := range []string{`{"logOffset":3}`, `{"logOffset":-1}`, `3`, `{}`, `{"logOffset":1e99}`} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		id, err := parseOffset(data)
		if err == nil && string(logOffset(id)) == "" {
			t.Fatal("empty offset")
		}
	})
}
