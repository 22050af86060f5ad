package memsink_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/apache/arrow/go/v17/arrow/array"
	"github.com/apache/arrow/go/v17/arrow/memory"

	"github.com/arrowstream/arrowstream/arrowstream"
	"github.com/arrowstream/arrowstream/memsink"
	vt "github.com/arrowstream/arrowstream/vector/vectortest"
)

// modelEpoch is an epoch of the brute-force model of an Append table.
type modelEpoch struct {
	id     int64
	rows   []vt.Row
	commit time.Time
}

// tickClock returns commit times one millisecond apart.
func tickClock() func() time.Time {
	var n atomic.Int64
	base := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	return func() time.Time { return base.Add(time.Duration(n.Add(1)) * time.Millisecond) }
}

// checkModel compares every read of tbl with the model's retained epochs
// (evicted: the highest evicted epoch, -1 when none).
func checkModel(t *testing.T, tbl *memsink.Table, mem memory.Allocator, model []modelEpoch, evicted int64, step string) {
	t.Helper()
	hist := tbl.History()
	if len(hist) != len(model) {
		t.Fatalf("%s: History has %d epochs, model %d", step, len(hist), len(model))
	}
	var all []vt.Row
	for i, h := range hist {
		m := model[i]
		if h.Epoch != m.id || h.Rows != int64(len(m.rows)) || !h.CommitTime.Equal(m.commit) {
			t.Fatalf("%s: History[%d] = %+v, model epoch %d with %d rows at %v", step, i, h, m.id, len(m.rows), m.commit)
		}
		all = append(all, m.rows...)
		// Time travel to every retained epoch.
		s, err := tbl.AsOf(m.id)
		if err != nil {
			t.Fatalf("%s: AsOf(%d): %v", step, m.id, err)
		}
		if s.LatestEpoch() != m.id {
			t.Fatalf("%s: AsOf(%d) says latest %d", step, m.id, s.LatestEpoch())
		}
		checkOrdered(t, fmt.Sprintf("%s: AsOf(%d)", step, m.id), all, rowsOf(s))
	}
	sz := tbl.Size()
	if sz.Epochs != len(model) || sz.Rows != int64(len(all)) {
		t.Fatalf("%s: Size = %+v, model %d epochs, %d rows", step, sz, len(model), len(all))
	}
	checkOrdered(t, step+": snapshot", all, rowsOf(tbl.Snapshot()))
	// Since every epoch from the last evicted one, with per-row epochs
	// and commit times.
	for i := -1; i < len(model); i++ {
		after := evicted
		if i >= 0 {
			after = model[i].id
		}
		s, err := tbl.Since(after)
		if err != nil {
			t.Fatalf("%s: Since(%d): %v", step, after, err)
		}
		var want []vt.Row
		for _, m := range model[i+1:] {
			for _, r := range m.rows {
				want = append(want, append(append(vt.Row{}, r...), m.id, m.commit.UnixMicro()))
			}
		}
		recs, err := s.RecordsWithEpoch(mem)
		s.Release()
		if err != nil {
			t.Fatal(err)
		}
		var got []vt.Row
		for _, rec := range recs {
			ts := rec.Column(3).(*array.Timestamp).TimestampValues()
			for j, row := range vt.RowsOf(rec) {
				row[3] = int64(ts[j])
				got = append(got, row)
			}
			rec.Release()
		}
		checkOrdered(t, fmt.Sprintf("%s: Since(%d) with epochs", step, after), want, got)
	}
	if len(model) > 0 {
		last := model[len(model)-1]
		checkOrdered(t, step+": LatestBatchData", last.rows, rowsOf(tbl.LatestBatchData()))
	}
}

