package vector_test

import (
	"context"
	"testing"

	"github.com/apache/arrow/go/v17/arrow/memory"

	"github.com/arrowstream/arrowstream/vector"
)

// BenchmarkAggregateGrowth is the throughput of aggregations whose groups
// keep growing (every row of 2M its own group), where the steps that grow
// with the groups (table doubling, per-group arrays, the finish pass)
// weigh most: one bigint key with five aggregates, and two keys (the
// multi-key grouper). Compare main and a branch in the same run (build
// both test binaries, run them alternately) to see what the context
// checks in those steps cost:
//
//	go test -c -o /tmp/branch.test ./vector && /tmp/branch.test -test.run '^$' -test.bench BenchmarkAggregateGrowth -test.count 5
func BenchmarkAggregateGrowth(b *testing.B) {
	const rows = 2 << 20
	v := []vector.Expr{vector.Col("value")}
	cases := []struct {
		name string
		spec vector.AggregateSpec
	}{
		{"one_key_5_aggs", vector.AggregateSpec{
			GroupBy: []vector.NamedExpr{{Name: "k", Expr: vector.Col("value")}},
			Aggregates: []vector.AggregateCall{{Func: vector.AggCountStar, Name: "n"}, {Func: vector.AggSum, Args: v, Name: "s"},
				{Func: vector.AggAvg, Args: v, Name: "a"}, {Func: vector.AggMin, Args: v, Name: "lo"}, {Func: vector.AggMax, Args: v, Name: "hi"}}}},
		{"two_keys", vector.AggregateSpec{
			GroupBy: []vector.NamedExpr{{Name: "k", Expr: vector.Col("value")},
				{Name: "m", Expr: vector.Mod(vector.Col("value"), vector.TypedLit(vector.Int64, int64(7)))}},
			Aggregates: []vector.AggregateCall{{Func: vector.AggCountStar, Name: "n"}}}},
	}
	for _, c := range cases {
		b.Run(c.name, func(b *testing.B) {
			mem := memory.NewGoAllocator()
			b.SetBytes(rows * 8)
			for range b.N {
				a, err := vector.NewHashAggregate(mem, newGenOp(mem, rows, true), c.spec)
				if err != nil {
					b.Fatal(err)
				}
				recs, err := vector.Drain(context.Background(), a)
				if err != nil {
					b.Fatal(err)
				}
				vector.ReleaseRecords(recs)
				if err := a.Close(); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
