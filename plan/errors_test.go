package plan_test

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/apache/arrow/go/v17/arrow"

	"github.com/arrowstream/arrowstream/plan"
	"github.com/arrowstream/arrowstream/vector"
)

// streamCase is a query with an output mode and the streaming rule it
// breaks ("" when it is allowed).
type streamCase struct {
	sql  string
	mode plan.OutputMode
	rule string
}

var streamCases = []streamCase{
	{"SELECT * FROM t", plan.Append, plan.RuleNoStreamingSource},
	{"SELECT * FROM STREAM input", plan.Complete, plan.RuleCompleteWithoutAgg},
	{"SELECT value, count(*) FROM STREAM input GROUP BY value", plan.Append, plan.RuleAppendAggNoWatermark},
	{"SELECT value, count(*) FROM STREAM input GROUP BY value", plan.Update, ""},
	{"SELECT value, count(*) FROM STREAM input GROUP BY value", plan.Complete, ""},
	{"SELECT window.start, count(*) FROM STREAM clicks WATERMARK ts DELAY OF INTERVAL 10 SECONDS GROUP BY window(ts, '1 minute')", plan.Append, ""},
	// The watermark must be on a grouping key, not just in the input.
	{"SELECT url, count(*) FROM STREAM clicks WATERMARK ts DELAY OF INTERVAL 10 SECONDS GROUP BY url", plan.Append, plan.RuleAppendAggNoWatermark},
	{"SELECT ts, count(*) FROM STREAM clicks WATERMARK ts DELAY OF INTERVAL 10 SECONDS GROUP BY ts", plan.Append, ""},
	// Distinct aggregates run on streams, beyond Spark (stream_distinct.go).
	{"SELECT count(DISTINCT value) FROM STREAM input", plan.Complete, ""},
	{"SELECT url, count(DISTINCT url, user_id), sum(DISTINCT user_id) FROM STREAM clicks GROUP BY url", plan.Update, ""},
	{"SELECT approx_count_distinct(value) FROM STREAM input", plan.Complete, ""},
	{"SELECT user_id, count(*) FROM STREAM clicks WATERMARK ts DELAY OF INTERVAL 10 SECONDS GROUP BY session_window(ts, '5 seconds'), user_id", plan.Update, plan.RuleSessionWindowUpdate},
	{"SELECT count(*) FROM STREAM clicks WATERMARK ts DELAY OF INTERVAL 10 SECONDS GROUP BY session_window(ts, '5 seconds')", plan.Append, plan.RuleSessionWindowGlobal},
	{"SELECT user_id, count(*) FROM STREAM clicks WATERMARK ts DELAY OF INTERVAL 10 SECONDS GROUP BY session_window(ts, '5 seconds'), user_id", plan.Append, ""},
	// A per-row gap follows the same rules.
	{"SELECT user_id, count(*) FROM STREAM clicks WATERMARK ts DELAY OF INTERVAL 10 SECONDS GROUP BY session_window(ts, CASE WHEN url = 'a' THEN '10 seconds' ELSE '5 seconds' END), user_id", plan.Append, ""},
	{"SELECT user_id, count(*) FROM STREAM clicks WATERMARK ts DELAY OF INTERVAL 10 SECONDS GROUP BY session_window(ts, url), user_id", plan.Update, plan.RuleSessionWindowUpdate},
	{"SELECT * FROM STREAM input ORDER BY value", plan.Append, plan.RuleSortNotAfterAgg},
	{"SELECT value, count(*) AS n FROM STREAM input GROUP BY value ORDER BY n", plan.Update, plan.RuleSortNotAfterAgg},
	{"SELECT value, count(*) AS n FROM STREAM input GROUP BY value ORDER BY n", plan.Complete, ""},
	{"SELECT value, row_number() OVER (ORDER BY value) FROM STREAM input", plan.Append, plan.RuleNonTimeWindow},
	{"SELECT value, count(*) AS n, rank() OVER (ORDER BY count(*) DESC) FROM STREAM input GROUP BY value", plan.Update, plan.RuleNonTimeWindow},
	{"SELECT value, count(*) AS n, rank() OVER (ORDER BY count(*) DESC) FROM STREAM input GROUP BY value", plan.Complete, ""},
	{"SELECT value, count(*) AS n FROM STREAM input GROUP BY value QUALIFY row_number() OVER (ORDER BY n DESC, value) <= 3", plan.Complete, ""},
	// A top-N per partition runs on streams, beyond Spark (stream_topn.go):
	// in Update mode over rows that are only added, in Append mode when
	// PARTITION BY holds a watermarked time.
	{"SELECT user_id, url FROM STREAM clicks QUALIFY row_number() OVER (PARTITION BY url ORDER BY ts DESC) <= 3", plan.Update, ""},
	{"SELECT * FROM (SELECT url, ts, row_number() OVER (PARTITION BY url ORDER BY ts) AS rn FROM STREAM clicks) WHERE rn = 1", plan.Update, ""},
	{"SELECT user_id, url FROM STREAM clicks QUALIFY row_number() OVER (PARTITION BY url ORDER BY ts DESC) <= 3", plan.Append, plan.RuleNonTimeWindow},
	{"SELECT user_id, url FROM STREAM clicks WATERMARK ts DELAY OF INTERVAL 10 SECONDS QUALIFY row_number() OVER (PARTITION BY url, ts ORDER BY user_id) <= 3", plan.Append, ""},
	{"SELECT value, n FROM (SELECT value, count(*) AS n FROM STREAM input GROUP BY value) QUALIFY row_number() OVER (PARTITION BY n ORDER BY value) <= 3", plan.Update, plan.RuleNonTimeWindow},
	// Over an Update-mode aggregation when PARTITION BY is grouping keys
	// (a retracting top-N, stream_topn_retract.go).
	{"SELECT value, n FROM (SELECT value, count(*) AS n FROM STREAM input GROUP BY value) QUALIFY row_number() OVER (PARTITION BY value ORDER BY n) <= 3", plan.Update, ""},
	// Aggregates over a ROWS frame ending at the current row, ordered by
	// the watermarked time, in Append mode (stream_over.go).
	{"SELECT url, avg(user_id) OVER (PARTITION BY url ORDER BY ts ROWS BETWEEN 2 PRECEDING AND CURRENT ROW) FROM STREAM clicks WATERMARK ts DELAY OF INTERVAL 10 SECONDS", plan.Append, ""},
	{"SELECT url, avg(user_id) OVER (PARTITION BY url ORDER BY ts ROWS BETWEEN 2 PRECEDING AND CURRENT ROW) FROM STREAM clicks WATERMARK ts DELAY OF INTERVAL 10 SECONDS", plan.Update, plan.RuleNonTimeWindow},
	{"SELECT url, avg(user_id) OVER (PARTITION BY url ORDER BY ts ROWS BETWEEN 2 PRECEDING AND 1 FOLLOWING) FROM STREAM clicks WATERMARK ts DELAY OF INTERVAL 10 SECONDS", plan.Append, plan.RuleNonTimeWindow},
	{"SELECT user_id, url FROM STREAM clicks QUALIFY row_number() OVER (PARTITION BY url ORDER BY ts DESC) >= 3", plan.Update, plan.RuleNonTimeWindow},
	{"SELECT user_id, url FROM STREAM clicks QUALIFY rank() OVER (PARTITION BY url ORDER BY ts DESC) <= 3", plan.Update, plan.RuleNonTimeWindow},
	{"SELECT value FROM STREAM input LIMIT 5", plan.Update, plan.RuleLimitUpdate},
	{"SELECT value FROM STREAM input LIMIT 5", plan.Append, ""},
	{"SELECT value FROM STREAM input UNION ALL SELECT a FROM t", plan.Append, plan.RuleUnionStreamBatch},
	{"SELECT value FROM STREAM input UNION ALL SELECT value FROM STREAM input", plan.Append, ""},
	{"SELECT * FROM STREAM input i JOIN STREAM input j ON i.value = j.value", plan.Update, plan.RuleStreamJoinMode},
	{"SELECT * FROM STREAM input i JOIN STREAM input j ON i.value = j.value", plan.Append, ""},
	{"SELECT * FROM STREAM clicks c LEFT JOIN STREAM input i ON c.user_id = i.value", plan.Append, plan.RuleStreamJoinWatermark},
	{"SELECT * FROM STREAM clicks WATERMARK ts DELAY OF INTERVAL 5 SECONDS AS l LEFT JOIN (SELECT user_id AS id, ts AS rts FROM STREAM clicks) WATERMARK rts DELAY OF INTERVAL 5 SECONDS AS r ON l.user_id = r.id AND r.rts BETWEEN l.ts AND l.ts + INTERVAL 10 SECONDS", plan.Append, ""},
	{"SELECT * FROM STREAM clicks WATERMARK ts DELAY OF INTERVAL 5 SECONDS AS l FULL JOIN STREAM clicks WATERMARK ts DELAY OF INTERVAL 5 SECONDS AS r ON l.ts = r.ts", plan.Append, ""},
	{"SELECT * FROM t LEFT JOIN STREAM input ON t.a = input.value", plan.Append, plan.RuleStreamStaticJoin},
	{"SELECT * FROM STREAM input RIGHT JOIN t ON t.a = input.value", plan.Append, plan.RuleStreamStaticJoin},
	{"SELECT * FROM STREAM input FULL JOIN t ON t.a = input.value", plan.Append, plan.RuleStreamStaticJoin},
	{"SELECT * FROM t LEFT ANTI JOIN STREAM input ON t.a = input.value", plan.Append, plan.RuleStreamStaticJoin},
	{"SELECT * FROM STREAM input LEFT JOIN t ON t.a = input.value", plan.Append, ""},
	{"SELECT * FROM STREAM input LEFT ANTI JOIN t ON t.a = input.value", plan.Append, ""},
	// A stateful operator after an aggregation outside Append mode may
	// drop rows as late.
	{"SELECT c, count(*) FROM (SELECT value, count(*) AS c FROM STREAM input GROUP BY value) x GROUP BY c", plan.Complete, plan.RuleMultipleStateful},
	{"SELECT DISTINCT value FROM STREAM input", plan.Update, ""},
	// Spark 3.4+ (multiple stateful operators allowed): a watermark whose
	// value reaches a later watermark node is a redefinition, with or
	// without a stateful operator or projection in between; two watermarked
	// inputs of a union or a join are not.
	{"SELECT * FROM (SELECT * FROM STREAM clicks WATERMARK ts DELAY OF INTERVAL 5 SECONDS) WATERMARK ts DELAY OF INTERVAL 10 SECONDS AS t", plan.Append, plan.RuleRedefineWatermark},
	{"SELECT * FROM (SELECT url, ts AS t2 FROM STREAM clicks WATERMARK ts DELAY OF INTERVAL 5 SECONDS WHERE user_id > 0) WATERMARK t2 DELAY OF INTERVAL 10 SECONDS AS t", plan.Append, plan.RuleRedefineWatermark},
	{"SELECT * FROM (SELECT url, count(*) AS c, max(ts) AS m FROM STREAM clicks WATERMARK ts DELAY OF INTERVAL 5 SECONDS GROUP BY url) WATERMARK m DELAY OF INTERVAL 10 SECONDS AS t", plan.Complete, plan.RuleRedefineWatermark},
	{"SELECT ts FROM STREAM clicks WATERMARK ts DELAY OF INTERVAL 5 SECONDS UNION ALL SELECT ts FROM STREAM clicks WATERMARK ts DELAY OF INTERVAL 9 SECONDS", plan.Append, ""},
	// A stateful operator needs one event time: the two sides' event-time
	// columns of a self join make a distinct over both ambiguous, while
	// grouping by one of them (or selecting the same column twice) does not.
	{"SELECT DISTINCT l.ts, r.ts FROM STREAM clicks WATERMARK ts DELAY OF INTERVAL 5 SECONDS AS l JOIN STREAM clicks WATERMARK ts DELAY OF INTERVAL 5 SECONDS AS r ON l.ts = r.ts", plan.Append, plan.RuleMultipleEventTimeCols},
	{"SELECT l.ts, count(*) FROM STREAM clicks WATERMARK ts DELAY OF INTERVAL 5 SECONDS AS l JOIN STREAM clicks WATERMARK ts DELAY OF INTERVAL 5 SECONDS AS r ON l.ts = r.ts GROUP BY l.ts", plan.Append, ""},
	{"SELECT DISTINCT ts, ts AS again, url FROM STREAM clicks WATERMARK ts DELAY OF INTERVAL 5 SECONDS", plan.Update, ""},
}

