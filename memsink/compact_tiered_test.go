package memsink

import (
	"context"
	"math"
	"sync/atomic"
	"testing"

	"github.com/apache/arrow/go/v17/arrow"
	"github.com/apache/arrow/go/v17/arrow/array"
	"github.com/apache/arrow/go/v17/arrow/memory"

	"github.com/arrowstream/arrowstream/arrowstream/stream"
	"github.com/arrowstream/arrowstream/vector"
)

// countingAllocator counts the bytes allocated through it.
type countingAllocator struct {
	memory.Allocator
	allocated atomic.Int64
}

func (c *countingAllocator) Allocate(n int) []byte {
	c.allocated.Add(int64(n))
	return c.Allocator.Allocate(n)
}

func (c *countingAllocator) Reallocate(n int, b []byte) []byte {
	c.allocated.Add(int64(max(n-len(b), 0)))
	return c.Allocator.Reallocate(n, b)
}

// TestTieredCompactionCopies: background (tiered) compaction after every
// 32 epochs of 20 rows, as compactIfDue triggers it, copies each row a
// logarithmic number of times (a merge-everything round copied the
// growing run each time: some fifty copies of a 32K-row run), keeps few
// records, and leaves every epoch readable exactly as committed (AsOf,
// Since, History, the rows in order); the allocator ends at zero.
func TestTieredCompactionCopies(t *testing.T) {
	checked := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer checked.AssertSize(t, 0)
	mem := &countingAllocator{Allocator: checked}
	schema := arrow.NewSchema([]arrow.Field{{Name: "e", Type: vector.Int64}, {Name: "i", Type: vector.Int64}}, nil)
	tbl, err := New(mem, stream.SinkInfo{QueryName: "q", Schema: schema, Mode: stream.Append}, Options{CompactAfter: -1})
	if err != nil {
		t.Fatal(err)
	}
	defer tbl.Close()
	const epochs, rows, every = 4000, 20, 32
	ctx := context.Background()
	var copied int64
	for e := range int64(epochs) {
		eb, ib := array.NewInt64Builder(mem), array.NewInt64Builder(mem)
		for i := range rows {
			eb.Append(e)
			ib.Append(int64(i))
		}
		ea, ia := eb.NewArray(), ib.NewArray()
		rec := array.NewRecord(schema, []arrow.Array{ea, ia}, rows)
		ea.Release()
		ia.Release()
		eb.Release()
		ib.Release()
		op, err := vector.NewScan(schema, rec)
		rec.Release()
		if err != nil {
			t.Fatal(err)
		}
		if err := tbl.AddBatch(ctx, e, op); err != nil {
			t.Fatal(err)
		}
		if (e+1)%every == 0 {
			before := mem.allocated.Load()
			if _, err := tbl.compactRound(ctx, true); err != nil {
				t.Fatal(err)
			}
			copied += mem.allocated.Load() - before
		}
	}
	sz := tbl.Size()
	data := int64(epochs * rows * 16)
	// Each row is copied into a run at least twice the size of the one it
	// was in: at most log2(rows/(rows of one round)) + 1 times, plus
	// alignment and validity slack.
	bound := (math.Log2(float64(epochs)/every) + 2) * float64(data)
	t.Logf("copied %d bytes by merges for %d bytes of rows (%.1f×, bound %.1f×); %+v", copied, data,
		float64(copied)/float64(data), bound/float64(data), sz)
	if float64(copied) > bound {
		t.Errorf("merges copied %d bytes for %d bytes of rows: over %.0f", copied, data, bound)
	}
	if sz.Epochs != epochs || sz.Rows != epochs*rows {
		t.Fatalf("Size %+v", sz)
	}
	// Runs waiting to fill halve in size from the oldest: a few records.
	if maxRecs := int(math.Log2(float64(epochs)/every)) + 2 + every; sz.Records > maxRecs {
		t.Errorf("%d records after tiered merges, want at most %d", sz.Records, maxRecs)
	}
	h := tbl.History()
	if len(h) != epochs {
		t.Fatalf("history lists %d epochs", len(h))
	}
	for _, e := range []int64{0, 1, 31, 32, 33, 639, 640, 1023, 2047, 2048, epochs - 33, epochs - 1} {
		if h[e].Epoch != e || h[e].Rows != rows {
			t.Errorf("history[%d] = %+v", e, h[e])
		}
		s, err := tbl.AsOf(e)
		if err != nil {
			t.Fatal(err)
		}
		if got := s.NumRows(); got != (e+1)*rows {
			t.Errorf("AS OF %d: %d rows, want %d", e, got, (e+1)*rows)
		}
		s.Release()
		if s, err = tbl.Since(e - 1); err != nil {
			t.Fatal(err)
		}
		if got := s.NumRows(); got != (epochs-e)*rows {
			t.Errorf("since %d: %d rows, want %d", e-1, got, (epochs-e)*rows)
		}
		s.Release()
	}
	s := tbl.Snapshot()
	defer s.Release()
	var n int64
	for _, r := range s.Records() {
		ec, ic := r.Column(0).(*array.Int64), r.Column(1).(*array.Int64)
		for j := range int(r.NumRows()) {
			if ec.Value(j) != n/rows || ic.Value(j) != n%rows {
				t.Fatalf("row %d is (%d, %d), want (%d, %d)", n, ec.Value(j), ic.Value(j), n/rows, n%rows)
			}
			n++
		}
	}
	if n != epochs*rows {
		t.Fatalf("snapshot has %d rows", n)
	}
}
