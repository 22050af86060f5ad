package stateful

import (
	"context"
	"testing"

	"github.com/arrowstream/arrowstream/arrowstream/stream"
	"github.com/arrowstream/arrowstream/internal/testutil/poisonmem"
	"github.com/arrowstream/arrowstream/vector"
	vt "github.com/arrowstream/arrowstream/vector/vectortest"
)

// TestStoreKeysArenaGrowsByDoubling runs a windowed aggregation shaped as
// q8's: every epoch brings 200 new groups, kept for 16 epochs, so the
// arena of kept store keys (stateful_agg_keys.go) grows by one epoch's
// keys at a time. It checks that the arena is reallocated O(log n) times,
// not nearly every epoch: append's growth (slices.Grow) adds only a
// quarter of the capacity past 256 bytes, which copied the arena of fresh
// memory ten times in a 20-epoch q8 run. The output is left to
// TestStoredKeysMatchModel.
func TestStoreKeysArenaGrowsByDoubling(t *testing.T) {
	const parts, perEpoch, epochs = 2, 200, 16
	mem := poisonmem.New()
	defer mem.AssertSize(t, 0)
	ctx := context.Background()
	dir := t.TempDir()
	stores := newTestStores(t, mem, dir, parts)
	defer func() { stores.close() }()
	spec := vector.AggregateSpec{
		GroupBy:    []vector.NamedExpr{vector.As(vector.Col("k"), "k"), vector.As(vector.Col("t"), "t")},
		Aggregates: []vector.AggregateCall{{Func: vector.AggCountStar, Name: "n"}},
	}
	op, err := newStatefulAggregate(mem, 0, liveInSchema, spec, stream.Append, 1)
	if err != nil {
		t.Fatal(err)
	}
	defer op.Close()
	reallocs, lastCap := 0, 0
	for id := int64(0); id < epochs; id++ {
		var data []vt.Row
		for i := range int64(perEpoch) {
			data = append(data, vt.Row{id*perEpoch + i, int64(1_000_000_000)}) // one window, open all run
		}
		rec := vt.BuildRecord(mem, liveInSchema, data)
		scan, err := vector.NewScan(liveInSchema, rec)
		rec.Release()
		if err != nil {
			t.Fatal(err)
		}
		ep := Epoch{EpochInfo: stream.EpochInfo{ID: id, HasWatermark: true, CheckpointDir: dir, NumPartitions: parts}}
		ep.State = stores.begin(id)
		out, err := op.Execute(ctx, ep, scan)
		if err != nil {
			t.Fatalf("epoch %d: %v", id, err)
		}
		recs, err := vector.Drain(ctx, out)
		out.Close()
		if err != nil {
			t.Fatal(err)
		}
		releaseRecords(recs)
		op.Committed(stores.commit(ctx))
		if c := cap(op.live.keys.arena); c != lastCap {
			reallocs++
			lastCap = c
		}
	}
	kept := len(op.live.keys.arena)
	if kept == 0 {
		t.Fatal("no store keys kept: the test did not reach the arena")
	}
	// Doubling from the first epoch's keys: log2(epochs) + 1 growths.
	if reallocs > 6 {
		t.Fatalf("the arena of kept keys (%d bytes, %d epochs of %d new keys) was reallocated %d times, want at most 6", kept, epochs, perEpoch, reallocs)
	}
}
