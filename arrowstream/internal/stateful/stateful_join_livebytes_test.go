package stateful

import (
	"context"
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/apache/arrow/go/v17/arrow/memory"

	"github.com/arrowstream/arrowstream/arrowstream/stream"
	"github.com/arrowstream/arrowstream/checkpoint"
	"github.com/arrowstream/arrowstream/vector"
	vt "github.com/arrowstream/arrowstream/vector/vectortest"
)

// TestJoinDeclaresLiveBytesOfItsEntries: the live bytes the join declares
// to each partition's store (checkpoint.LiveBytesSetter, which decides its
// snapshots by comparing the replay with twice them) are within a factor
// of 1.5 of the key and value bytes the store really holds for it at that
// version, read back from the files: for a side that evicts (cursors,
// compactions, dropped batches) and one that never does (batches merged
// in memory, stored as their pieces), with small and large epochs.
func TestJoinDeclaresLiveBytesOfItsEntries(t *testing.T) {
	const timed = "k = k2 AND t2 >= t - INTERVAL 2 SECONDS AND t2 <= t + INTERVAL 2 SECONDS"
	for _, c := range []struct {
		name, on  string
		watermark bool
		rows      int
	}{
		{"evict/small", timed, true, 60},
		{"evict/large", timed, true, 3000},
		{"grow/small", "k = k2", false, 60},
		{"grow/large", "k = k2", false, 3000},
	} {
		t.Run(c.name, func(t *testing.T) {
			ctx := context.Background()
			checked := memory.NewCheckedAllocator(memory.NewGoAllocator())
			defer checked.AssertSize(t, 0)
			dir := t.TempDir()
			const parts = 3
			stores := newOptStores(t, dir, parts, checkpoint.StoreOptions{Allocator: checked})
			op := newJoinSnapOp(t, checked, c.on, "inner", c.watermark)
			defer func() {
				if err := op.Close(); err != nil {
					t.Error(err)
				}
				stores.close()
			}()
			rng := rand.New(rand.NewPCG(11, uint64(c.rows)))
			worst := 1.0
			for id := int64(0); id < 30; id++ {
				var data []vt.Row
				for range c.rows/2 + rng.IntN(c.rows) {
					data = append(data, vt.Row{rng.Int64N(1 << 16), (max(0, id-5) + rng.Int64N(6)) * 1_000_000})
				}
				ep := Epoch{EpochInfo: stream.EpochInfo{ID: id, WatermarkMs: max(0, (id-4)*1000), HasWatermark: c.watermark, CheckpointDir: dir, NumPartitions: parts}}
				rec := vt.BuildRecord(checked, liveInSchema, data)
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
				releaseRecords(recs)
				if err != nil {
					t.Fatal(err)
				}
				op.Committed(stores.commit(ctx))
				if id%6 != 5 {
					continue
				}
				for p, m := range readVersion(t, checked, dir, parts, id+1) {
					var stored int64
					for k, v := range m {
						stored += int64(len(k) + len(v))
					}
					entries, declared := op.j.partLive(p)
					if entries != int64(len(m)) {
						t.Fatalf("epoch %d partition %d: declared %d entries, the store holds %d", id, p, entries, len(m))
					}
					if stored == 0 {
						continue
					}
					r := float64(declared) / float64(stored)
					worst = max(worst, r, 1/r)
					if r > 1.5 || r < 1/1.5 {
						t.Fatalf("epoch %d partition %d: declared %d live bytes, the store holds %d (%.2f×)", id, p, declared, stored, r)
					}
				}
			}
			t.Logf("worst declared/stored ratio %s", fmt.Sprintf("%.2f", worst))
		})
	}
}
