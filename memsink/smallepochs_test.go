package memsink_test

import (
	"context"
	"fmt"
	"runtime"
	"runtime/metrics"
	"testing"
	"time"

	"github.com/apache/arrow/go/v17/arrow/array"
	"github.com/apache/arrow/go/v17/arrow/memory"

	"github.com/arrowstream/arrowstream/arrowstream"
	"github.com/arrowstream/arrowstream/memsink"
)

// maxEpochBookkeeping bounds the bookkeeping bytes per epoch of a table
// fed small epochs, once compaction merged them: a merged run keeps 16
// bytes per epoch (the id as a uint32 offset, the row end as a uint32, the
// commit time as an int64); its one record's structs (~1.5 KB per
// 64K-row record, ~3,300 epochs of 20 rows) add under a byte per epoch,
// and the epochs committed since the last merge (fewer than CompactAfter,
// ~1.4 KB each as separate records) a few bytes per epoch over a long
// table.
const maxEpochBookkeeping = 24

// maxEpochHeap bounds what the Go heap grows by per small epoch beyond the
// Arrow bytes Size reports: the bookkeeping plus Go's rounding of the
// merged records' buffers (Arrow's Go allocator adds 64 bytes of
// alignment to each 512 KiB buffer, which Go rounds up to the next 8 KiB
// page: ~6 bytes per 20-row epoch).
const maxEpochHeap = 32

// tenMillis returns commit times 10 ms apart: the table is fed
// one epoch per 10 ms trigger.
func tenMillis() (now func() time.Time, at func(epoch int64) time.Time) {
	base := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	n := int64(-1)
	return func() time.Time { n++; return base.Add(time.Duration(n) * 10 * time.Millisecond) },
		func(e int64) time.Time { return base.Add(time.Duration(e) * 10 * time.Millisecond) }
}

// heapObjects is the Go heap's live (and unswept) object bytes after a
// full collection.
func heapObjects() int64 {
	runtime.GC()
	s := []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}}
	metrics.Read(s)
	return int64(s[0].Value.Uint64())
}

