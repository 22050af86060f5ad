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

// TestSubqueriesAgainstBruteForce runs correlated and uncorrelated
// subqueries over random small tables with NULLs and compares every row
// with a direct evaluation of Spark's semantics (three-valued IN, EXISTS,
// correlated count and max, a semi join with a non-equality correlation).
func TestSubqueriesAgainstBruteForce(t *testing.T) {
	rng := rand.New(rand.NewSource(20))
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
  v IN (SELECT w FROM t2 WHERE t2.k = t1.k),
  v NOT IN (SELECT w FROM t2),
  EXISTS (SELECT 1 FROM t2 WHERE t2.k = t1.k),
  (SELECT count(*) FROM t2 WHERE t2.k = t1.k),
  (SELECT max(w) FROM t2 WHERE t2.k = t1.k)
FROM t1`
		var want1 []string
		for _, r := range t1 {
			var same []pair
			for _, s := range t2 {
				if r.a != nil && s.a != nil && *r.a == *s.a {
					same = append(same, s)
				}
			}
			var mx *int
			for _, s := range same {
				if s.b != nil && (mx == nil || *s.b > *mx) {
					mx = s.b
				}
			}
			want1 = append(want1, strings.Join([]string{cell(r.a), cell(r.b),
				tv(inSet(r.b, same)), tv(not(inSet(r.b, t2))), tv(boolP(len(same) > 0)),
				fmt.Sprint(len(same)), cell(mx)}, " | "))
		}
		q2 := with + "SELECT k, v FROM t1 WHERE EXISTS (SELECT 1 FROM t2 WHERE t2.k = t1.k AND t2.w > t1.v)"
		var want2 []string
		for _, r := range t1 {
			for _, s := range t2 {
				if r.a != nil && s.a != nil && *r.a == *s.a && r.b != nil && s.b != nil && *s.b > *r.b {
					want2 = append(want2, cell(r.a)+" | "+cell(r.b))
					break
				}
			}
		}
		for _, c := range []struct {
			q    string
			want []string
		}{{q1, want1}, {q2, want2}} {
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

type pair struct{ a, b *int }

func randomPairs(rng *rand.Rand, n int) []pair {
	val := func() *int {
		if rng.Intn(4) == 0 {
			return nil
		}
		v := rng.Intn(4)
		return &v
	}
	out := make([]pair, n)
	for i := range out {
		out[i] = pair{val(), val()}
	}
	return out
}

func valuesOf(rows []pair) string {
	parts := make([]string, len(rows))
	sqlv := func(p *int) string {
		if p == nil {
			return "CAST(NULL AS INT)"
		}
		return fmt.Sprint(*p)
	}
	for i, r := range rows {
		parts[i] = "(" + sqlv(r.a) + ", " + sqlv(r.b) + ")"
	}
	return "VALUES " + strings.Join(parts, ", ")
}

func cell(p *int) string {
	if p == nil {
		return "NULL"
	}
	return fmt.Sprint(*p)
}

// inSet is v IN (the b values of rows) in three-valued logic (nil: NULL).
func inSet(v *int, rows []pair) *bool {
	if len(rows) == 0 {
		return boolP(false)
	}
	if v == nil {
		return nil
	}
	sawNull := false
	for _, r := range rows {
		if r.b == nil {
			sawNull = true
		} else if *r.b == *v {
			return boolP(true)
		}
	}
	if sawNull {
		return nil
	}
	return boolP(false)
}

func not(b *bool) *bool {
	if b == nil {
		return nil
	}
	return boolP(!*b)
}

func boolP(b bool) *bool { return &b }

func tv(b *bool) string {
	if b == nil {
		return "NULL"
	}
	return fmt.Sprint(*b)
}
