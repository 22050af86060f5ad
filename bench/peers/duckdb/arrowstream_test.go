package duckdbpeer

import (
	"context"
	"fmt"
	"testing"

	"github.com/apache/arrow/go/v17/arrow"
	"github.com/apache/arrow/go/v17/arrow/array"
	"github.com/apache/arrow/go/v17/arrow/memory"

	"github.com/arrowstream/arrowstream/bench/gen"
	"github.com/arrowstream/arrowstream/vector"
)

func init() {
	aggPeers = append(aggPeers, aggPeer{"arrowstream", benchArrowstreamAgg})
}

// arrowstreamAggSpec is SUM(v) AS sum_v, COUNT(*) AS cnt GROUP BY k, in one
// (complete) aggregation phase, like DuckDB's single-threaded plan.
func arrowstreamAggSpec() vector.AggregateSpec {
	return vector.AggregateSpec{
		GroupBy: []vector.NamedExpr{vector.As(vector.Col("k"), "k")},
		Aggregates: []vector.AggregateCall{
			{Func: vector.AggSum, Args: []vector.Expr{vector.Col("v")}, Name: "sum_v"},
			{Func: vector.AggCountStar, Name: "cnt"},
		},
		Mode: vector.AggComplete,
	}
}

// arrowstreamAgg runs the hash aggregate over the data set's 64K-row
// batches and returns its output records, owned by the caller.
func arrowstreamAgg(ctx context.Context, mem memory.Allocator, recs []arrow.Record) ([]arrow.Record, error) {
	scan, err := vector.NewScan(gen.AggSchema, recs...)
	if err != nil {
		return nil, err
	}
	op, err := vector.NewHashAggregate(mem, scan, arrowstreamAggSpec())
	if err != nil {
		scan.Close()
		return nil, err
	}
	out, err := vector.Drain(ctx, op)
	if cerr := op.Close(); err == nil && cerr != nil {
		for _, r := range out {
			r.Release()
		}
		return nil, cerr
	}
	return out, err
}

// arrowstreamResult copies the aggregate's output columns (k, sum_v, cnt)
// into r, checking their types and that they hold no nulls.
func arrowstreamResult(out []arrow.Record, r *aggResult) error {
	r.keys, r.sums, r.counts = r.keys[:0], r.sums[:0], r.counts[:0]
	for i, rec := range out {
		s := rec.Schema()
		col := func(name string) (arrow.Array, error) {
			idx := s.FieldIndices(name)
			if len(idx) != 1 {
				return nil, fmt.Errorf("output record %d has schema %s: want one column %q", i, s, name)
			}
			c := rec.Column(idx[0])
			if c.NullN() != 0 {
				return nil, fmt.Errorf("output column %q of record %d has %d nulls", name, i, c.NullN())
			}
			return c, nil
		}
		k, err := col("k")
		if err != nil {
			return err
		}
		sum, err := col("sum_v")
		if err != nil {
			return err
		}
		cnt, err := col("cnt")
		if err != nil {
			return err
		}
		ka, ok1 := k.(*array.Int64)
		sa, ok2 := sum.(*array.Float64)
		ca, ok3 := cnt.(*array.Int64)
		if !ok1 || !ok2 || !ok3 {
			return fmt.Errorf("output record %d has schema %s: want k int64, sum_v float64, cnt int64", i, s)
		}
		r.keys = append(r.keys, ka.Int64Values()...)
		r.sums = append(r.sums, sa.Float64Values()...)
		r.counts = append(r.counts, ca.Int64Values()...)
	}
	return nil
}

// benchArrowstreamAgg times Arrowstream's hash aggregate over the data set's
// Arrow batches (built once, untimed), from building the operator to the last
// output record, and checks every answer, untimed, against the reference.
func benchArrowstreamAgg(b *testing.B, d *aggData) int {
	recs := d.records()
	ctx := context.Background()
	// The engine runs operators on a pooling allocator (fresh pages are
	// expensive here: docs/performance.md, "Machine and library facts");
	// DuckDB keeps its own buffer pool too.
	pool := vector.NewPoolAllocator(memory.NewGoAllocator(), 0)
	defer pool.Close()
	var mem memory.Allocator = pool
	r := &aggResult{
		keys:   make([]int64, 0, d.nKeys),
		sums:   make([]float64, 0, d.nKeys),
		counts: make([]int64, 0, d.nKeys),
	}
	iters := 0
	for b.Loop() {
		out, err := arrowstreamAgg(ctx, mem, recs)
		if err != nil {
			b.Fatalf("hash aggregate: %v", err)
		}
		b.StopTimer()
		err = arrowstreamResult(out, r)
		for _, rec := range out {
			rec.Release()
		}
		if err == nil {
			err = checkAgg(d, r.keys, r.sums, r.counts)
		}
		if err != nil {
			b.Fatalf("Arrowstream gave a wrong answer: %v", err)
		}
		iters++
		b.StartTimer()
	}
	return iters
}

// TestArrowstreamAgg runs the benchmark's Arrowstream path on a small data
// set with a leak-checked allocator.
func TestArrowstreamAgg(t *testing.T) {
	keys, vals := gen.AggData(200_000, 1000, aggSeed)
	d := &aggData{nKeys: 1000, keys: keys, vals: vals, ref: gen.AggReference(keys, vals)}
	defer d.close()
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	out, err := arrowstreamAgg(context.Background(), mem, d.records())
	if err != nil {
		t.Fatal(err)
	}
	r := &aggResult{}
	err = arrowstreamResult(out, r)
	for _, rec := range out {
		rec.Release()
	}
	if err != nil {
		t.Fatal(err)
	}
	if err := checkAgg(d, r.keys, r.sums, r.counts); err != nil {
		t.Fatal(err)
	}
}
