package vector

import (
	"context"
	"errors"
	"reflect"
	"runtime"
	"slices"
	"testing"

	"github.com/apache/arrow/go/v17/arrow"
	"github.com/apache/arrow/go/v17/arrow/array"
	"github.com/apache/arrow/go/v17/arrow/memory"
)

// twoKeyBatch makes a (bigint, int) key pair per row: row i is
// (lo+i, (lo+i)%7), so every row is its own group.
func twoKeyBatch(mem memory.Allocator, lo, n int) []arrow.Array {
	a, b := array.NewInt64Builder(mem), array.NewInt32Builder(mem)
	defer a.Release()
	defer b.Release()
	for i := lo; i < lo+n; i++ {
		a.Append(int64(uint64(i) * 0x9e3779b97f4a7c15 >> 3))
		b.Append(int32(i % 7))
	}
	return []arrow.Array{a.NewArray(), b.NewArray()}
}

// TestFinishContext: the finish pass of the single-key and the bytes
// groupers over 300K groups checks its context between chunks of slots
// (a cancel after a few checks stops it), and uncancelled gives what
// finish gives.
func TestFinishContext(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	const n = 300_000
	keys := twoKeyBatch(mem, 0, n)
	defer releaseArrays(keys)
	sb := array.NewStringBuilder(mem)
	for i := range n {
		sb.Append(string(rune('a'+i%26)) + string(rune(i)))
	}
	strs := sb.NewArray()
	sb.Release()
	defer strs.Release()
	for _, c := range []struct {
		name string
		keys []arrow.Array
	}{{"fixed", keys[:1]}, {"bytes", []arrow.Array{strs}}} {
		t.Run(c.name, func(t *testing.T) {
			newG := func() grouper {
				g, err := newGrouper(mem, []arrow.DataType{c.keys[0].DataType()})
				if err != nil {
					t.Fatal(err)
				}
				if err := g.group(c.keys, make([]int32, n)); err != nil {
					t.Fatal(err)
				}
				return g
			}
			model := newG()
			defer model.release()
			want := model.finish()
			stopped := false
			for checks := int64(0); ; checks = 2*checks + 1 {
				g := newG()
				rows, err := finishContextOf(newCountdownCtx(checks), g)
				if err == nil {
					if !slices.Equal(rows, want) {
						t.Fatal("finishContext's row counts differ from finish's")
					}
					g.release()
					break
				}
				g.release()
				if !errors.Is(err, context.Canceled) {
					t.Fatal(err)
				}
				stopped = stopped || checks > 2
			}
			if !stopped {
				t.Fatal("no cancel after the first checks stopped the finish pass")
			}
		})
	}
}

// TestAccumulatorGrowContext: every accumulator that keeps arrays by
// group grows them interruptibly: from 256K to 1M groups (16K to 64K for
// approx_count_distinct's registers), a cancel after three checks stops
// the growth with the cancellation (it is not one step), and uncancelled
// the arrays hold the new groups. From one group to 1M the copy is
// nothing and the work is making the new arrays (zeroing them): that is
// interruptible too (makeContext).
func TestAccumulatorGrowContext(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	in := arrow.NewSchema([]arrow.Field{
		{Name: "x", Type: arrow.PrimitiveTypes.Int64, Nullable: true},
		{Name: "y", Type: arrow.PrimitiveTypes.Float64, Nullable: true},
		{Name: "s", Type: arrow.BinaryTypes.String, Nullable: true},
	}, nil)
	x, y, s := Col("x"), Col("y"), Col("s")
	calls := []AggregateCall{
		{Func: AggCount, Args: []Expr{x}}, {Func: AggSum, Args: []Expr{x}}, {Func: AggSum, Args: []Expr{y}},
		{Func: AggAvg, Args: []Expr{y}}, {Func: AggMin, Args: []Expr{x}}, {Func: AggMax, Args: []Expr{s}},
		{Func: AggFirst, Args: []Expr{s}}, {Func: AggLast, Args: []Expr{x}},
		{Func: AggApproxCountDistinct, Args: []Expr{x}}, {Func: AggCount, Args: []Expr{x}, Distinct: true},
		{Func: AggStddevSamp, Args: []Expr{y}}, {Func: AggCorr, Args: []Expr{x, y}}, {Func: AggKurtosis, Args: []Expr{y}},
		{Func: AggBitOr, Args: []Expr{x}}, {Func: AggTrySum, Args: []Expr{x}},
	}
	const to = 1 << 20
	for _, from := range []int{1, 256 << 10} {
		for _, mode := range []AggMode{AggComplete, AggMerge} {
			for _, call := range calls {
				if mode == AggMerge && call.Distinct || mode == AggComplete && call.Func == AggCount && !call.Distinct {
					continue // count(x) keeps no array until it sees a null
				}
				sch := in
				if mode == AggMerge {
					p, err := bindAggregate(in, mem, call, AggPartial)
					if err != nil {
						t.Fatal(err)
					}
					sch = arrow.NewSchema(p.state, nil)
				}
				a, err := bindAggregate(sch, mem, call, mode)
				if err != nil {
					t.Fatalf("%s: %v", call, err)
				}
				if _, ok := a.acc.(growerAcc); !ok {
					t.Errorf("%s (%T) cannot grow interruptibly", call, a.acc)
					continue
				}
				from, to := from, to
				if call.Func == AggApproxCountDistinct {
					from, to = from>>4, to>>4
				}
				a.acc.resize(from)
				if err := resizeContext(newCountdownCtx(3), a.acc, to); !errors.Is(err, context.Canceled) {
					t.Errorf("%s (mode %d, from %d groups): a cancel after three checks did not stop the growth: %v", call, mode, from, err)
				}
				if err := resizeContext(context.Background(), a.acc, to); err != nil {
					t.Fatalf("%s: %v", call, err)
				}
				if a.acc.heapBytes() < int64(to) {
					t.Errorf("%s: %d bytes after growing to %d groups", call, a.acc.heapBytes(), to)
				}
			}
		}
	}
}

