package stateful

import (
	"context"
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/apache/arrow/go/v17/arrow/memory"

	"github.com/arrowstream/arrowstream/arrowstream/stream"
	"github.com/arrowstream/arrowstream/vector"
	vt "github.com/arrowstream/arrowstream/vector/vectortest"
)

// BenchmarkSpilledAggregate is an Update-mode running count and sum over
// 100 000 keys, 10 000 random rows per epoch, one op per epoch: all live
// over the memory provider, and over Pebble with the default working set
// (every group stays live) and with none (every epoch reads its groups
// back with one multi-get per partition).
func BenchmarkSpilledAggregate(b *testing.B) {
	const keys, rows, parts = 100_000, 10_000, 2
	for _, c := range []struct {
		name   string
		pebble bool
		conf   map[string]string
	}{
		{"memory/all-live", false, map[string]string{}},
		{"pebble/default", true, map[string]string{stream.ConfStateStoreProvider: "pebble"}},
		{"pebble/none-live", true, map[string]string{stream.ConfStateStoreProvider: "pebble", stream.ConfPebbleLiveStateBytes: "0"}},
	} {
		b.Run(c.name, func(b *testing.B) {
			mem := memory.NewGoAllocator()
			ctx := context.Background()
			spec := vector.AggregateSpec{
				GroupBy: []vector.NamedExpr{vector.As(vector.Col("k"), "k")},
				Aggregates: []vector.AggregateCall{
					{Func: vector.AggCountStar, Name: "n"},
					{Func: vector.AggSum, Args: []vector.Expr{vector.Col("k")}, Name: "s"},
				},
			}
			op, err := newStatefulAggregate(mem, 0, liveInSchema, spec, stream.Update, -1)
			if err != nil {
				b.Fatal(err)
			}
			dir := b.TempDir()
			t := &testing.T{}
			stores := openAnyStores(t, mem, c.pebble, dir, parts)
			defer func() { op.Close(); stores.close() }()
			rng := rand.New(rand.NewPCG(1, 2))
			epoch := func(id int64, fill bool) {
				data := make([]vt.Row, rows)
				for i := range data {
					k := rng.Int64N(keys)
					if fill {
						k = (id*rows + int64(i)) % keys
					}
					data[i] = vt.Row{k, int64(0)}
				}
				rec := vt.BuildRecord(mem, liveInSchema, data)
				scan, err := vector.NewScan(liveInSchema, rec)
				rec.Release()
				if err != nil {
					b.Fatal(err)
				}
				ep := Epoch{EpochInfo: stream.EpochInfo{ID: id, CheckpointDir: dir, NumPartitions: parts, Conf: c.conf}, State: stores.begin(id)}
				out, err := op.Execute(ctx, ep, scan)
				if err != nil {
					b.Fatal(err)
				}
				recs, err := vector.Drain(ctx, out)
				out.Close()
				if err != nil {
					b.Fatal(err)
				}
				releaseRecords(recs)
				op.Committed(stores.commit(ctx))
			}
			id := int64(0)
			for ; id < keys/rows; id++ { // every key in state
				epoch(id, true)
			}
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				epoch(id, false)
				id++
			}
			b.StopTimer()
			if t.Failed() {
				b.Fatal(fmt.Sprint("stores failed"))
			}
		})
	}
}
