package vector

import (
	"context"
	"testing"

	"github.com/apache/arrow/go/v17/arrow"
	"github.com/apache/arrow/go/v17/arrow/array"
	"github.com/apache/arrow/go/v17/arrow/memory"
)

// TestKeyIndexCountsNoRows: a KeyIndex over word-tuple keys (a memory
// sink view's index of q17's (auction, day)) keeps no per-key row counts,
// which nothing reads, before and after a Reset, and still numbers its
// keys as a map model does.
func TestKeyIndexCountsNoRows(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.DefaultAllocator)
	defer mem.AssertSize(t, 0)
	x, err := NewKeyIndex(mem, []arrow.DataType{Int64, Int64})
	if err != nil {
		t.Fatal(err)
	}
	defer x.Release()
	if _, ok := x.g.(*wordsGrouper); !ok {
		t.Fatalf("grouper %T, want the words grouper", x.g)
	}
	for round := range 2 {
		model := map[[2]int64]int32{}
		for batch := range 20 {
			a, b := array.NewInt64Builder(mem), array.NewInt64Builder(mem)
			var want []int32
			for i := range 500 {
				k := [2]int64{int64((batch*131 + i*7) % 3000), int64(i % 3)}
				a.Append(k[0])
				b.Append(k[1])
				id, ok := model[k]
				if !ok {
					id = int32(len(model))
					model[k] = id
				}
				want = append(want, id)
			}
			keys := []arrow.Array{a.NewArray(), b.NewArray()}
			a.Release()
			b.Release()
			ids := make([]int32, len(want))
			err := x.Index(context.Background(), keys, ids)
			for _, k := range keys {
				k.Release()
			}
			if err != nil {
				t.Fatal(err)
			}
			for i := range ids {
				if ids[i] != want[i] {
					t.Fatalf("round %d batch %d row %d: key number %d, want %d", round, batch, i, ids[i], want[i])
				}
			}
			if n := len(x.g.(*wordsGrouper).rows); n != 0 {
				t.Fatalf("round %d batch %d: %d row counts kept for %d keys", round, batch, n, x.Len())
			}
		}
		if err := x.Reset(); err != nil {
			t.Fatal(err)
		}
	}
}
