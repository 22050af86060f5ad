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

// TestLiveDedupAbortRestart runs deduplication (on (k, t), and on k within
// the watermark) over random epochs with aborted, replayed and restarted
// epochs, and checks every committed epoch against a brute-force model:
// rows at or below the late watermark dropped, a key's first row kept,
// keys evicted once their time (plus the delay within the watermark) is at
// or below the watermark.
func TestLiveDedupAbortRestart(t *testing.T) {
	const delay = 2 * time.Second
	for _, within := range []bool{false, true} {
		for _, parts := range []int{1, 3} {
			t.Run(fmt.Sprintf("within=%v/%d", within, parts), func(t *testing.T) {
				mem := poisonmem.New()
				defer mem.AssertSize(t, 0)
				ctx := context.Background()
				dir := t.TempDir()
				stores := newTestStores(t, mem, dir, parts)
				defer func() { stores.close() }() // waits for background snapshots before the directory goes
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
				seen := map[[2]int64]int64{} // model: key → eviction time
				rng := rand.New(rand.NewPCG(5, uint64(parts)))
				lateMs := int64(0)
				for id := int64(0); id < 40; id++ {
					wmMs := max(0, (id-3)*1000)
					var data []vt.Row
					var want []string
					for i := 0; i < 25; i++ {
						k, ts := rng.Int64N(8), (max(0, id-5)+rng.Int64N(6))*1_000_000
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
					ep := Epoch{EpochInfo: stream.EpochInfo{ID: id, WatermarkMs: wmMs, LateWatermarkMs: lateMs, HasWatermark: true, CheckpointDir: dir, NumPartitions: parts}}
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
						for _, r := range recs {
							r.Release()
						}
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
					if rng.IntN(5) == 0 {
						op = newOp()
						if rng.IntN(2) == 0 {
							// A process restart: the keys come back from the
							// files (snapshot and changelogs).
							stores.close()
							stores = newTestStores(t, mem, dir, parts)
						}
					}
					lateMs = wmMs
				}
			})
		}
	}
}
