package plan_test

import (
	"context"
	"strings"
	"testing"

	"github.com/arrowstream/arrowstream/plan"
)

// ruleCase analyzes sql, applies one rule and compares the EXPLAIN text.
type ruleCase struct {
	name string
	sql  string
	want string
}

func analyzeT(t *testing.T, cat plan.Catalog, q string) plan.Node {
	t.Helper()
	n, err := plan.AnalyzeSQL(q, cat)
	if err != nil {
		t.Fatalf("%s: %v", q, err)
	}
	return n
}

func runRule(t *testing.T, rule func(plan.Node) plan.Node, cases []ruleCase) {
	t.Helper()
	cat := testCatalog(t)
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			n := plan.RemoveAliases(analyzeT(t, cat, c.sql))
			got := strings.TrimSpace(plan.Explain(rule(n)))
			want := strings.TrimSpace(c.want)
			if got != want {
				t.Errorf("%s\ngot:\n%s\nwant:\n%s\nbefore:\n%s", c.sql, got, want, plan.Explain(n))
			}
			if rule(n).Schema().NumFields() != n.Schema().NumFields() {
				t.Errorf("rule changed the number of output columns")
			}
		})
	}
}

func mustRule(f func(plan.Node) (plan.Node, error)) func(plan.Node) plan.Node {
	return func(n plan.Node) plan.Node {
		out, err := f(n)
		if err != nil {
			panic(err)
		}
		return out
	}
}

func TestFoldConstants(t *testing.T) {
	runRule(t, mustRule(plan.FoldConstants), []ruleCase{
		{"arithmetic", "SELECT a + (1 + 2) * 3 AS x FROM t", `
Project [(a + 9) AS x]
+- Scan t [a, b, c]`},
		{"functions-and-casts", "SELECT upper('ab') AS u, CAST('5' AS INT) + 1 AS v, TIMESTAMP '2026-01-01 00:00:00' + INTERVAL 1 MINUTE AS w FROM t", `
Project ['AB' AS u, 6 AS v, TIMESTAMP '2026-01-01 00:01:00' AS w]
+- Scan t [a, b, c]`},
		{"true-filter-removed", "SELECT a FROM t WHERE 1 = 1", `
Project [a]
+- Scan t [a, b, c]`},
		{"and-true", "SELECT a FROM t WHERE a > 1 AND 2 > 1", `
Project [a]
+- Filter (a > 1)
   +- Scan t [a, b, c]`},
		{"or-true", "SELECT a FROM t WHERE a > 1 OR TRUE", `
Project [a]
+- Scan t [a, b, c]`},
		{"and-false", "SELECT a FROM t WHERE a > 1 AND 1 = 2", `
Project [a]
+- Filter false
   +- Scan t [a, b, c]`},
		// A failing constant stays for run time, where the error belongs.
		{"division-by-zero-kept", "SELECT 1 % 0 AS x FROM t", `
Project [(1 % 0) AS x]
+- Scan t [a, b, c]`},
		// current_timestamp() is not a constant: it changes per epoch.
		{"current-timestamp-kept", "SELECT a FROM t WHERE CAST(current_timestamp() AS BIGINT) > 1 + 1", `
Project [a]
+- Filter (CAST(current_timestamp() AS BIGINT) > 2)
   +- Scan t [a, b, c]`},
		{"case-and-coalesce", "SELECT CASE WHEN 1 > 2 THEN 'x' ELSE 'y' END AS c, coalesce(NULL, 3) AS d FROM t", `
Project ['y' AS c, 3 AS d]
+- Scan t [a, b, c]`},
	})
}

func TestMergeFilters(t *testing.T) {
	runRule(t, plan.MergeFilters, []ruleCase{
		{"two", "SELECT * FROM (SELECT * FROM t WHERE a > 1) s WHERE c < 2", `
Filter ((a > 1) AND (c < 2))
+- Scan t [a, b, c]`},
		{"three", "SELECT * FROM (SELECT * FROM (SELECT * FROM t WHERE a > 1) s WHERE c < 2) r WHERE b = 'x'", `
Filter (((a > 1) AND (c < 2)) AND (b = 'x'))
+- Scan t [a, b, c]`},
	})
}

