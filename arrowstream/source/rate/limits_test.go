package rate

import (
	"context"
	"errors"
	"io"
	"math"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/apache/arrow/go/v17/arrow/array"
	"github.com/apache/arrow/go/v17/arrow/memory"

	"github.com/arrowstream/arrowstream/arrowstream/arrowstreamtest"
	"github.com/arrowstream/arrowstream/arrowstream/stream"
)

func TestRateCapRefusesHugeRates(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	_, err := NewRateSource(mem, RateOptions{RowsPerSecond: 1_000_000_000_000})
	if err == nil || !strings.Contains(err.Error(), "rowsPerSecond=1000000000000") ||
		!strings.Contains(err.Error(), strconv.FormatInt(DefaultMaxRowsPerSecond, 10)) ||
		!strings.Contains(err.Error(), ConfMaxRowsPerSecond) {
		t.Fatalf("rate over the cap: %v", err)
	}
	_, err = NewRateMicroBatchSource(mem, RateMicroBatchOptions{RowsPerBatch: DefaultMaxRowsPerSecond + 1})
	if err == nil || !strings.Contains(err.Error(), "rowsPerBatch=100000001") {
		t.Fatalf("rate-micro-batch over the cap: %v", err)
	}
	// At the cap is accepted; a session setting moves the cap both ways.
	if _, err := NewRateSource(mem, RateOptions{RowsPerSecond: DefaultMaxRowsPerSecond}); err != nil {
		t.Fatalf("rate at the cap: %v", err)
	}
	conf := map[string]string{ConfMaxRowsPerSecond: "50"}
	l, err := LimitsFromConf(func(k string) (string, bool) { v, ok := conf[k]; return v, ok })
	if err != nil {
		t.Fatal(err)
	}
	if _, err := NewRateSource(mem, RateOptions{RowsPerSecond: 51, Limits: l}); err == nil || !strings.Contains(err.Error(), "cap of 50") {
		t.Fatalf("lowered cap: %v", err)
	}
	if _, err := NewRateMicroBatchSource(mem, RateMicroBatchOptions{RowsPerBatch: 50, Limits: l}); err != nil {
		t.Fatalf("at the lowered cap: %v", err)
	}
	for _, bad := range []string{"0", "-3", "x"} {
		conf[ConfMaxRowsPerSecond] = bad
		if _, err := LimitsFromConf(func(k string) (string, bool) { v, ok := conf[k]; return v, ok }); err == nil || !strings.Contains(err.Error(), ConfMaxRowsPerSecond) {
			t.Errorf("setting %q: %v", bad, err)
		}
	}
	if _, err := ParseRateOptions(map[string]string{"maxRowsPerTrigger": "0"}); err == nil || !strings.Contains(err.Error(), "maxRowsPerTrigger") {
		t.Errorf("maxRowsPerTrigger=0: %v", err)
	}
}

// TestRateLatestOffsetFromBounded: a query far behind the clock gets epochs
// of whole seconds within maxRowsPerTrigger (at least one second), which
// together cover exactly the seconds LatestOffset reports.
func TestRateLatestOffsetFromBounded(t *testing.T) {
	ctx := context.Background()
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	for _, tc := range []struct {
		rate, ramp, maxPerTrigger int64
	}{{10, 0, 25}, {10, 4, 7}, {1000, 0, 1}, {7, 3, 1000}} {
		clock := arrowstreamtest.NewManualClock(time.UnixMilli(0))
		r, err := NewRateSource(mem, RateOptions{RowsPerSecond: tc.rate, RampUpTime: time.Duration(tc.ramp) * time.Second, Clock: clock, MaxRowsPerTrigger: tc.maxPerTrigger})
		if err != nil {
			t.Fatal(err)
		}
		clock.Advance(30 * time.Second)
		latest, _ := r.LatestOffset(ctx)
		cur := r.InitialOffset()
		for steps := 0; !cur.Equal(latest); steps++ {
			if steps > 100 {
				t.Fatalf("%+v: no progress, at %s", tc, cur)
			}
			end, err := r.LatestOffsetFrom(ctx, cur)
			if err != nil {
				t.Fatal(err)
			}
			from, _ := stream.LongOffset(cur)
			to, _ := stream.LongOffset(end)
			rows := valueAtSecond(to, tc.rate, tc.ramp) - valueAtSecond(from, tc.rate, tc.ramp)
			if to <= from {
				t.Fatalf("%+v: epoch (%d, %d] makes no progress", tc, from, to)
			}
			// Within the bound, unless one second alone exceeds it; and
			// maximal: one more second would exceed it.
			if to > from+1 && rows > tc.maxPerTrigger {
				t.Fatalf("%+v: epoch (%d, %d] has %d rows > %d", tc, from, to, rows, tc.maxPerTrigger)
			}
			if to < 30 && valueAtSecond(to+1, tc.rate, tc.ramp)-valueAtSecond(from, tc.rate, tc.ramp) <= tc.maxPerTrigger {
				t.Fatalf("%+v: epoch (%d, %d] could have been longer", tc, from, to)
			}
			cur = end
		}
	}
}

