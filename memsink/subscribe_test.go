package memsink_test

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/apache/arrow/go/v17/arrow"
	"github.com/apache/arrow/go/v17/arrow/array"

	"github.com/arrowstream/arrowstream/arrowstream"
	"github.com/arrowstream/arrowstream/internal/testutil/poisonmem"
	"github.com/arrowstream/arrowstream/memsink"
	vt "github.com/arrowstream/arrowstream/vector/vectortest"
)

// readEpoch reads one epoch from sub: records until want rows arrived
// (one empty record for an epoch without rows), checking each record's
// _epoch, and then that nothing more is queued.
func readEpoch(t *testing.T, sub *memsink.Subscription, epoch int64, want int) []vt.Row {
	t.Helper()
	ctx := context.Background()
	var rows []vt.Row
	for first := true; first || len(rows) < want; first = false {
		rec, err := sub.Next(ctx)
		if err != nil {
			t.Fatalf("epoch %d: %v", epoch, err)
		}
		ep := rec.Column(int(rec.NumCols()) - 2).(*array.Int64)
		for i := range ep.Len() {
			if ep.Value(i) != epoch {
				t.Fatalf("row of epoch %d while reading epoch %d", ep.Value(i), epoch)
			}
		}
		if sub.After() != epoch {
			t.Fatalf("After() = %d while reading epoch %d", sub.After(), epoch)
		}
		data := array.NewRecord(kv, rec.Columns()[:rec.NumCols()-2], rec.NumRows())
		rows = append(rows, vt.RowsOf(data)...)
		data.Release()
		rec.Release()
	}
	done, cancel := context.WithCancel(ctx)
	cancel()
	if rec, err := sub.Next(done); err == nil {
		rec.Release()
		t.Fatalf("epoch %d: more records than its %d rows", epoch, want)
	}
	return rows
}

// TestSubscriptionModel checks a subscription against a model of each
// output mode over random epochs (many small ones, so that compaction
// merges them into runs): each epoch's rows arrive once, in commit order
// and alone in their records.
func TestSubscriptionModel(t *testing.T) {
	for _, c := range []struct {
		name string
		info arrowstream.SinkInfo
	}{
		{"append", arrowstream.SinkInfo{Mode: arrowstream.Append}},
		{"complete", arrowstream.SinkInfo{Mode: arrowstream.Complete}},
		{"update", arrowstream.SinkInfo{Mode: arrowstream.Update}},
		{"update-keyed", arrowstream.SinkInfo{Mode: arrowstream.Update, KeyColumns: []string{"k"}}},
	} {
		t.Run(c.name, func(t *testing.T) {
			mem := poisonmem.New()
			defer mem.AssertSize(t, 0)
			tbl := newTable(t, mem, c.info, memsink.Options{})
			defer tbl.Close()
			rng := rand.New(rand.NewPCG(1, uint64(len(c.name))))
			add(t, tbl, mem, 0, r(int64(-1), "before"))
			sub, err := tbl.Subscribe(nil, mem) // from epoch 1 on
			if err != nil {
				t.Fatal(err)
			}
			defer sub.Close()
			for e := int64(1); e <= 60; e++ {
				n := rng.IntN(4) // 0..3 rows, distinct keys
				var rows []vt.Row
				for i := range n {
					rows = append(rows, r(int64(rng.IntN(5)*10+i), fmt.Sprintf("e%d-%d", e, i)))
				}
				add(t, tbl, mem, e, rows...)
				checkRows(t, fmt.Sprintf("epoch %d", e), rows, readEpoch(t, sub, e, n))
			}
		})
	}
}

// TestSubscriptionSinceAndRetention: SINCE replays retained epochs and
// refuses evicted ones; a reader overtaken by retention is told so; a
// closed table ends the subscription.
func TestSubscriptionSinceAndRetention(t *testing.T) {
	mem := poisonmem.New()
	defer mem.AssertSize(t, 0)
	tbl := newTable(t, mem, arrowstream.SinkInfo{Mode: arrowstream.Append}, memsink.Options{MaxEpochs: 3})
	for e := int64(0); e < 5; e++ { // retains 2..4
		add(t, tbl, mem, e, r(e, "x"))
	}
	since := func(n int64) *int64 { return &n }
	if _, err := tbl.Subscribe(since(0), mem); !errors.Is(err, memsink.ErrBehind) {
		t.Fatalf("SINCE 0 with epochs 2..4 retained: %v", err)
	} else if want := "table q: the epochs after 0 were evicted (retained epochs 2..4): subscription fell behind the table's retention"; err.Error() != want {
		t.Fatalf("got %q, want %q", err, want)
	}
	sub, err := tbl.Subscribe(since(1), mem)
	if err != nil {
		t.Fatal(err)
	}
	defer sub.Close()
	for e := int64(2); e < 5; e++ {
		checkRows(t, "replay", []vt.Row{r(e, "x")}, readEpoch(t, sub, e, 1))
	}
	// The reader stops; five commits evict what it would read next.
	for e := int64(5); e < 10; e++ {
		add(t, tbl, mem, e, r(e, "x"))
	}
	if _, err := sub.Next(context.Background()); !errors.Is(err, memsink.ErrBehind) {
		t.Fatalf("reader overtaken by retention: %v", err)
	}

	all, err := tbl.Subscribe(since(-1), mem)
	if err != nil {
		t.Fatal(err)
	}
	defer all.Close()
	checkRows(t, "SINCE -1 starts at the oldest retained", []vt.Row{r(int64(7), "x")}, readEpoch(t, all, 7, 1))
	tbl.Close()
	for range 2 {
		rec, err := all.Next(context.Background())
		if errors.Is(err, memsink.ErrDropped) {
			return
		}
		if err != nil {
			t.Fatal(err)
		}
		rec.Release()
	}
	t.Fatal("closing the table did not end the subscription")
}

// TestSubscriptionWaits: Next blocks until a commit and returns the
// context's cause when cancelled.
func TestSubscriptionWaits(t *testing.T) {
	mem := poisonmem.New()
	defer mem.AssertSize(t, 0)
	tbl := newTable(t, mem, arrowstream.SinkInfo{Mode: arrowstream.Append}, memsink.Options{})
	defer tbl.Close()
	sub, err := tbl.Subscribe(nil, mem)
	if err != nil {
		t.Fatal(err)
	}
	defer sub.Close()
	got := make(chan arrow.Record, 1)
	go func() {
		rec, err := sub.Next(context.Background())
		if err != nil {
			t.Error(err)
		}
		got <- rec
	}()
	add(t, tbl, mem, 0, r(int64(1), "a"))
	rec := <-got
	if rec == nil || rec.NumRows() != 1 {
		t.Fatalf("woken with %v", rec)
	}
	rec.Release()
	ctx, cancel := context.WithCancelCause(context.Background())
	stop := errors.New("shell interrupted")
	cancel(stop)
	if _, err := sub.Next(ctx); !errors.Is(err, context.Canceled) && !errors.Is(err, stop) {
		t.Fatalf("cancelled Next: %v", err)
	}
}
