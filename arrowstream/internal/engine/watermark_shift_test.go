package engine

import (
	"testing"

	"github.com/arrowstream/arrowstream/arrowstream/internal/stateful"
	"github.com/arrowstream/arrowstream/internal/testutil/poisonmem"
	"github.com/arrowstream/arrowstream/plan"
)

// TestWatermarkShiftAfterIntervalJoin: an aggregation over a time-interval
// outer join sees the global watermark less the join's output shift (the
// 1-hour interval plus 1 ms for the non-strict bound), as Spark's
// watermark propagation gives it min(state watermarks, input); the join
// itself and an aggregation without a join below see the global one, and
// a global watermark of 0 stays 0 for every operator.
func TestWatermarkShiftAfterIntervalJoin(t *testing.T) {
	mem := poisonmem.NewChecked(t)
	e := newTestExec(t, mem, `SELECT window(lt, '10 minutes') AS w, count(*) AS n FROM
		(SELECT value AS lk, lt FROM STREAM s WATERMARK timestamp_seconds(value) AS lt DELAY OF INTERVAL 0 SECONDS) AS l
		LEFT OUTER JOIN
		(SELECT value AS rk, rt FROM STREAM s WATERMARK timestamp_seconds(value) AS rt DELAY OF INTERVAL 0 SECONDS) AS r
		ON lk = rk AND lt BETWEEN rt - INTERVAL 1 HOUR AND rt + INTERVAL 1 HOUR
		GROUP BY window(lt, '10 minutes')`)
	defer e.Close()
	agg, join := -1, -1
	for n, i := range e.stateful {
		switch n.(type) {
		case *plan.Aggregate:
			agg = i
		case *plan.Join:
			join = i
		}
	}
	if agg < 0 || join < 0 {
		t.Fatalf("stateful operators %v: want an aggregation and a join", e.stateful)
	}
	if got, want := e.wmShift[agg], int64(3600e6+1000); got != want {
		t.Errorf("aggregation's shift %d µs, want %d", got, want)
	}
	if got := e.wmShift[join]; got != 0 {
		t.Errorf("join's shift %d µs, want 0", got)
	}
	ep := stateful.Epoch{}
	ep.WatermarkMs, ep.LateWatermarkMs = 7_200_000, 4_000_000
	got := e.operatorEpoch(agg, ep)
	if got.WatermarkMs != 3_599_999 || got.LateWatermarkMs != 399_999 {
		t.Errorf("aggregation's watermarks %d/%d, want 3599999/399999", got.WatermarkMs, got.LateWatermarkMs)
	}
	if got := e.operatorEpoch(join, ep); got.WatermarkMs != 7_200_000 || got.LateWatermarkMs != 4_000_000 {
		t.Errorf("join's watermarks %d/%d, want the global ones", got.WatermarkMs, got.LateWatermarkMs)
	}
	ep.WatermarkMs, ep.LateWatermarkMs = 0, 0
	if got := e.operatorEpoch(agg, ep); got.WatermarkMs != 0 || got.LateWatermarkMs != 0 {
		t.Errorf("watermark 0: aggregation's %d/%d, want 0/0", got.WatermarkMs, got.LateWatermarkMs)
	}
	ep.WatermarkMs = 1000 // below the shift: clamped at 0, as Spark's propagation
	if got := e.operatorEpoch(agg, ep); got.WatermarkMs != 0 {
		t.Errorf("watermark 1000: aggregation's %d, want 0", got.WatermarkMs)
	}
}
