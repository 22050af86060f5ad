package vector_test

import (
	"testing"

	"github.com/arrowstream/arrowstream/vector"
)

// BenchmarkJoinLargeBuild joins 2M shuffled bigint keys (probe) with 2M
// (build): the build side's table, keys and concatenation are the large
// buffers that issue 17 made interruptible. rows/s counts build and probe
// rows. Compare runs of this benchmark before and after a change to the
// build's buffers, alternating, on the same machine.
func BenchmarkJoinLargeBuild(b *testing.B) {
	const n = 2 << 20
	for _, a := range opsAllocators() {
		b.Run(a.name, func(b *testing.B) {
			for range b.N {
				left, right := newGenOp(a.mem, n, true), newGenOp(a.mem, n, true)
				j, err := vector.NewHashJoin(a.mem, left, right, vector.JoinSpec{Type: vector.InnerJoin,
					LeftKeys: []vector.Expr{vector.Col("value")}, RightKeys: []vector.Expr{vector.Col("value")}})
				if err != nil {
					b.Fatal(err)
				}
				if got := opsDrain(b, j); got != n {
					b.Fatalf("join produced %d rows, want %d", got, n)
				}
				j.Close()
			}
			b.ReportMetric(2*n*float64(b.N)/b.Elapsed().Seconds(), "rows/s")
		})
	}
}