// TestCompactionAgainstModel: random small epochs (empty ones, several
// records per epoch), random retention and compactions at random points;
// every read (History, AsOf each epoch, Since each epoch with the epoch
// columns, Size, the latest batch) matches a brute-force model, snapshots
// taken before a compaction still read what they read, and the
// allocator ends at zero.
func TestCompactionAgainstModel(t *testing.T) {
	for seed := range uint64(12) {
		t.Run(fmt.Sprint(seed), func(t *testing.T) {
			rng := rand.New(rand.NewPCG(seed, 7))
			mem := vt.NewAllocator(t)
			opts := memsink.Options{CompactAfter: -1, Now: tickClock()}
			switch seed % 3 {
			case 1:
				opts.MaxEpochs = 5 + rng.IntN(20)
			case 2:
				opts.MaxRows = int64(20 + rng.IntN(200))
			}
			tbl := newTable(t, mem, arrowstream.SinkInfo{Mode: arrowstream.Append}, opts)
			var model []modelEpoch
			evicted := int64(-1)
			type held struct {
				s    *memsink.Snapshot
				rows []vt.Row
			}
			var snaps []held
			for e := int64(0); e < 80; e++ {
				n := rng.IntN(12)
				if rng.IntN(5) == 0 {
					n = 0
				}
				rows := epochRows(e, n)
				shape := vt.Shape{BatchSize: 1 + rng.IntN(4), Sliced: rng.IntN(2) == 0}
				if err := tbl.AddBatch(context.Background(), e, op(t, mem, kv, rows, shape)); err != nil {
					t.Fatal(err)
				}
				model = append(model, modelEpoch{id: e, rows: rows, commit: tbl.History()[len(tbl.History())-1].CommitTime})
				var total int64
				for _, m := range model {
					total += int64(len(m.rows))
				}
				for len(model) > 1 && (opts.MaxEpochs > 0 && len(model) > opts.MaxEpochs || opts.MaxRows > 0 && total > opts.MaxRows) {
					total -= int64(len(model[0].rows))
					evicted = model[0].id
					model = model[1:]
				}
				if rng.IntN(4) == 0 {
					s := tbl.Snapshot()
					snaps = append(snaps, held{s, vt.RowsOf(s.Records()...)})
				}
				if rng.IntN(6) == 0 {
					if err := tbl.Compact(context.Background()); err != nil {
						t.Fatal(err)
					}
					checkModel(t, tbl, mem, model, evicted, fmt.Sprintf("after compaction at epoch %d", e))
				}
			}
			checkModel(t, tbl, mem, model, evicted, "before the last compaction")
			before := tbl.Size()
			if err := tbl.Compact(context.Background()); err != nil {
				t.Fatal(err)
			}
			checkModel(t, tbl, mem, model, evicted, "after the last compaction")
			after := tbl.Size()
			if after.Records > 1 || after.Overhead >= before.Overhead && before.Records > 1 {
				t.Errorf("compaction left %+v (was %+v)", after, before)
			}
			for i, h := range snaps {
				checkOrdered(t, fmt.Sprintf("snapshot %d after compactions", i), h.rows, vt.RowsOf(h.s.Records()...))
				h.s.Release()
			}
			// Only the table's merged record is left: exactly its bytes.
			if got := mem.CurrentAlloc(); int64(got) != after.Bytes {
				t.Errorf("allocator holds %d bytes, table reports %d", got, after.Bytes)
			}
		})
	}
}

// TestCompactionBoundsBookkeeping: 2,000 epochs of 20 rows become a few
// large records; the bookkeeping per epoch drops to a few words.
func TestCompactionBoundsBookkeeping(t *testing.T) {
	mem := vt.NewAllocator(t)
	info := arrowstream.SinkInfo{Mode: arrowstream.Append, QueryName: "q", Schema: epochSchema}
	tbl := newTable(t, mem, info, memsink.Options{CompactAfter: -1})
	const epochs, rows = 2000, 20
	for e := int64(0); e < epochs; e++ {
		if err := tbl.AddBatch(context.Background(), e, epochOp(t, mem, e, rows, 7)); err != nil {
			t.Fatal(err)
		}
	}
	before := tbl.Size()
	if err := tbl.Compact(context.Background()); err != nil {
		t.Fatal(err)
	}
	after := tbl.Size()
	t.Logf("before %+v, after %+v", before, after)
	if after.Epochs != epochs || after.Rows != epochs*rows {
		t.Fatalf("Size after compaction %+v", after)
	}
	// 40,000 rows fit one record; 16 bytes per epoch plus one record.
	if after.Records != 1 || after.Overhead > 64*epochs || after.Overhead*20 > before.Overhead {
		t.Errorf("bookkeeping not bounded: before %+v, after %+v", before, after)
	}
	// The retained bytes are the rows' own: two 8-byte columns.
	if after.Bytes > 2*8*epochs*rows+256 {
		t.Errorf("merged record holds %d bytes for %d rows", after.Bytes, after.Rows)
	}
	s := tbl.Snapshot()
	err := checkEpochs(s, rows)
	s.Release()
	if err != nil {
		t.Fatal(err)
	}
}

