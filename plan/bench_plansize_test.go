package plan_test

import (
	"context"
	"fmt"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/apache/arrow/go/v17/arrow/memory"

	"github.com/arrowstream/arrowstream/plan"
	"github.com/arrowstream/arrowstream/sql"
)

// onePlusOne is SELECT 1+1+…+1 with n terms.
func onePlusOne(n int) string {
	return "SELECT " + strings.TrimSuffix(strings.Repeat("1+", n), "+")
}

// wideCase is a CASE over column a with n WHEN branches.
func wideCase(n int) string {
	var b strings.Builder
	b.WriteString("SELECT CASE")
	for i := range n {
		fmt.Fprintf(&b, " WHEN a = %d THEN %d", i, i)
	}
	b.WriteString(" ELSE -1 END AS c FROM t")
	return b.String()
}

// columnChain is SELECT a+a+…+a FROM t with n terms: nothing folds.
func columnChain(n int) string {
	return "SELECT " + strings.TrimSuffix(strings.Repeat("a+", n), "+") + " FROM t"
}

// andChain is SELECT a > 0 AND a > 1 AND … FROM t with n terms.
func andChain(n int) string {
	var b strings.Builder
	b.WriteString("SELECT ")
	for i := range n {
		if i > 0 {
			b.WriteString(" AND ")
		}
		fmt.Fprintf(&b, "a > %d", i)
	}
	b.WriteString(" FROM t")
	return b.String()
}

// concatChain is SELECT b || 'x' || b || … FROM t with n terms.
func concatChain(n int) string {
	return "SELECT " + strings.TrimSuffix(strings.Repeat("b || 'x' || ", n/2), " || ") + " FROM t"
}

// mulChain is SELECT 1*1*…*1 with n terms (folded to one literal).
func mulChain(n int) string {
	return "SELECT " + strings.TrimSuffix(strings.Repeat("1*", n), "*")
}

// planFully parses, analyzes, optimizes and builds the operators of text
// (not running them), as a Flight SQL statement is planned.
func planFully(ctx context.Context, tb testing.TB, cat plan.Catalog, text string) {
	st, err := sql.ParseWith(text, sql.Limits{MaxStatementBytes: -1, MaxExprNodes: -1})
	if err != nil {
		tb.Fatal(err)
	}
	n, err := plan.AnalyzeQueryContext(ctx, st.(*sql.Query), cat)
	if err != nil {
		tb.Fatal(err)
	}
	if n, err = plan.OptimizeContext(ctx, n); err != nil {
		tb.Fatal(err)
	}
	op, err := plan.Execute(ctx, memory.DefaultAllocator, n, nil)
	if err != nil {
		tb.Fatal(err)
	}
	op.Close()
}

// processCPU is the CPU time (user + system) the process has used.
func processCPU() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// BenchmarkPlanExprSize plans statements of 1K, 10K and 100K terms; the
// ns/term metric stays flat when planning is linear in the expression
// size (the goal: 10K terms of 1+1+… in under 50 ms on an idle core).
func BenchmarkPlanExprSize(b *testing.B) {
	cat := testCatalog(b)
	shapes := []struct {
		name string
		gen  func(int) string
		ns   []int
	}{
		{"one_plus_one", onePlusOne, []int{1000, 10000, 100000}},
		{"column_chain", columnChain, []int{1000, 10000, 100000}},
		{"and_chain", andChain, []int{1000, 10000, 100000}},
		{"concat_chain", concatChain, []int{1000, 10000, 100000}},
		{"mul_chain", mulChain, []int{1000, 10000, 100000}},
		{"case_branches", wideCase, []int{1000, 10000, 50000}},
	}
	for _, sh := range shapes {
		for _, n := range sh.ns {
			text := sh.gen(n)
			b.Run(fmt.Sprintf("%s/terms=%d", sh.name, n), func(b *testing.B) {
				cpu0 := processCPU()
				for range b.N {
					planFully(context.Background(), b, cat, text)
				}
				cpu := processCPU() - cpu0
				b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(n), "ns/term")
				// CPU time is what "on an idle core" means on a loaded machine
				// (it includes the garbage collector's threads).
				b.ReportMetric(float64(cpu.Milliseconds())/float64(b.N), "cpu-ms/op")
			})
		}
	}
}