func TestPushDownPredicates(t *testing.T) {
	runRule(t, plan.PushDownPredicates, []ruleCase{
		{"through-project-into-scan", "SELECT x FROM (SELECT a + 1 AS x, b FROM t) s WHERE x > 2", `
Project [x]
+- Project [(a + 1) AS x, b]
   +- Scan t [a, b, c] PushedFilters: [((a + 1) > 2)]`},
		{"inner-join-sides-and-condition", "SELECT * FROM t JOIN u ON t.a = u.a WHERE t.c > 0 AND u.d = 'x' AND t.b = u.d", `
Join Inner, ((a#0 = a#3) AND (b = d))
:- Scan t [a, b, c] PushedFilters: [(c > 0)]
+- Scan u [a, d] PushedFilters: [(d = 'x')]`},
		// WHERE over a left join: only the left side's conjuncts move down.
		{"left-join-where", "SELECT * FROM t LEFT JOIN u ON t.a = u.a WHERE t.c > 0 AND u.d IS NULL", `
Filter (d IS NULL)
+- Join LeftOuter, (a#0 = a#3)
   :- Scan t [a, b, c] PushedFilters: [(c > 0)]
   +- Scan u [a, d]`},
		// A left join's ON conjunct over the right side filters the right
		// input; one over the left side must stay in the condition.
		{"left-join-on", "SELECT * FROM t LEFT JOIN u ON t.a = u.a AND u.d = 'x' AND t.c > 0", `
Join LeftOuter, ((a#0 = a#3) AND (c > 0))
:- Scan t [a, b, c]
+- Scan u [a, d] PushedFilters: [(d = 'x')]`},
		{"full-join-stays", "SELECT * FROM t FULL JOIN u ON t.a = u.a WHERE t.c > 0", `
Filter (c > 0)
+- Join FullOuter, (a#0 = a#3)
   :- Scan t [a, b, c]
   +- Scan u [a, d]`},
		{"union", "SELECT * FROM (SELECT a FROM t UNION ALL SELECT a FROM u) x WHERE a = 1", `
Union
:- Project [a]
:  +- Scan t [a, b, c] PushedFilters: [(a = 1)]
+- Project [a]
   +- Scan u [a, d] PushedFilters: [(a = 1)]`},
		// Through an aggregate only the grouping-key conjuncts pass.
		{"aggregate-keys-only", "SELECT b, count(*) AS n FROM t GROUP BY b HAVING b = 'x' AND n > 1", `
Project [b, ` + "`count(1)`" + ` AS n]
+- Filter (` + "`count(1)`" + ` > 1)
   +- Aggregate [b], [count(*) AS ` + "`count(1)`" + `]
      +- Scan t [a, b, c] PushedFilters: [(b = 'x')]`},
		{"sort", "SELECT * FROM (SELECT a FROM t ORDER BY a) s WHERE a > 1", `
Sort [a ASC NULLS FIRST]
+- Project [a]
   +- Scan t [a, b, c] PushedFilters: [(a > 1)]`},
		{"limit-blocks", "SELECT * FROM (SELECT a FROM t LIMIT 5) s WHERE a > 1", `
Filter (a > 1)
+- Limit 5
   +- Project [a]
      +- Scan t [a, b, c]`},
		{"window-input-columns-only", "SELECT * FROM (SELECT a, window(CAST(c AS TIMESTAMP), '1 minute') AS w FROM t) s WHERE a > 1 AND w.start IS NOT NULL", `
Project [a, window AS w]
+- Filter (window.start IS NOT NULL)
   +- WindowAssign window(CAST(c AS TIMESTAMP), 1 minutes, 1 minutes, 0 seconds) AS window
      +- Scan t [a, b, c] PushedFilters: [(a > 1)]`},
		// Streaming, as Spark: a deterministic conjunct that does not read
		// the event time passes the watermark node (the rows it rejects do
		// not advance the watermark); one on the event time stays above.
		{"streaming-watermark-pass", "SELECT * FROM STREAM clicks WATERMARK ts DELAY OF INTERVAL 10 SECONDS WHERE user_id > 1", `
EventTimeWatermark ts, 10 seconds
+- Filter (user_id > 1)
   +- StreamingScan clicks [user_id, url, ts]`},
		{"streaming-watermark-event-time-stays", "SELECT * FROM STREAM clicks WATERMARK ts DELAY OF INTERVAL 10 SECONDS WHERE ts > TIMESTAMP '2026-01-01 00:00:00' AND user_id > 1", `
Filter (ts > TIMESTAMP '2026-01-01 00:00:00')
+- EventTimeWatermark ts, 10 seconds
   +- Filter (user_id > 1)
      +- StreamingScan clicks [user_id, url, ts]`},
		// Batch: the watermark node does nothing, so every conjunct,
		// the event time's too, goes below it to the scan.
		{"batch-watermark-all-pass", "SELECT * FROM (SELECT a, CAST(c AS TIMESTAMP) AS ts FROM t) WATERMARK ts DELAY OF INTERVAL 10 SECONDS AS x WHERE ts > TIMESTAMP '2026-01-01 00:00:00' AND a > 1", `
EventTimeWatermark ts, 10 seconds
+- Project [a, CAST(c AS TIMESTAMP) AS ts]
   +- Scan t [a, b, c] PushedFilters: [(CAST(c AS TIMESTAMP) > TIMESTAMP '2026-01-01 00:00:00'), (a > 1)]`},
		// Streaming: current_timestamp() stays above stateful operators.
		{"streaming-current-timestamp", "SELECT value, count(*) AS n FROM STREAM input GROUP BY value HAVING value > CAST(current_timestamp() AS BIGINT) AND value > 1", `
Project [value, ` + "`count(1)`" + ` AS n]
+- Filter (value > CAST(current_timestamp() AS BIGINT))
   +- Aggregate [value], [count(*) AS ` + "`count(1)`" + `]
      +- Filter (value > 1)
         +- StreamingScan input [value]`},
		// Streaming scans take no filters: the engine supplies their data.
		{"streaming-scan", "SELECT * FROM STREAM input WHERE value > 1", `
Filter (value > 1)
+- StreamingScan input [value]`},
		{"dedup-keys", "SELECT * FROM (SELECT DISTINCT a, b FROM t) s WHERE a = 1", `
Aggregate [a, b], []
+- Project [a, b]
   +- Scan t [a, b, c] PushedFilters: [(a = 1)]`},
	})
}

