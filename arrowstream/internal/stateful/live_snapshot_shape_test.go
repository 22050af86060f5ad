package stateful

import (
	"context"
	"path/filepath"
	"slices"
	"strconv"
	"testing"

	"github.com/apache/arrow/go/v17/arrow/memory"

	"github.com/arrowstream/arrowstream/arrowstream/stream"
	"github.com/arrowstream/arrowstream/checkpoint"
	"github.com/arrowstream/arrowstream/vector"
	vt "github.com/arrowstream/arrowstream/vector/vectortest"
)

// shapeOp is a count and sum GROUP BY k, t (t the time key) over 3 partitions
// after one epoch of 3000 rows (700 keys, 3 times, null keys among them),
// committed: every live group has its store key and partition kept.
// done closes the operator and then its stores.
func shapeOp(t *testing.T, mem memory.Allocator) (op *statefulAggregate, done func()) {
	t.Helper()
	const parts = 3
	ctx := context.Background()
	dir := t.TempDir()
	provider := checkpoint.NewMemoryProvider(&checkpoint.Writer{NoSync: true}, checkpoint.StoreOptions{Allocator: mem, NoLiveSnapshots: true})
	spec := vector.AggregateSpec{
		GroupBy: []vector.NamedExpr{vector.As(vector.Col("k"), "k"), vector.As(vector.Col("t"), "t")},
		Aggregates: []vector.AggregateCall{
			{Func: vector.AggCountStar, Name: "n"},
			{Func: vector.AggSum, Args: []vector.Expr{vector.Col("k")}, Name: "s"},
		},
	}
	op, err := newStatefulAggregate(mem, 0, liveInSchema, spec, stream.Append, 1)
	if err != nil {
		provider.Close()
		t.Fatal(err)
	}
	done = func() {
		op.Close()
		provider.Close()
	}
	var data []vt.Row
	for i := range 3000 {
		var k any = int64(i % 700)
		if i%700%5 == 0 {
			k = nil // a null key: its group's sum is null
		}
		data = append(data, vt.Row{k, (1 + int64(i/700%3)) * 1_000_000})
	}
	ep := Epoch{EpochInfo: stream.EpochInfo{ID: 0, HasWatermark: true, CheckpointDir: dir, NumPartitions: parts}}
	for p := range parts {
		part, err := provider.OpenPartition(filepath.Join(dir, "state", "0", strconv.Itoa(p)))
		if err != nil {
			t.Fatal(err)
		}
		st, err := part.Begin(0)
		if err != nil {
			t.Fatal(err)
		}
		ep.State = append(ep.State, st)
	}
	rec := vt.BuildRecord(mem, liveInSchema, data)
	scan, err := vector.NewScan(liveInSchema, rec)
	rec.Release()
	if err != nil {
		t.Fatal(err)
	}
	out, err := op.Execute(ctx, ep, scan)
	if err != nil {
		t.Fatal(err)
	}
	recs, err := vector.Drain(ctx, out)
	out.Close()
	releaseRecords(recs)
	if err != nil {
		t.Fatal(err)
	}
	for _, st := range ep.State {
		if _, err := st.Commit(ctx); err != nil {
			t.Fatal(err)
		}
	}
	return op, done
}

// TestKeyedViewShape: a live snapshot offered from the kept store keys
// tells the store its exact shape (checkpoint.LiveShaper: entries, key
// and value bytes, what Entries then emits), so that the snapshot's
// arena and body are sized once; asked before or after Entries, for each
// partition, with null sums (shorter values) among the groups.
func TestKeyedViewShape(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	ctx := context.Background()
	op, done := shapeOp(t, mem)
	defer done()
	for _, shapeFirst := range []bool{true, false} {
		want := []bool{true, false, true}
		gids := op.live.liveIn(want)
		if len(gids) == 0 || !op.live.allStored(gids) {
			t.Fatalf("%d groups, all stored %v", len(gids), op.live.allStored(gids))
		}
		catchers := []*viewCatcher{{}, {}, {}}
		stores := []checkpoint.StateStore{catchers[0], catchers[1], catchers[2]}
		if err := op.offerKeyed(stores, want, gids); err != nil {
			t.Fatal(err)
		}
		total := 0
		for p, c := range catchers {
			if !want[p] {
				if c.view != nil {
					t.Fatalf("partition %d not wanted got a view", p)
				}
				continue
			}
			sh, ok := c.view.(checkpoint.LiveShaper)
			if !ok {
				t.Fatalf("the view of partition %d (%T) does not tell its shape", p, c.view)
			}
			var n, nShape int
			var kb, vb, kbShape, vbShape int64
			if shapeFirst {
				nShape, kbShape, vbShape = sh.EntryShape()
			}
			if err := c.view.Entries(ctx, func(key, value []byte) error {
				n++
				kb += int64(len(key))
				vb += int64(len(value))
				return nil
			}); err != nil {
				t.Fatal(err)
			}
			if !shapeFirst {
				nShape, kbShape, vbShape = sh.EntryShape()
			}
			c.view.Release()
			if n == 0 || nShape != n || kbShape != kb || vbShape != vb {
				t.Fatalf("partition %d: shape (%d entries, %d key bytes, %d value bytes), Entries emitted (%d, %d, %d)", p, nShape, kbShape, vbShape, n, kb, vb)
			}
			total += n
		}
		if total != len(gids) {
			t.Fatalf("%d entries, want %d", total, len(gids))
		}
	}
}

// TestLiveInKeepsList: the live groups of the wanted partitions offered
// for a snapshot are those of a model (live, of a wanted or unknown
// partition), after groups are deleted too, and asking again takes no
// allocation: the list is kept for its capacity between epochs.
func TestLiveInKeepsList(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	op, done := shapeOp(t, mem)
	defer done()
	l := op.live
	model := func(want []bool) []int32 {
		var out []int32
		for g := int32(0); g < int32(l.agg.NumGroups()); g++ {
			if p := l.partOf[g]; !l.agg.IsDead(g) && (p == 0 || want[p-1]) {
				out = append(out, g)
			}
		}
		return out
	}
	check := func(want []bool) {
		t.Helper()
		got, exp := l.liveIn(want), model(want)
		if !slices.Equal(got, exp) {
			t.Fatalf("liveIn(%v): %d groups %v…, want %d %v…", want, len(got), got[:min(len(got), 8)], len(exp), exp[:min(len(exp), 8)])
		}
	}
	all := []bool{true, true, true}
	check(all)
	check([]bool{false, true, false})
	var drop []int32
	for g := int32(0); g < int32(l.agg.NumGroups()); g += 3 {
		drop = append(drop, g)
	}
	l.remove(drop)
	check([]bool{true, false, true})
	check(all)
	if n := testing.AllocsPerRun(20, func() { l.liveIn(all) }); n != 0 {
		t.Fatalf("liveIn allocated %v times a call, want 0 (its list kept)", n)
	}
}
