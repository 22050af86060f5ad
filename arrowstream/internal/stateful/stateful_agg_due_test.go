package stateful

import (
	"slices"
	"testing"
	"unsafe"

	"github.com/apache/arrow/go/v17/arrow/array"
	"github.com/apache/arrow/go/v17/arrow/memory"
)

// TestDueKeepsList: the groups due at a watermark come in a list kept
// between evictions, cut to empty first: the second eviction's list
// reuses the first's memory and holds exactly the groups of its own time
// (none of the first's).
func TestDueKeepsList(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	op, done := shapeOp(t, mem)
	defer done()
	l := op.live
	timesOf := func(gids []int32) []int64 {
		t.Helper()
		rec, err := l.agg.State(gids)
		if err != nil {
			t.Fatal(err)
		}
		defer rec.Release()
		col := rec.Column(rec.Schema().FieldIndices("t")[0]).(*array.Timestamp)
		out := make([]int64, col.Len())
		for i := range out {
			out[i] = int64(col.Value(i))
		}
		return out
	}
	first := slices.Clone(l.due(1_000_000))
	base := unsafe.SliceData(l.dueList)
	if len(first) == 0 {
		t.Fatal("no group due at 1s")
	}
	for i, ts := range timesOf(first) {
		if ts != 1_000_000 {
			t.Fatalf("group %d due at 1s has time %d", first[i], ts)
		}
	}
	second := l.due(2_000_000)
	if unsafe.SliceData(second) != base {
		t.Fatal("the second eviction's list is not the first's memory")
	}
	if len(second) != len(first) {
		t.Fatalf("%d groups due at 2s, want %d (one per key, as at 1s)", len(second), len(first))
	}
	for i, ts := range timesOf(second) {
		if ts != 2_000_000 {
			t.Fatalf("group %d due at 2s has time %d", second[i], ts)
		}
	}
}
