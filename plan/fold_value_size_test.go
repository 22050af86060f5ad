package plan_test

import (
	"context"
	"fmt"
	"runtime"
	"testing"

	"github.com/apache/arrow/go/v17/arrow/memory"

	"github.com/arrowstream/arrowstream/plan"
	"github.com/arrowstream/arrowstream/vector"
)

// TestLargeValueConstantsNotBuilt: a call of constants whose value is
// tens of MB (repeat, lpad/rpad, concat of them, format_string with wide
// conversions) is not built while the statement is planned: the value's
// size is known (or its scratch reserved on the fold budget) before it
// is built, so planning allocates a few MB at most and leaves the call
// for run time, which gives the right value.
func TestLargeValueConstantsNotBuilt(t *testing.T) {
	cat := testCatalog(t)
	for _, tc := range []struct{ sql, want string }{
		{"SELECT length(repeat('x', 30000000)) AS v", "30000000"},
		{"SELECT length(lpad('a', 30000000, 'b')) AS v", "30000000"},
		{"SELECT length(rpad('a', 30000000)) AS v", "30000000"},
		{"SELECT length(concat(repeat('ab', 8000000), repeat('c', 8000000))) AS v", "24000000"},
		{"SELECT length(format_string(repeat('%1$1000000s', 30), 'a')) AS v", "30000000"},
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
		if got := after.TotalAlloc - before.TotalAlloc; got > 16<<20 {
			t.Errorf("%s: planning allocated %d MB: the value was built", tc.sql, got>>20)
		}
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
}
