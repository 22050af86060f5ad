package plan_test

import (
	"testing"

	"github.com/arrowstream/arrowstream/plan"
)

// TestWatermarkThroughDerivedColumns: order-keeping shifts of an
// event-time column carry the watermark bound with their shift; other
// expressions, aggregation keys and columns without a watermark do not.
func TestWatermarkThroughDerivedColumns(t *testing.T) {
	const wm = " WATERMARK ts DELAY OF INTERVAL 10 SECONDS"
	none := int64(-1 << 62)
	cases := []struct {
		name, sql string
		want      []int64 // per output column: the shift in µs, none
	}{
		{"shifts", `SELECT ts, ts + INTERVAL 1 HOUR AS a, ts - INTERVAL 1 SECOND AS b, INTERVAL 2 SECONDS + ts AS c,
			CAST(ts AS TIMESTAMP) AS d, (ts + INTERVAL 1 SECOND) - INTERVAL 3 SECONDS AS e, url, user_id + 1 AS f FROM STREAM clicks` + wm,
			[]int64{0, 3600e6, -1e6, 2e6, 0, -2e6, none, none}},
		{"window", `SELECT window.end AS e, window.start AS s, window_time(window) AS wt,
			window.end - INTERVAL 1 MILLISECOND AS r, count(*) AS n FROM STREAM clicks` + wm + ` GROUP BY window(ts, '10 seconds')`,
			// window_time(window) is an event-time column itself (Spark's
			// ResolveWindowTime keeps the window's watermark delay).
			[]int64{0, -10e6, 0, -1000, none}},
		{"sliding-window-through-subquery", `SELECT w.start AS s, w.end + INTERVAL 1 SECOND AS e FROM
			(SELECT window AS w, count(*) AS n FROM STREAM clicks` + wm + ` GROUP BY window(ts, '10 seconds', '5 seconds')) x`,
			[]int64{-10e6, 1e6}},
		{"derived-of-derived", `SELECT r + INTERVAL 1 SECOND AS r2, r FROM (SELECT ts - INTERVAL 5 SECONDS AS r FROM STREAM clicks` + wm + `) x`,
			[]int64{-4e6, -5e6}},
		{"no-watermark", `SELECT ts + INTERVAL 1 HOUR AS a FROM STREAM clicks`, []int64{none}},
		{"not-order-keeping", `SELECT date_trunc('HOUR', ts) AS a, CASE WHEN user_id > 0 THEN ts END AS b FROM STREAM clicks` + wm,
			[]int64{none, none}},
		// An aggregation emits a group long after its rows arrived: its
		// keys carry no derived bound.
		{"aggregation-key", `SELECT a, count(*) AS n FROM (SELECT ts, ts + INTERVAL 1 HOUR AS a FROM STREAM clicks` + wm + `) x
			GROUP BY window(ts, '10 seconds'), a`, []int64{none, none}},
		// A later watermark on another column replaces the event time.
		{"rewatermarked", `SELECT a, b FROM (SELECT ts + INTERVAL 1 HOUR AS a, ts AS b FROM STREAM clicks` + wm + `)
			WATERMARK a DELAY OF INTERVAL 0 SECONDS AS x`, []int64{0, none}},
	}
	cat := testCatalog(t)
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			n := analyzeT(t, cat, c.sql)
			opt, err := plan.Optimize(n)
			if err != nil {
				t.Fatal(err)
			}
			for _, node := range []plan.Node{n, opt} {
				s := node.Schema()
				if s.NumFields() != len(c.want) {
					t.Fatalf("%d columns, want %d: %s", s.NumFields(), len(c.want), s)
				}
				for i, want := range c.want {
					got, ok := plan.WatermarkBound(s.Field(i))
					if !ok {
						got = none
					}
					if got != want {
						t.Errorf("column %s: shift %d, want %d\n%s", s.Field(i).Name, got, want, plan.Explain(node))
					}
				}
			}
		})
	}
}

// TestWindowTimeIsEventTime: window_time over an event-time window column
// carries the window's watermark delay, as Spark's ResolveWindowTime gives
// it the window's metadata (a deduplication after a windowed aggregation,
// keyed by it, evicts by it); over a window without a watermark it
// carries none.
func TestWindowTimeIsEventTime(t *testing.T) {
	cat := testCatalog(t)
	for _, c := range []struct {
		sql   string
		delay int64
		ok    bool
	}{
		{`SELECT window_time(window) AS wt FROM STREAM clicks WATERMARK ts DELAY OF INTERVAL 10 SECONDS GROUP BY window(ts, '10 seconds')`, 10000, true},
		{`SELECT window_time(window) AS wt FROM STREAM clicks GROUP BY window(ts, '10 seconds')`, 0, false},
	} {
		n := analyzeT(t, cat, c.sql)
		d, ok := plan.WatermarkDelay(n.Schema().Field(0))
		if ok != c.ok || d != c.delay {
			t.Errorf("%s: delay %d, %v; want %d, %v", c.sql, d, ok, c.delay, c.ok)
		}
	}
}
