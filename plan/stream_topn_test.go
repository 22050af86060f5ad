package plan_test

import (
	"slices"
	"testing"

	"github.com/arrowstream/arrowstream/plan"
)

func TestTopNKeyColumns(t *testing.T) {
	cat := testCatalog(t)
	for _, c := range []struct {
		sql  string
		want []string
	}{
		{"SELECT user_id, url FROM STREAM clicks QUALIFY row_number() OVER (PARTITION BY url ORDER BY ts DESC) <= 3", nil},
		{"SELECT user_id, url, row_number() OVER (PARTITION BY url ORDER BY ts DESC) AS r FROM STREAM clicks QUALIFY r <= 3", []string{"url", "r"}},
		{"SELECT user_id, url FROM STREAM clicks QUALIFY row_number() OVER (PARTITION BY url ORDER BY ts DESC) = 1", []string{"url"}},
		{"SELECT rn, u FROM (SELECT url AS u, ts, row_number() OVER (PARTITION BY url ORDER BY ts) AS rn FROM STREAM clicks) WHERE rn <= 2", []string{"u", "rn"}},
		{"SELECT u FROM (SELECT url AS u, ts, row_number() OVER (PARTITION BY url ORDER BY ts) AS rn FROM STREAM clicks) WHERE rn = 1", []string{"u"}},
		{"SELECT ts FROM (SELECT url AS u, ts, row_number() OVER (PARTITION BY url ORDER BY ts) AS rn FROM STREAM clicks) WHERE rn = 1", nil},
		{"SELECT url FROM STREAM clicks", nil},
	} {
		n := analyzeT(t, cat, c.sql)
		if got := plan.TopNKeyColumns(n); !slices.Equal(got, c.want) {
			t.Errorf("%s: keys %v, want %v", c.sql, got, c.want)
		}
	}
}