func TestCheckStreamingRules(t *testing.T) {
	cat := testCatalog(t)
	var out strings.Builder
	for _, c := range streamCases {
		n := analyzeT(t, cat, c.sql)
		err := plan.CheckStreaming(n, c.mode)
		var se *plan.StreamingError
		switch {
		case c.rule == "" && err != nil:
			t.Errorf("%s (%s): unexpected %v", c.sql, c.mode, err)
		case c.rule != "" && !errors.As(err, &se):
			t.Errorf("%s (%s): got %v, want rule %s", c.sql, c.mode, err, c.rule)
		case c.rule != "" && se.Rule != c.rule:
			t.Errorf("%s (%s): rule %s, want %s (%v)", c.sql, c.mode, se.Rule, c.rule, err)
		case c.rule != "" && !errors.Is(err, plan.ErrStreaming):
			t.Errorf("%s: error does not wrap ErrStreaming", c.sql)
		}
		// The optimized plan gets the same verdict.
		opt, oerr := plan.Optimize(n)
		if oerr != nil {
			t.Fatalf("%s: %v", c.sql, oerr)
		}
		if e2 := plan.CheckStreaming(opt, c.mode); (e2 == nil) != (err == nil) {
			t.Errorf("%s (%s): %v before optimizing, %v after", c.sql, c.mode, err, e2)
		}
		if err != nil {
			fmt.Fprintf(&out, "%s [%s]\n  => %v\n", c.sql, c.mode, err)
		}
	}
	golden(t, "testdata/errors/streaming.golden", out.String())
}

