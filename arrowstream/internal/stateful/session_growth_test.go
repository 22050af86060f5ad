package stateful

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/apache/arrow/go/v17/arrow/memory"

	"github.com/arrowstream/arrowstream/arrowstream/stream"
	"github.com/arrowstream/arrowstream/internal/testutil/poisonmem"
	"github.com/arrowstream/arrowstream/vector"
)

// TestSessionGrowthReservedWithinEpoch: one epoch of 100K new session
// keys (about 11 MB of live sessions and end index estimated) under a
// 1 MiB limit of Go-heap reservations is refused while the partitions
// save them, holding at most the limit plus the unreserved chunks; before
// session 14 the session window reserved its index once after the
// epoch's changes, so every session was built first. Abort and Close
// return every reservation.
func TestSessionGrowthReservedWithinEpoch(t *testing.T) {
	const keys, limit, gap = 100_000, 1 << 20, 2_000_000
	for _, parts := range []int{1, 4} {
		t.Run(fmt.Sprintf("partitions=%d", parts), func(t *testing.T) {
			mem := poisonmem.New()
			defer mem.AssertSize(t, 0)
			ctx := context.Background()
			dir := t.TempDir()
			stores := newTestStores(t, mem, dir, parts)
			defer func() { stores.close() }()
			r := &limitedReserver{Allocator: mem, limit: limit}
			// Only the state's account is limited: the epoch's hash
			// aggregations (labelled otherwise) reserve elsewhere.
			only := stateOnly{limitedReserver: r, state: "session window state"}
			spec := vector.AggregateSpec{
				GroupBy:    []vector.NamedExpr{vector.As(vector.Col("k"), "k"), vector.As(vector.Col("session"), "session")},
				Aggregates: []vector.AggregateCall{{Func: vector.AggCountStar, Name: "n"}},
			}
			op, err := newStatefulSessionWindow(only, 0, sessionInSchema, spec, 1, 1, true, stream.Append)
			if err != nil {
				t.Fatal(err)
			}
			rows := make([][2]int64, keys)
			for k := range rows {
				rows[k] = [2]int64{int64(k), 1_000_000}
			}
			rec := sessionRecord(mem, rows, gap)
			scan, err := vector.NewScan(sessionInSchema, rec)
			rec.Release()
			if err != nil {
				t.Fatal(err)
			}
			ep := Epoch{EpochInfo: stream.EpochInfo{ID: 0, HasWatermark: true, CheckpointDir: dir, NumPartitions: parts}}
			ep.State = stores.begin(0)
			out, err := op.Execute(ctx, ep, scan)
			if err == nil {
				out.Close()
			}
			// The epoch's encoded copies: the live map's (sessions kept
			// encoded) or the changelog batch's (kept decoded).
			held := op.index.live.total()
			if op.index.dec != nil {
				held += int64(len(op.index.dec.logb.keys) + len(op.index.dec.logb.vals))
			}
			if held == 0 {
				t.Fatal("no encoded copy was measured")
			}
			slack := growthSlack(limit, parts)
			t.Logf("%d partitions: refused with %d bytes of live sessions (limit %d, unreserved at most %d): %v", parts, held, limit, slack, err)
			if !errors.Is(err, errOverLimit) || !strings.Contains(err.Error(), "within the epoch") {
				t.Fatalf("epoch of %d new session keys under a %d-byte limit: %v, want the limit's error while the state grows", keys, limit, err)
			}
			if held > limit+slack {
				t.Errorf("the live sessions grew to %d bytes before they were refused: more than the limit %d plus the unreserved chunks %d", held, limit, slack)
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

// stateOnly limits only the reservations labelled state (ForOperator);
// the others go to the unlimited allocator under it.
type stateOnly struct {
	*limitedReserver
	state string
}

func (s stateOnly) ForOperator(name string) memory.Allocator {
	if name == s.state {
		return s.limitedReserver
	}
	return s.limitedReserver.Allocator
}
