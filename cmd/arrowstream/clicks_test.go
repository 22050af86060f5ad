package main

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/apache/arrow/go/v17/arrow"
	"github.com/apache/arrow/go/v17/arrow/array"
	"github.com/apache/arrow/go/v17/arrow/memory"

	"github.com/arrowstream/arrowstream/arrowstream"
	"github.com/arrowstream/arrowstream/arrowstream/arrowstreamtest"
	"github.com/arrowstream/arrowstream/internal/testutil/poisonmem"
	"github.com/arrowstream/arrowstream/vector"
)

func readClicks(t *testing.T, src arrowstream.Source, start, end string) []arrow.Record {
	t.Helper()
	var s arrowstream.Offset
	if start != "" {
		s = arrowstream.Offset(start)
	}
	op, err := src.Read(context.Background(), s, arrowstream.Offset(end))
	if err != nil {
		t.Fatal(err)
	}
	defer op.Close()
	recs, err := vector.Drain(context.Background(), op)
	if err != nil {
		t.Fatal(err)
	}
	return recs
}

func TestClicksSourceIsDeterministicAndLate(t *testing.T) {
	mem := poisonmem.New()
	defer mem.AssertSize(t, 0)
	clock := arrowstreamtest.NewManualClock(time.UnixMilli(1_800_000_000_000))
	opts := map[string]string{"rowsPerSecond": "1000", "maxLateness": "4 seconds", "lateFraction": "0.1", "backfill": "3 seconds"}
	src, err := clicksFormat(clock)(mem, nil, opts)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	if err := src.(arrowstream.CheckpointedSource).SetCheckpointDir(dir); err != nil {
		t.Fatal(err)
	}
	// The backfill is available at once.
	if off, _ := src.LatestOffset(context.Background()); string(off) != "3" {
		t.Fatalf("latest offset %s, want 3 (the backfill)", off)
	}
	a := readClicks(t, src, "", "3")
	b := readClicks(t, src, "1", "3")
	defer releaseAll(a)
	defer releaseAll(b)
	if rows(a) != 3000 || rows(b) != 2000 {
		t.Fatalf("rows %d and %d", rows(a), rows(b))
	}
	// Replaying a range gives the same rows: (1, 3] is the tail of (0, 3].
	tail := array.NewSlice(a[0].Column(0), 1000, 3000)
	defer tail.Release()
	if !array.Equal(tail, b[0].Column(0)) {
		t.Fatal("ids of a replayed range differ")
	}
	for c := 1; c < int(a[0].NumCols()); c++ {
		ta := array.NewSlice(a[0].Column(c), 1000, 3000)
		if !array.Equal(ta, b[0].Column(c)) {
			t.Fatalf("column %s of a replayed range differs", a[0].ColumnName(c))
		}
		ta.Release()
	}
	// Event times lie at most maxLateness before their second, out of
	// order, with about lateFraction of them more than a second late.
	start := time.UnixMilli(1_800_000_000_000 - 3000)
	ts := a[0].Column(1).(*array.Timestamp)
	late, outOfOrder := 0, 0
	for i := 0; i < ts.Len(); i++ {
		gen := start.Add(time.Duration(i) * time.Millisecond)
		et := time.UnixMicro(int64(ts.Value(i)))
		if et.After(gen) || gen.Sub(et) > 4*time.Second {
			t.Fatalf("row %d: event time %s, generated %s", i, et, gen)
		}
		if gen.Sub(et) > time.Second {
			late++
		}
		if i > 0 && ts.Value(i) < ts.Value(i-1) {
			outOfOrder++
		}
	}
	if late < 150 || late > 450 || outOfOrder < 1000 {
		t.Fatalf("late %d, out of order %d of 3000", late, outOfOrder)
	}
	// Pages are skewed: "/" is the most frequent.
	counts := map[string]int{}
	pages := a[0].Column(3).(*array.String)
	for i := 0; i < pages.Len(); i++ {
		counts[pages.Value(i)]++
	}
	if counts["/"] < counts["/products"] || counts["/products"] < counts["/contact"] || len(counts) != len(clickPages) {
		t.Fatalf("page counts %v", counts)
	}
	// A restarted source reads its start from the checkpoint.
	clock.Advance(10 * time.Second)
	again, _ := clicksFormat(clock)(mem, nil, opts)
	if err := again.(arrowstream.CheckpointedSource).SetCheckpointDir(dir); err != nil {
		t.Fatal(err)
	}
	if off, _ := again.LatestOffset(context.Background()); string(off) != "13" {
		t.Fatalf("latest offset after restart %s, want 13", off)
	}
	// Admission control: at most maxSecondsPerTrigger seconds per epoch.
	limited, _ := clicksFormat(clock)(mem, nil, map[string]string{"maxSecondsPerTrigger": "4"})
	limited.(arrowstream.CheckpointedSource).SetCheckpointDir(dir)
	if off, _ := limited.(arrowstream.AdmissionControlSource).LatestOffsetFrom(context.Background(), arrowstream.Offset("2")); string(off) != "6" {
		t.Fatalf("admission: %s, want 6", off)
	}
}

func rows(recs []arrow.Record) int {
	n := 0
	for _, r := range recs {
		n += int(r.NumRows())
	}
	return n
}

func releaseAll(recs []arrow.Record) {
	for _, r := range recs {
		r.Release()
	}
}

func TestClicksOptionErrors(t *testing.T) {
	for opts, want := range map[string]string{
		"rowsPerSecond=0":  "positive integer",
		"maxLateness=soon": "maxLateness",
		"lateFraction=2":   "between 0 and 1",
		"colour=red":       "unknown clicks option",
	} {
		k, v, _ := strings.Cut(opts, "=")
		_, err := clicksFormat(nil)(memory.DefaultAllocator, nil, map[string]string{k: v})
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: %v, want %q", opts, err, want)
		}
	}
	bad := arrow.NewSchema([]arrow.Field{{Name: "x", Type: vector.Int64}}, nil)
	if _, err := clicksFormat(nil)(memory.DefaultAllocator, bad, nil); err == nil || !strings.Contains(err.Error(), "fixed schema") {
		t.Errorf("user schema: %v", err)
	}
}
