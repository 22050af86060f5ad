package engine

import (
	"testing"

	"github.com/apache/arrow/go/v17/arrow"

	"github.com/arrowstream/arrowstream/arrowstream/internal/stateful"
	memsource "github.com/arrowstream/arrowstream/arrowstream/source/memory"
	"github.com/arrowstream/arrowstream/arrowstream/stream"
	"github.com/arrowstream/arrowstream/checkpoint"
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

// TestNoWatermarkAfterFlatMapGroups: flatMapGroupsWithState outputs no
// watermark (Spark's produceOutputWatermark is None for it), so a
// stateful operator fed only through it sees 0 whatever the global
// watermark, and a join's shift below it does not reach an operator
// whose other input is watermarked: that one sees the global watermark
// of its other input (Spark leaves a child without a watermark out of
// the min).
func TestNoWatermarkAfterFlatMapGroups(t *testing.T) {
	mem := poisonmem.NewChecked(t)
	src := memsource.New(mem, valueSchema)
	t.Cleanup(func() { src.Close() })
	cat := oneTable{"s": sourceTable{src}}
	analyze := func(q string) plan.Node {
		t.Helper()
		n, err := plan.AnalyzeSQL(q, cat)
		if err != nil {
			t.Fatal(err)
		}
		return n
	}
	must := func(n plan.Node, err error) plan.Node {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
		return n
	}
	keyOnly := func(key arrow.Array, _ arrow.Record, _ *stream.GroupState) (arrow.Record, error) { return nil, nil }
	out := arrow.NewSchema([]arrow.Field{{Name: "k", Type: arrow.BinaryTypes.String, Nullable: true}}, nil)
	flatMap := func(in plan.Node, key string) plan.Node {
		return must(plan.FlatMapGroups(in, plan.FlatMapSpec{Key: key, Func: keyOnly, FuncName: "key_only", OutputSchema: out, Mode: plan.Append}))
	}
	join := analyze(`SELECT lk, lt FROM
		(SELECT value AS lk, lt FROM STREAM s WATERMARK timestamp_seconds(value) AS lt DELAY OF INTERVAL 0 SECONDS) AS l
		JOIN
		(SELECT value AS rk, rt FROM STREAM s WATERMARK timestamp_seconds(value) AS rt DELAY OF INTERVAL 0 SECONDS) AS r
		ON lk = rk AND lt BETWEEN rt - INTERVAL 1 HOUR AND rt + INTERVAL 1 HOUR`)
	fm1 := flatMap(join, "CAST(lk AS STRING)")
	fm2 := flatMap(fm1, "k")
	other := analyze(`SELECT value AS ck, ct FROM STREAM s WATERMARK timestamp_seconds(value) AS ct DELAY OF INTERVAL 0 SECONDS`)
	j2 := must(plan.JoinOn(other, fm2, "CAST(ck AS STRING) = k", "inner"))
	agg := must(plan.GroupBy(j2, []string{"window(ct, '10 minutes') AS w"}, []string{"count(*) AS n"}))
	e, err := newStreamExec(mem, agg, stream.Append, &checkpoint.Writer{NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	// The engine plans its own copies of the nodes: tell them apart by
	// what is below them.
	join1, join2, fmJoin, fmFm, aggI := -1, -1, -1, -1, -1
	for m, i := range e.stateful {
		switch x := m.(type) {
		case *plan.Join:
			if hasFlatMap(x.Right) {
				join2 = i
			} else {
				join1 = i
			}
		case *plan.FlatMapGroupsWithState:
			if hasFlatMap(x.Input) {
				fmFm = i
			} else {
				fmJoin = i
			}
		case *plan.Aggregate:
			aggI = i
		}
	}
	if min(join1, join2, fmJoin, fmFm, aggI) < 0 {
		t.Fatalf("stateful operators %v: want two joins, two flatMapGroupsWithState and an aggregation", e.stateful)
	}
	ep := stateful.Epoch{}
	ep.WatermarkMs, ep.LateWatermarkMs = 7_200_000, 4_000_000
	check := func(what string, i int, wantEvict, wantLate int64) {
		t.Helper()
		got := e.operatorEpoch(i, ep)
		if got.WatermarkMs != wantEvict || got.LateWatermarkMs != wantLate {
			t.Errorf("%s sees %d/%d, want %d/%d", what, got.WatermarkMs, got.LateWatermarkMs, wantEvict, wantLate)
		}
	}
	check("the time-interval join", join1, 7_200_000, 4_000_000)
	check("flatMapGroupsWithState over the join", fmJoin, 3_599_999, 399_999)
	check("flatMapGroupsWithState over flatMapGroupsWithState", fmFm, 0, 0)
	check("the join of a watermarked stream and flatMapGroupsWithState's rows", join2, 7_200_000, 4_000_000)
	check("the aggregation over that join", aggI, 7_200_000, 4_000_000)
}

// hasFlatMap reports whether n is or has a flatMapGroupsWithState below.
func hasFlatMap(n plan.Node) bool {
	if _, ok := n.(*plan.FlatMapGroupsWithState); ok {
		return true
	}
	for _, k := range n.Children() {
		if hasFlatMap(k) {
			return true
		}
	}
	return false
}
