package arrowstream

import (
	"context"
	"testing"

	"github.com/arrowstream/arrowstream/arrowstream/internal/collectsink"
	vt "github.com/arrowstream/arrowstream/vector/vectortest"
)

// TestJoinEvictsThroughDerivedColumn: the left input's time is
// t2 = lt + INTERVAL 5 SECONDS, a column derived from its event time; the
// range condition rt BETWEEN t2 - 3 s AND t2 bounds both sides through
// it (docs/semantics.md §7), so the join's state stays within a few
// seconds of rows, and the answer equals a brute-force model's and that
// of a run whose t2 the planner cannot see through (CASE), which keeps
// every row.
func TestJoinEvictsThroughDerivedColumn(t *testing.T) {
	const epochs, perEpoch = 10, 10
	run := func(t2 string) (rows []vt.Row, stateRows, peak int64) {
		ctx := context.Background()
		s, mem := newTestSession(t)
		a, b := NewMemoryStream(mem, valueSchema), NewMemoryStream(mem, valueSchema)
		defer a.Close()
		defer b.Close()
		s.RegisterStream("a", a)
		s.RegisterStream("b", b)
		sink := &collectsink.Sink{}
		left := s.ReadStream("a").WithColumn("lt", "timestamp_seconds(value)").WithWatermark("lt", "0 seconds").
			Select("value AS l", "value % 3 AS lk", t2+" AS t2")
		right := s.ReadStream("b").WithColumn("rt", "timestamp_seconds(value)").WithWatermark("rt", "0 seconds").
			Select("value AS r", "value % 3 AS rk", "rt")
		q, err := left.Join(right, "lk = rk AND rt BETWEEN t2 - INTERVAL 3 SECONDS AND t2", "inner").
			Select("l", "r").WriteStream().Sink(sink).OutputMode(Append).Start(ctx)
		if err != nil {
			t.Fatal(err)
		}
		defer q.Stop()
		for e := 0; e < epochs; e++ {
			var vals []int
			// From 1 s: a row at time 0 is late in the first epoch (whose
			// late watermark is 0) on a side with the event time, and
			// dropped by the derived bound on the other (the hidden run
			// would keep it).
			for v := e*perEpoch + 1; v <= (e+1)*perEpoch; v++ {
				vals = append(vals, v)
			}
			addInts(t, a, vals...)
			addInts(t, b, vals...)
			if err := q.ProcessAllAvailable(ctx); err != nil {
				t.Fatal(err)
			}
			p := q.LastProgress()
			if p == nil || len(p.StateOperators) != 1 {
				t.Fatalf("progress: %+v", p)
			}
			stateRows = p.StateOperators[0].NumRowsTotal
			peak = max(peak, stateRows)
		}
		return vt.SortRows(sink.All()), stateRows, peak
	}
	got, state, peak := run("lt + INTERVAL 5 SECONDS")
	hidden, hiddenState, _ := run("CASE WHEN value >= 0 THEN lt + INTERVAL 5 SECONDS END")
	var want []vt.Row
	for l := 1; l <= epochs*perEpoch; l++ {
		for r := 1; r <= epochs*perEpoch; r++ {
			if l%3 == r%3 && r >= l+2 && r <= l+5 {
				want = append(want, vt.Row{int32(l), int32(r)})
			}
		}
	}
	want = vt.SortRows(want)
	if !vt.RowsEqual(got, want) {
		t.Fatalf("evicting run:\n%s\nwant\n%s", vt.FormatRows(got), vt.FormatRows(want))
	}
	if !vt.RowsEqual(hidden, want) {
		t.Fatalf("non-evicting run:\n%s\nwant\n%s", vt.FormatRows(hidden), vt.FormatRows(want))
	}
	t.Logf("state rows after %d epochs: %d (peak %d) evicting, %d not", epochs, state, peak, hiddenState)
	// Each epoch adds 10 rows per side; the watermark trails by one epoch
	// (10 s), and each side keeps rows within ~5 s above it.
	if peak > 4*perEpoch+10 {
		t.Errorf("evicting run: peak state %d rows", peak)
	}
	if hiddenState < epochs*perEpoch {
		t.Errorf("non-evicting run keeps %d rows: the CASE no longer hides the bound", hiddenState)
	}
}
