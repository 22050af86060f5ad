package vector_test

import (
	"context"
	"io"
	"os"
	"runtime"
	"slices"
	"sync/atomic"
	"testing"
	"time"

	"github.com/apache/arrow/go/v17/arrow"
	"github.com/apache/arrow/go/v17/arrow/array"
	"github.com/apache/arrow/go/v17/arrow/memory"

	"github.com/arrowstream/arrowstream/vector"
)

// genOp produces rows 0..n-1 of a bigint column "value" (pseudo-random
// when shuffled) in 64K-row batches, counting the rows it has produced.
type genOp struct {
	mem      memory.Allocator
	schema   *arrow.Schema
	n, next  int
	shuffled bool
	produced atomic.Int64
}

func newGenOp(mem memory.Allocator, n int, shuffled bool) *genOp {
	return &genOp{mem: mem, n: n, shuffled: shuffled,
		schema: arrow.NewSchema([]arrow.Field{{Name: "value", Type: vector.Int64}}, nil)}
}

func (g *genOp) Schema() *arrow.Schema { return g.schema }

func (g *genOp) Next(ctx context.Context) (arrow.Record, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if g.next >= g.n {
		return nil, io.EOF
	}
	end := min(g.next+64<<10, g.n)
	b := array.NewInt64Builder(g.mem)
	defer b.Release()
	b.Reserve(end - g.next)
	for v := g.next; v < end; v++ {
		x := int64(v)
		if g.shuffled {
			x = int64(uint64(v) * 0x9e3779b97f4a7c15 >> 1)
		}
		b.UnsafeAppend(x)
	}
	col := b.NewArray()
	defer col.Release()
	g.produced.Add(int64(end - g.next))
	g.next = end
	return array.NewRecord(g.schema, []arrow.Array{col}, int64(col.Len())), nil
}

func (g *genOp) Close() error { return nil }

// cancelTrial runs op to the end on a goroutine, cancels it once ready
// reports true (polled; the trial waits on progress, not on time) and
// returns how long Next took to return after the cancel.
func cancelTrial(b *testing.B, op vector.Operator, ready func() bool) time.Duration {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	done := make(chan time.Time, 1)
	go func() {
		for {
			rec, err := op.Next(ctx)
			if err != nil {
				break
			}
			rec.Release()
		}
		done <- time.Now()
	}()
	for !ready() {
		select {
		case <-done:
			b.Fatal("the operation ended before it was cancelled: make the input larger")
		case <-time.After(time.Millisecond):
		}
	}
	start := time.Now()
	cancel()
	var end time.Time
	select {
	case end = <-done:
	case <-time.After(40 * time.Millisecond):
		if dir := os.Getenv("CANCEL_STACKS"); dir != "" {
			// Where the slow trials are: the goroutines 40 ms after the cancel.
			buf := make([]byte, 1<<20)
			buf = buf[:runtime.Stack(buf, true)]
			f, err := os.CreateTemp(dir, "stacks-*.txt")
			if err != nil {
				b.Fatal(err)
			}
			_, err = f.Write(buf)
			if cerr := f.Close(); err == nil {
				err = cerr
			}
			if err != nil {
				b.Fatal(err)
			}
		}
		end = <-done
	}
	if err := op.Close(); err != nil {
		b.Fatal(err)
	}
	return end.Sub(start)
}

// reportLatencies reports the p50 and p99 (the maximum below 100 trials)
// of the cancel-to-return times in milliseconds.
func reportLatencies(b *testing.B, lat []time.Duration) {
	slices.Sort(lat)
	q := func(p float64) float64 {
		i := min(int(p*float64(len(lat))), len(lat)-1)
		return float64(lat[i].Microseconds()) / 1000
	}
	b.ReportMetric(q(0.5), "p50-ms")
	b.ReportMetric(q(0.99), "p99-ms")
	b.ReportMetric(0, "ns/op")
}