// TestCheckStreamingFlatMapGroups covers the flatMapGroupsWithState rules,
// which only the DataFrame API reaches.
func TestCheckStreamingFlatMapGroups(t *testing.T) {
	cat := testCatalog(t)
	out := arrow.NewSchema([]arrow.Field{{Name: "k", Type: vector.Int32}, {Name: "n", Type: vector.Int64}}, nil)
	build := func(spec plan.FlatMapSpec, watermark bool, aggAfter bool) plan.Node {
		n, err := plan.Read(cat, "clicks")
		if err != nil {
			t.Fatal(err)
		}
		if watermark {
			if n, err = plan.WithWatermark(n, "ts", "10 seconds"); err != nil {
				t.Fatal(err)
			}
		}
		spec.Key = "user_id"
		spec.OutputSchema = out
		if n, err = plan.FlatMapGroups(n, spec); err != nil {
			t.Fatal(err)
		}
		if aggAfter {
			if n, err = plan.GroupBy(n, []string{"k"}, []string{"count(*)"}); err != nil {
				t.Fatal(err)
			}
		}
		return n
	}
	for _, c := range []struct {
		name      string
		spec      plan.FlatMapSpec
		watermark bool
		aggAfter  bool
		mode      plan.OutputMode
		rule      string
	}{
		{"map-update", plan.FlatMapSpec{MapGroups: true}, false, false, plan.Update, ""},
		{"map-append", plan.FlatMapSpec{MapGroups: true}, false, false, plan.Append, plan.RuleMapGroupsMode},
		{"flat-update-update", plan.FlatMapSpec{Mode: plan.Update}, false, false, plan.Update, ""},
		{"flat-update-append", plan.FlatMapSpec{Mode: plan.Update}, false, false, plan.Append, plan.RuleFlatMapGroupsMode},
		{"flat-append-then-agg", plan.FlatMapSpec{Mode: plan.Append}, false, true, plan.Complete, ""},
		{"flat-update-then-agg", plan.FlatMapSpec{Mode: plan.Update}, false, true, plan.Complete, plan.RuleFlatMapGroupsMode},
		{"event-time-no-watermark", plan.FlatMapSpec{Mode: plan.Update, Timeout: plan.EventTimeTimeout}, false, false, plan.Update, plan.RuleEventTimeTimeoutNoWM},
		{"event-time-watermark", plan.FlatMapSpec{Mode: plan.Update, Timeout: plan.EventTimeTimeout}, true, false, plan.Update, ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			err := plan.CheckStreaming(build(c.spec, c.watermark, c.aggAfter), c.mode)
			var se *plan.StreamingError
			if c.rule == "" {
				if err != nil {
					t.Errorf("unexpected %v", err)
				}
			} else if !errors.As(err, &se) || se.Rule != c.rule {
				t.Errorf("got %v, want rule %s", err, c.rule)
			}
		})
	}
	n, _ := plan.Read(cat, "clicks")
	if _, err := plan.FlatMapGroups(n, plan.FlatMapSpec{Key: "user_id", OutputSchema: out, Mode: plan.Complete}); err == nil {
		t.Error("flatMapGroupsWithState in Complete mode was accepted")
	}
	if _, err := plan.DropDuplicates(n, nil, true); !errors.Is(err, plan.ErrStreaming) {
		t.Errorf("dropDuplicatesWithinWatermark without a watermark: %v", err)
	}
}

