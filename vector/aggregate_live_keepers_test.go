package vector_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/apache/arrow/go/v17/arrow/memory"

	"github.com/arrowstream/arrowstream/vector"
	vt "github.com/arrowstream/arrowstream/vector/vectortest"
)

// TestLiveAggregateKeepersCountStringBytes audits every accumulator that
// keeps input values of a string column (issue 17: mode, collect_list,
// collect_set, max_by/min_by, first/last, min/max): merged into a live
// aggregation, each one's HeapBytes counts at least the bytes of the
// distinct long strings it keeps, so that a streaming aggregation's
// reservation bounds them. (mode is not kept between epochs, see
// TestAggregationModeStringsReserved; percentile, percentile_approx,
// median and histogram_numeric take numbers only: they keep no strings.)
func TestLiveAggregateKeepersCountStringBytes(t *testing.T) {
	const groups, valueLen, batches = 200, 2048, 4
	ctx := context.Background()
	cases := []struct {
		call vector.AggregateCall
		kept int // values of a group kept after every batch
	}{
		{call(vector.AggCollectList, "list", "s"), batches},
		{call(vector.AggCollectSet, "set", "s"), batches},
		{call(vector.AggMaxBy, "maxby", "s", "v"), 1},
		{call(vector.AggMinBy, "minby", "s", "v"), 1},
		{call(vector.AggFirst, "first", "s"), 1},
		{call(vector.AggLast, "last", "s"), 1},
		{call(vector.AggMin, "min", "s"), 1},
		{call(vector.AggMax, "max", "s"), 1},
	}
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	for _, c := range cases {
		t.Run(c.call.Name, func(t *testing.T) {
			spec := vector.AggregateSpec{GroupBy: byK(), Aggregates: []vector.AggregateCall{c.call}}
			partial, err := vector.PartialSchema(liveRawSchema, spec)
			if err != nil {
				t.Fatal(err)
			}
			live, err := vector.NewLiveAggregate(mem, partial, 1, spec.Aggregates)
			if err != nil {
				t.Fatal(err)
			}
			defer live.Close()
			empty := live.HeapBytes()
			for b := range batches {
				var raw []vt.Row
				for k := range groups {
					s := fmt.Sprintf("%d/%d/", k, b) + strings.Repeat(string(rune('a'+b)), valueLen)
					raw = append(raw, vt.Row{int64(k), s, int64(b), nil})
				}
				for _, rec := range partialOf(t, mem, spec, raw) {
					if _, err := live.Merge(ctx, rec); err != nil {
						rec.Release()
						t.Fatal(err)
					}
					rec.Release()
				}
			}
			want := int64(groups * c.kept * valueLen)
			got := live.HeapBytes() - empty
			t.Logf("%s: HeapBytes grew %d for %d bytes of kept strings", c.call.Name, got, want)
			if got < want {
				t.Errorf("%s keeps %d bytes of strings, HeapBytes counts %d", c.call.Name, want, got)
			}
		})
	}
}

// peakReserver is an allocator whose Go-heap reservations are refused
// past limit, keeping their peak.
type peakReserver struct {
	memory.Allocator
	limit, held, peak int64
}

var errKeeperLimit = errors.New("keeper test limit")

func (r *peakReserver) Reserve(n int64) error {
	if n > 0 && r.held+n > r.limit {
		return fmt.Errorf("%d more bytes over %d: %w", n, r.limit, errKeeperLimit)
	}
	r.held += n
	r.peak = max(r.peak, r.held)
	return nil
}

// TestAggregationModeStringsReserved: mode over long strings in a batch
// aggregation reserves the distinct values it keeps by their bytes: 200
// groups of 8 distinct 2 KiB values (3.3 MB) under a 1 MiB limit are
// refused with the limit's error, and under no limit the peak
// reservation is at least the values' bytes.
func TestAggregationModeStringsReserved(t *testing.T) {
	const groups, distinct, valueLen = 200, 8, 2048
	ctx := context.Background()
	var raw []vt.Row
	for k := range groups {
		for d := range distinct {
			raw = append(raw, vt.Row{int64(k), fmt.Sprintf("%d/%d/", k, d) + strings.Repeat("m", valueLen), int64(d), nil})
		}
	}
	spec := vector.AggregateSpec{GroupBy: byK(), Aggregates: []vector.AggregateCall{call(vector.AggMostFrequent, "mode", "s")}}
	for _, limit := range []int64{1 << 20, 1 << 40} {
		checked := memory.NewCheckedAllocator(memory.NewGoAllocator())
		r := &peakReserver{Allocator: checked, limit: limit}
		rec := vt.BuildRecord(r, liveRawSchema, raw)
		scan, err := vector.NewScan(liveRawSchema, rec)
		rec.Release()
		if err != nil {
			t.Fatal(err)
		}
		op, err := vector.NewHashAggregate(r, scan, spec)
		if err != nil {
			t.Fatal(err)
		}
		recs, err := vector.Drain(ctx, op)
		op.Close()
		for _, rec := range recs {
			rec.Release()
		}
		want := int64(groups * distinct * valueLen)
		t.Logf("limit %d: peak reservation %d for %d bytes of distinct strings: %v", limit, r.peak, want, err)
		if limit < want {
			if !errors.Is(err, errKeeperLimit) {
				t.Errorf("mode over %d bytes of strings under a %d-byte limit: %v, want the limit's error", want, limit, err)
			}
		} else if err != nil || r.peak < want {
			t.Errorf("mode over %d bytes of strings: peak reservation %d (%v)", want, r.peak, err)
		}
		checked.AssertSize(t, 0)
	}
}
