package vector

import (
	"context"
	"errors"
	"math/rand/v2"
	"testing"

	"github.com/apache/arrow/go/v17/arrow"
	"github.com/apache/arrow/go/v17/arrow/array"
	"github.com/apache/arrow/go/v17/arrow/memory"
)

// cancelAfterCtx answers its first allow Err calls with nil and every
// later one with context.Canceled, counting them: a pass that checks
// between chunks stops at check allow+1, in the middle of its rows.
type cancelAfterCtx struct {
	context.Context
	allow, checks int
}

func (c *cancelAfterCtx) Err() error {
	c.checks++
	if c.checks > c.allow {
		return context.Canceled
	}
	return nil
}

// expectStopped fails unless err is the cancellation and ctx was read
// exactly want times.
func expectStopped(t *testing.T, err error, checks, want int) {
	t.Helper()
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("err = %v, want context.Canceled", err)
	}
	if checks != want {
		t.Fatalf("the pass read the context %d times, want %d (it stops at the first check that sees the cancel)", checks, want)
	}
}

// TestTakeContext: the chunked Take of a window function's result stops
// at its first check (after its first chunk) when cancelled, and
// otherwise equals Take, with and without negative (null) indices, for
// fixed-width, string and boolean columns.
func TestTakeContext(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	rec := winTestRecord(mem)
	defer rec.Release()
	r := rand.New(rand.NewPCG(7, 8))
	bools := randBools(mem, r, bigRows)
	defer bools.Release()
	dense := make([]int32, bigRows)
	holes := make([]int32, bigRows)
	for i := range dense {
		dense[i] = int32(r.IntN(bigRows))
		holes[i] = dense[i]
		if i%13 == 5 {
			holes[i] = -1
		}
	}
	cols := map[string]arrow.Array{"int64": rec.Column(2), "string": rec.Column(1), "bool": bools}
	for name, col := range cols {
		for _, idx := range [][]int32{dense, holes} {
			ctx := &checkCountCtx{Context: context.Background()}
			out, err := takeContext(ctx, mem, col, idx)
			if out != nil {
				out.Release()
			}
			expectStopped(t, err, ctx.checks, 1)

			got, err := takeContext(context.Background(), mem, col, idx)
			if err != nil {
				t.Fatal(err)
			}
			want, err := Take(mem, col, idx)
			if err != nil {
				t.Fatal(err)
			}
			if !array.Equal(got, want) {
				t.Fatalf("%s: takeContext differs from Take", name)
			}
			if got.NullN() != want.NullN() {
				t.Fatalf("%s: %d nulls, want %d", name, got.NullN(), want.NullN())
			}
			got.Release()
			want.Release()
		}
	}
}

// randBools is n random booleans, a tenth null.
func randBools(mem memory.Allocator, r *rand.Rand, n int) arrow.Array {
	b := array.NewBooleanBuilder(mem)
	defer b.Release()
	for range n {
		if r.IntN(10) == 0 {
			b.AppendNull()
		} else {
			b.Append(r.IntN(2) == 0)
		}
	}
	return b.NewArray()
}

