package vector

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"testing"

	"github.com/apache/arrow/go/v17/arrow"
	"github.com/apache/arrow/go/v17/arrow/array"
	"github.com/apache/arrow/go/v17/arrow/memory"
)

// stringKeys makes n distinct 40-byte strings from lo on.
func stringKeys(mem memory.Allocator, lo, n int) arrow.Array {
	b := array.NewStringBuilder(mem)
	defer b.Release()
	for i := lo; i < lo+n; i++ {
		b.Append(fmt.Sprintf("key-%036d", i))
	}
	return b.NewArray()
}

// TestBytesArenaGrowContext: the bytes grouper's key arena and offsets
// (GROUP BY a string) grow interruptibly. With 300K keys in and a slot
// table already big enough for the next batch, the only growth left is
// the arena's; a batch of new keys under a cancel after two checks stops
// with the cancellation (append copied the 12 MB arena in one step),
// the groups made before keep their keys, and uncancelled the batch gives
// what a plain grouper gives.
func TestBytesArenaGrowContext(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	const n = 300_000
	first, more := stringKeys(mem, 0, n), stringKeys(mem, n, n)
	defer first.Release()
	defer more.Release()
	gr, err := newGrouper(mem, []arrow.DataType{arrow.BinaryTypes.String})
	if err != nil {
		t.Fatal(err)
	}
	defer gr.release()
	g, ok := gr.(*bytesGrouper)
	if !ok {
		t.Fatalf("GROUP BY string uses a %T, want the bytes grouper", gr)
	}
	want := make([]int32, n)
	if err := g.groupContext(context.Background(), []arrow.Array{first}, want); err != nil {
		t.Fatal(err)
	}
	g.t.rehash(g.t.grownLen(n), hashPos) // room for the next batch's groups
	g.t.arena = slices.Clip(g.t.arena)
	g.t.offs = slices.Clip(g.t.offs)
	arenaBefore := len(g.t.arena)
	gids := make([]int32, n)
	if err := g.groupContext(newCountdownCtx(2), []arrow.Array{more}, gids); !errors.Is(err, context.Canceled) {
		t.Fatalf("a batch growing the %d-byte arena under a cancel after two checks: %v, want context.Canceled", arenaBefore, err)
	}
	if len(g.t.arena) != arenaBefore || g.numGroups() != n {
		t.Fatalf("a cancelled growth left %d arena bytes (was %d) and %d groups (was %d)", len(g.t.arena), arenaBefore, g.numGroups(), n)
	}
	got := make([]int32, n)
	if err := g.groupContext(context.Background(), []arrow.Array{first}, got); err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(got, want) {
		t.Fatal("groups of earlier keys changed after a cancelled growth")
	}
	if err := g.groupContext(context.Background(), []arrow.Array{more}, gids); err != nil {
		t.Fatal(err)
	}
	model, err := newGrouper(mem, []arrow.DataType{arrow.BinaryTypes.String})
	if err != nil {
		t.Fatal(err)
	}
	defer model.release()
	wantMore := make([]int32, n)
	for _, keys := range []arrow.Array{first, more} {
		if err := model.group([]arrow.Array{keys}, wantMore); err != nil {
			t.Fatal(err)
		}
	}
	if !slices.Equal(gids, wantMore) {
		t.Fatal("uncancelled, the batch's groups differ from a plain grouper's")
	}
	for gid := range 2 * n {
		if string(g.t.key(gid)) != string(model.(*bytesGrouper).t.key(gid)) {
			t.Fatalf("group %d's key differs from a plain grouper's", gid)
		}
	}
}

// TestDistinctArenaGrowContext: count(DISTINCT s)'s set keeps its
// (group, value) keys in the same arena, which grows interruptibly: with
// the set's slots already big enough, a batch of new values under a cancel
// after two checks fails with the cancellation (the arena's append copied
// it in one step), and uncancelled the count is right.
func TestDistinctArenaGrowContext(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	in := arrow.NewSchema([]arrow.Field{{Name: "s", Type: arrow.BinaryTypes.String}}, nil)
	a, err := bindAggregate(in, mem, AggregateCall{Func: AggCount, Args: []Expr{Col("s")}, Distinct: true}, AggComplete)
	if err != nil {
		t.Fatal(err)
	}
	const n = 300_000
	first, more := stringKeys(mem, 0, n), stringKeys(mem, n, n)
	defer first.Release()
	defer more.Release()
	gids := make([]int32, n) // one group
	if err := resizeContext(context.Background(), a.acc, 1); err != nil {
		t.Fatal(err)
	}
	if err := a.acc.update(gids, []arrow.Array{first}); err != nil {
		t.Fatal(err)
	}
	d := a.acc.(*distinctAcc)
	d.set.rehash(d.set.grownLen(n), hashPos)
	d.set.arena = slices.Clip(d.set.arena)
	d.set.offs = slices.Clip(d.set.offs)
	if err := resizeContext(newCountdownCtx(2), a.acc, 1); err != nil {
		t.Fatal(err)
	}
	if err := a.acc.update(gids, []arrow.Array{more}); !errors.Is(err, context.Canceled) {
		t.Fatalf("a batch growing the set's %d-byte arena under a cancel after two checks: %v, want context.Canceled", len(d.set.arena), err)
	}
	if err := resizeContext(context.Background(), a.acc, 1); err != nil {
		t.Fatal(err)
	}
	if err := a.acc.update(gids, []arrow.Array{more}); err != nil {
		t.Fatal(err)
	}
	res, err := a.acc.final(mem, 0, 1, []int64{2 * n})
	if err != nil {
		t.Fatal(err)
	}
	defer res.Release()
	if got := res.(*array.Int64).Value(0); got != 2*n {
		t.Fatalf("count(DISTINCT s) = %d, want %d", got, 2*n)
	}
}