func TestPruneColumns(t *testing.T) {
	runRule(t, mustRule(plan.PruneColumns), []ruleCase{
		{"scan", "SELECT b FROM t", `
Project [b]
+- Scan t [b]`},
		{"nested-projects", "SELECT x FROM (SELECT a AS x, upper(b) AS y, c FROM t) s", `
Project [x]
+- Project [a AS x]
   +- Scan t [a]`},
		{"count-star-keeps-a-column", "SELECT count(*) FROM t", `
Aggregate [], [count(*) AS ` + "`count(1)`" + `]
+- Scan t [a]`},
		{"unused-aggregates", "SELECT b FROM (SELECT b, count(*) AS n, sum(c) AS s FROM t GROUP BY b) x", `
Project [b]
+- Aggregate [b], []
   +- Scan t [b]`},
		{"join-inputs", "SELECT t.b FROM t JOIN u ON t.a = u.a", `
Project [b]
+- Join Inner, (a#0 = a#2)
   :- Scan t [a, b]
   +- Scan u [a]`},
		{"union-inputs", "SELECT a FROM (SELECT a, b FROM t UNION ALL SELECT a, d FROM u) x", `
Project [a]
+- Union
   :- Project [a]
   :  +- Scan t [a]
   +- Scan u [a]`},
		{"filter-columns-kept", "SELECT b FROM t WHERE c > 1", `
Project [b]
+- Filter (c > 1)
   +- Scan t [b, c]`},
		// A window keeps its input's columns, but what is below is pruned.
		{"below-window", "SELECT b, n, sum(n) OVER (ORDER BY b) AS s FROM (SELECT b, count(*) AS n, sum(c) AS x FROM t GROUP BY b)", `
Project [b, n, ` + "`sum(n) OVER (ORDER BY b ASC NULLS FIRST RANGE BETWEEN UNBOUNDED PRECEDING AND CURRENT ROW)`" + ` AS s]
+- Window [sum(n) RANGE BETWEEN UNBOUNDED PRECEDING AND CURRENT ROW AS ` + "`sum(n) OVER (ORDER BY b ASC NULLS FIRST RANGE BETWEEN UNBOUNDED PRECEDING AND CURRENT ROW)`" + `], [], [b ASC NULLS FIRST]
   +- Aggregate [b], [count(*) AS n, sum(c) AS x]
      +- Scan t [b, c]`},
		// Streaming scans are never pruned; the projection above is.
		{"streaming-scan-kept", "SELECT url FROM STREAM clicks", `
Project [url]
+- StreamingScan clicks [user_id, url, ts]`},
		{"watermark-column-kept", "SELECT url FROM (SELECT url, ts FROM STREAM clicks) WATERMARK ts DELAY OF INTERVAL 1 SECOND AS x", `
Project [url]
+- EventTimeWatermark ts, 1 seconds
   +- Project [url, ts]
      +- StreamingScan clicks [user_id, url, ts]`},
	})
}

