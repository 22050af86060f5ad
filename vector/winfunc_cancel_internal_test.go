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

// checkCountCtx is a context already cancelled that counts how often its
// Err is read: a pass that stops at its first check after its first chunk
// reads it exactly once.
type checkCountCtx struct {
	context.Context
	checks int
}

func (c *checkCountCtx) Err() error {
	c.checks++
	return context.Canceled
}

// winTestRecord is bigRows rows of (o BIGINT with nulls, s STRING with
// nulls, v BIGINT with nulls), o in few distinct values so that peer groups
// span chunks.
func winTestRecord(mem memory.Allocator) arrow.Record {
	r := rand.New(rand.NewPCG(3, 4))
	o := randInt64s(mem, r, bigRows, 40, 13)
	s := randStrings(mem, r, bigRows, 9)
	v := randInt64s(mem, r, bigRows, 1000, 7)
	schema := arrow.NewSchema([]arrow.Field{
		{Name: "o", Type: Int64, Nullable: true},
		{Name: "s", Type: String, Nullable: true},
		{Name: "v", Type: Int64, Nullable: true},
	}, nil)
	rec := array.NewRecord(schema, []arrow.Array{o, s, v}, bigRows)
	o.Release()
	s.Release()
	v.Release()
	return rec
}

// TestWindowPassesStopWhenCancelled: each pass of the window operator over
// one partition larger than cancelCheckRows (the gather into partition
// order, the boundaries, the frames, and every kind of function) returns
// the context's error at its first check, after its first chunk, rather
// than finishing the pass; and leaves no memory behind.
func TestWindowPassesStopWhenCancelled(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	rec := winTestRecord(mem)
	defer rec.Release()
	expect := func(t *testing.T, ctx *checkCountCtx, err error) {
		t.Helper()
		if !errors.Is(err, context.Canceled) {
			t.Fatalf("err = %v, want context.Canceled", err)
		}
		if ctx.checks != 1 {
			t.Fatalf("the pass read the context %d times, want once (it stops at its first check)", ctx.checks)
		}
	}
	newCtx := func() *checkCountCtx { return &checkCountCtx{Context: context.Background()} }

	t.Run("gather", func(t *testing.T) {
		perm := make([]int32, bigRows)
		for i := range perm {
			perm[i] = int32(bigRows - 1 - i)
		}
		for _, col := range []int{0, 1} {
			ctx := newCtx()
			one := rec.NewSlice(0, rec.NumRows())
			proj := array.NewRecord(arrow.NewSchema([]arrow.Field{rec.Schema().Field(col)}, nil), []arrow.Array{one.Column(col)}, rec.NumRows())
			one.Release()
			out, err := gatherRowsContext(ctx, mem, proj, perm)
			proj.Release()
			if out != nil {
				out.Release()
			}
			expect(t, ctx, err)
		}
	})
	t.Run("markChanges", func(t *testing.T) {
		for col := range 2 {
			ctx := newCtx()
			expect(t, ctx, markChangesContext(ctx, rec.Column(col), make([]bool, bigRows)))
		}
	})

	growing := WindowFrame{Start: FrameBound{Kind: FrameUnboundedPreceding}, End: FrameBound{Kind: FrameCurrentRow}}
	moving := WindowFrame{Start: FrameBound{Kind: FramePreceding, Offset: 10}, End: FrameBound{Kind: FrameCurrentRow}}
	ranged := WindowFrame{Range: true, Start: FrameBound{Kind: FramePreceding, Offset: 2}, End: FrameBound{Kind: FrameFollowing, Offset: 1}}
	v := Col("v")
	calls := []WindowCall{
		{Func: WinRowNumber, Frame: growing, Name: "row_number"},
		{Func: WinRank, Frame: growing, Name: "rank"},
		{Func: WinDenseRank, Frame: growing, Name: "dense_rank"},
		{Func: WinNtile, N: 7, Frame: growing, Name: "ntile"},
		{Func: WinCumeDist, Frame: growing, Name: "cume_dist"},
		{Func: WinLag, N: 1, Args: []Expr{v}, Frame: growing, Name: "lag"},
		{Func: WinNthValue, N: 2, Args: []Expr{v}, Frame: moving, Name: "nth_value"},
		{Func: WinAggregate, Agg: AggregateCall{Func: AggSum, Args: []Expr{v}}, Frame: growing, Name: "running_sum"},
		{Func: WinAggregate, Agg: AggregateCall{Func: AggCount, Args: []Expr{v}}, Frame: moving, Name: "count"},
		{Func: WinAggregate, Agg: AggregateCall{Func: AggCountStar}, Frame: moving, Name: "count_star"},
		{Func: WinAggregate, Agg: AggregateCall{Func: AggMax, Args: []Expr{v}}, Frame: moving, Name: "moving_max"},
		{Func: WinAggregate, Agg: AggregateCall{Func: AggFirst, Args: []Expr{v}}, Frame: moving, Name: "first"},
		{Func: WinAggregate, Agg: AggregateCall{Func: AggSum, Args: []Expr{v}}, Frame: ranged, Name: "range_sum"},
		{Func: WinAggregate, Agg: AggregateCall{Func: AggSum, Args: []Expr{v}}, Frame: WindowFrame{Start: FrameBound{Kind: FrameUnboundedPreceding}, End: FrameBound{Kind: FrameUnboundedFollowing}}, Name: "partition_sum"},
	}
	spec := WindowOpSpec{OrderBy: []SortKey{{Expr: Col("o")}}, Calls: calls}
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

	t.Run("boundaries", func(t *testing.T) {
		ctx := newCtx()
		_, err := w.boundaries(ctx, rec)
		expect(t, ctx, err)
	})
	for _, f := range []WindowFrame{growing, moving, ranged} {
		t.Run("frame/"+f.String(), func(t *testing.T) {
			ctx := newCtx()
			_, _, err := b.frame(ctx, f)
			expect(t, ctx, err)
		})
	}
	for _, c := range w.calls {
		t.Run("call/"+c.call.Name, func(t *testing.T) {
			// The frames (computed inside eval) are a pass of their own and
			// the first to check; the function's own pass is shown by
			// calling it with the frames made.
			ctx := newCtx()
			out, err := c.eval(ctx, mem, rec, b, spec)
			if out != nil {
				out.Release()
			}
			expect(t, ctx, err)
		})
	}
	lo, hi, err := b.frame(context.Background(), moving)
	if err != nil {
		t.Fatal(err)
	}
	vals := rec.Column(2)
	t.Run("validPrefix", func(t *testing.T) {
		ctx := newCtx()
		_, err := validPrefix(ctx, vals)
		expect(t, ctx, err)
	})
	t.Run("frameExtreme", func(t *testing.T) {
		ctx := newCtx()
		_, err := frameExtreme(ctx, vals, b, lo, hi, true)
		expect(t, ctx, err)
	})
	t.Run("frameIndex", func(t *testing.T) {
		for _, ignoreNulls := range []bool{false, true} {
			ctx := newCtx()
			_, err := frameIndex(ctx, vals, lo, hi, 2, false, ignoreNulls)
			expect(t, ctx, err)
		}
	})
	t.Run("resultColumn", func(t *testing.T) {
		v := make([]int64, bigRows)
		valid := make([]bool, bigRows)
		for i := range v {
			v[i], valid[i] = int64(i), i%5 != 0
		}
		ctx := newCtx()
		_, err := fixedArrayContext(ctx, mem, Int64, v, valid)
		expect(t, ctx, err)
		// Uncancelled: the values and nulls given.
		arr, err := fixedArrayContext(context.Background(), mem, Int64, v, valid)
		if err != nil {
			t.Fatal(err)
		}
		defer arr.Release()
		a := arr.(*array.Int64)
		for i := range v {
			if a.IsValid(i) != valid[i] || valid[i] && a.Value(i) != v[i] {
				t.Fatalf("row %d: %v (valid %v), want %d (valid %v)", i, a.Value(i), a.IsValid(i), v[i], valid[i])
			}
		}
		if a.NullN() != (bigRows+4)/5 {
			t.Fatalf("%d nulls, want %d", a.NullN(), (bigRows+4)/5)
		}
	})
	t.Run("runningSum", func(t *testing.T) {
		_, ghi, err := b.frame(context.Background(), growing)
		if err != nil {
			t.Fatal(err)
		}
		ctx := newCtx()
		_, ok, err := w.calls[7].runningSum(ctx, mem, vals, b, ghi)
		if !ok {
			t.Fatal("running sum not taken for BIGINT")
		}
		expect(t, ctx, err)
	})
}

// emptyOp is an operator with a schema and no rows, for binding.
type emptyOp struct{ schema *arrow.Schema }

func (e emptyOp) Schema() *arrow.Schema { return e.schema }
func (e emptyOp) Next(context.Context) (arrow.Record, error) {
	return nil, context.Canceled
}
func (e emptyOp) Close() error { return nil }
