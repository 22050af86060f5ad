package plan_test

import (
	"context"
	"testing"

	"github.com/apache/arrow/go/v17/arrow/memory"

	"github.com/arrowstream/arrowstream/plan"
	"github.com/arrowstream/arrowstream/sql"
)

// benchQuery is a 20-line query touching most of the analyzer: a CTE, a
// join, a window, grouping, HAVING, ORDER BY and LIMIT.
const benchQuery = `WITH recent AS (
  SELECT user_id, url, ts, length(url) AS len
  FROM STREAM clicks WATERMARK ts DELAY OF INTERVAL 30 SECONDS
  WHERE url LIKE 'http%' AND user_id > 0
),
users AS (
  SELECT a AS id, upper(d) AS name FROM u WHERE d IS NOT NULL
)
SELECT window.start AS minute,
       users.name,
       count(*) AS clicks,
       sum(recent.len) AS total_len,
       max(recent.len) - min(recent.len) AS spread,
       approx_count_distinct(recent.url) AS urls
FROM recent
JOIN users ON recent.user_id = users.id
WHERE users.name <> 'BOT'
GROUP BY window(recent.ts, '1 minute', '30 seconds'), users.name
HAVING count(*) > 2 AND sum(recent.len) < 100000
ORDER BY clicks DESC
LIMIT 100`

// BenchmarkPlanQuery measures parse + analyze + optimize + CheckStreaming
// of benchQuery.
func BenchmarkPlanQuery(b *testing.B) {
	cat := testCatalog(b)
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		st, err := sql.Parse(benchQuery)
		if err != nil {
			b.Fatal(err)
		}
		n, err := plan.AnalyzeQuery(st.(*sql.Query), cat)
		if err != nil {
			b.Fatal(err)
		}
		if _, err := plan.Optimize(n); err != nil {
			b.Fatal(err)
		}
		_ = plan.CheckStreaming(n, plan.Complete)
	}
}

// BenchmarkAnalyzeQuery is BenchmarkPlanQuery without parsing and
// optimizing.
func BenchmarkAnalyzeQuery(b *testing.B) {
	cat := testCatalog(b)
	st, err := sql.Parse(benchQuery)
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		if _, err := plan.AnalyzeQuery(st.(*sql.Query), cat); err != nil {
			b.Fatal(err)
		}
	}
}

// benchBatchQuery is a 20-line batch query over the static tables.
const benchBatchQuery = `WITH big AS (
  SELECT a, b, c * 2 AS c2, upper(b) AS ub
  FROM t
  WHERE a > 10 AND b LIKE 'x%' AND c IS NOT NULL
),
names AS (
  SELECT a AS id, d FROM u WHERE d <> ''
)
SELECT big.ub,
       names.d,
       count(*) AS n,
       sum(big.c2) AS total,
       avg(big.c2) AS mean,
       max(big.a) - min(big.a) AS spread
FROM big
LEFT JOIN names ON big.a = names.id
WHERE coalesce(names.d, 'none') <> 'skip'
GROUP BY big.ub, names.d
HAVING count(*) > 1
ORDER BY n DESC, big.ub
LIMIT 50`

// BenchmarkPlanAndBuildBatch measures parse + analyze + optimize +
// physical planning (building the vector operator tree, which binds every
// expression) of benchBatchQuery over empty tables.
func BenchmarkPlanAndBuildBatch(b *testing.B) {
	cat := testCatalog(b)
	ctx := context.Background()
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		st, err := sql.Parse(benchBatchQuery)
		if err != nil {
			b.Fatal(err)
		}
		n, err := plan.AnalyzeQuery(st.(*sql.Query), cat)
		if err != nil {
			b.Fatal(err)
		}
		if n, err = plan.Optimize(n); err != nil {
			b.Fatal(err)
		}
		op, err := plan.Execute(ctx, memory.DefaultAllocator, n, nil)
		if err != nil {
			b.Fatal(err)
		}
		op.Close()
	}
}
