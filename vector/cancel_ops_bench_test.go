package vector_test

import (
	"context"
	"io"
	"strconv"
	"sync/atomic"

	"github.com/apache/arrow/go/v17/arrow"
	"github.com/apache/arrow/go/v17/arrow/array"
	"github.com/apache/arrow/go/v17/arrow/memory"

	"github.com/arrowstream/arrowstream/vector"
)

// textOp produces n rows of a string column "s", row i being text(i), in
// 64K-row batches, counting the rows it has produced.
type textOp struct {
	mem      memory.Allocator
	schema   *arrow.Schema
	n, next  int
	text     func(buf []byte, i int) []byte
	produced atomic.Int64
}

func newTextOp(mem memory.Allocator, n int, text func(buf []byte, i int) []byte) *textOp {
	return &textOp{mem: mem, n: n, text: text,
		schema: arrow.NewSchema([]arrow.Field{{Name: "s", Type: vector.String}}, nil)}
}

func (g *textOp) Schema() *arrow.Schema { return g.schema }

func (g *textOp) Next(ctx context.Context) (arrow.Record, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if g.next >= g.n {
		return nil, io.EOF
	}
	end := min(g.next+64<<10, g.n)
	b := array.NewStringBuilder(g.mem)
	defer b.Release()
	b.Reserve(end - g.next)
	var buf []byte
	for i := g.next; i < end; i++ {
		buf = g.text(buf[:0], i)
		b.BinaryBuilder.Append(buf)
	}
	col := b.NewArray()
	defer col.Release()
	g.produced.Add(int64(end - g.next))
	g.next = end
	return array.NewRecord(g.schema, []arrow.Array{col}, int64(col.Len())), nil
}

func (g *textOp) Close() error { return nil }