// TestCompactionTrimmedRun: retention evicting part of a merged run keeps
// exact epochs; the run pins the evicted rows' buffers until the next
// compaction copies the rest, after which the allocator holds exactly
// what Size reports.
func TestCompactionTrimmedRun(t *testing.T) {
	mem := vt.NewAllocator(t)
	info := arrowstream.SinkInfo{Mode: arrowstream.Append, QueryName: "q", Schema: epochSchema}
	tbl := newTable(t, mem, info, memsink.Options{CompactAfter: -1, MaxEpochs: 50})
	for e := int64(0); e < 50; e++ {
		if err := tbl.AddBatch(context.Background(), e, epochOp(t, mem, e, 10, 10)); err != nil {
			t.Fatal(err)
		}
	}
	if err := tbl.Compact(context.Background()); err != nil {
		t.Fatal(err)
	}
	for e := int64(50); e < 60; e++ {
		if err := tbl.AddBatch(context.Background(), e, epochOp(t, mem, e, 10, 10)); err != nil {
			t.Fatal(err)
		}
	}
	h := tbl.History()
	if len(h) != 50 || h[0].Epoch != 10 {
		t.Fatalf("retained %d epochs from %d, want 50 from 10", len(h), h[0].Epoch)
	}
	if _, err := tbl.AsOf(9); err == nil {
		t.Fatal("AsOf(9) read an evicted epoch")
	}
	if got, sz := mem.CurrentAlloc(), tbl.Size(); int64(got) <= sz.Bytes {
		t.Errorf("trimmed run: allocator %d bytes, Size %d: evicted rows should still be pinned", got, sz.Bytes)
	}
	if err := tbl.Compact(context.Background()); err != nil {
		t.Fatal(err)
	}
	sz := tbl.Size()
	if got := mem.CurrentAlloc(); int64(got) != sz.Bytes {
		t.Errorf("after recompaction: allocator %d bytes, Size %d", got, sz.Bytes)
	}
	s := tbl.Snapshot()
	defer s.Release()
	if err := checkEpochs(s, 10); err != nil || s.NumRows() != 500 {
		t.Fatalf("%v (%d rows)", err, s.NumRows())
	}
}

// TestBackgroundCompactionWithReaders: a writer commits small epochs with
// background compaction every 4 epochs and time-limited retention, while
// readers take snapshots, time travel and incremental reads, holding
// some across compactions; every read holds whole, contiguous epochs.
// Run with -race.
func TestBackgroundCompactionWithReaders(t *testing.T) {
	mem := vt.NewAllocator(t)
	info := arrowstream.SinkInfo{Mode: arrowstream.Append, QueryName: "q", Schema: epochSchema}
	tbl := newTable(t, mem, info, memsink.Options{CompactAfter: 4, MaxEpochs: 150})
	const rows, epochs, readers = 20, 400, 3
	var done atomic.Bool
	var wg sync.WaitGroup
	errs := make(chan error, readers)
	for g := range readers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			var held []*memsink.Snapshot
			defer func() {
				for _, s := range held {
					s.Release()
				}
			}()
			fail := func(what string, err error) {
				errs <- fmt.Errorf("reader %d: %s: %w", g, what, err)
			}
			for n := 0; !done.Load(); n++ {
				s := tbl.Snapshot()
				if err := checkEpochs(s, rows); err != nil {
					s.Release()
					fail("snapshot", err)
					return
				}
				held = append(held, s)
				if len(held) == 6 {
					for _, h := range held {
						if err := checkEpochs(h, rows); err != nil {
							fail("held snapshot", err)
							return
						}
						h.Release()
					}
					held = held[:0]
				}
				latest := tbl.LatestEpoch()
				if latest < 10 {
					continue
				}
				back := latest - int64(n%10)
				if a, err := tbl.AsOf(back); err == nil {
					err := checkEpochs(a, rows)
					if err == nil && a.LatestEpoch() != back {
						err = fmt.Errorf("AsOf(%d) reads epoch %d", back, a.LatestEpoch())
					}
					a.Release()
					if err != nil {
						fail("AsOf", err)
						return
					}
				}
				if s, err := tbl.Since(back); err == nil {
					recs, err := s.RecordsWithEpoch(mem)
					s.Release()
					if err != nil {
						fail("Since", err)
						return
					}
					for _, rec := range recs {
						es := rec.Column(0).(*array.Int64).Int64Values()
						for j, e := range rec.Column(2).(*array.Int64).Int64Values() {
							if e != es[j] || e <= back {
								err = fmt.Errorf("Since(%d): row of epoch %d tagged %d", back, es[j], e)
							}
						}
						rec.Release()
					}
					if err != nil {
						fail("Since", err)
						return
					}
				}
			}
		}()
	}
	for e := int64(0); e < epochs; e++ {
		if err := tbl.AddBatch(context.Background(), e, epochOp(t, mem, e, rows, 8)); err != nil {
			t.Fatal(err)
		}
	}
	// Background compaction catches up with the last commits.
	// (At most 3 small epochs of 3 records wait for the next trigger.)
	for deadline := time.Now().Add(5 * time.Minute); tbl.Size().Records > 12; time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("background compaction did not catch up: %+v", tbl.Size())
		}
	}
	done.Store(true)
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	s := tbl.Snapshot()
	defer s.Release()
	if err := checkEpochs(s, rows); err != nil || s.NumRows() != 150*rows {
		t.Fatalf("final snapshot: %v (%d rows)", err, s.NumRows())
	}
}

