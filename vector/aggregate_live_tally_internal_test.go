package vector

import (
	"context"
	"testing"

	"github.com/apache/arrow/go/v17/arrow"
	"github.com/apache/arrow/go/v17/arrow/array"
	"github.com/apache/arrow/go/v17/arrow/memory"
)

// TestLiveWordsGrouperKeepsNoRows: under a LiveAggregate, which counts
// its groups' rows itself, the words grouper keeps no row counts of its
// own, through growth and compaction; the aggregation's counts are right.
func TestLiveWordsGrouperKeepsNoRows(t *testing.T) {
	ctx := context.Background()
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	schema := arrow.NewSchema([]arrow.Field{{Name: "a", Type: arrow.PrimitiveTypes.Int64}, {Name: "b", Type: arrow.PrimitiveTypes.Int32}}, nil)
	groupBy := []NamedExpr{As(Col("a"), "a"), As(Col("b"), "b")}
	spec := AggregateSpec{GroupBy: groupBy, Aggregates: []AggregateCall{{Func: AggCountStar, Name: "n"}}}
	partial, err := PartialSchema(schema, spec)
	if err != nil {
		t.Fatal(err)
	}
	l, err := NewLiveAggregate(mem, partial, 2, spec.Aggregates)
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	raw, ok, err := l.Raw(schema, groupBy)
	if err != nil || !ok {
		t.Fatal(ok, err)
	}
	g, ok := l.b.grouper.(*wordsGrouper)
	if !ok {
		t.Fatalf("grouper is a %T", l.b.grouper)
	}
	want := map[[2]int64]int64{}
	for batch := range 6 {
		ab, bb := array.NewInt64Builder(mem), array.NewInt32Builder(mem)
		for i := range 5000 {
			a, b := int64(batch*1000+i%3000), int32(i%7)
			ab.Append(a)
			bb.Append(b)
			want[[2]int64{a, int64(b)}]++
		}
		ac, bc := ab.NewArray(), bb.NewArray()
		ab.Release()
		bb.Release()
		rec := array.NewRecord(schema, []arrow.Array{ac, bc}, 5000)
		ac.Release()
		bc.Release()
		keys, err := raw.Keys(ctx, rec)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := raw.Update(ctx, rec, keys); err != nil {
			t.Fatal(err)
		}
		releaseArrays(keys)
		rec.Release()
		if batch == 3 { // delete the first batch's groups and compact
			var del []int32
			for gid := range g.numGroups() {
				if int64(g.word(gid, 0)) < 1000 {
					del = append(del, int32(gid))
					delete(want, [2]int64{int64(g.word(gid, 0)), int64(g.word(gid, 1))})
				}
			}
			l.Delete(del)
			if _, err := l.Compact(ctx); err != nil {
				t.Fatal(err)
			}
		}
		if len(g.rows) != 0 {
			t.Fatalf("batch %d: the grouper counts rows of %d groups", batch, len(g.rows))
		}
	}
	if l.NumLive() != len(want) {
		t.Fatalf("%d live groups, want %d", l.NumLive(), len(want))
	}
	for gid := range g.numGroups() {
		k := [2]int64{int64(g.word(gid, 0)), int64(int32(g.word(gid, 1)))}
		if got := l.rows[gid]; got != want[k] {
			t.Fatalf("group %v: %d rows, want %d", k, got, want[k])
		}
	}
}
