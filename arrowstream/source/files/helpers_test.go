package files

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/apache/arrow/go/v17/arrow"
	"github.com/apache/arrow/go/v17/arrow/memory"

	"github.com/arrowstream/arrowstream/arrowstream"
	"github.com/arrowstream/arrowstream/vector"
	vt "github.com/arrowstream/arrowstream/vector/vectortest"
)

var testSchema = arrow.NewSchema([]arrow.Field{
	{Name: "id", Type: vector.Int64, Nullable: true},
	{Name: "name", Type: vector.String, Nullable: true},
}, nil)

var corruptSchema = arrow.NewSchema([]arrow.Field{
	{Name: "id", Type: vector.Int64, Nullable: true},
	{Name: "name", Type: vector.String, Nullable: true},
	{Name: "_corrupt_record", Type: vector.String, Nullable: true},
}, nil)

// writeFile writes a file with a modification time of base+age seconds, so
// that listing order is deterministic.
func writeFile(t testing.TB, dir, name, text string, sec int) string {
	t.Helper()
	p := filepath.Join(dir, name)
	if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	mt := time.Unix(1_700_000_000+int64(sec), 0)
	if err := os.Chtimes(p, mt, mt); err != nil {
		t.Fatal(err)
	}
	return p
}

// drain reads op to the end as rows and closes it.
func drain(t testing.TB, op vector.Operator) ([]vt.Row, error) {
	t.Helper()
	defer op.Close()
	recs, err := vector.Drain(context.Background(), op)
	rows := vt.RowsOf(recs...)
	for _, r := range recs {
		r.Release()
	}
	return rows, err
}

// newTestSource makes a source with a checkpoint directory.
func newTestSource(t testing.TB, mem memory.Allocator, format Format, schema *arrow.Schema, opts map[string]string) *Source {
	t.Helper()
	o, err := ParseOptions(format, opts)
	if err != nil {
		t.Fatal(err)
	}
	s, err := NewSource(mem, schema, o)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.SetCheckpointDir(t.TempDir()); err != nil {
		t.Fatal(err)
	}
	return s
}

// readAll reads every file the source has now, as one batch (LatestOffset
// from nothing).
func readAll(t testing.TB, s *Source) ([]vt.Row, error) {
	t.Helper()
	ctx := context.Background()
	end, err := s.LatestOffset(ctx)
	if err != nil {
		return nil, err
	}
	if end == nil {
		return nil, nil
	}
	op, err := s.Read(ctx, nil, end)
	if err != nil {
		return nil, err
	}
	return drain(t, op)
}

// triggerFiles returns the files of each admission-controlled trigger
// until the source has nothing new.
func triggerFiles(t *testing.T, s *Source) [][]string {
	t.Helper()
	ctx := context.Background()
	var out [][]string
	var start arrowstream.Offset
	for {
		if _, err := s.LatestOffset(ctx); err != nil {
			t.Fatal(err)
		}
		end, err := s.LatestOffsetFrom(ctx, start)
		if err != nil {
			t.Fatal(err)
		}
		if end == nil || end.Equal(start) {
			return out
		}
		from, _ := parseOffset(start)
		to, _ := parseOffset(end)
		var names []string
		for id := from + 1; id <= to; id++ {
			for _, f := range s.entries[id] {
				names = append(names, filepath.Base(f.Path))
			}
		}
		out = append(out, names)
		start = end
	}
}