// analysisErrors are bad queries whose messages (with positions) are
// pinned in testdata/errors/analysis.golden.
var analysisErrors = []string{
	"SELECT valu FROM STREAM input",
	"SELECT value FROM STREAM inptu",
	"SELECT a,\n       b + c\nFROM t\nWHERE d = 1",
	"SELECT b, count(*) FROM t GROUP BY a",
	"SELECT a FROM t JOIN u ON t.a = u.a",
	"SELECT sum(a > 1) FROM t",
	"SELECT window.start FROM STREAM clicks GROUP BY window(ts, '10 seconds', '1 minute')",
	"SELECT * FROM STREAM clicks WATERMARK url DELAY OF INTERVAL 1 SECOND",
	"SELECT a FROM t UNION ALL SELECT a, b FROM t",
	"SELECT uper(b) FROM t",
	"SELECT a FROM t WHERE count(*) > 1",
	"SELECT explode(b) FROM t",
	"SELECT * FROM t VERSION AS OF 3",
	"SELECT a FROM t ORDER BY 9",
	"SELECT CAST(a AS STRUCT<x: INT>) FROM t",
}

func TestAnalysisErrorsGolden(t *testing.T) {
	cat := testCatalog(t)
	var out strings.Builder
	for _, q := range analysisErrors {
		_, err := plan.AnalyzeSQL(q, cat)
		if err == nil {
			t.Errorf("%q analyzed without error", q)
			continue
		}
		var pe *plan.Error
		if !errors.As(err, &pe) || pe.Pos.Line == 0 {
			t.Errorf("%q: error without a position: %v", q, err)
		}
		fmt.Fprintf(&out, "%s\n  => %v\n", strings.ReplaceAll(q, "\n", "\n   "), err)
	}
	golden(t, "testdata/errors/analysis.golden", out.String())
}