// TestSmallEpochsBookkeepingBounded: the table, 20 rows per 10 ms
// epoch (a manual clock, 20,000 epochs: 200 s of the stream), with the
// default background compaction. Afterwards the bookkeeping is at most
// maxEpochBookkeeping bytes per epoch as Size estimates it, and the Go heap
// grew by at most maxEpochHeap per epoch beyond the Arrow buffers,
// and every epoch is still there: history, commit times, time travel and
// incremental reads see each epoch's 20 rows.
func TestSmallEpochsBookkeepingBounded(t *testing.T) {
	if testing.Short() {
		t.Skip("20,000 epochs")
	}
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	now, at := tenMillis()
	info := arrowstream.SinkInfo{Mode: arrowstream.Append, QueryName: "q", Schema: epochSchema}
	const epochs, rows = 20_000, 20
	ctx := context.Background()
	before := heapObjects()
	tbl, err := memsink.New(mem, info, memsink.Options{Now: now})
	if err != nil {
		t.Fatal(err)
	}
	defer tbl.Close()
	for e := int64(0); e < epochs; e++ {
		if err := tbl.AddBatch(ctx, e, epochOp(t, mem, e, rows, rows)); err != nil {
			t.Fatal(err)
		}
	}
	// The background merges run on their own: wait until they have
	// merged nearly all of the 20,000 epochs. How many records they leave
	// depends on how far behind the commits their rounds ran (tiered runs
	// of a partial record, heads trimmed at record boundaries, the epochs
	// since the last trigger: 8 to 16 records here, more on a loaded
	// machine), so the bound only shows that merging happened on its own;
	// the figures below are taken after Compact.
	bound := epochs / 100
	for deadline := time.Now().Add(5 * time.Minute); tbl.Size().Records > bound; time.Sleep(5 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("background compaction left %+v, more than %d records", tbl.Size(), bound)
		}
	}
	t.Logf("background compaction left %d records (bound %d)", tbl.Size().Records, bound)
	// Merge the tail too, so that the figures do not depend on how far
	// the last background round got.
	if err := tbl.Compact(ctx); err != nil {
		t.Fatal(err)
	}
	sz := tbl.Size()
	// What the table keeps is in every sample; a sample can also hold a
	// background merge round still in flight or a finished test's
	// goroutines on a loaded machine, so the smallest of a few samples
	// is what is kept.
	heap := heapObjects() - before - sz.Bytes
	for try := 0; try < 5 && heap > maxEpochHeap*epochs; try++ {
		time.Sleep(200 * time.Millisecond)
		heap = min(heap, heapObjects()-before-sz.Bytes)
	}
	t.Logf("after %d epochs: %+v; bookkeeping %.1f B/epoch estimated, %.1f B/epoch in the Go heap", epochs, sz,
		float64(sz.Overhead)/epochs, float64(heap)/epochs)
	if sz.Epochs != epochs || sz.Rows != epochs*rows {
		t.Fatalf("Size %+v, want %d epochs of %d rows", sz, epochs, rows)
	}
	if sz.Overhead > maxEpochBookkeeping*epochs {
		t.Errorf("bookkeeping estimated at %d bytes for %d epochs: over %d bytes per epoch", sz.Overhead, epochs, maxEpochBookkeeping)
	}
	if heap > maxEpochHeap*epochs && !raceEnabled {
		t.Errorf("the Go heap grew by %d bytes beyond the %d Arrow bytes for %d epochs: over %d bytes per epoch", heap, sz.Bytes, epochs, maxEpochHeap)
	}
	// The Arrow bytes are the rows' own (two 8-byte columns), not 64-byte
	// aligned scraps per epoch.
	if sz.Bytes > 2*8*epochs*rows*11/10 {
		t.Errorf("%d Arrow bytes held for %d rows of 16 bytes", sz.Bytes, sz.Rows)
	}
	h := tbl.History()
	if len(h) != epochs {
		t.Fatalf("history lists %d epochs, want %d", len(h), epochs)
	}
	for _, e := range []int64{0, 1, 31, 32, 3276, 3277, 9999, epochs - 2, epochs - 1} {
		if h[e].Epoch != e || h[e].Rows != rows || !h[e].CommitTime.Equal(at(e)) {
			t.Errorf("history[%d] = %+v, want epoch %d, %d rows, committed %v", e, h[e], e, rows, at(e))
		}
		s, err := tbl.AsOf(e)
		if err != nil {
			t.Fatal(err)
		}
		if got := s.NumRows(); got != (e+1)*rows {
			t.Errorf("AS OF epoch %d: %d rows, want %d", e, got, (e+1)*rows)
		}
		s.Release()
		s, err = tbl.Since(e - 1)
		if err != nil {
			t.Fatal(err)
		}
		if got := s.NumRows(); got != (epochs-e)*rows {
			t.Errorf("since epoch %d: %d rows, want %d", e-1, got, (epochs-e)*rows)
		}
		s.Release()
	}
	s := tbl.Snapshot()
	err = checkEpochs(s, rows)
	s.Release()
	if err != nil {
		t.Fatal(err)
	}
}