func TestCollapseProjects(t *testing.T) {
	runRule(t, plan.CollapseProjects, []ruleCase{
		{"merge", "SELECT x + 1 AS y FROM (SELECT a * 2 AS x FROM t) s", `
Project [((a * 2) + 1) AS y]
+- Scan t [a, b, c]`},
		// Merging would compute a * 2 twice: keep both.
		{"no-duplication", "SELECT x + x AS y FROM (SELECT a * 2 AS x FROM t) s", `
Project [(x + x) AS y]
+- Project [(a * 2) AS x]
   +- Scan t [a, b, c]`},
		{"identity", "SELECT a, b, c FROM t", `
Scan t [a, b, c]`},
	})
}

// TestOptimizeKeepsSchemaAndChecks optimizes every conformance plan: the
// schema must not change (names, types, watermark metadata) and the
// streaming checks must give the same verdict.
func TestOptimizeKeepsSchemaAndChecks(t *testing.T) {
	for _, ss := range loadScenarios(t) {
		for _, s := range ss {
			if s.Query == nil || s.Query.SQL == "" {
				continue
			}
			cat := scenarioCatalog(t, s)
			n, err := plan.AnalyzeSQL(s.Query.SQL, cat)
			if err != nil && expectsAnalysisFailure(s) {
				continue // the analyzer refused it, as the scenario expects
			}
			if err != nil {
				t.Fatalf("%s: %v", s.Name, err)
			}
			opt, err := plan.Optimize(n)
			if err != nil {
				t.Fatalf("%s: %v", s.Name, err)
			}
			if !opt.Schema().Equal(n.Schema()) {
				t.Errorf("%s: schema changed\n%s\n%s", s.Name, n.Schema(), opt.Schema())
			}
			for i, f := range n.Schema().Fields() {
				if !f.Metadata.Equal(opt.Schema().Field(i).Metadata) {
					t.Errorf("%s: metadata of %s changed", s.Name, f.Name)
				}
			}
			mode, _ := parseMode(s.Query.OutputMode)
			e1, e2 := plan.CheckStreaming(n, mode), plan.CheckStreaming(opt, mode)
			if (e1 == nil) != (e2 == nil) {
				t.Errorf("%s: CheckStreaming %v before, %v after optimizing\n%s", s.Name, e1, e2, plan.Explain(opt))
			}
		}
	}
}

