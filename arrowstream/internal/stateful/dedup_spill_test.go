package stateful

import (
	"context"
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	"github.com/arrowstream/arrowstream/arrowstream/stream"
	"github.com/arrowstream/arrowstream/internal/testutil/poisonmem"
	"github.com/arrowstream/arrowstream/vector"
	vt "github.com/arrowstream/arrowstream/vector/vectortest"
)

// TestSpilledDedupMatchesModel runs deduplication with the bounded
// working set (budget 0: no key kept between epochs; a few hundred bytes:
// caches emptied now and then) over Pebble and memory stores, with
// aborted, replayed and restarted epochs, and checks every committed
// epoch's rows and state row count against a brute-force model.
func TestSpilledDedupMatchesModel(t *testing.T) {
	const delay = 2 * time.Second
	for _, within := range []bool{false, true} {
		for _, budget := range []string{"0", "600"} {
			for _, onPebble := range []bool{true, false} {
				for seed := uint64(1); seed <= 3; seed++ {
					t.Run(fmt.Sprintf("within=%v/budget=%s/pebble=%v/seed=%d", within, budget, onPebble, seed), func(t *testing.T) {
						if testing.Short() && seed > 1 {
							t.Skip("one seed in -short")
						}
						spilledDedup(t, within, budget, onPebble, seed, delay)
					})
				}
			}
		}
	}
}

func spilledDedup(t *testing.T, within bool, budget string, onPebble bool, seed uint64, delay time.Duration) {
	mem := poisonmem.New()
	defer mem.AssertSize(t, 0)
	ctx := context.Background()
	rng := rand.New(rand.NewPCG(seed, 7))
	parts := 1 + rng.IntN(3)
	dir := t.TempDir()
	stores := openAnyStores(t, mem, onPebble, dir, parts)
	defer func() { stores.close() }()
	keys := []int{0, 1}
	if within {
		keys = []int{0}
	}
	newOp := func() *statefulDedup {
		op, err := newStatefulDedup(mem, 0, liveInSchema, keys, 1, within, delay)
		if err != nil {
			t.Fatal(err)
		}
		return op
	}
	op := newOp()
	conf := map[string]string{stream.ConfStateStoreProvider: "pebble", stream.ConfPebbleLiveStateBytes: budget}
	seen := map[[2]int64]int64{} // model: key → eviction time
	lateMs := int64(0)
	for id := int64(0); id < 40; id++ {
		wmMs := max(0, (id-3)*1000)
		var data []vt.Row
		var want []string
		for i := 0; i < 1+rng.IntN(40); i++ {
			k, ts := rng.Int64N(12), (max(0, id-5)+rng.Int64N(6))*1_000_000
			data = append(data, vt.Row{k, ts})
			if ts <= lateMs*1000 {
				continue
			}
			key, at := [2]int64{k, ts}, ts
			if within {
				key, at = [2]int64{k, 0}, ts+delay.Microseconds()
			}
			if _, dup := seen[key]; dup {
				continue
			}
			seen[key] = at
			want = append(want, fmt.Sprint(k, ts))
		}
		for key, at := range seen {
			if at <= wmMs*1000 {
				delete(seen, key)
			}
		}
		slices.Sort(want)
		ep := Epoch{EpochInfo: stream.EpochInfo{ID: id, WatermarkMs: wmMs, LateWatermarkMs: lateMs, HasWatermark: true, CheckpointDir: dir, NumPartitions: parts, Conf: conf}}
		run := func() []string {
			rec := vt.BuildRecord(mem, liveInSchema, data)
			scan, err := vector.NewScan(liveInSchema, rec)
			rec.Release()
			if err != nil {
				t.Fatal(err)
			}
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
			var got []string
			for _, r := range vt.Rows[vt.Row](vt.Normalizer{}, recs...) {
				got = append(got, fmt.Sprint(r...))
			}
			releaseRecords(recs)
			slices.Sort(got)
			return got
		}
		for rng.IntN(4) == 0 {
			run()
			stores.abort()
			op.Abort()
		}
		got := run()
		op.Committed(stores.commit(ctx))
		if !slices.Equal(got, want) {
			t.Fatalf("epoch %d: got\n%v\nwant\n%v", id, got, want)
		}
		if p := op.Report(); p.NumRowsTotal != int64(len(seen)) {
			t.Fatalf("epoch %d: numRowsTotal %d, want %d", id, p.NumRowsTotal, len(seen))
		}
		if op.live.parts[0].spill == nil {
			t.Fatalf("epoch %d: the Pebble setting did not bound the working set", id)
		}
		if budget == "0" {
			for p := range op.live.parts {
				if n := len(op.live.parts[p].seen); n != 0 {
					t.Fatalf("epoch %d: budget 0 keeps %d keys of partition %d", id, n, p)
				}
			}
		}
		if rng.IntN(5) == 0 {
			op = newOp()
			if rng.IntN(2) == 0 {
				stores.close()
				stores = openAnyStores(t, mem, onPebble, dir, parts)
			}
		}
		lateMs = wmMs
	}
}
