package sql

import "testing"

// benchQuery is a 20-line streaming query in the style of docs/sql.md.
const benchQuery = `WITH clicks_by_user AS (
  SELECT user_id, url, ts, CAST(ts AS BIGINT) AS secs
  FROM STREAM clicks WATERMARK ts DELAY OF INTERVAL 30 SECONDS AS c
  WHERE url IS NOT NULL AND url NOT LIKE '%/health%'
)
SELECT window.start AS minute,
       u.country,
       count(*) AS clicks,
       count(DISTINCT cu.user_id) AS users,
       sum(CASE WHEN cu.url LIKE '/buy%' THEN 1 ELSE 0 END) AS purchases,
       avg(cu.secs % 60) AS avg_second,
       max(cu.ts) - min(cu.ts) AS spread
FROM clicks_by_user AS cu
JOIN users VERSION AS OF 12 AS u ON cu.user_id = u.id
LEFT OUTER JOIN (SELECT id, tier FROM tiers WHERE tier IN ('gold', 'silver')) AS t USING (id)
WHERE cu.ts BETWEEN TIMESTAMP '2026-01-01 00:00:00' AND current_timestamp() - INTERVAL 1 HOUR
  AND (u.country = 'NZ' OR u.country = 'AU' OR t.tier IS NOT NULL)
GROUP BY window(cu.ts, '1 minute', '30 seconds'), u.country
HAVING count(*) > 10
ORDER BY minute DESC, clicks DESC NULLS LAST LIMIT 100`

func BenchmarkParse(b *testing.B) {
	b.SetBytes(int64(len(benchQuery)))
	b.ReportAllocs()
	for b.Loop() {
		if _, err := Parse(benchQuery); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkFormat(b *testing.B) {
	s, err := Parse(benchQuery)
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		_ = Format(s)
	}
}

func TestBenchQuery(t *testing.T) {
	s, err := Parse(benchQuery)
	if err != nil {
		t.Fatal(err)
	}
	checkPositions(t, benchQuery, s)
	checkRoundTrip(t, benchQuery, s, Parse)
}