// TestAccumulatorPassesStopWhenCancelled: a whole-partition aggregate's
// accumulator update stops after its first chunk (the accumulator then
// holds exactly that chunk), and the final values of many groups (a frame
// per row) stop at their first check; uncancelled, both equal one call.
func TestAccumulatorPassesStopWhenCancelled(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	rec := winTestRecord(mem)
	defer rec.Release()
	v := rec.Column(2).(*array.Int64)
	bind := func() accumulator {
		a, err := bindAggregate(rec.Schema(), mem, AggregateCall{Func: AggSum, Args: []Expr{Col("v")}}, AggComplete)
		if err != nil {
			t.Fatal(err)
		}
		return a.acc
	}
	sumOf := func(lo, hi int) int64 {
		var s int64
		for i := lo; i < hi; i++ {
			if v.IsValid(i) {
				s += v.Value(i)
			}
		}
		return s
	}
	final := func(acc accumulator, n int, rows []int64) *array.Int64 {
		out, err := acc.final(mem, 0, n, rows)
		if err != nil {
			t.Fatal(err)
		}
		return out.(*array.Int64)
	}

	t.Run("update", func(t *testing.T) {
		gids := make([]int32, bigRows) // one partition
		acc := bind()
		acc.resize(1)
		ctx := &checkCountCtx{Context: context.Background()}
		expectStopped(t, updateContext(ctx, acc, gids, []arrow.Array{v}), ctx.checks, 1)
		out := final(acc, 1, []int64{bigRows})
		if got, want := out.Value(0), sumOf(0, cancelCheckRows); got != want {
			t.Fatalf("after the cancel the sum is %d, want %d (the first chunk's)", got, want)
		}
		out.Release()

		acc = bind()
		acc.resize(1)
		if err := updateContext(context.Background(), acc, gids, []arrow.Array{v}); err != nil {
			t.Fatal(err)
		}
		out = final(acc, 1, []int64{bigRows})
		if got, want := out.Value(0), sumOf(0, bigRows); got != want {
			t.Fatalf("sum %d, want %d", got, want)
		}
		out.Release()
	})
	t.Run("final", func(t *testing.T) {
		gids := make([]int32, bigRows) // a group per row
		rows := make([]int64, bigRows)
		for i := range gids {
			gids[i], rows[i] = int32(i), 1
		}
		acc := bind()
		acc.resize(bigRows)
		if err := acc.update(gids, []arrow.Array{v}); err != nil {
			t.Fatal(err)
		}
		ctx := &checkCountCtx{Context: context.Background()}
		out, err := finalContext(ctx, mem, acc, bigRows, rows)
		if out != nil {
			out.Release()
		}
		expectStopped(t, err, ctx.checks, 1)
		got, err := finalContext(context.Background(), mem, acc, bigRows, rows)
		if err != nil {
			t.Fatal(err)
		}
		defer got.Release()
		want := final(acc, bigRows, rows)
		defer want.Release()
		if !array.Equal(got, want) {
			t.Fatal("finalContext differs from one final")
		}
	})
}

// TestIgnoreNullsAndRangeKeysStopInsidePartition: lag/lead IGNORE NULLS
// and the RANGE frame's key preparation over one partition larger than a
// chunk stop at the check after their first chunk. (Before, lag/lead
// checked once per partition and rangeKeys once per key: a context
// cancelled after that check let the whole partition run.)
func TestIgnoreNullsAndRangeKeysStopInsidePartition(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	rec := winTestRecord(mem)
	defer rec.Release()
	spec := WindowOpSpec{OrderBy: []SortKey{{Expr: Col("o")}}, Calls: []WindowCall{{
		Func: WinAggregate, Agg: AggregateCall{Func: AggSum, Args: []Expr{Col("v")}},
		Frame: WindowFrame{Range: true, Start: FrameBound{Kind: FramePreceding, Offset: 2}, End: FrameBound{Kind: FrameCurrentRow}},
	}}}
	w, err := NewWindowOp(mem, emptyOp{rec.Schema()}, spec)
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	b, err := w.boundaries(context.Background(), rec)
	if err != nil {
		t.Fatal(err)
	}
	defer b.release()
	if len(b.parts) != 2 {
		t.Fatalf("%d partitions, want one", len(b.parts)-1)
	}
	for _, shift := range []int64{-1, 2} {
		ctx := &cancelAfterCtx{Context: context.Background(), allow: 1}
		err := ignoreNullsOffsets(ctx, rec.Column(2), b, shift, make([]int32, bigRows))
		expectStopped(t, err, ctx.checks, 2)
	}
	ctx := &cancelAfterCtx{Context: context.Background(), allow: 1}
	_, _, _, err = b.rangeKeys(ctx)
	expectStopped(t, err, ctx.checks, 2)
}
