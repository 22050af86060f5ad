package stateful

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/arrowstream/arrowstream/arrowstream/stream"
	"github.com/arrowstream/arrowstream/internal/testutil/poisonmem"
	"github.com/arrowstream/arrowstream/vector"
	vt "github.com/arrowstream/arrowstream/vector/vectortest"
)

// TestStateGrowthReservedWithinEpoch: one epoch of 200K new keys into a
// deduplication (about 16 MiB of estimated state) under a 1 MiB limit is
// refused while it grows, its partitions holding at most the limit plus
// the chunks not yet reserved (growthChunk, minGrowthChunk a partition)
// when it stops; before session 13 the state was reserved once after the
// epoch's changes, so the whole epoch's keys (16 MiB) were in memory
// before the refusal. After the refusal the epoch aborts and Close
// returns every reservation.
//
// With 200 partitions each partition's growth (150K keys: 750 a
// partition, about 60 KiB) stayed under the 64 KiB minimum chunk before
// session 14, so nothing was reserved within the epoch and all 12 MB
// were built before the refusal; the chunk is now bounded by
// limit/(4×partitions), so the state stops within a quarter of the limit
// past it.
func TestStateGrowthReservedWithinEpoch(t *testing.T) {
	const limit = 1 << 20
	for _, parts := range []int{1, 4, 200} {
		rows := 200_000
		if parts == 200 {
			rows = 150_000
		}
		t.Run(fmt.Sprintf("partitions=%d", parts), func(t *testing.T) {
			mem := poisonmem.New()
			defer mem.AssertSize(t, 0)
			ctx := context.Background()
			dir := t.TempDir()
			stores := newTestStores(t, mem, dir, parts)
			defer func() { stores.close() }()
			r := &limitedReserver{Allocator: mem, limit: limit}
			op, err := newStatefulDedup(r, 0, liveInSchema, []int{0, 1}, 1, false, 0)
			if err != nil {
				t.Fatal(err)
			}
			data := make([]vt.Row, rows)
			for i := range data {
				data[i] = vt.Row{int64(i), int64(i) * 1000}
			}
			rec := vt.BuildRecord(mem, liveInSchema, data)
			scan, err := vector.NewScan(liveInSchema, rec)
			rec.Release()
			if err != nil {
				t.Fatal(err)
			}
			ep := Epoch{EpochInfo: stream.EpochInfo{ID: 0, CheckpointDir: dir, NumPartitions: parts}}
			ep.State = stores.begin(0)
			out, err := op.Execute(ctx, ep, scan)
			if err == nil {
				out.Close()
			}
			held := op.live.bytes()
			slack := growthSlack(limit, parts)
			if slack > limit/4+int64(parts)*floorGrowthChunk {
				t.Errorf("%d partitions may hold %d bytes unreserved under a %d-byte limit: more than a quarter of it", parts, slack, limit)
			}
			t.Logf("%d partitions: refused with %d bytes of state estimated (limit %d, unreserved at most %d): %v", parts, held, limit, slack, err)
			if !errors.Is(err, errOverLimit) || !strings.Contains(err.Error(), "within the epoch") {
				t.Fatalf("epoch of %d new keys under a %d-byte limit: %v, want the limit's error while the state grows", rows, limit, err)
			}
			if held > limit+slack+1024 {
				t.Errorf("the state grew to %d bytes before it was refused: more than the limit %d plus the unreserved chunks %d", held, limit, slack)
			}
			if r.held.Load() > limit {
				t.Errorf("%d bytes reserved, over the limit %d", r.held.Load(), limit)
			}
			stores.abort()
			op.Abort()
			if err := op.Close(); err != nil {
				t.Fatal(err)
			}
			if r.held.Load() != 0 {
				t.Errorf("after Close %d bytes stay reserved", r.held.Load())
			}
		})
	}
}
