package files

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/apache/arrow/go/v17/arrow"
	"github.com/apache/arrow/go/v17/parquet/file"
	"github.com/apache/arrow/go/v17/parquet/metadata"

	"github.com/arrowstream/arrowstream/arrowstream"
	vt "github.com/arrowstream/arrowstream/vector/vectortest"
)

// TestParquetStringStatisticsSurviveRelease: the footer's min/max of a
// string column must be the written values even though every batch is
// released (and, on the poisoning allocator, overwritten) before the file
// is closed. Arrow's writer keeps the statistics as slices of the written
// values, so the sink holds its records until Close.
func TestParquetStringStatisticsSurviveRelease(t *testing.T) {
	mem := vt.NewAllocator(t)
	dir := t.TempDir()
	sink, err := NewSink(mem, testSchema, arrowstream.Append, SinkOptions{Format: Parquet, Path: dir, NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	batches := [][]vt.Row{{{1, "m"}, {2, nil}}, {{3, "c"}, {4, "x"}}, {{5, "k"}}}
	var recs []arrow.Record
	for _, b := range batches {
		recs = append(recs, vt.BuildRecord(mem, testSchema, b))
	}
	feed := vt.NewFeed(testSchema, recs...)
	for _, r := range recs {
		r.Release()
	}
	if err := sink.AddBatch(context.Background(), 0, feed); err != nil {
		t.Fatal(err)
	}
	files, err := filepath.Glob(filepath.Join(dir, "*.parquet"))
	if err != nil || len(files) != 1 {
		t.Fatalf("parquet files %v, %v", files, err)
	}
	r, err := file.OpenParquetFile(files[0], false)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	col, err := r.MetaData().RowGroup(0).ColumnChunk(1)
	if err != nil {
		t.Fatal(err)
	}
	st, err := col.Statistics()
	if err != nil {
		t.Fatal(err)
	}
	bs, ok := st.(*metadata.ByteArrayStatistics)
	if !ok || !bs.HasMinMax() {
		t.Fatalf("statistics of name: %T %v", st, st)
	}
	if min, max := string(bs.Min()), string(bs.Max()); min != "c" || max != "x" {
		t.Fatalf("name statistics min %q max %q, want \"c\" and \"x\"", min, max)
	}
}
