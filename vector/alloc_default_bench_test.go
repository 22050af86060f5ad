package vector_test

import (
	"testing"

	"github.com/apache/arrow/go/v17/arrow/memory"

	"github.com/arrowstream/arrowstream/vector"
)

// BenchmarkDefaultAllocator measures what the default allocator
// (vector.NewDefaultAllocator: a pool over mapped memory) costs the long
// operations against a pool over the Go heap, in the same run: a 2M-row
// join (2M probe rows), a 2M-row sort and an 8M-row aggregation into 100K
// groups, each on a per-query counting allocator as in the server. warm:
// one pool for all iterations (a server's steady state, after one untimed
// warm-up); cold: a new pool per iteration, closed after it (the first
// query of a process, or one after the server trimmed its pool), where the
// mapped pool faults in every large buffer again and the Go heap may reuse
// pages it kept. rows/s counts input rows.
func BenchmarkDefaultAllocator(b *testing.B) {
	const n = 2 << 20
	ops := []struct {
		name string
		rows int
		run  func(b *testing.B, mem memory.Allocator)
	}{
		{"join_2M", 2 * n, func(b *testing.B, mem memory.Allocator) {
			left, right := newGenOp(mem, n, true), newGenOp(mem, n, true)
			j, err := vector.NewHashJoin(mem, left, right, vector.JoinSpec{Type: vector.InnerJoin,
				LeftKeys: []vector.Expr{vector.Col("value")}, RightKeys: []vector.Expr{vector.Col("value")}})
			if err != nil {
				b.Fatal(err)
			}
			if got := opsDrain(b, j); got != n {
				b.Fatalf("join produced %d rows, want %d", got, n)
			}
			j.Close()
		}},
		{"sort_2M", n, func(b *testing.B, mem memory.Allocator) {
			s, err := vector.NewSort(mem, newGenOp(mem, n, true), []vector.SortKey{{Expr: vector.Col("value")}})
			if err != nil {
				b.Fatal(err)
			}
			if got := opsDrain(b, s); got != n {
				b.Fatalf("sort produced %d rows, want %d", got, n)
			}
			s.Close()
		}},
		{"aggregate_8M", 4 * n, func(b *testing.B, mem memory.Allocator) {
			a, err := vector.NewHashAggregate(mem, newGenOp(mem, 4*n, true), vector.AggregateSpec{
				GroupBy:    []vector.NamedExpr{{Name: "k", Expr: vector.Mod(vector.Col("value"), vector.TypedLit(vector.Int64, int64(100_003)))}},
				Aggregates: []vector.AggregateCall{{Func: vector.AggCountStar, Name: "n"}},
			})
			if err != nil {
				b.Fatal(err)
			}
			if got := opsDrain(b, a); got == 0 {
				b.Fatal("aggregation produced no groups")
			}
			a.Close()
		}},
	}
	bases := []struct {
		name string
		new  func() *vector.PoolAllocator
	}{
		{"pool=go", func() *vector.PoolAllocator { return vector.NewPoolAllocator(memory.NewGoAllocator(), 0) }},
		{"pool=mapped", vector.NewDefaultAllocator},
	}
	for _, op := range ops {
		for _, temp := range []string{"warm", "cold"} {
			for _, base := range bases {
				b.Run(op.name+"/"+temp+"/"+base.name, func(b *testing.B) {
					pool := base.new()
					if temp == "warm" {
						op.run(b, &queryAlloc{pool: pool})
						b.ResetTimer()
					}
					for range b.N {
						if temp == "cold" {
							pool.Close()
							pool = base.new()
						}
						mem := &queryAlloc{pool: pool}
						op.run(b, mem)
						if got := mem.bytes.Load(); got != 0 {
							b.Fatalf("%d bytes still allocated after %s", got, op.name)
						}
					}
					b.StopTimer()
					pool.Close()
					b.ReportMetric(float64(op.rows)*float64(b.N)/b.Elapsed().Seconds(), "rows/s")
				})
			}
		}
	}
}
