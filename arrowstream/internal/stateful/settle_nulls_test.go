package stateful

import (
	"sync"
	"testing"

	"github.com/apache/arrow/go/v17/arrow"
	"github.com/apache/arrow/go/v17/arrow/array"
	"github.com/apache/arrow/go/v17/arrow/memory"
)

// TestSettleNullCountsLetsReadersShare: a kept batch whose null counts
// arrow has not computed yet (a struct column and its children, a
// dictionary) is read by two goroutines at once, as the join's next epoch
// and the background snapshot do. Settled first, both only read; under
// -race the test fails without settleNullCounts (each reader's first
// NullN stores the count).
func TestSettleNullCountsLetsReadersShare(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	ib := array.NewInt64Builder(mem)
	ib.AppendValues([]int64{1, 2, 3}, []bool{true, false, true})
	ints := ib.NewArray()
	ib.Release()
	defer ints.Release()
	unknown := func(a arrow.Array) arrow.Array {
		d := a.Data()
		nd := array.NewData(d.DataType(), d.Len(), d.Buffers(), d.Children(), array.UnknownNullCount, d.Offset())
		defer nd.Release()
		return array.MakeFromData(nd)
	}
	plain := unknown(ints)
	defer plain.Release()
	st := arrow.StructOf(arrow.Field{Name: "x", Type: arrow.PrimitiveTypes.Int64, Nullable: true})
	sd := array.NewData(st, 3, []*memory.Buffer{nil}, []arrow.ArrayData{plain.Data()}, 0, 0)
	defer sd.Release()
	nested := array.MakeFromData(sd)
	defer nested.Release()
	schema := arrow.NewSchema([]arrow.Field{{Name: "a", Type: arrow.PrimitiveTypes.Int64, Nullable: true}, {Name: "s", Type: st, Nullable: true}}, nil)
	rec := array.NewRecord(schema, []arrow.Array{plain, nested}, 3)
	defer rec.Release()

	settleNullCounts(rec)
	var wg sync.WaitGroup
	for range 2 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for _, c := range rec.Columns() {
				c.NullN()
				for _, ch := range c.Data().Children() {
					ch.NullN()
				}
			}
		}()
	}
	wg.Wait()
	if got := rec.Column(0).NullN(); got != 1 {
		t.Errorf("null count %d, want 1", got)
	}
}
