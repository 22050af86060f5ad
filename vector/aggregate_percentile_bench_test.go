package vector_test

import (
	"context"
	"fmt"
	"math/rand"
	"slices"
	"testing"

	"github.com/apache/arrow/go/v17/arrow"
	"github.com/apache/arrow/go/v17/arrow/array"
	"github.com/apache/arrow/go/v17/arrow/memory"

	"github.com/arrowstream/arrowstream/vector"
)

// BenchmarkPercentile measures percentile(x, 0.5) (values kept, one sort
// per group at finish) and percentile_approx(x, 0.5) next to sum(x) and a
// plain Go sort of each group's values, over 1M rows in 1000 groups, in
// the same run.
func BenchmarkPercentile(b *testing.B) {
	const rows, groups, batch = 1 << 20, 1000, 1 << 16
	rng := rand.New(rand.NewSource(1))
	schema := arrow.NewSchema([]arrow.Field{{Name: "k", Type: vector.Int64}, {Name: "x", Type: vector.Float64}}, nil)
	mem := memory.NewGoAllocator()
	var recs []arrow.Record
	keys, vals := make([]int64, rows), make([]float64, rows)
	for i := range keys {
		keys[i], vals[i] = int64(rng.Intn(groups)), rng.NormFloat64()
	}
	for lo := 0; lo < rows; lo += batch {
		kb, xb := array.NewInt64Builder(mem), array.NewFloat64Builder(mem)
		kb.AppendValues(keys[lo:lo+batch], nil)
		xb.AppendValues(vals[lo:lo+batch], nil)
		k, x := kb.NewArray(), xb.NewArray()
		recs = append(recs, array.NewRecord(schema, []arrow.Array{k, x}, batch))
		k.Release()
		x.Release()
		kb.Release()
		xb.Release()
	}
	defer releaseRecords(recs)
	for _, tc := range []struct {
		name string
		call vector.AggregateCall
	}{
		{"sum", vector.AggregateCall{Func: vector.AggSum, Name: "s", Args: []vector.Expr{vector.Col("x")}}},
		{"percentile", vector.AggregateCall{Func: vector.AggPercentile, Name: "p", Args: []vector.Expr{vector.Col("x"), vector.Lit(0.5)}}},
		{"percentile_approx", vector.AggregateCall{Func: vector.AggApproxPercentile, Name: "p", Args: []vector.Expr{vector.Col("x"), vector.Lit(0.5)}}},
	} {
		b.Run(fmt.Sprintf("impl=%s", tc.name), func(b *testing.B) {
			spec := vector.AggregateSpec{GroupBy: byK(), Aggregates: []vector.AggregateCall{tc.call}}
			for i := 0; i < b.N; i++ {
				for _, r := range recs {
					r.Retain()
				}
				scan, err := vector.NewScan(schema, recs...)
				releaseRecords(recs)
				if err != nil {
					b.Fatal(err)
				}
				op, err := vector.NewHashAggregate(mem, scan, spec)
				if err != nil {
					b.Fatal(err)
				}
				out, err := vector.Drain(context.Background(), op)
				op.Close()
				if err != nil {
					b.Fatal(err)
				}
				releaseRecords(out)
			}
			b.ReportMetric(float64(rows)*float64(b.N)/b.Elapsed().Seconds(), "rows/s")
		})
	}
	b.Run("impl=gosort", func(b *testing.B) {
		for i := 0; i < b.N; i++ {
			by := make([][]float64, groups)
			for j, k := range keys {
				by[k] = append(by[k], vals[j])
			}
			for _, g := range by {
				slices.Sort(g)
			}
		}
		b.ReportMetric(float64(rows)*float64(b.N)/b.Elapsed().Seconds(), "rows/s")
	})
}
