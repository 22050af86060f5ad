package vector_test

import (
	"context"
	"runtime"
	"strings"
	"testing"

	"github.com/apache/arrow/go/v17/arrow"
	"github.com/apache/arrow/go/v17/arrow/memory"

	"github.com/arrowstream/arrowstream/vector"
	vt "github.com/arrowstream/arrowstream/vector/vectortest"
)

// heapInUse is the live Go heap after a full collection.
func heapInUse() int64 {
	runtime.GC()
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	return int64(ms.HeapAlloc)
}

// TestLiveAggregateCountsStringBytes: the string values a streaming
// aggregation's accumulators keep (min, max, first, last, collect_list
// of long strings) count in HeapBytes by their bytes, not their headers,
// and HeapBytes tracks the Go heap the groups hold (runtime.ReadMemStats
// growth) within a factor of two either way. Before session 13 min/max
// and first/last counted 16 bytes a value whatever its length.
func TestLiveAggregateCountsStringBytes(t *testing.T) {
	const groups, valueLen, batches = 1000, 2048, 4
	ctx := context.Background()
	spec := vector.AggregateSpec{GroupBy: byK(), Aggregates: []vector.AggregateCall{
		call(vector.AggMin, "mins", "s"),
		call(vector.AggMax, "maxs", "s"),
		call(vector.AggFirst, "firsts", "s"),
		call(vector.AggLast, "lasts", "s"),
	}}
	partial, err := vector.PartialSchema(liveRawSchema, spec)
	if err != nil {
		t.Fatal(err)
	}
	// The raw rows are made up front and kept alive past the second
	// measure, and the partial batches are on the Go allocator (whose
	// buffers the collector takes once released), so that the heap
	// growth measured around the merges is the groups'.
	mem := memory.NewGoAllocator()
	var parts [][]vt.Row
	for b := range batches {
		var raw []vt.Row
		for k := range groups {
			// Each batch's values differ (the max rises, the min falls,
			// last changes) so that replacements are counted as well.
			s := strings.Repeat(string(rune('a'+b)), valueLen/2) + strings.Repeat(string(rune('z'-b)), valueLen/2)
			raw = append(raw, vt.Row{int64(k), s, nil, nil})
		}
		parts = append(parts, raw)
	}
	live, err := vector.NewLiveAggregate(mem, partial, 1, spec.Aggregates)
	if err != nil {
		t.Fatal(err)
	}
	defer live.Close()
	before := heapInUse()
	seen := map[int32]bool{}
	for _, raw := range parts {
		for _, rec := range partialOf(t, mem, spec, raw) {
			gids, err := live.Merge(ctx, rec)
			if err != nil {
				t.Fatal(err)
			}
			for _, g := range gids {
				seen[g] = true
			}
			rec.Release()
		}
	}
	grown := heapInUse() - before
	runtime.KeepAlive(parts)
	est := live.HeapBytes()
	// min, max, first and last each hold a value per group.
	values := int64(4 * groups * valueLen)
	t.Logf("%d groups, 4 string accumulators of %d-byte values: HeapBytes %d, heap growth %d (%.2fx), values %d",
		groups, valueLen, est, grown, float64(est)/float64(max(grown, 1)), values)
	if est < values {
		t.Errorf("HeapBytes %d is under the %d bytes of the string values the groups keep", est, values)
	}
	if est < grown/2 || est > 2*grown {
		t.Errorf("HeapBytes %d is not within 2x of the heap growth %d", est, grown)
	}
	// Deleted groups let their strings go, and the count follows
	// (through the accumulators' reset and the compaction).
	var del []int32
	for g := range seen {
		del = append(del, g)
	}
	live.Delete(del[:len(del)/2])
	remap, err := live.Compact(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if got := live.HeapBytes(); got > est/2+est/8 || got < values/2 {
		t.Errorf("half of the groups deleted and compacted: HeapBytes %d, want about half of %d", got, est)
	}
	rest := del[len(del)/2:]
	for i, g := range rest {
		rest[i] = remap[g]
	}
	live.Delete(rest)
	if _, err := live.Compact(ctx); err != nil {
		t.Fatal(err)
	}
	if got := live.HeapBytes(); got > values/8 {
		t.Errorf("every group deleted and compacted: HeapBytes %d still counts the strings (%d bytes)", got, values)
	}
}

// BenchmarkLiveAggregateStrings merges partial batches of 4096 groups
// (of 65536) into a live aggregation keeping min, max, first and last of
// 64-byte strings, as a streaming aggregation's epoch does, with the
// reservation of HeapBytes after each merge: the running string counts
// (session 13) against the header-only count before.
//
//	go test -run '^$' -bench BenchmarkLiveAggregateStrings ./vector/
func BenchmarkLiveAggregateStrings(b *testing.B) {
	const groups, batch = 1 << 16, 4096
	ctx := context.Background()
	mem := memory.NewGoAllocator()
	spec := vector.AggregateSpec{GroupBy: byK(), Aggregates: []vector.AggregateCall{
		call(vector.AggMin, "mins", "s"),
		call(vector.AggMax, "maxs", "s"),
		call(vector.AggFirst, "firsts", "s"),
		call(vector.AggLast, "lasts", "s"),
	}}
	partial, err := vector.PartialSchema(liveRawSchema, spec)
	if err != nil {
		b.Fatal(err)
	}
	var epochs [][]arrow.Record
	for e := range 16 {
		raw := make([]vt.Row, batch)
		for i := range raw {
			k := (e*batch + i*7919) % groups
			raw[i] = vt.Row{int64(k), strings.Repeat(string(rune('a'+(i+e)%26)), 64), nil, nil}
		}
		spec.Mode = vector.AggPartial
		rec := vt.BuildRecord(mem, liveRawSchema, raw)
		scan, err := vector.NewScan(liveRawSchema, rec)
		rec.Release()
		if err != nil {
			b.Fatal(err)
		}
		op, err := vector.NewHashAggregate(mem, scan, spec)
		if err != nil {
			b.Fatal(err)
		}
		recs, err := vector.Drain(ctx, op)
		op.Close()
		if err != nil {
			b.Fatal(err)
		}
		epochs = append(epochs, recs)
	}
	live, err := vector.NewLiveAggregate(mem, partial, 1, spec.Aggregates)
	if err != nil {
		b.Fatal(err)
	}
	defer live.Close()
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		for _, rec := range epochs[i%len(epochs)] {
			if _, err := live.Merge(ctx, rec); err != nil {
				b.Fatal(err)
			}
		}
	}
	b.ReportMetric(float64(live.HeapBytes()), "heap-bytes")
}