// TestPruneKeepsEventTime: stateful streaming operators that drop late
// rows by an event-time column keep it although nothing above reads it.
func TestPruneKeepsEventTime(t *testing.T) {
	cat := testCatalog(t)
	n, err := plan.Read(cat, "clicks")
	if err != nil {
		t.Fatal(err)
	}
	if n, err = plan.WithWatermark(n, "ts", "10 seconds"); err != nil {
		t.Fatal(err)
	}
	if n, err = plan.DropDuplicates(n, []string{"user_id"}, false); err != nil {
		t.Fatal(err)
	}
	if n, err = plan.Select(n, "url"); err != nil {
		t.Fatal(err)
	}
	got, err := plan.PruneColumns(n)
	if err != nil {
		t.Fatal(err)
	}
	d := got.Children()[0].(*plan.Deduplicate)
	if len(plan.EventTimeColumns(d.Input.Schema())) != 1 {
		t.Errorf("the dedup lost its event-time column:\n%s", plan.Explain(got))
	}
	l, _ := plan.Read(cat, "clicks")
	l, _ = plan.WithWatermark(l, "ts", "10 seconds")
	r, _ := plan.Read(cat, "clicks")
	r, _ = plan.WithWatermark(r, "ts", "10 seconds")
	r, _ = plan.ToDF(r, "uid", "u2", "ts2")
	j, err := plan.JoinOn(l, r, "user_id = uid", "inner")
	if err != nil {
		t.Fatal(err)
	}
	j, _ = plan.Select(j, "url")
	got, err = plan.PruneColumns(j)
	if err != nil {
		t.Fatal(err)
	}
	join := got.Children()[0].(*plan.Join)
	if len(plan.EventTimeColumns(join.Left.Schema())) != 1 || len(plan.EventTimeColumns(join.Right.Schema())) != 1 {
		t.Errorf("the join lost an event-time column:\n%s", plan.Explain(got))
	}
}

// TestPruneJoinInputs: a join's inputs keep only the columns read at or
// above the join (Spark's ColumnPruning), so a column only a filter below
// reads is not carried into the join; a stream-stream join keeps it when
// the options say its checkpoint's state has it.
func TestPruneJoinInputs(t *testing.T) {
	cat := testCatalog(t)
	names := func(n plan.Node) string {
		var s []string
		for _, f := range n.Schema().Fields() {
			s = append(s, f.Name)
		}
		return strings.Join(s, ",")
	}
	findJoin := func(n plan.Node) *plan.Join {
		for n != nil {
			if j, ok := n.(*plan.Join); ok {
				return j
			}
			kids := n.Children()
			if len(kids) != 1 {
				t.Fatalf("no join in\n%s", plan.Explain(n))
			}
			n = kids[0]
		}
		return nil
	}
	// Batch: the aggregate m of t is read by the filter only (a filter
	// on t's columns would go into the scan instead).
	l, _ := plan.ReadStatic(cat, "t")
	l, _ = plan.GroupBy(l, []string{"a", "b"}, []string{"max(c) AS m"})
	l, _ = plan.Where(l, "m > 0")
	r, _ := plan.ReadStatic(cat, "u")
	r, _ = plan.ToDF(r, "a2", "d")
	j, err := plan.JoinOn(l, r, "a = a2", "inner")
	if err != nil {
		t.Fatal(err)
	}
	j, _ = plan.Select(j, "b", "d")
	got, err := plan.Optimize(j)
	if err != nil {
		t.Fatal(err)
	}
	if jn := findJoin(got); names(jn.Left) != "a,b" || names(jn.Right) != "a2,d" {
		t.Errorf("batch join inputs %s | %s, want a,b | a2,d:\n%s", names(jn.Left), names(jn.Right), plan.Explain(got))
	}
	// Stream-stream: clicks' url is read by the filter only.
	sl, _ := plan.Read(cat, "clicks")
	sl, _ = plan.WithWatermark(sl, "ts", "10 seconds")
	sl, _ = plan.Where(sl, "url <> 'x'")
	sr, _ := plan.Read(cat, "clicks")
	sr, _ = plan.WithWatermark(sr, "ts", "10 seconds")
	sr, _ = plan.ToDF(sr, "uid", "u2", "ts2")
	sj, err := plan.JoinOn(sl, sr, "user_id = uid", "inner")
	if err != nil {
		t.Fatal(err)
	}
	sj, _ = plan.Select(sj, "user_id", "u2")
	for _, c := range []struct {
		keep bool
		want string
	}{{false, "user_id,ts"}, {true, "user_id,url,ts"}} {
		got, err := plan.OptimizeWith(context.Background(), sj, plan.OptimizeOptions{KeepStreamJoinInputColumns: c.keep})
		if err != nil {
			t.Fatal(err)
		}
		jn := findJoin(got)
		if names(jn.Left) != c.want || names(jn.Right) != "uid,u2,ts2" {
			t.Errorf("keep=%v: stream join inputs %s | %s, want %s | uid,u2,ts2:\n%s", c.keep, names(jn.Left), names(jn.Right), c.want, plan.Explain(got))
		}
	}
}
