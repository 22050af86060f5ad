package plan_test

import (
	"context"
	"fmt"
	"math/rand"
	"sort"
	"strings"
	"testing"

	"github.com/arrowstream/arrowstream/internal/testutil/poisonmem"
	"github.com/arrowstream/arrowstream/plan"
)

// TestDomainSubqueriesAgainstNestedLoop runs the correlated forms that
// are decorrelated with a domain join (outer references in a scalar
// subquery's select list and under a join, non-equality EXISTS and IN
// used as values, a correlated side of a join inside EXISTS) and
// subqueries in a join's ON condition over random small tables with
// NULLs, and compares every row with the naive evaluation: a nested loop
// over the outer rows that evaluates each subquery for that row.
func TestDomainSubqueriesAgainstNestedLoop(t *testing.T) {
	rng := rand.New(rand.NewSource(2020))
	mem := poisonmem.New()
	defer mem.AssertSize(t, 0)
	cat := plan.NewMemoryCatalog()
	for iter := 0; iter < 40; iter++ {
		t1 := randomPairs(rng, 1+rng.Intn(6))
		t2 := randomPairs(rng, rng.Intn(6))
		with := "WITH t1(k, v) AS (" + valuesOf(t1) + "), t2(k, w) AS (" + valuesOf(t2) + ") "
		if len(t2) == 0 {
			with = "WITH t1(k, v) AS (" + valuesOf(t1) + "), t2(k, w) AS (SELECT 1, 1 WHERE false) "
		}
		q1 := with + `SELECT k, v,
  (SELECT max(w) + t1.v FROM t2 WHERE t2.k = t1.k),
  (SELECT count(*) FROM t2 JOIN (SELECT t1.v AS x) ON t2.w = x),
  (SELECT t1.v + 1),
  (SELECT t1.k WHERE t1.v = 1),
  EXISTS (SELECT 1 FROM t2 WHERE t2.w > t1.v),
  v IN (SELECT w FROM t2 WHERE t2.k < t1.k)
FROM t1`
		var want1 []string
		for _, r := range t1 {
			var same, below []pair
			gt, joined := false, 0
			for _, s := range t2 {
				if eqP(r.a, s.a) {
					same = append(same, s)
				}
				if r.a != nil && s.a != nil && *s.a < *r.a {
					below = append(below, s)
				}
				if r.b != nil && s.b != nil && *s.b > *r.b {
					gt = true
				}
				if eqP(s.b, r.b) {
					joined++
				}
			}
			var mx *int
			for _, s := range same {
				if s.b != nil && (mx == nil || *s.b > *mx) {
					mx = s.b
				}
			}
			var onlyIfOne *int
			if r.b != nil && *r.b == 1 {
				onlyIfOne = r.a
			}
			want1 = append(want1, strings.Join([]string{cell(r.a), cell(r.b),
				cell(addP(mx, r.b)), fmt.Sprint(joined), cell(addP(r.b, intP(1))), cell(onlyIfOne),
				tv(boolP(gt)), tv(inSet(r.b, below))}, " | "))
		}
		// EXISTS over a join whose right side is correlated: some t2 row
		// of the same key with a non-NULL w (it joins itself on w).
		corrJoin := "(SELECT 1 FROM t2 a JOIN (SELECT * FROM t2 WHERE t2.k = t1.k) b ON a.w = b.w)"
		q2 := with + "SELECT k, v FROM t1 WHERE EXISTS " + corrJoin
		q3 := with + "SELECT k, v FROM t1 WHERE NOT EXISTS " + corrJoin
		var want2, want3 []string
		for _, r := range t1 {
			found := false
			for _, s := range t2 {
				found = found || eqP(r.a, s.a) && s.b != nil
			}
			if found {
				want2 = append(want2, cell(r.a)+" | "+cell(r.b))
			} else {
				want3 = append(want3, cell(r.a)+" | "+cell(r.b))
			}
		}
		// Subqueries in ON reading either side of a left outer join.
		q4 := with + `SELECT t1.k, t1.v, x.k, x.w FROM t1 LEFT JOIN t2 x
  ON t1.k = x.k AND t1.v IN (SELECT w FROM t2) AND x.w NOT IN (SELECT v FROM t1)`
		var want4 []string
		for _, r := range t1 {
			matched := false
			for _, x := range t2 {
				in := inSet(r.b, t2)
				notIn := not(inSet(x.b, t1))
				if eqP(r.a, x.a) && in != nil && *in && notIn != nil && *notIn {
					matched = true
					want4 = append(want4, strings.Join([]string{cell(r.a), cell(r.b), cell(x.a), cell(x.b)}, " | "))
				}
			}
			if !matched {
				want4 = append(want4, strings.Join([]string{cell(r.a), cell(r.b), "NULL", "NULL"}, " | "))
			}
		}
		for _, c := range []struct {
			q    string
			want []string
		}{{q1, want1}, {q2, want2}, {q3, want3}, {q4, want4}} {
			for _, opt := range []bool{false, true} {
				got, err := runSLTQuery(context.Background(), mem, cat, c.q, nil, opt)
				if err != nil {
					t.Fatalf("%s\n(optimized %v): %v", c.q, opt, err)
				}
				sort.Strings(got)
				want := append([]string(nil), c.want...)
				sort.Strings(want)
				if strings.Join(got, "\n") != strings.Join(want, "\n") {
					t.Fatalf("%s\n(optimized %v)\ngot:\n%s\nwant:\n%s", c.q, opt, strings.Join(got, "\n"), strings.Join(want, "\n"))
				}
			}
		}
	}
}

func eqP(a, b *int) bool { return a != nil && b != nil && *a == *b }

func intP(v int) *int { return &v }

func addP(a, b *int) *int {
	if a == nil || b == nil {
		return nil
	}
	return intP(*a + *b)
}
