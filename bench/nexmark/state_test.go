package nexmark

import (
	"context"
	"slices"
	"strings"
	"testing"

	"github.com/apache/arrow/go/v17/arrow/memory"
)

// TestQ7StateBounded: q7's join condition bounds the bids by rowtime =
// window.end − 1 ms, a column derived from the window, which carries the
// watermark (docs/semantics.md §7): the join evicts, its state stays
// within a few windows of bids, and the answer equals both the Go peer's
// and that of a run whose rowtime the planner cannot see through (CASE
// hides the shift), which keeps every bid.
func TestQ7StateBounded(t *testing.T) {
	size := Size{Events: 48_000, EpochEvents: 2_000, EventRate: 400} // 120 s of event time, 24 epochs
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	batches, err := Generate(mem, Config{Seed: 5, EventRate: size.EventRate}, size)
	if err != nil {
		t.Fatal(err)
	}
	defer func() {
		for i := range batches {
			batches[i].Release()
		}
	}()
	q, _ := lookup("q7")
	hidden := q
	hidden.sql = strings.Replace(q.sql, "window.end - INTERVAL 1 MILLISECOND AS rowtime",
		"CASE WHEN max(price) >= 0 THEN window.end - INTERVAL 1 MILLISECOND END AS rowtime", 1)
	if hidden.sql == q.sql {
		t.Fatal("the q7 SQL changed: update the test's rewrite")
	}
	ctx := context.Background()
	bounded, err := runEngine(ctx, mem, t.TempDir(), q, batches, 0)
	if err != nil {
		t.Fatal(err)
	}
	unbounded, err := runEngine(ctx, mem, t.TempDir(), hidden, batches, 0)
	if err != nil {
		t.Fatal(err)
	}
	peer := runPeer(q, batches)
	if d := diffRows(bounded.answer, peer.answer); d != "" {
		t.Fatalf("evicting run vs Go peer: %s", d)
	}
	if !slices.Equal(bounded.answer, unbounded.answer) {
		t.Fatalf("evicting run vs non-evicting run: %s", diffRows(bounded.answer, unbounded.answer))
	}
	if len(bounded.answer) == 0 {
		t.Fatal("empty answer: the comparison checks nothing")
	}
	var bids int64
	for _, b := range batches {
		bids += b.Bid.NumRows()
	}
	// The bids of the last ~20 s of event time (two windows and the 10 s
	// lookback) at most; without eviction, every bid.
	limit := bids * 20 / 120
	t.Logf("state rows: evicting %d (peak %d), non-evicting %d (peak %d), bids %d",
		bounded.stateRows, bounded.peakStateRows, unbounded.stateRows, unbounded.peakStateRows, bids)
	if bounded.peakStateRows > limit {
		t.Errorf("evicting run: peak state %d rows, want at most %d", bounded.peakStateRows, limit)
	}
	if unbounded.stateRows < bids*9/10 {
		t.Errorf("non-evicting run: %d state rows of %d bids: the rewrite no longer hides the bound", unbounded.stateRows, bids)
	}
}
