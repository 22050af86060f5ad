package stateful

import (
	"context"
	"path/filepath"
	"strconv"
	"testing"

	"github.com/apache/arrow/go/v17/arrow/memory"

	"github.com/arrowstream/arrowstream/arrowstream/stream"
	"github.com/arrowstream/arrowstream/checkpoint"
	"github.com/arrowstream/arrowstream/vector"
	vt "github.com/arrowstream/arrowstream/vector/vectortest"
)

// viewCatcher is a partition's store that only takes live views.
type viewCatcher struct {
	checkpoint.StateStore
	view checkpoint.LiveView
}

func (c *viewCatcher) WantsLiveSnapshot() bool               { return true }
func (c *viewCatcher) SetLiveSnapshot(v checkpoint.LiveView) { c.view = v }

// BenchmarkAggLiveSnapshot: what a windowed aggregation's live snapshot
// of all its groups (20,000 of (bigint, timestamp) in 2 partitions)
// costs, offered and read (every entry emitted), from a record of the
// groups' state ("record": keys rebuilt, encoded and hashed) or from the
// kept store keys ("keys": values alone encoded). CPU ns per group.
//
//	go test -run '^$' -bench AggLiveSnapshot -benchmem ./arrowstream/internal/stateful/
func BenchmarkAggLiveSnapshot(b *testing.B) {
	const parts, keys = 2, 10_000
	mem := memory.NewGoAllocator()
	ctx := context.Background()
	dir := b.TempDir()
	provider := checkpoint.NewMemoryProvider(&checkpoint.Writer{NoSync: true}, checkpoint.StoreOptions{Allocator: mem, NoLiveSnapshots: true})
	defer provider.Close()
	var ps []checkpoint.StatePartition
	for p := range parts {
		part, err := provider.OpenPartition(filepath.Join(dir, "state", "0", strconv.Itoa(p)))
		if err != nil {
			b.Fatal(err)
		}
		ps = append(ps, part)
	}
	spec := vector.AggregateSpec{
		GroupBy: []vector.NamedExpr{vector.As(vector.Col("k"), "k"), vector.As(vector.Col("t"), "t")},
		Aggregates: []vector.AggregateCall{
			{Func: vector.AggCountStar, Name: "n"},
			{Func: vector.AggSum, Args: []vector.Expr{vector.Col("k")}, Name: "s"},
		},
	}
	op, err := newStatefulAggregate(mem, 0, liveInSchema, spec, stream.Append, 1)
	if err != nil {
		b.Fatal(err)
	}
	defer op.Close()
	var data []vt.Row
	for i := range 4 * keys {
		data = append(data, vt.Row{int64(i % keys), (1 + int64(i/keys%2)) * 1_000_000})
	}
	ep := Epoch{EpochInfo: stream.EpochInfo{ID: 0, HasWatermark: true, CheckpointDir: dir, NumPartitions: parts}}
	for _, part := range ps {
		st, err := part.Begin(0)
		if err != nil {
			b.Fatal(err)
		}
		ep.State = append(ep.State, st)
	}
	rec := vt.BuildRecord(mem, liveInSchema, data)
	scan, err := vector.NewScan(liveInSchema, rec)
	rec.Release()
	if err != nil {
		b.Fatal(err)
	}
	out, err := op.Execute(ctx, ep, scan)
	if err != nil {
		b.Fatal(err)
	}
	recs, err := vector.Drain(ctx, out)
	out.Close()
	releaseRecords(recs)
	if err != nil {
		b.Fatal(err)
	}
	for _, st := range ep.State {
		if _, err := st.Commit(ctx); err != nil {
			b.Fatal(err)
		}
	}
	want := []bool{true, true}
	gids := op.live.liveIn(want)
	if len(gids) != 2*keys || !op.live.allStored(gids) {
		b.Fatalf("%d groups, all stored %v", len(gids), op.live.allStored(gids))
	}
	for _, keyed := range []bool{false, true} {
		name := "record"
		if keyed {
			name = "keys"
		}
		b.Run(name, func(b *testing.B) {
			catchers := []*viewCatcher{{}, {}}
			stores := []checkpoint.StateStore{catchers[0], catchers[1]}
			var cpu int64
			for b.Loop() {
				start := processCPU()
				var err error
				if keyed {
					err = op.offerKeyed(stores, want, gids)
				} else {
					err = op.offerRecord(stores, want, gids)
				}
				if err != nil {
					b.Fatal(err)
				}
				n := 0
				for _, c := range catchers {
					if err := c.view.Entries(ctx, func(key, value []byte) error {
						n++
						return nil
					}); err != nil {
						b.Fatal(err)
					}
					c.view.Release()
				}
				cpu += processCPU() - start
				if n != len(gids) {
					b.Fatalf("%d entries, want %d", n, len(gids))
				}
			}
			b.ReportMetric(float64(cpu)/float64(b.N)/float64(len(gids)), "cpu-ns/group")
		})
	}
}
