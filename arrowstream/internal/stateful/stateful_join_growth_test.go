package stateful

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/arrowstream/arrowstream/internal/testutil/poisonmem"
	"github.com/arrowstream/arrowstream/vector"
	vt "github.com/arrowstream/arrowstream/vector/vectortest"
)

// TestJoinGrowthReservedWithinEpoch: one epoch of 400K new rows (200K a
// side, about 3.6 MB of keys and flags estimated) into a stream-stream
// join under a 1 MiB limit of Go-heap reservations is refused before the
// rows it stores are built past the limit, holding at most the limit plus
// the unreserved chunks. Before session 14 the join reserved once after
// the epoch's changes, so all 3.6 MB were built before the refusal.
// Abort and Close return every reservation.
func TestJoinGrowthReservedWithinEpoch(t *testing.T) {
	const rows, limit = 400_000, 1 << 20
	for _, parts := range []int{1, 4} {
		t.Run(fmt.Sprintf("partitions=%d", parts), func(t *testing.T) {
			mem := poisonmem.New()
			defer mem.AssertSize(t, 0)
			ctx := context.Background()
			dir := t.TempDir()
			stores := newTestStores(t, mem, dir, parts)
			defer func() { stores.close() }()
			r := &limitedReserver{Allocator: mem, limit: limit}
			op := newJoinSnapOp(t, r, "k = k2", "inner", false)
			op.mem = mem
			data := make([]vt.Row, rows)
			for i := range data {
				data[i] = vt.Row{int64(i / 2), int64(i) * 1000}
			}
			rec := vt.BuildRecord(mem, liveInSchema, data)
			scan, err := vector.NewScan(liveInSchema, rec)
			rec.Release()
			if err != nil {
				t.Fatal(err)
			}
			ep := Epoch{}
			ep.ID, ep.CheckpointDir, ep.NumPartitions = 0, dir, parts
			ep.State = stores.begin(0)
			out, err := op.Execute(ctx, ep, scan)
			if err == nil {
				out.Close()
			}
			held := op.j.liveHeap()
			slack := growthSlack(limit, parts)
			t.Logf("%d partitions: refused with %d bytes of join state estimated (limit %d, unreserved at most %d): %v", parts, held, limit, slack, err)
			if !errors.Is(err, errOverLimit) || !strings.Contains(err.Error(), "within the epoch") {
				t.Fatalf("epoch of %d new rows under a %d-byte limit: %v, want the limit's error while the state grows", rows, limit, err)
			}
			if held > limit+slack {
				t.Errorf("the join state grew to %d bytes before it was refused: more than the limit %d plus the unreserved chunks %d", held, limit, slack)
			}
			if r.held.Load() > limit {
				t.Errorf("%d bytes reserved, over the limit %d", r.held.Load(), limit)
			}
			stores.abort()
			op.j.Abort()
			if err := op.j.Close(); err != nil {
				t.Fatal(err)
			}
			if r.held.Load() != 0 {
				t.Errorf("after Close %d bytes stay reserved", r.held.Load())
			}
		})
	}
}
