package plan_test

import (
	"context"
	"errors"
	"math/rand/v2"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/arrowstream/arrowstream/plan"
	"github.com/arrowstream/arrowstream/sql"
)

func parseQuery(t testing.TB, text string) *sql.Query {
	t.Helper()
	st, err := sql.ParseWith(text, sql.Limits{MaxStatementBytes: -1, MaxExprNodes: -1})
	if err != nil {
		t.Fatal(err)
	}
	return st.(*sql.Query)
}

// TestAnalyzeHonoursContext: a cancelled or expired context stops the
// analysis of a large statement with the context's error.
func TestAnalyzeHonoursContext(t *testing.T) {
	cat := testCatalog(t)
	q := parseQuery(t, columnChain(5000))
	for _, tc := range []struct {
		name string
		ctx  func() (context.Context, context.CancelFunc)
		want error
	}{
		{"cancelled", func() (context.Context, context.CancelFunc) {
			ctx, cancel := context.WithCancel(context.Background())
			cancel()
			return ctx, cancel
		}, context.Canceled},
		{"deadline", func() (context.Context, context.CancelFunc) {
			return context.WithDeadline(context.Background(), time.Unix(0, 0))
		}, context.DeadlineExceeded},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx, cancel := tc.ctx()
			defer cancel()
			_, err := plan.AnalyzeContext(ctx, q, cat, plan.AnalyzeOptions{})
			if !errors.Is(err, tc.want) {
				t.Fatalf("AnalyzeContext: %v, want %v", err, tc.want)
			}
			if _, err := plan.OptimizeContext(ctx, nil); !errors.Is(err, tc.want) {
				t.Fatalf("OptimizeContext: %v, want %v", err, tc.want)
			}
		})
	}
	// A small statement under a cancelled context is not refused: the
	// context is checked every few hundred expressions.
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := plan.AnalyzeContext(ctx, parseQuery(t, "SELECT a FROM t"), cat, plan.AnalyzeOptions{}); err != nil {
		t.Fatal(err)
	}
}

// TestAnalyzePlanSizeLimit: a statement that resolves more expressions
// than MaxPlanExprs fails with ErrPlanTooLarge naming the limit; one at
// the limit passes.
func TestAnalyzePlanSizeLimit(t *testing.T) {
	cat := testCatalog(t)
	q := parseQuery(t, "SELECT a + 1, b FROM t WHERE a > 2")
	// Resolved expressions: a + 1, a, 1, b, a > 2, a, 2.
	if _, err := plan.AnalyzeContext(context.Background(), q, cat, plan.AnalyzeOptions{MaxPlanExprs: 7}); err != nil {
		t.Fatalf("at the limit: %v", err)
	}
	_, err := plan.AnalyzeContext(context.Background(), q, cat, plan.AnalyzeOptions{MaxPlanExprs: 6})
	if !errors.Is(err, plan.ErrPlanTooLarge) || !strings.Contains(err.Error(), "MaxPlanExprs") {
		t.Fatalf("over the limit: %v", err)
	}
	// CTEs are resolved once per reference, so nesting doubles the work;
	// the default limit stops the doubling.
	var b strings.Builder
	b.WriteString("WITH c0 AS (SELECT a FROM t)")
	for i := 1; i <= 24; i++ {
		p := "c" + itoa(i-1)
		b.WriteString(", c" + itoa(i) + " AS (SELECT x.a FROM " + p + " x JOIN " + p + " y ON x.a = y.a)")
	}
	b.WriteString(" SELECT * FROM c24")
	_, err = plan.AnalyzeContext(context.Background(), parseQuery(t, b.String()), cat, plan.AnalyzeOptions{})
	if err != nil && !errors.Is(err, plan.ErrPlanTooLarge) {
		t.Fatalf("doubling CTEs: %v", err)
	}
}

func itoa(i int) string { return strconv.Itoa(i) }

// TestFoldingKeepsTypes checks the analyzer's typing cache against the
// uncached path (a brute-force model): chains typed through newCall give
// the same plan text and types as the same expressions analyzed in small
// pieces.
func TestFoldingKeepsTypes(t *testing.T) {
	cat := testCatalog(t)
	for _, text := range []string{
		"SELECT 1 + 2 * 3 - 4 / 2, 1 / 0 + 1, a + 1 + 2, CAST(1 AS BIGINT) + 1 FROM t",
		"SELECT (1 + 1) + (a + 1), 2147483647 + 1 FROM t",
		"SELECT CASE WHEN a = 1 THEN 1 + 1 ELSE a END, coalesce(NULL, 1 + 1) FROM t",
	} {
		n, err := plan.AnalyzeSQL(text, cat)
		if err != nil {
			t.Fatalf("%s: %v", text, err)
		}
		folded, err := plan.Optimize(n)
		if err != nil {
			t.Fatalf("%s: optimize: %v", text, err)
		}
		if !n.Schema().Equal(folded.Schema()) {
			t.Fatalf("%s: folding changed the schema:\n%s\n%s", text, n.Schema(), folded.Schema())
		}
	}
}

// BenchmarkCancelPlanning measures the time from cancelling the context
// to AnalyzeContext returning, for a 10K-term expression, at random
// points of the analysis. Each iteration is one trial; -benchtime=20x.
func BenchmarkCancelPlanning(b *testing.B) {
	cat := testCatalog(b)
	q := parseQuery(b, columnChain(10_000))
	var lat []time.Duration
	for range b.N {
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan time.Time, 1)
		go func() {
			_, _ = plan.AnalyzeContext(ctx, q, cat, plan.AnalyzeOptions{})
			done <- time.Now()
		}()
		time.Sleep(time.Duration(rand.IntN(20_000)) * time.Microsecond)
		start := time.Now()
		cancel()
		lat = append(lat, (<-done).Sub(start))
	}
	slices.Sort(lat)
	q50, q99 := lat[len(lat)/2], lat[min(len(lat)*99/100, len(lat)-1)]
	b.ReportMetric(float64(q50.Microseconds())/1000, "p50-ms")
	b.ReportMetric(float64(q99.Microseconds())/1000, "p99-ms")
	b.ReportMetric(0, "ns/op")
}
