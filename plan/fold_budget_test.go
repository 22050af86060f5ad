package plan_test

import (
	"context"
	"fmt"
	"runtime"
	"strings"
	"testing"

	"github.com/apache/arrow/go/v17/arrow/memory"

	"github.com/arrowstream/arrowstream/plan"
	"github.com/arrowstream/arrowstream/vector"
)

// TestHugeConstantsNotFolded: a constant whose value is hundreds of MB
// (a 5M-element array, sorted or not) is not evaluated while
// the statement is planned, where no query's memory limit or
// cancellation reaches: planning allocates a few MB at most and leaves
// the call for run time; the plan still runs and gives the value. Small
// constants still fold.
func TestHugeConstantsNotFolded(t *testing.T) {
	cat := testCatalog(t)
	for _, tc := range []struct{ sql, want string }{
		{"SELECT element_at(sort_array(sequence(5000000, 1, -1)), 1) AS v", "1"},
		{"SELECT size(sequence(1, 5000000)) AS v", "5000000"},
	} {
		var before, after runtime.MemStats
		runtime.GC()
		runtime.ReadMemStats(&before)
		n, err := plan.AnalyzeSQL(tc.sql, cat)
		if err == nil {
			n, err = plan.Optimize(n)
		}
		runtime.ReadMemStats(&after)
		if err != nil {
			t.Fatalf("%s: %v", tc.sql, err)
		}
		if got := after.TotalAlloc - before.TotalAlloc; got > 20<<20 {
			t.Errorf("%s: planning allocated %d MB: the constant was evaluated", tc.sql, got>>20)
		}
		// Run time gives the value.
		mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
		op, err := plan.Execute(context.Background(), mem, n, nil)
		if err != nil {
			t.Fatal(err)
		}
		rec, err := op.Next(context.Background())
		if err != nil {
			t.Fatalf("%s: %v", tc.sql, err)
		}
		if got := vector.ValueAt(rec.Column(0), 0); fmt.Sprint(got) != tc.want {
			t.Errorf("%s = %v, want %s", tc.sql, got, tc.want)
		}
		rec.Release()
		op.Close()
		mem.AssertSize(t, 0)
	}
	// A small constant folds to a literal.
	n, err := plan.AnalyzeSQL("SELECT element_at(sort_array(sequence(10, 1, -1)), 1) + a AS v FROM t", cat)
	if err == nil {
		n, err = plan.Optimize(n)
	}
	if err != nil {
		t.Fatal(err)
	}
	if s := plan.Explain(n); strings.Contains(s, "sequence") {
		t.Errorf("a 10-element constant was not folded:\n%s", s)
	}
}
