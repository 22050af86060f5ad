package stateful

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/arrowstream/arrowstream/arrowstream/stream"
	"github.com/arrowstream/arrowstream/internal/testutil/poisonmem"
	"github.com/arrowstream/arrowstream/vector"
	vt "github.com/arrowstream/arrowstream/vector/vectortest"
)

// TestStoreKeysArenaGrowsByDoubling runs a windowed aggregation shaped as
// q8's: every epoch brings 200 new groups, kept for 16 epochs, so the
// arena of kept store keys (stateful_agg_keys.go) grows by one epoch's
// keys at a time. It checks that the arena grows O(log n) times (a chunk
// twice the last's each time),
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
		if c := len(op.live.keys.chunks); c != lastCap {
			reallocs++
			lastCap = c
		}
	}
	kept := op.live.keys.held()
	if kept == 0 {
		t.Fatal("no store keys kept: the test did not reach the arena")
	}
	// Doubling from the first epoch's keys: log2(epochs) + 1 growths.
	if reallocs > 6 {
		t.Fatalf("the arena of kept keys (%d bytes, %d epochs of %d new keys) was reallocated %d times, want at most 6", kept, epochs, perEpoch, reallocs)
	}
}

// TestStoreKeysKeepDoesNotMove: a kept key stays where it was kept while
// the arena grows by many more keys (chunks, never a copy of the kept
// ones), until a remap; a key longer than a chunk is not kept. With the
// arena as one slice grown by doubling, every growth copied it.
func TestStoreKeysKeepDoesNotMove(t *testing.T) {
	var k storeKeys
	const groups = 40000
	k.reserve(1, 0)
	k.keep(0, []byte("first-key"))
	first := &k.of(0)[0]
	for g := int32(1); g < groups; g++ {
		k.reserve(int(g)+1, 24)
		k.keep(g, fmt.Appendf(nil, "key-%d-%s", g, strings.Repeat("x", int(g%17))))
		if p := &k.of(0)[0]; p != first {
			t.Fatalf("after %d keys the first key moved: the arena was copied", g)
		}
	}
	if len(k.chunks) < 2 {
		t.Fatalf("%d bytes of keys in %d chunk: the test did not grow the arena", k.held(), len(k.chunks))
	}
	for g := int32(1); g < groups; g++ {
		if got, want := string(k.of(g)), fmt.Sprintf("key-%d-%s", g, strings.Repeat("x", int(g%17))); got != want {
			t.Fatalf("group %d: key %q, want %q", g, got, want)
		}
	}
	k.reserve(groups+1, keyChunkMax+1)
	k.keep(groups, make([]byte, keyChunkMax+1))
	if k.of(groups) != nil {
		t.Fatal("a key longer than a chunk was kept")
	}
}
