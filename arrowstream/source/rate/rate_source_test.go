package rate

import (
	"context"
	"github.com/arrowstream/arrowstream/internal/testutil/poisonmem"
	"testing"
	"time"

	"github.com/arrowstream/arrowstream/arrowstream/arrowstreamtest"
	"github.com/arrowstream/arrowstream/arrowstream/stream"
	"github.com/arrowstream/arrowstream/vector"
	vt "github.com/arrowstream/arrowstream/vector/vectortest"
)

func TestValueAtSecond(t *testing.T) {
	// Spark's worked example: rampUpTimeSeconds = 4, rowsPerSecond = 10.
	want := []int64{0, 2, 6, 12, 20, 30, 40}
	for s, w := range want {
		if got := valueAtSecond(int64(s), 10, 4); got != w {
			t.Errorf("valueAtSecond(%d) = %d, want %d", s, got, w)
		}
	}
	if got := valueAtSecond(5, 7, 0); got != 35 {
		t.Errorf("no ramp: %d", got)
	}
}

func readRows(t *testing.T, op vector.Operator) []vt.Row {
	t.Helper()
	defer op.Close()
	recs, err := vector.Drain(context.Background(), op)
	if err != nil {
		t.Fatal(err)
	}
	rows := vt.RowsOf(recs...)
	for _, r := range recs {
		r.Release()
	}
	return rows
}

func TestRateSource(t *testing.T) {
	ctx := context.Background()
	mem := poisonmem.New()
	defer mem.AssertSize(t, 0)
	clock := arrowstreamtest.NewManualClock(time.UnixMilli(1_000_000))
	dir := t.TempDir()
	r, err := NewRateSource(mem, RateOptions{RowsPerSecond: 10, NumPartitions: 2, Clock: clock})
	if err != nil {
		t.Fatal(err)
	}
	if err := r.SetCheckpointDir(dir); err != nil {
		t.Fatal(err)
	}
	clock.Advance(2500 * time.Millisecond)
	end, _ := r.LatestOffset(ctx)
	if string(end) != "2" {
		t.Fatalf("latest offset %s, want 2", end)
	}
	op, err := r.Read(ctx, r.InitialOffset(), end)
	if err != nil {
		t.Fatal(err)
	}
	rows := readRows(t, op)
	if len(rows) != 20 {
		t.Fatalf("%d rows, want 20", len(rows))
	}
	// Partition 0's values first (0, 2, 4, ...), each 100 ms apart.
	if rows[0][1] != int64(0) || rows[1][1] != int64(2) || rows[10][1] != int64(1) {
		t.Fatalf("row order: %v %v %v", rows[0], rows[1], rows[10])
	}
	if rows[1][0] != int64(1_000_000+200)*1000 {
		t.Fatalf("timestamp of value 2: %v", rows[1][0])
	}
	// A restarted source keeps the recorded start time.
	clock.Advance(time.Hour)
	r2, _ := NewRateSource(mem, RateOptions{RowsPerSecond: 10, Clock: clock})
	if err := r2.SetCheckpointDir(dir); err != nil {
		t.Fatal(err)
	}
	op2, _ := r2.Read(ctx, stream.Offset("1"), stream.Offset("2"))
	rows2 := readRows(t, op2)
	if len(rows2) != 10 || rows2[0][1] != int64(10) || rows2[0][0] != int64(1_001_000)*1000 {
		t.Fatalf("replay after restart: %v", rows2[:1])
	}
	if _, err := ParseRateOptions(map[string]string{"rowsPerSecond": "-1"}); err == nil {
		t.Error("negative rowsPerSecond accepted")
	}
	if _, err := ParseRateOptions(map[string]string{"bogus": "1"}); err == nil {
		t.Error("unknown option accepted")
	}
}
