package vector_test

import (
	"testing"
	"time"

	"github.com/apache/arrow/go/v17/arrow/memory"

	"github.com/arrowstream/arrowstream/vector"
)

// BenchmarkDefaultAllocator measures what the default allocator
// (vector.NewDefaultAllocator: a pool over mapped memory) costs the long
// operations against a pool over the Go heap: a 2M-row join (2M probe
// rows), a 2M-row sort and an 8M-row aggregation into 100K groups, each on
// a per-query counting allocator as in the server. Every iteration runs
// the operation once on each allocator, alternating which goes first, so
// that both see the same machine load; the metrics are each one's elapsed
// and CPU (user and system, the page faults included) milliseconds per
// operation and the ratios mapped/go. warm: one pool of each for all
// iterations (a server's steady state, after one untimed warm-up); cold: a
// new pool per operation, closed after it (the first query of a process,
// or one after the server trimmed its pool), where the mapped pool faults
// in every large buffer again and the Go heap may reuse pages it kept.
func BenchmarkDefaultAllocator(b *testing.B) {
	const n = 2 << 20
	ops := []struct {
		name string
		run  func(b *testing.B, mem memory.Allocator)
	}{
		{"join_2M", func(b *testing.B, mem memory.Allocator) {
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
		{"sort_2M", func(b *testing.B, mem memory.Allocator) {
			s, err := vector.NewSort(mem, newGenOp(mem, n, true), []vector.SortKey{{Expr: vector.Col("value")}})
			if err != nil {
				b.Fatal(err)
			}
			if got := opsDrain(b, s); got != n {
				b.Fatalf("sort produced %d rows, want %d", got, n)
			}
			s.Close()
		}},
		{"aggregate_8M", func(b *testing.B, mem memory.Allocator) {
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
	type base struct {
		name      string
		new       func() *vector.PoolAllocator
		pool      *vector.PoolAllocator
		wall, cpu time.Duration
	}
	for _, op := range ops {
		for _, temp := range []string{"warm", "cold"} {
			b.Run(op.name+"/"+temp, func(b *testing.B) {
				bases := []*base{
					{name: "go", new: func() *vector.PoolAllocator { return vector.NewPoolAllocator(memory.NewGoAllocator(), 0) }},
					{name: "mapped", new: vector.NewDefaultAllocator},
				}
				for _, x := range bases {
					x.pool = x.new()
					if temp == "warm" {
						op.run(b, &queryAlloc{pool: x.pool})
					}
				}
				b.ResetTimer()
				for i := range b.N {
					for k := range bases {
						x := bases[(i+k)%2]
						if temp == "cold" {
							x.pool.Close()
							x.pool = x.new()
						}
						mem := &queryAlloc{pool: x.pool}
						start, cpu := time.Now(), processCPU()
						op.run(b, mem)
						x.wall += time.Since(start)
						x.cpu += processCPU() - cpu
						if got := mem.bytes.Load(); got != 0 {
							b.Fatalf("%d bytes still allocated after %s", got, op.name)
						}
					}
				}
				b.StopTimer()
				ms := func(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 / float64(b.N) }
				for _, x := range bases {
					x.pool.Close()
					b.ReportMetric(ms(x.wall), x.name+"-ms")
					b.ReportMetric(ms(x.cpu), x.name+"-cpu-ms")
				}
				b.ReportMetric(float64(bases[1].wall)/float64(bases[0].wall), "mapped/go")
				b.ReportMetric(float64(bases[1].cpu)/float64(bases[0].cpu), "mapped/go-cpu")
				b.ReportMetric(0, "ns/op")
			})
		}
	}
}