// TestCompactionPersisted: a persisted table whose epochs were merged (and
// a merged run trimmed by retention) restarts with the same epochs, rows
// and commit times, and its chain is exactly the retained epochs.
func TestCompactionPersisted(t *testing.T) {
	dir := t.TempDir()
	mem := vt.NewAllocator(t)
	info := arrowstream.SinkInfo{Mode: arrowstream.Append, QueryName: "q", Schema: kv, CheckpointDir: dir}
	opts := persistOpts(memsink.Options{MaxEpochs: 25, CompactAfter: -1})
	tbl := newTable(t, mem, info, opts)
	for e := range int64(60) {
		add(t, tbl, mem, e, epochRows(e, int(e%4))...)
		if e%10 == 9 {
			if err := tbl.Compact(context.Background()); err != nil {
				t.Fatal(err)
			}
		}
	}
	want := stateOf(tbl)
	if len(want.history) != 25 || want.history[0].Epoch != 35 {
		t.Fatalf("retained %+v", want.history)
	}
	if chain := tbl.ChainForTest(); len(chain) != 25 || chain[0] != "35.arrow" {
		t.Errorf("%d chain entries for 25 retained epochs: %v", len(chain), chain)
	}
	tbl.Close()
	again := newTable(t, mem, info, opts)
	got := stateOf(again)
	checkOrdered(t, "rows after restart", want.rows, got.rows)
	if got.latest != want.latest || fmt.Sprint(got.history) != fmt.Sprint(want.history) {
		t.Errorf("after restart: latest %d, history %v\nwant latest %d, history %v", got.latest, got.history, want.latest, want.history)
	}
}

// TestCompactionRecopiesTrimmedRun: once retention has trimmed a merged
// run to less than half the rows its buffers hold, the next commit starts
// a compaction that copies the rest, even when no new small epoch came
// (here the later epochs are large): the evicted rows' buffers are not
// pinned until the whole run is gone.
func TestCompactionRecopiesTrimmedRun(t *testing.T) {
	mem := vt.NewAllocator(t)
	info := arrowstream.SinkInfo{Mode: arrowstream.Append, QueryName: "q", Schema: epochSchema}
	tbl := newTable(t, mem, info, memsink.Options{CompactAfter: 4, MaxEpochs: 40})
	const small, big = 900, memsink.MaxRecordRows / 2
	e := int64(0)
	for ; e < 36; e++ {
		if err := tbl.AddBatch(context.Background(), e, epochOp(t, mem, e, small, small)); err != nil {
			t.Fatal(err)
		}
	}
	// Tiered merges (a run is merged again only when as many rows follow
	// it) can settle at a handful of runs, depending on how far the
	// background rounds run behind the commits: 4–6 records seen under
	// -race, where a bound of 4 waited forever.
	waitFor(t, "the small epochs merged", func() bool { return tbl.Size().Records <= 8 })
	runBytes := tbl.Size().Bytes
	for ; e < 36+30; e++ { // evicts 26 of the run's 36 epochs
		if err := tbl.AddBatch(context.Background(), e, epochOp(t, mem, e, big, big)); err != nil {
			t.Fatal(err)
		}
	}
	waitFor(t, "the trimmed run recopied", func() bool {
		return int64(mem.CurrentAlloc())-tbl.Size().Bytes <= runBytes/2
	})
	s := tbl.Snapshot()
	defer s.Release()
	if h := tbl.History(); len(h) != 40 || h[0].Epoch != 26 {
		t.Fatalf("retained %d epochs from %d", len(h), h[0].Epoch)
	}
}

// waitFor polls cond until it holds (a generous bound only stops a hang).
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	for deadline := time.Now().Add(5 * time.Minute); !cond(); time.Sleep(5 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting until %s", what)
		}
	}
}