// cancelOpCases are BenchmarkCancelLatency's trials of the operators of
// issue 17's second round: window functions over one partition of 20M
// rows (sorted, and without ORDER BY so that the cancel lands in the
// passes after the sort), a sort of 4M distinct strings, EXCEPT DISTINCT (an anti join on
// null-safe keys, then DISTINCT), from_json over a column of documents
// and explode of 100-element arrays.
func cancelOpCases(fatal func(...any)) []cancelCase {
	v := vector.Col("value")
	return []cancelCase{
		{name: "window_20M_one_partition", op: func(mem memory.Allocator) (vector.Operator, func() bool) {
			// Running sum and row_number over one partition: cancelled once
			// the input is read (while it sorts and computes).
			const rows = 20_000_000
			in := newGenOp(mem, rows, true)
			running := vector.WindowFrame{Start: vector.FrameBound{Kind: vector.FrameUnboundedPreceding},
				End: vector.FrameBound{Kind: vector.FrameCurrentRow}}
			w, err := vector.NewWindowOp(mem, in, vector.WindowOpSpec{
				OrderBy: []vector.SortKey{{Expr: v}},
				Calls: []vector.WindowCall{
					{Func: vector.WinAggregate, Agg: vector.AggregateCall{Func: vector.AggSum, Args: []vector.Expr{v}}, Frame: running, Name: "s"},
					{Func: vector.WinRowNumber, Frame: running, Name: "r"},
				}})
			if err != nil {
				fatal(err)
			}
			return w, func() bool { return in.produced.Load() == rows }
		}},
		{name: "window_20M_no_sort", op: func(mem memory.Allocator) (vector.Operator, func() bool) {
			// The same calls without ORDER BY (row_number then numbers the
			// rows in input order): no sort. Spread: cancelled anywhere in
			// the concatenation and the passes over the partition (frames,
			// running sum, row numbers), which a cancel right after the
			// input never reaches. The values are not shuffled: shuffled,
			// the running sum overflows at row 3 and the run ends there.
			const rows = 20_000_000
			in := newGenOp(mem, rows, false)
			running := vector.WindowFrame{Start: vector.FrameBound{Kind: vector.FrameUnboundedPreceding},
				End: vector.FrameBound{Kind: vector.FrameCurrentRow}}
			w, err := vector.NewWindowOp(mem, in, vector.WindowOpSpec{
				Calls: []vector.WindowCall{
					{Func: vector.WinAggregate, Agg: vector.AggregateCall{Func: vector.AggSum, Args: []vector.Expr{v}}, Frame: running, Name: "s"},
					{Func: vector.WinRowNumber, Frame: running, Name: "r"},
				}})
			if err != nil {
				fatal(err)
			}
			return w, func() bool { return in.produced.Load() == rows }
		}, spread: true},
		{name: "window_20M_partition_funcs", op: func(mem memory.Allocator) (vector.Operator, func() bool) {
			// One partition without ORDER BY: sum and max over the whole
			// partition (the accumulator's update, the extreme's scan and
			// the gathers of the results), lag, and lead IGNORE NULLS over
			// a column with nulls. Spread, and not shuffled (the sum would
			// overflow), like window_20M_no_sort.
			const rows = 20_000_000
			in := newGenOp(mem, rows, false)
			whole := vector.WindowFrame{Start: vector.FrameBound{Kind: vector.FrameUnboundedPreceding},
				End: vector.FrameBound{Kind: vector.FrameUnboundedFollowing}}
			holes := vector.If(vector.Eq(vector.Mod(v, vector.TypedLit(vector.Int64, int64(3))), vector.TypedLit(vector.Int64, int64(0))),
				vector.TypedLit(vector.Int64, nil), v)
			w, err := vector.NewWindowOp(mem, in, vector.WindowOpSpec{
				Calls: []vector.WindowCall{
					{Func: vector.WinAggregate, Agg: vector.AggregateCall{Func: vector.AggSum, Args: []vector.Expr{v}}, Frame: whole, Name: "s"},
					{Func: vector.WinAggregate, Agg: vector.AggregateCall{Func: vector.AggMax, Args: []vector.Expr{v}}, Frame: whole, Name: "m"},
					{Func: vector.WinLag, N: 1, Args: []vector.Expr{v}, Frame: whole, Name: "lag"},
					{Func: vector.WinLead, N: 1, IgnoreNulls: true, Args: []vector.Expr{holes}, Frame: whole, Name: "lead"},
				}})
			if err != nil {
				fatal(err)
			}
			return w, func() bool { return in.produced.Load() == rows }
		}, spread: true},
		{name: "window_20M_range", op: func(mem memory.Allocator) (vector.Operator, func() bool) {
			// A RANGE frame with offsets over one partition of 20M rows
			// already in order (the sort is quick), spread over what runs
			// after the input is read: the sort, the key preparation, the
			// frames and the count.
			const rows = 20_000_000
			in := newGenOp(mem, rows, false)
			ranged := vector.WindowFrame{Range: true, Start: vector.FrameBound{Kind: vector.FramePreceding, Offset: 5},
				End: vector.FrameBound{Kind: vector.FrameFollowing, Offset: 5}}
			w, err := vector.NewWindowOp(mem, in, vector.WindowOpSpec{
				OrderBy: []vector.SortKey{{Expr: v}},
				Calls: []vector.WindowCall{
					{Func: vector.WinAggregate, Agg: vector.AggregateCall{Func: vector.AggCount, Args: []vector.Expr{v}}, Frame: ranged, Name: "c"},
				}})
			if err != nil {
				fatal(err)
			}
			return w, func() bool { return in.produced.Load() == rows }
		}, spread: true},
		{name: "window_20M_expr_arg", op: func(mem memory.Allocator) (vector.Operator, func() bool) {
			// A whole-partition sum of an argument expression that
			// computes (not a column), spread over what runs after the
			// input is read: the expression is evaluated over the 20M
			// sorted rows in checked slices, then summed.
			const rows = 20_000_000
			in := newGenOp(mem, rows, false)
			whole := vector.WindowFrame{Start: vector.FrameBound{Kind: vector.FrameUnboundedPreceding},
				End: vector.FrameBound{Kind: vector.FrameUnboundedFollowing}}
			arg := vector.If(vector.Eq(vector.Mod(v, vector.TypedLit(vector.Int64, int64(7))), vector.TypedLit(vector.Int64, int64(0))),
				vector.Mul(v, vector.TypedLit(vector.Int64, int64(3))), vector.Add(v, vector.TypedLit(vector.Int64, int64(1))))
			w, err := vector.NewWindowOp(mem, in, vector.WindowOpSpec{
				Calls: []vector.WindowCall{
					{Func: vector.WinAggregate, Agg: vector.AggregateCall{Func: vector.AggSum, Args: []vector.Expr{arg}}, Frame: whole, Name: "s"},
				}})
			if err != nil {
				fatal(err)
			}
			return w, func() bool { return in.produced.Load() == rows }
		}, spread: true},
		{name: "array_reverse_20M", op: func(mem memory.Allocator) (vector.Operator, func() bool) {
			// One row whose array (from sequence) has 20M elements: spread
			// over the sequence and the function, which work over the
			// elements in checked pieces.
			return arrayOpCase(mem, fatal, "reverse", func(seq vector.Expr) []vector.Expr { return []vector.Expr{seq} })
		}, spread: true},
		{name: "array_distinct_20M", op: func(mem memory.Allocator) (vector.Operator, func() bool) {
			// One row whose array (from sequence) has 20M elements: spread
			// over the sequence and the function, which work over the
			// elements in checked pieces.
			return arrayOpCase(mem, fatal, "array_distinct", func(seq vector.Expr) []vector.Expr { return []vector.Expr{seq} })
		}, spread: true},
		{name: "array_slice_20M", op: func(mem memory.Allocator) (vector.Operator, func() bool) {
			// One row whose array (from sequence) has 20M elements: spread
			// over the sequence and the function, which work over the
			// elements in checked pieces.
			return arrayOpCase(mem, fatal, "slice", func(seq vector.Expr) []vector.Expr {
				return []vector.Expr{seq, vector.TypedLit(vector.Int64, int64(2)), vector.TypedLit(vector.Int64, int64(20_000_000))}
			})
		}, spread: true},
		{name: "transform_20M", op: func(mem memory.Allocator) (vector.Operator, func() bool) {
			// One row whose array (from sequence) has 20M elements,
			// transform(a, x -> x + 1): spread over the sequence and the
			// lambda, which is evaluated over checked 64K-element slices.
			return arrayOpCase(mem, fatal, "", func(seq vector.Expr) []vector.Expr {
				x := &vector.LambdaVar{Name: "x#λ", Type: vector.Int64}
				return []vector.Expr{&vector.HigherOrder{Name: "transform", Args: []vector.Expr{seq}, Fns: []*vector.Lambda{{
					Params: []string{x.Name}, Body: vector.Add(x, vector.TypedLit(vector.Int64, int64(1))),
				}}}}
			})
		}, spread: true},
		{name: "sort_4M_strings", op: func(mem memory.Allocator) (vector.Operator, func() bool) {
			const rows = 4 << 20
			in := newTextOp(mem, rows, func(buf []byte, i int) []byte {
				buf = append(buf, "key-"...)
				return strconv.AppendUint(buf, uint64(i)*0x9e3779b97f4a7c15>>8, 10)
			})
			s, err := vector.NewSort(mem, in, []vector.SortKey{{Expr: vector.Col("s")}})
			if err != nil {
				fatal(err)
			}
			return s, func() bool { return in.produced.Load() == rows }
		}},
		{name: "except_4M", op: func(mem memory.Allocator) (vector.Operator, func() bool) {
			// 4M rows EXCEPT 2M of them: cancelled while the anti join's
			// 2M rows without a match are being made distinct.
			left, right := newGenOp(mem, 4<<20, false), newGenOp(mem, 2<<20, false)
			j, err := vector.NewHashJoin(mem, left, right, vector.JoinSpec{Type: vector.LeftAntiJoin,
				LeftKeys: []vector.Expr{v}, RightKeys: []vector.Expr{v}, NullSafe: []bool{true}})
			if err != nil {
				fatal(err)
			}
			a, err := vector.NewHashAggregate(mem, j, vector.AggregateSpec{GroupBy: []vector.NamedExpr{{Name: "value", Expr: v}}})
			if err != nil {
				fatal(err)
			}
			return a, func() bool { return left.produced.Load() >= 3<<20 }
		}},
		{name: "from_json_4M", op: func(mem memory.Allocator) (vector.Operator, func() bool) {
			in := newTextOp(mem, 4<<20, func(buf []byte, i int) []byte {
				buf = append(buf, `{"a": [`...)
				for k := range 10 {
					buf = strconv.AppendInt(buf, int64(i+k), 10)
					buf = append(buf, ',')
				}
				buf = append(buf, `0], "b": "text"}`...)
				return buf
			})
			p, err := vector.NewProject(mem, in, []vector.NamedExpr{{Name: "j",
				Expr: vector.FromJSON(vector.Col("s"), vector.TypedLit(vector.String, "a ARRAY<BIGINT>, b STRING"), nil)}})
			if err != nil {
				fatal(err)
			}
			return p, func() bool { return in.produced.Load() >= 1<<20 }
		}},
		{name: "explode_100_per_row", op: func(mem memory.Allocator) (vector.Operator, func() bool) {
			in := newGenOp(mem, 4<<20, false)
			seq, err := vector.LookupFunction("sequence", []vector.Expr{v, vector.Add(v, vector.TypedLit(vector.Int64, int64(99)))})
			if err != nil {
				fatal(err)
			}
			e, err := vector.NewExplode(mem, in, seq, "e", []int{})
			if err != nil {
				fatal(err)
			}
			return e, func() bool { return in.produced.Load() >= 2<<16 }
		}},
	}
}

// arrayOpCase projects fn(args(sequence(value, value + 20M - 1))...) over
// one input row; ready once the row is produced.
func arrayOpCase(mem memory.Allocator, fatal func(...any), fn string, args func(seq vector.Expr) []vector.Expr) (vector.Operator, func() bool) {
	v := vector.Col("value")
	in := newGenOp(mem, 1, false)
	seq, err := vector.LookupFunction("sequence", []vector.Expr{v, vector.Add(v, vector.TypedLit(vector.Int64, int64(20_000_000-1)))})
	if err != nil {
		fatal(err)
	}
	// fn "" takes args' one expression as it is.
	var call vector.Expr
	if fn == "" {
		call = args(seq)[0]
	} else if call, err = vector.LookupFunction(fn, args(seq)); err != nil {
		fatal(err)
	}
	p, err := vector.NewProject(mem, in, []vector.NamedExpr{{Name: "r", Expr: call}})
	if err != nil {
		fatal(err)
	}
	return p, func() bool { return in.produced.Load() == 1 }
}
