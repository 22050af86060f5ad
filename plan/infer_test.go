package plan_test

import (
	"testing"

	"github.com/arrowstream/arrowstream/plan"
)

// TestInferFilters: filters inferred through join keys land on the inputs
// whose unmatched rows the join drops, and only there.
func TestInferFilters(t *testing.T) {
	runRule(t, mustRule(plan.Optimize), []ruleCase{
		{"inner-where-right", "SELECT * FROM t JOIN u ON t.a = u.a WHERE u.a % 2 = 0", `
Join Inner, (a#0 = a#3)
:- Scan t [a, b, c] PushedFilters: [(a IS NOT NULL), ((a % 2) = 0)]
+- Scan u [a, d] PushedFilters: [((a % 2) = 0), (a IS NOT NULL)]`},
		{"inner-cond-left", "SELECT * FROM t JOIN u ON t.a = u.a AND t.a > 5", `
Join Inner, (a#0 = a#3)
:- Scan t [a, b, c] PushedFilters: [(a > 5), (a IS NOT NULL)]
+- Scan u [a, d] PushedFilters: [(a IS NOT NULL), (a > 5)]`},
		{"left-outer-onto-right", "SELECT * FROM t LEFT JOIN u ON t.a = u.a WHERE t.a > 5", `
Join LeftOuter, (a#0 = a#3)
:- Scan t [a, b, c] PushedFilters: [(a > 5)]
+- Scan u [a, d] PushedFilters: [(a IS NOT NULL), (a > 5)]`},
		{"left-outer-not-onto-left", "SELECT * FROM t LEFT JOIN (SELECT * FROM u WHERE a > 5) v ON t.a = v.a", `
Join LeftOuter, (a#0 = a#3)
:- Scan t [a, b, c]
+- Scan u [a, d] PushedFilters: [(a > 5), (a IS NOT NULL)]`},
		{"right-outer-onto-left", "SELECT * FROM t RIGHT JOIN u ON t.a = u.a AND u.a IN (1, 2)", `
Join RightOuter, ((a#0 = a#3) AND (a#3 IN (1, 2)))
:- Scan t [a, b, c] PushedFilters: [(a IS NOT NULL), (a IN (1, 2))]
+- Scan u [a, d]`},
		{"full-outer-none", "SELECT * FROM (SELECT * FROM t WHERE a > 5) x FULL JOIN u ON x.a = u.a", `
Join FullOuter, (a#0 = a#3)
:- Scan t [a, b, c] PushedFilters: [(a > 5)]
+- Scan u [a, d]`},
		{"anti-onto-right-only", "SELECT * FROM t LEFT ANTI JOIN u ON t.a = u.a AND t.a > 5", `
Join LeftAnti, ((a#0 = a#3) AND (a#0 > 5))
:- Scan t [a, b, c]
+- Scan u [a] PushedFilters: [(a IS NOT NULL), (a > 5)]`},
		{"semi-both", "SELECT * FROM t LEFT SEMI JOIN (SELECT * FROM u WHERE a BETWEEN 1 AND 9) v ON t.a = v.a", `
Join LeftSemi, (a#0 = a#3)
:- Scan t [a, b, c] PushedFilters: [(a IS NOT NULL), (a BETWEEN 1 AND 9)]
+- Scan u [a] PushedFilters: [(a BETWEEN 1 AND 9), (a IS NOT NULL)]`},
		{"null-safe-no-isnotnull", "SELECT * FROM t JOIN u ON t.a <=> u.a WHERE u.a < 3", `
Join Inner, (a#0 <=> a#3)
:- Scan t [a, b, c] PushedFilters: [(a < 3)]
+- Scan u [a, d] PushedFilters: [(a < 3)]`},
		{"floats-not-transferred", "SELECT * FROM t JOIN t AS t2 ON t.c = t2.c WHERE t2.c > 0", `
Join Inner, (c#2 = c#5)
:- Scan t [a, b, c]
+- Scan t [a, b, c] PushedFilters: [(c > 0)]`},
		{"current-timestamp-not-transferred", "SELECT * FROM STREAM clicks c1 JOIN STREAM clicks c2 ON c1.ts = c2.ts WHERE c2.ts > current_timestamp()", `
Filter (ts > current_timestamp())
+- Join Inner, (ts#2 = ts#5)
   :- Filter (ts IS NOT NULL)
   :  +- StreamingScan clicks [user_id, url, ts]
   +- Filter (ts IS NOT NULL)
      +- StreamingScan clicks [user_id, url, ts]`},
		{"may-raise-not-transferred", "SELECT * FROM t JOIN u ON t.a = u.a WHERE u.a + 1 > 5 AND u.a % 0 = 1", `
Join Inner, (a#0 = a#3)
:- Scan t [a, b, c] PushedFilters: [(a IS NOT NULL)]
+- Scan u [a, d] PushedFilters: [((a + 1) > 5), ((a % 0) = 1), (a IS NOT NULL)]`},
		{"through-aggregate", "SELECT * FROM (SELECT a, count(*) AS n FROM t GROUP BY a) x JOIN u ON x.a = u.a WHERE u.a > 3", `
Join Inner, (a#0 = a#2)
:- Aggregate [a], [count(*) AS n]
:  +- Scan t [a] PushedFilters: [(a IS NOT NULL), (a > 3)]
+- Scan u [a, d] PushedFilters: [(a > 3), (a IS NOT NULL)]`},
		{"chain", "SELECT * FROM t JOIN u ON t.a = u.a JOIN t AS t3 ON u.a = t3.a WHERE t3.a = 7", `
Join Inner, (a#3 = a#5)
:- Join Inner, (a#0 = a#3)
:  :- Scan t [a, b, c] PushedFilters: [(a IS NOT NULL), (a = 7)]
:  +- Scan u [a, d] PushedFilters: [(a = 7), (a IS NOT NULL)]
+- Scan t [a, b, c] PushedFilters: [(a = 7), (a IS NOT NULL)]`},
		// Nexmark q20's shape: a filter on a column of one side that is not
		// a join key says nothing about the other side's rows. A row of t
		// whose key has only rows with d <> 10 in u so far must be kept: a
		// later row of u with that key may match it (nothing declares u.a
		// unique or u's rows for a key complete).
		{"non-key-not-transferred", "SELECT * FROM t JOIN u ON t.a = u.a WHERE u.d = 10", `
Join Inner, (a#0 = a#3)
:- Scan t [a, b, c] PushedFilters: [(a IS NOT NULL)]
+- Scan u [a, d] PushedFilters: [(CAST(d AS BIGINT) = 10L), (a IS NOT NULL)]`},
		{"streaming", "SELECT * FROM STREAM clicks c1 JOIN STREAM clicks c2 ON c1.user_id = c2.user_id WHERE c2.user_id % 2 = 0", `
Join Inner, (user_id#0 = user_id#3)
:- Filter ((user_id IS NOT NULL) AND ((user_id % 2) = 0))
:  +- StreamingScan clicks [user_id, url, ts]
+- Filter (((user_id % 2) = 0) AND (user_id IS NOT NULL))
   +- StreamingScan clicks [user_id, url, ts]`},
	})
}