// TestDistinctSetGrowContext: count(DISTINCT x)'s set of (group, value)
// pairs grows interruptibly: with 300K pairs in, a batch of new ones
// under a context cancelled after three checks fails with the
// cancellation (not one uninterruptible step), and uncancelled the counts
// are right.
func TestDistinctSetGrowContext(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	in := arrow.NewSchema([]arrow.Field{{Name: "x", Type: arrow.PrimitiveTypes.Int64}}, nil)
	a, err := bindAggregate(in, mem, AggregateCall{Func: AggCount, Args: []Expr{Col("x")}, Distinct: true}, AggComplete)
	if err != nil {
		t.Fatal(err)
	}
	const n = 300_000
	batch := func(lo int) ([]arrow.Array, []int32) {
		b := array.NewInt64Builder(mem)
		defer b.Release()
		for i := lo; i < lo+n; i++ {
			b.Append(int64(i))
		}
		return []arrow.Array{b.NewArray()}, make([]int32, n) // one group
	}
	first, gids := batch(0)
	defer releaseArrays(first)
	if err := resizeContext(context.Background(), a.acc, 1); err != nil {
		t.Fatal(err)
	}
	if err := a.acc.update(gids, first); err != nil {
		t.Fatal(err)
	}
	more, gids := batch(n)
	defer releaseArrays(more)
	if err := resizeContext(newCountdownCtx(3), a.acc, 1); err != nil {
		t.Fatal(err)
	}
	if err := a.acc.update(gids, more); !errors.Is(err, context.Canceled) {
		t.Fatalf("a batch that grows the set under a cancelled context: %v, want context.Canceled", err)
	}
	d := a.acc.(*distinctAcc)
	if d.set.n != 2*n {
		t.Fatalf("%d pairs in the set, want %d (a cancelled growth still takes the batch)", d.set.n, 2*n)
	}
	if err := resizeContext(context.Background(), a.acc, 1); err != nil {
		t.Fatal(err)
	}
	if err := a.acc.update(gids, more); err != nil {
		t.Fatal(err)
	}
	res, err := a.acc.final(mem, 0, 1, []int64{2 * n})
	if err != nil {
		t.Fatal(err)
	}
	defer res.Release()
	if got := res.(*array.Int64).Value(0); got != 2*n {
		t.Fatalf("count(DISTINCT x) = %d, want %d", got, 2*n)
	}
}

// TestMakeContext: making a 64 MB array to grow into is interruptible (a
// cancel after three checks stops it; make zeroes it in one call), its
// elements past the old length are zero even when the runtime hands out
// reused memory, and arrays of pointers are made by make.
func TestMakeContext(t *testing.T) {
	const n = 8 << 20
	if _, err := growCapContext(newCountdownCtx(3), []int64(nil), n); !errors.Is(err, context.Canceled) {
		t.Fatalf("growing an empty array to %d int64s under a cancel after three checks: %v, want context.Canceled", n, err)
	}
	for range 3 {
		// Dirty memory the runtime may hand out again.
		junk := make([]int64, n)
		for i := range junk {
			junk[i] = -1
		}
		junk = nil
		runtime.GC()
		s := []int64{7, 8, 9}
		g, err := growCapContext(context.Background(), s, n)
		if err != nil {
			t.Fatal(err)
		}
		if len(g) != 3 || cap(g) < n || g[0] != 7 || g[2] != 9 {
			t.Fatalf("grown array: len %d cap %d head %v", len(g), cap(g), g[:min(3, len(g))])
		}
		if i := slices.IndexFunc(g[3:cap(g)], func(v int64) bool { return v != 0 }); i >= 0 {
			t.Fatalf("element %d of the grown array is %d, want 0", 3+i, g[3+i])
		}
	}
	if !pointerFree(reflect.TypeFor[groupSlot]()) || pointerFree(reflect.TypeFor[[]byte]()) || pointerFree(reflect.TypeFor[struct {
		a int
		s string
	}]()) {
		t.Fatal("pointerFree misclassifies a type")
	}
	p, err := makeContext[[]byte](context.Background(), 0, 1<<20)
	if err != nil || cap(p) != 1<<20 {
		t.Fatalf("array of slices: cap %d, %v", cap(p), err)
	}
}
