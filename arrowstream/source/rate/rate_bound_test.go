package rate

import (
	"context"
	"encoding/json"
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	"github.com/arrowstream/arrowstream/arrowstream/arrowstreamtest"
	"github.com/arrowstream/arrowstream/arrowstream/stream"
	"github.com/arrowstream/arrowstream/internal/testutil/poisonmem"
)

// TestRateBoundExactModel: for random rates, ramp-ups, maxRowsPerTrigger
// bounds (many under one second's rows), clock steps and restarts (a new
// source on the same checkpoint directory resuming from the last
// recorded end offset, as the offset log gives it), no epoch has more
// rows than the bound, and the rows read are 0, 1, 2, … each exactly
// once, up to the rows of the seconds elapsed. Before, an epoch held at
// least one whole second, so a bound under rowsPerSecond did not bound
// it. Offsets of whole seconds (old checkpoints) still read.
func TestRateBoundExactModel(t *testing.T) {
	ctx := context.Background()
	rng := rand.New(rand.NewPCG(4, 17))
	for trial := range 40 {
		mem := poisonmem.New()
		rate := int64(1 + rng.IntN(2000))
		bound := int64(1 + rng.IntN(int(rate)*2))
		ramp := time.Duration(0)
		if rng.IntN(3) == 0 && rate > 10 {
			ramp = time.Duration(1+rng.IntN(4)) * time.Second
		}
		clock := arrowstreamtest.NewManualClock(time.UnixMilli(5_000_000))
		dir := t.TempDir()
		open := func() *RateSource {
			r, err := NewRateSource(mem, RateOptions{RowsPerSecond: rate, RampUpTime: ramp, MaxRowsPerTrigger: bound, Clock: clock})
			if err != nil {
				t.Fatal(err)
			}
			if err := r.SetCheckpointDir(dir); err != nil {
				t.Fatal(err)
			}
			return r
		}
		r := open()
		var committed stream.Offset // the offset log's last end (nil: none)
		next := int64(0)            // the next value expected
		for step := range 60 {
			clock.Advance(time.Duration(rng.IntN(2500)) * time.Millisecond)
			if rng.IntN(10) == 0 {
				r = open() // a restart: the source is rebuilt, the log kept
			}
			end, err := r.LatestOffsetFrom(ctx, committed)
			if err != nil {
				t.Fatal(err)
			}
			if !json.Valid(end) {
				t.Fatalf("trial %d step %d: end offset %q is not JSON (the offset log keeps JSON offsets only)", trial, step, end)
			}
			if committed != nil && string(end) == string(committed) {
				continue
			}
			start := committed
			if start == nil {
				start = r.InitialOffset()
			}
			op, err := r.Read(ctx, start, end)
			if err != nil {
				t.Fatalf("trial %d step %d: read %s..%s: %v", trial, step, start, end, err)
			}
			rows := readRows(t, op)
			if int64(len(rows)) > bound {
				t.Fatalf("trial %d step %d (rate %d, bound %d): epoch %s..%s has %d rows", trial, step, rate, bound, start, end, len(rows))
			}
			vals := make([]int64, len(rows))
			for i, row := range rows {
				vals[i] = row[1].(int64)
			}
			slices.Sort(vals)
			for i, v := range vals {
				if v != next+int64(i) {
					t.Fatalf("trial %d step %d: epoch %s..%s values %v…, want from %d", trial, step, start, end, vals[:min(len(vals), 5)], next)
				}
			}
			next += int64(len(vals))
			committed = end
		}
		// Every row of the seconds elapsed is read once the query catches
		// up (bounded epochs until then).
		elapsed := (clock.Now().UnixMilli() - 5_000_000) / 1000
		want := valueAtSecond(elapsed, rate, int64(ramp/time.Second))
		for next < want {
			end, err := r.LatestOffsetFrom(ctx, committed)
			if err != nil {
				t.Fatal(err)
			}
			op, err := r.Read(ctx, committed, end)
			if err != nil {
				t.Fatal(err)
			}
			rows := readRows(t, op)
			if len(rows) == 0 || int64(len(rows)) > bound {
				t.Fatalf("trial %d: catching up %s..%s gave %d rows (bound %d)", trial, committed, end, len(rows), bound)
			}
			next += int64(len(rows))
			committed = end
		}
		if next != want {
			t.Fatalf("trial %d: read %d rows, want %d", trial, next, want)
		}
		mem.AssertSize(t, 0)
	}
	// An old checkpoint's whole-second offsets read as before.
	p, err := parseRateOffset(stream.Offset("7"))
	if err != nil || p != (ratePos{s: 7}) {
		t.Fatalf("offset 7: %v %v", p, err)
	}
	if _, err := parseRateOffset(stream.Offset("7+x")); err == nil {
		t.Fatal("a bad offset parsed")
	}
}
