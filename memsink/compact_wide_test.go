package memsink_test

import (
	"context"
	"strings"
	"testing"

	"github.com/apache/arrow/go/v17/arrow"
	"github.com/apache/arrow/go/v17/arrow/array"
	"github.com/apache/arrow/go/v17/arrow/memory"

	"github.com/arrowstream/arrowstream/arrowstream"
	"github.com/arrowstream/arrowstream/memsink"
	"github.com/arrowstream/arrowstream/vector"
	vt "github.com/arrowstream/arrowstream/vector/vectortest"
)

var wideSchema = arrow.NewSchema([]arrow.Field{{Name: "e", Type: vector.Int64}, {Name: "s", Type: vector.String}}, nil)

// wideOp returns an operator over n rows (e, a string of width bytes).
func wideOp(t testing.TB, mem memory.Allocator, e int64, n, width int) vector.Operator {
	eb, sb := array.NewInt64Builder(mem), array.NewStringBuilder(mem)
	defer eb.Release()
	defer sb.Release()
	val := strings.Repeat("x", width)
	for range n {
		eb.Append(e)
		sb.Append(val)
	}
	ea, sa := eb.NewArray(), sb.NewArray()
	rec := array.NewRecord(wideSchema, []arrow.Array{ea, sa}, int64(n))
	ea.Release()
	sa.Release()
	s, err := vector.NewScan(wideSchema, rec)
	rec.Release()
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// TestCompactionLeavesMegabyteEpochs: epochs of a megabyte or more (few,
// wide rows: a join's output with its strings) are not merged, whatever
// their row count, since merging would copy all their bytes to save a
// few KB of bookkeeping; the small epochs around them still are, and no
// row or epoch changes.
func TestCompactionLeavesMegabyteEpochs(t *testing.T) {
	mem := vt.NewAllocator(t)
	info := arrowstream.SinkInfo{Mode: arrowstream.Append, QueryName: "q", Schema: wideSchema}
	tbl := newTable(t, mem, info, memsink.Options{CompactAfter: -1})
	const wideEpochs, wideRows, width = 10, 2000, 600 // ~1.2 MB an epoch
	const smallEpochs, smallRows = 6, 50
	e := int64(0)
	for ; e < wideEpochs; e++ {
		if err := tbl.AddBatch(context.Background(), e, wideOp(t, mem, e, wideRows, width)); err != nil {
			t.Fatal(err)
		}
	}
	for ; e < wideEpochs+smallEpochs; e++ {
		if err := tbl.AddBatch(context.Background(), e, wideOp(t, mem, e, smallRows, 8)); err != nil {
			t.Fatal(err)
		}
	}
	before := tbl.Size()
	if err := tbl.Compact(context.Background()); err != nil {
		t.Fatal(err)
	}
	after := tbl.Size()
	// The wide epochs stay one record each; the small ones become one run.
	if want := wideEpochs + 1; after.Records != want {
		t.Errorf("records after compaction = %d (before %d), want %d: the %d wide epochs kept, the %d small ones merged",
			after.Records, before.Records, want, wideEpochs, smallEpochs)
	}
	if after.Rows != before.Rows {
		t.Errorf("rows %d → %d", before.Rows, after.Rows)
	}
	if h := tbl.History(); len(h) != wideEpochs+smallEpochs {
		t.Errorf("history has %d epochs, want %d", len(h), wideEpochs+smallEpochs)
	}
}
