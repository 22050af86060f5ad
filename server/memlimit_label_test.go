package server

import (
	"errors"
	"strings"
	"testing"

	"github.com/apache/arrow/go/v17/arrow/memory"
)

// TestUnlabelledAllocationsNamed: what a query allocates or reserves
// without an operator's label is named by the query's own label in a
// limit error (the operator that asked, and the largest reservations),
// never "an unnamed operator"; a streaming table's allocator names the
// table.
func TestUnlabelledAllocationsNamed(t *testing.T) {
	checked := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer checked.AssertSize(t, 0)
	srv := &sqlServer{s: &Server{mem: checked, cfg: Config{Limits: Limits{QueryMemoryBytes: 1 << 20}}}}
	a := srv.newAllocator()
	if err := a.Reserve(600 << 10); err != nil {
		t.Fatal(err)
	}
	err := a.Reserve(600 << 10)
	var mle *MemoryLimitError
	if !errors.As(err, &mle) {
		t.Fatalf("over the limit: %v, want a MemoryLimitError", err)
	}
	msg := err.Error()
	if strings.Contains(msg, "unnamed") || !strings.Contains(msg, "more in "+batchQueryLabel) || !strings.Contains(msg, "bytes by "+batchQueryLabel) {
		t.Errorf("unlabelled reservation over the limit: %q, want it to name %q", msg, batchQueryLabel)
	}
	if got := a.MemoryLimit(); got != 1<<20 {
		t.Errorf("MemoryLimit %d, want %d", got, 1<<20)
	}
	_ = a.Reserve(-(600 << 10))

	st := newQueryAllocator(checked, 1<<20)
	st.label = "streaming table t (x)"
	st.noPanic = true
	b := st.Allocate(2 << 20)
	if e := st.limitErr(); e == nil || !strings.Contains(e.Error(), "more in streaming table t (x)") {
		t.Errorf("unlabelled Arrow allocation over a streaming table's limit: %v, want it to name the table", e)
	}
	st.Free(b)
}