// TestSmallEpochsByteRetention: MaxBytes counts what small epochs really
// cost. A limit their Arrow bytes alone never reach evicts them once
// their bookkeeping is counted; with compaction merging them (here every
// 32 epochs, synchronously, as the background merge does when it keeps
// up), the same limit keeps several times more epochs (the bookkeeping
// per epoch shrinks), and what is held stays within the limit either way.
func TestSmallEpochsByteRetention(t *testing.T) {
	const epochs, rows = 3000, 20
	ctx := context.Background()
	run := func(compactEvery int64) (memsink.Size, int64) {
		mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
		defer mem.AssertSize(t, 0)
		now, _ := tenMillis()
		info := arrowstream.SinkInfo{Mode: arrowstream.Append, QueryName: "q", Schema: epochSchema}
		// 2,000 epochs' Arrow bytes (each 20 rows × 2 int64 columns,
		// two 64-byte aligned buffers of 192 bytes).
		const limit = 2000 * 384
		tbl, err := memsink.New(mem, info, memsink.Options{Now: now, MaxBytes: limit, CompactAfter: -1})
		if err != nil {
			t.Fatal(err)
		}
		defer tbl.Close()
		for e := int64(0); e < epochs; e++ {
			if err := tbl.AddBatch(ctx, e, epochOp(t, mem, e, rows, rows)); err != nil {
				t.Fatal(err)
			}
			if compactEvery > 0 && (e+1)%compactEvery == 0 {
				if err := tbl.Compact(ctx); err != nil {
					t.Fatal(err)
				}
			}
			if sz := tbl.Size(); sz.Bytes+sz.Overhead > limit {
				t.Fatalf("after epoch %d the table holds %d Arrow bytes and %d of bookkeeping, over its limit of %d", e, sz.Bytes, sz.Overhead, limit)
			}
		}
		sz := tbl.Size()
		s := tbl.Snapshot()
		defer s.Release()
		if err := checkEpochs(s, rows); err != nil {
			t.Fatal(err)
		}
		h := tbl.History()
		if int64(len(h)) != int64(sz.Epochs) || h[len(h)-1].Epoch != epochs-1 {
			t.Fatalf("history %d epochs ending at %d, Size %+v", len(h), h[len(h)-1].Epoch, sz)
		}
		return sz, limit
	}
	plain, limit := run(-1)
	t.Logf("no compaction: %+v", plain)
	if plain.Epochs >= epochs || plain.Bytes >= limit/2 {
		t.Errorf("without compaction the limit of %d bytes kept %d of %d epochs (%d Arrow bytes): bookkeeping not counted", limit, plain.Epochs, epochs, plain.Bytes)
	}
	merged, _ := run(32)
	t.Logf("compaction: %+v", merged)
	if merged.Epochs < 3*plain.Epochs {
		t.Errorf("with compaction the limit kept %d epochs, without %d: merging did not shrink what an epoch costs", merged.Epochs, plain.Epochs)
	}
}

// TestCompactionFarEpochIDs: a run keeps epoch ids as 32-bit offsets from
// its first, so epochs whose ids lie further apart than that are merged
// into separate runs; every id survives compaction exactly.
func TestCompactionFarEpochIDs(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	info := arrowstream.SinkInfo{Mode: arrowstream.Append, QueryName: "q", Schema: epochSchema}
	tbl, err := memsink.New(mem, info, memsink.Options{CompactAfter: -1})
	if err != nil {
		t.Fatal(err)
	}
	defer tbl.Close()
	ctx := context.Background()
	ids := []int64{0, 1, 2, 1<<32 - 1, 1 << 32, 1<<32 + 5, 1 << 40, 1<<40 + 1, 1<<62 + 7}
	for _, e := range ids {
		if err := tbl.AddBatch(ctx, e, epochOp(t, mem, e, 3, 3)); err != nil {
			t.Fatal(err)
		}
	}
	if err := tbl.Compact(ctx); err != nil {
		t.Fatal(err)
	}
	sz := tbl.Size()
	// {0, 1, 2, 2^32-1}, {2^32, 2^32+5}, {2^40, 2^40+1}; the last alone.
	if sz.Records != 4 || sz.Epochs != len(ids) {
		t.Errorf("after compaction %+v, want 4 records for %d epochs", sz, len(ids))
	}
	h := tbl.History()
	for i, e := range ids {
		if i >= len(h) || h[i].Epoch != e || h[i].Rows != 3 {
			t.Fatalf("history %+v, want epochs %v of 3 rows", h, ids)
		}
		s, err := tbl.AsOf(e)
		if err != nil {
			t.Fatal(err)
		}
		if got := s.NumRows(); got != 3*int64(i+1) {
			t.Errorf("AS OF %d: %d rows, want %d", e, got, 3*(i+1))
		}
		s.Release()
	}
	s := tbl.Snapshot()
	defer s.Release()
	recs, err := s.RecordsWithEpoch(mem)
	if err != nil {
		t.Fatal(err)
	}
	var seen []int64
	for _, r := range recs {
		eps := r.Column(int(r.NumCols()) - 2).(*array.Int64).Int64Values()
		data := r.Column(0).(*array.Int64).Int64Values()
		for j, e := range eps {
			if data[j] != e {
				t.Errorf("row of epoch %d labelled %d", data[j], e)
			}
			if len(seen) == 0 || seen[len(seen)-1] != e {
				seen = append(seen, e)
			}
		}
		r.Release()
	}
	if fmt.Sprint(seen) != fmt.Sprint(ids) {
		t.Errorf("_epoch column lists %v, want %v", seen, ids)
	}
}