// TestBuilderErrors pins the DataFrame API's messages: they name the bad
// input and suggest close names.
func TestBuilderErrors(t *testing.T) {
	cat := testCatalog(t)
	clicks, err := plan.Read(cat, "clicks")
	if err != nil {
		t.Fatal(err)
	}
	tt, err := plan.ReadStatic(cat, "t")
	if err != nil {
		t.Fatal(err)
	}
	var out strings.Builder
	for _, c := range []struct {
		name string
		f    func() (plan.Node, error)
	}{
		{"read-unknown", func() (plan.Node, error) { return plan.Read(cat, "clics") }},
		{"read-static-of-stream", func() (plan.Node, error) { return plan.ReadStatic(cat, "clicks") }},
		{"select-unknown", func() (plan.Node, error) { return plan.Select(clicks, "user_id", "urll AS u") }},
		{"select-syntax", func() (plan.Node, error) { return plan.Select(clicks, "user_id +") }},
		{"filter-not-boolean", func() (plan.Node, error) { return plan.Where(clicks, "user_id + 1") }},
		{"with-column-type", func() (plan.Node, error) { return plan.WithColumn(clicks, "x", "url + ts") }},
		{"to-df-count", func() (plan.Node, error) { return plan.ToDF(clicks, "a", "b") }},
		{"watermark-type", func() (plan.Node, error) { return plan.WithWatermark(clicks, "url", "10 seconds") }},
		{"watermark-delay", func() (plan.Node, error) { return plan.WithWatermark(clicks, "ts", "ten seconds") }},
		{"watermark-negative", func() (plan.Node, error) { return plan.WithWatermark(clicks, "ts", "-5 seconds") }},
		{"group-by-unknown", func() (plan.Node, error) { return plan.GroupBy(clicks, []string{"usr"}, []string{"count(*)"}) }},
		{"agg-not-grouped", func() (plan.Node, error) { return plan.GroupBy(clicks, []string{"user_id"}, []string{"url"}) }},
		{"dedup-unknown", func() (plan.Node, error) { return plan.DropDuplicates(clicks, []string{"uid"}, false) }},
		{"join-type", func() (plan.Node, error) { return plan.JoinOn(clicks, tt, "user_id = a", "sideways") }},
		{"join-using-unknown", func() (plan.Node, error) { return plan.JoinUsing(clicks, tt, []string{"a"}, "inner") }},
		{"join-on-unknown", func() (plan.Node, error) { return plan.JoinOn(clicks, tt, "user_id = aa", "inner") }},
		{"union-columns", func() (plan.Node, error) { return plan.UnionAll(clicks, tt) }},
		{"limit-negative", func() (plan.Node, error) { return plan.WithLimit(clicks, -1) }},
		{"order-by-unknown", func() (plan.Node, error) { return plan.OrderBy(clicks, "tss DESC") }},
	} {
		_, err := c.f()
		if err == nil {
			t.Errorf("%s: no error", c.name)
			continue
		}
		fmt.Fprintf(&out, "%s\n  => %v\n", c.name, err)
	}
	golden(t, "testdata/errors/builder.golden", out.String())
}

// TestSessionWindowGapExpr: a non-constant gap is kept as an expression
// (shown by EXPLAIN, kept through optimization and column pruning); a gap
// of another type is refused.
func TestSessionWindowGapExpr(t *testing.T) {
	cat := testCatalog(t)
	n := analyzeT(t, cat, "SELECT user_id, count(*) AS n FROM STREAM clicks WATERMARK ts DELAY OF INTERVAL 10 SECONDS GROUP BY session_window(ts, CASE WHEN url = 'a' THEN '10 seconds' ELSE '5 seconds' END), user_id")
	opt, err := plan.Optimize(n)
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range []plan.Node{n, opt} {
		if s := plan.Explain(p); !strings.Contains(s, "session_window(ts, CASE WHEN") {
			t.Errorf("explain lacks the gap expression:\n%s", s)
		}
	}
	if _, err := plan.AnalyzeSQL("SELECT count(*) FROM STREAM clicks GROUP BY session_window(ts, user_id), url", cat); err == nil || !strings.Contains(err.Error(), "gap duration") {
		t.Errorf("want a gap type error, got %v", err)
	}
}
