package files

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/apache/arrow/go/v17/arrow"
	"github.com/apache/arrow/go/v17/arrow/memory"

	"github.com/arrowstream/arrowstream/arrowstream"
	"github.com/arrowstream/arrowstream/vector"
	vt "github.com/arrowstream/arrowstream/vector/vectortest"
)

func feed(mem memory.Allocator, rows ...vt.Row) *vt.Feed {
	rec := vt.BuildRecord(mem, testSchema, rows)
	defer rec.Release()
	return vt.NewFeed(testSchema, rec)
}

// TestSinkEpochs checks the manifest protocol for both formats: files of an
// uncommitted attempt are invisible and replaced, a committed epoch is
// never written twice, and maxRecordsPerFile rolls files.
func TestSinkEpochs(t *testing.T) {
	for _, format := range []Format{Parquet, Arrow} {
		t.Run(string(format), func(t *testing.T) {
			mem := vt.NewAllocator(t)
			ctx := context.Background()
			out := t.TempDir()
			sink, err := NewSink(mem, testSchema, arrowstream.Append, SinkOptions{Format: format, Path: out, MaxRecordsPerFile: 2, NoSync: true})
			if err != nil {
				t.Fatal(err)
			}
			if err := sink.AddBatch(ctx, 0, feed(mem, vt.Row{int64(0), "a"}, vt.Row{int64(1), "b"}, vt.Row{int64(2), "c"})); err != nil {
				t.Fatal(err)
			}
			// A crashed attempt of epoch 1 left a finished file and a temp
			// file, but no manifest entry.
			ext := sink.ext()
			writeFile(t, out, "part-00001-0"+ext, "garbage", 0)
			writeFile(t, out, ".part-00001-1"+ext+".tmp", "garbage", 0)
			readBack := func() []vt.Row {
				o, _ := ParseOptions(format, map[string]string{"path": out})
				s, err := NewSource(mem, testSchema, o)
				if err != nil {
					t.Fatal(err)
				}
				op, err := s.ReadBatch(ctx)
				if err != nil {
					t.Fatal(err)
				}
				rows, err := drain(t, op)
				if err != nil {
					t.Fatal(err)
				}
				return vt.SortRows(rows)
			}
			want0 := []vt.Row{{int64(0), "a"}, {int64(1), "b"}, {int64(2), "c"}}
			if got := readBack(); !vt.RowsEqual(want0, got) {
				t.Fatalf("after epoch 0 (with a partial epoch 1 on disk): %v", got)
			}
			if err := sink.AddBatch(ctx, 1, feed(mem, vt.Row{int64(3), "d"})); err != nil {
				t.Fatal(err)
			}
			// Replays of committed epochs change nothing.
			for _, e := range []int64{0, 1} {
				if err := sink.AddBatch(ctx, e, feed(mem, vt.Row{int64(99), "dup"})); err != nil {
					t.Fatal(err)
				}
			}
			want := append(want0, vt.Row{int64(3), "d"})
			if got := readBack(); !vt.RowsEqual(want, got) {
				t.Fatalf("after epoch 1 and replays: %v", got)
			}
			if _, err := os.Stat(filepath.Join(out, ".part-00001-1"+ext+".tmp")); !os.IsNotExist(err) {
				t.Fatalf("the crashed attempt's temp file is still there: %v", err)
			}
			files, _, err := readManifest(out)
			if err != nil || len(files) != 3 { // epoch 0: 2+1 rows, epoch 1: 1 row
				t.Fatalf("manifest files %v, %v", files, err)
			}
			// An empty epoch commits an empty entry.
			if err := sink.AddBatch(ctx, 2, vt.NewFeed(testSchema)); err != nil {
				t.Fatal(err)
			}
			if _, err := os.Stat(filepath.Join(out, ManifestDir, "2")); err != nil {
				t.Fatalf("empty epoch not committed: %v", err)
			}
		})
	}
}

func TestSinkErrors(t *testing.T) {
	mem := vt.NewAllocator(t)
	if _, err := NewSink(mem, testSchema, arrowstream.Update, SinkOptions{Format: Parquet, Path: t.TempDir()}); err == nil {
		t.Fatal("update mode must be refused")
	}
	if _, err := NewSink(mem, testSchema, arrowstream.Append, SinkOptions{Format: CSV, Path: t.TempDir()}); err == nil {
		t.Fatal("csv output must be refused")
	}
	bad := t.TempDir()
	writeFile(t, bad, ManifestDir, "not a directory", 0)
	if _, err := NewSink(mem, testSchema, arrowstream.Append, SinkOptions{Format: Parquet, Path: bad}); err == nil {
		t.Fatal("a manifest path that is a file must fail")
	}
}

// TestSinkDropsPlanMetadata: a watermark annotation on the query's schema
// is not written into the files.
func TestSinkDropsPlanMetadata(t *testing.T) {
	mem := vt.NewAllocator(t)
	md := arrow.NewMetadata([]string{"spark.watermarkDelayMs"}, []string{"1000"})
	annotated := arrow.NewSchema([]arrow.Field{{Name: "id", Type: vector.Int64, Nullable: true, Metadata: md}, testSchema.Field(1)}, nil)
	out := t.TempDir()
	sink, err := NewSink(mem, annotated, arrowstream.Append, SinkOptions{Format: Parquet, Path: out, NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	rec := vt.BuildRecord(mem, annotated, []vt.Row{{int64(1), "a"}})
	feed := vt.NewFeed(annotated, rec)
	rec.Release()
	if err := sink.AddBatch(context.Background(), 0, feed); err != nil {
		t.Fatal(err)
	}
	o, _ := ParseOptions(Parquet, map[string]string{"path": out})
	s, err := NewSource(mem, nil, o)
	if err != nil {
		t.Fatal(err)
	}
	if f := s.Schema().Field(0); f.HasMetadata() {
		t.Fatalf("read back field %v keeps metadata", f)
	}
}
