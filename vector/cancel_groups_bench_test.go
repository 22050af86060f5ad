package vector_test

import (
	"context"

	"github.com/apache/arrow/go/v17/arrow"
	"github.com/apache/arrow/go/v17/arrow/array"
	"github.com/apache/arrow/go/v17/arrow/memory"

	"github.com/arrowstream/arrowstream/vector"
)

// cancelGroupCases are BenchmarkCancelLatency's trials of the steps that
// grow with the number of groups: every row of 8M its own group, cancelled
// once 4M rows are in (while the batch that doubles the table and the
// per-group arrays is grouped), or once all are (the finish pass).
func cancelGroupCases(fatal func(...any)) []cancelCase {
	const rows = 8 << 20
	agg := func(mem memory.Allocator, in *genOp, spec vector.AggregateSpec) vector.Operator {
		a, err := vector.NewHashAggregate(mem, in, spec)
		if err != nil {
			fatal(err)
		}
		return a
	}
	key := []vector.NamedExpr{{Name: "k", Expr: vector.Col("value")}}
	count := []vector.AggregateCall{{Func: vector.AggCountStar, Name: "n"}}
	return []cancelCase{
		{name: "aggregate_8M_two_keys", op: func(mem memory.Allocator) (vector.Operator, func() bool) {
			// GROUP BY a, b: the multi-key grouper.
			in := newGenOp(mem, rows, true)
			return agg(mem, in, vector.AggregateSpec{Aggregates: count, GroupBy: []vector.NamedExpr{key[0],
					{Name: "m", Expr: vector.Mod(vector.Col("value"), vector.TypedLit(vector.Int64, int64(7)))}}}),
				func() bool { return in.produced.Load() >= 4<<20 }
		}},
		{name: "aggregate_8M_accumulators", op: func(mem memory.Allocator) (vector.Operator, func() bool) {
			in := newGenOp(mem, rows, true)
			v := []vector.Expr{vector.Col("value")}
			return agg(mem, in, vector.AggregateSpec{GroupBy: key, Aggregates: []vector.AggregateCall{
					{Func: vector.AggSum, Args: v, Name: "s"}, {Func: vector.AggAvg, Args: v, Name: "a"},
					{Func: vector.AggMin, Args: v, Name: "lo"}, {Func: vector.AggMax, Args: v, Name: "hi"},
					{Func: vector.AggStddevSamp, Args: v, Name: "sd"}, {Func: vector.AggFirst, Args: v, Name: "f"}}}),
				func() bool { return in.produced.Load() >= 4<<20 }
		}},
		{name: "aggregate_8M_finish", op: func(mem memory.Allocator) (vector.Operator, func() bool) {
			// Cancelled once the input is read: while the last batch is
			// folded or the groups are finished.
			in := newGenOp(mem, rows, true)
			return agg(mem, in, vector.AggregateSpec{GroupBy: key, Aggregates: count}),
				func() bool { return in.produced.Load() == rows }
		}},
		{name: "live_merge_8M", op: func(mem memory.Allocator) (vector.Operator, func() bool) {
			// A streaming aggregation's state taking 8M new groups in one
			// epoch (StopQuery during it).
			in := newGenOp(mem, rows, true)
			return newLiveMergeOp(mem, in, fatal), func() bool { return in.produced.Load() >= 4<<20 }
		}},
	}
}

type cancelCase struct {
	name string
	op   func(mem memory.Allocator) (vector.Operator, func() bool)
	// spread: cancelled at a uniform random point of the time the
	// operation runs after ready reports true (BenchmarkCancelLatency
	// measures it with an uncancelled run first), not right at ready.
	spread bool
}

// liveMergeOp merges every batch of its input, as the partial state of
// count(*) grouped by value (one row each), into a LiveAggregate, and
// passes the batch on.
type liveMergeOp struct {
	in     *genOp
	live   *vector.LiveAggregate
	schema *arrow.Schema
	ones   arrow.Array
}

func newLiveMergeOp(mem memory.Allocator, in *genOp, fatal func(...any)) *liveMergeOp {
	spec := vector.AggregateSpec{Mode: vector.AggPartial,
		GroupBy:    []vector.NamedExpr{{Name: "value", Expr: vector.Col("value")}},
		Aggregates: []vector.AggregateCall{{Func: vector.AggCountStar, Name: "n"}}}
	scan, err := vector.NewScan(in.Schema())
	if err != nil {
		fatal(err)
	}
	p, err := vector.NewHashAggregate(mem, scan, spec)
	if err != nil {
		fatal(err)
	}
	partial := p.Schema()
	if err := p.Close(); err != nil {
		fatal(err)
	}
	live, err := vector.NewLiveAggregate(mem, partial, 1, spec.Aggregates)
	if err != nil {
		fatal(err)
	}
	b := array.NewInt64Builder(mem)
	defer b.Release()
	for range 64 << 10 {
		b.Append(1)
	}
	return &liveMergeOp{in: in, live: live, schema: partial, ones: b.NewArray()}
}

func (l *liveMergeOp) Schema() *arrow.Schema { return l.in.Schema() }

func (l *liveMergeOp) Next(ctx context.Context) (arrow.Record, error) {
	rec, err := l.in.Next(ctx)
	if err != nil {
		return nil, err
	}
	n := rec.NumRows()
	ones := array.NewSlice(l.ones, 0, n)
	defer ones.Release()
	part := array.NewRecord(l.schema, []arrow.Array{rec.Column(0), ones}, n)
	defer part.Release()
	if _, err := l.live.Merge(ctx, part); err != nil {
		rec.Release()
		return nil, err
	}
	return rec, nil
}

func (l *liveMergeOp) Close() error {
	l.live.Close()
	l.ones.Release()
	return l.in.Close()
}