// TestRateGeneratorMatchesFormula: the lazily generated values and
// timestamps are those of Spark's formula (every value once, partition by
// partition, timestamps spread evenly over the epoch's seconds).
func TestRateGeneratorMatchesFormula(t *testing.T) {
	ctx := context.Background()
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	for _, tc := range []struct {
		rate  int64
		ramp  int64
		parts int
		from  int64
		to    int64
	}{{10, 0, 1, 0, 3}, {10, 4, 3, 1, 7}, {200_000, 0, 2, 2, 3}, {150_001, 2, 5, 0, 4}} {
		clock := arrowstreamtest.NewManualClock(time.UnixMilli(5_000))
		r, err := NewRateSource(mem, RateOptions{RowsPerSecond: tc.rate, RampUpTime: time.Duration(tc.ramp) * time.Second, NumPartitions: tc.parts, Clock: clock})
		if err != nil {
			t.Fatal(err)
		}
		op, err := r.Read(ctx, stream.Offset(strconv.FormatInt(tc.from, 10)), stream.Offset(strconv.FormatInt(tc.to, 10)))
		if err != nil {
			t.Fatal(err)
		}
		lo, hi := valueAtSecond(tc.from, tc.rate, tc.ramp), valueAtSecond(tc.to, tc.rate, tc.ramp)
		msPer := float64((tc.to-tc.from)*1000) / float64(hi-lo)
		p, want := int64(0), lo
		n := int64(0)
		for {
			rec, err := op.Next(ctx)
			if errors.Is(err, io.EOF) {
				break
			}
			if err != nil {
				t.Fatal(err)
			}
			if rec.NumRows() > chunkRows {
				t.Fatalf("chunk of %d rows", rec.NumRows())
			}
			ts := rec.Column(0).(*array.Timestamp)
			vs := rec.Column(1).(*array.Int64)
			for i := 0; i < vs.Len(); i++ {
				for want >= hi {
					p++
					want = lo + p
				}
				if vs.Value(i) != want {
					t.Fatalf("%+v: row %d value %d, want %d", tc, n, vs.Value(i), want)
				}
				wantMs := 5_000 + tc.from*1000 + int64(math.Round(float64(want-lo)*msPer))
				if int64(ts.Value(i)) != wantMs*1000 {
					t.Fatalf("%+v: value %d stamped %d, want %d", tc, want, ts.Value(i), wantMs*1000)
				}
				want += int64(tc.parts)
				n++
			}
			rec.Release()
		}
		op.Close()
		if n != hi-lo {
			t.Fatalf("%+v: %d rows, want %d", tc, n, hi-lo)
		}
	}
}

// TestRateReadStopsOnCancel: an epoch of the largest allowed second is
// generated chunk by chunk, holds one chunk at a time and stops at once
// when its context is cancelled.
func TestRateReadStopsOnCancel(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	clock := arrowstreamtest.NewManualClock(time.UnixMilli(0))
	r, err := NewRateSource(mem, RateOptions{RowsPerSecond: DefaultMaxRowsPerSecond, Clock: clock})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	op, err := r.Read(ctx, stream.Offset("0"), stream.Offset("1000"))
	if err != nil {
		t.Fatal(err)
	}
	if got := mem.CurrentAlloc(); got != 0 {
		t.Fatalf("Read allocated %d bytes before the first Next", got)
	}
	for i := 0; i < 3; i++ {
		rec, err := op.Next(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if got := mem.CurrentAlloc(); got > 4*chunkRows*8 {
			t.Fatalf("one chunk holds %d bytes", got)
		}
		rec.Release()
	}
	cancel()
	if _, err := op.Next(ctx); !errors.Is(err, context.Canceled) {
		t.Fatalf("Next after cancel: %v", err)
	}
	if _, err := op.Next(context.Background()); !errors.Is(err, context.Canceled) {
		t.Fatalf("error is not sticky: %v", err)
	}
	op.Close()

	mb, err := NewRateMicroBatchSource(mem, RateMicroBatchOptions{RowsPerBatch: 3 * chunkRows, StartTimestampMs: 7, AdvanceMillisPerBatch: 1000})
	if err != nil {
		t.Fatal(err)
	}
	end, _ := mb.LatestOffsetFrom(context.Background(), mb.InitialOffset())
	op, err = mb.Read(context.Background(), mb.InitialOffset(), end)
	if err != nil {
		t.Fatal(err)
	}
	rows := readRows(t, op)
	if len(rows) != 3*chunkRows || rows[len(rows)-1][1] != int64(3*chunkRows-1) || rows[0][0] != int64(7000) {
		t.Fatalf("rate-micro-batch: %d rows, last %v, first %v", len(rows), rows[len(rows)-1], rows[0])
	}
}