// BenchmarkCancelLatency measures the time from cancelling a query's
// context to the operator returning, for the long operations of issue 17:
// a hash join build, an aggregation over 50M rows (100K groups) and one
// of 8M rows into 8M groups, a sort, a cross join, and the steps that grow
// with the groups (cancelGroupCases: two keys, accumulators, the finish
// pass, a live aggregation's merge).
// Each iteration is one trial; run with -benchtime=20x for the quantiles
// (the goal is p99 ≤ 100 ms on an idle machine). The operators run as in
// the server: on a per-query counting allocator over one pool for the
// process (over mapped memory; CANCEL_BASE=go: over the Go heap), and every
// trial ends with the query's allocator at zero: cancelling releases
// everything. CANCEL_STACKS=dir writes the goroutines of a trial still
// running 40 ms after its cancel to dir. The other operations of issue 17
// have their own benchmarks: BenchmarkStopLatencyRate
// (arrowstream/internal/engine) and BenchmarkCancelPlanning (plan).
func BenchmarkCancelLatency(b *testing.B) {
	const big = 4 << 20
	cases := []cancelCase{
		{"join_build_4M", func(mem memory.Allocator) (vector.Operator, func() bool) {
			// Cancelled while the build side's table is being made.
			left, right := newGenOp(mem, 1<<16, false), newGenOp(mem, big, true)
			j, err := vector.NewHashJoin(mem, left, right, vector.JoinSpec{Type: vector.InnerJoin,
				LeftKeys: []vector.Expr{vector.Col("value")}, RightKeys: []vector.Expr{vector.Col("value")}})
			if err != nil {
				b.Fatal(err)
			}
			return j, func() bool { return right.produced.Load() == big }
		}},
		{"aggregate_50M", func(mem memory.Allocator) (vector.Operator, func() bool) {
			in := newGenOp(mem, 50_000_000, true)
			a, err := vector.NewHashAggregate(mem, in, vector.AggregateSpec{
				GroupBy:    []vector.NamedExpr{{Name: "k", Expr: vector.Mod(vector.Col("value"), vector.TypedLit(vector.Int64, int64(100_003)))}},
				Aggregates: []vector.AggregateCall{{Func: vector.AggCountStar, Name: "n"}},
			})
			if err != nil {
				b.Fatal(err)
			}
			return a, func() bool { return in.produced.Load() >= 8_000_000 }
		}},
		{"aggregate_8M_distinct", func(mem memory.Allocator) (vector.Operator, func() bool) {
			// Every row its own group: cancelled while the batch that takes
			// the table past 4M groups is grouped, which doubles its slots
			// (8M to 16M: 256 MB).
			in := newGenOp(mem, 8<<20, true)
			a, err := vector.NewHashAggregate(mem, in, vector.AggregateSpec{
				GroupBy:    []vector.NamedExpr{{Name: "k", Expr: vector.Col("value")}},
				Aggregates: []vector.AggregateCall{{Func: vector.AggCountStar, Name: "n"}},
			})
			if err != nil {
				b.Fatal(err)
			}
			return a, func() bool { return in.produced.Load() >= 4<<20 }
		}},
		{"sort_4M", func(mem memory.Allocator) (vector.Operator, func() bool) {
			// Cancelled once the input is read: while it sorts.
			in := newGenOp(mem, big, true)
			s, err := vector.NewSort(mem, in, []vector.SortKey{{Expr: vector.Col("value")}})
			if err != nil {
				b.Fatal(err)
			}
			return s, func() bool { return in.produced.Load() == big }
		}},
		{"cross_join_1Kx50M", func(mem memory.Allocator) (vector.Operator, func() bool) {
			left, right := newGenOp(mem, 50_000_000, false), newGenOp(mem, 1000, false)
			j, err := vector.NewHashJoin(mem, left, right, vector.JoinSpec{Type: vector.InnerJoin})
			if err != nil {
				b.Fatal(err)
			}
			return j, func() bool { return left.produced.Load() >= 1<<18 }
		}},
	}
	cases = append(cases, cancelGroupCases(b.Fatal)...)
	cases = append(cases, cancelOpCases(b.Fatal)...)
	for _, c := range cases {
		b.Run(c.name, func(b *testing.B) {
			// As in the server: one pool for the process, one counting
			// allocator per query.
			pool := newBenchPool()
			defer pool.Close()
			var lat []time.Duration
			for range b.N {
				mem := &queryAlloc{pool: pool}
				op, ready := c.op(mem)
				lat = append(lat, cancelTrial(b, op, ready))
				if n := mem.bytes.Load(); n != 0 {
					b.Fatalf("%d bytes still allocated after the cancelled %s closed", n, c.name)
				}
			}
			reportLatencies(b, lat)
		})
	}
}
