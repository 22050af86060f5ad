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

// TestLateralAgainstBruteForce runs LATERAL subqueries over random small
// tables with NULLs and duplicate rows and compares every row with a
// direct evaluation of Spark's LateralJoin semantics (the subquery
// evaluated once per left row): a global aggregate (one row per left row,
// count 0 over nothing), LEFT JOIN LATERAL with a non-equality
// correlation and an ON condition, a NULL-safe correlation with an outer
// value in the select list, and a grouped aggregate.
func TestLateralAgainstBruteForce(t *testing.T) {
	rng := rand.New(rand.NewSource(21))
	mem := poisonmem.New()
	defer mem.AssertSize(t, 0)
	cat := plan.NewMemoryCatalog()
	eq := func(x, y *int) bool { return x != nil && y != nil && *x == *y }
	nullSafe := func(x, y *int) bool { return x == nil && y == nil || eq(x, y) }
	add := func(x, y *int) *int {
		if x == nil || y == nil {
			return nil
		}
		s := *x + *y
		return &s
	}
	for iter := 0; iter < 40; iter++ {
		t1 := randomPairs(rng, 1+rng.Intn(6))
		if len(t1) > 1 && rng.Intn(2) == 0 {
			t1 = append(t1, t1[0]) // a duplicate left row
		}
		t2 := randomPairs(rng, rng.Intn(6))
		with := "WITH t1(k, v) AS (" + valuesOf(t1) + "), t2(k, w) AS (" + valuesOf(t2) + ") "
		if len(t2) == 0 {
			with = "WITH t1(k, v) AS (" + valuesOf(t1) + "), t2(k, w) AS (SELECT 1, 1 WHERE false) "
		}
		type tc struct {
			q    string
			want []string
		}
		var cases []tc

		q := with + "SELECT t1.k, t1.v, s.cnt, s.mx FROM t1, LATERAL (SELECT count(*) AS cnt, max(w + t1.v) AS mx FROM t2 WHERE t2.k = t1.k) s"
		var want []string
		for _, r := range t1 {
			n := 0
			var mx *int
			for _, s := range t2 {
				if eq(r.a, s.a) {
					n++
					if x := add(s.b, r.b); x != nil && (mx == nil || *x > *mx) {
						mx = x
					}
				}
			}
			want = append(want, strings.Join([]string{cell(r.a), cell(r.b), fmt.Sprint(n), cell(mx)}, " | "))
		}
		cases = append(cases, tc{q, want})

		q = with + "SELECT t1.k, t1.v, s.w FROM t1 LEFT JOIN LATERAL (SELECT w FROM t2 WHERE t2.w > t1.v) s ON s.w <> t1.k"
		want = nil
		for _, r := range t1 {
			hit := false
			for _, s := range t2 {
				if s.b != nil && r.b != nil && *s.b > *r.b && r.a != nil && *s.b != *r.a {
					hit = true
					want = append(want, strings.Join([]string{cell(r.a), cell(r.b), cell(s.b)}, " | "))
				}
			}
			if !hit {
				want = append(want, strings.Join([]string{cell(r.a), cell(r.b), "NULL"}, " | "))
			}
		}
		cases = append(cases, tc{q, want})

		q = with + "SELECT t1.k, s.x FROM t1 CROSS JOIN LATERAL (SELECT t1.k + w AS x FROM t2 WHERE t2.k <=> t1.k) s"
		want = nil
		for _, r := range t1 {
			for _, s := range t2 {
				if nullSafe(r.a, s.a) {
					want = append(want, cell(r.a)+" | "+cell(add(r.a, s.b)))
				}
			}
		}
		cases = append(cases, tc{q, want})

		q = with + "SELECT t1.k, s.w, s.n FROM t1, LATERAL (SELECT w, count(*) AS n FROM t2 WHERE t2.k = t1.k GROUP BY w) s"
		want = nil
		for _, r := range t1 {
			groups := map[string]int{}
			for _, s := range t2 {
				if eq(r.a, s.a) {
					groups[cell(s.b)]++
				}
			}
			for w, n := range groups {
				want = append(want, strings.Join([]string{cell(r.a), w, fmt.Sprint(n)}, " | "))
			}
		}
		cases = append(cases, tc{q, want})

		for _, c := range cases {
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
