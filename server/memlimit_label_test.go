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

// TestSharedBuffersCountAgainstServerLimit: the buffers every streaming
// table shares (checkpoint.SharedBufferBytes) count against the server's
// limit beside the queries' bytes: with them at the limit new work is
// refused and a query's allocation breaks the server's limit.
func TestSharedBuffersCountAgainstServerLimit(t *testing.T) {
	const limit = 64 << 20
	checked := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer checked.AssertSize(t, 0)
	pool := newMemoryPool(limit, checked)
	var shared int64
	pool.shared = func() int64 { return shared }
	a := newQueryAllocator(checked, 0)
	a.pool = pool
	if err := a.Reserve(1 << 20); err != nil {
		t.Fatalf("1 MiB with no shared buffers: %v", err)
	}
	shared = limit
	err := a.Reserve(1 << 20)
	var mle *MemoryLimitError
	if !errors.As(err, &mle) || mle.Scope != "server" {
		t.Fatalf("1 MiB more with the shared buffers at the server's limit: %v, want the server's limit", err)
	}
	if err := pool.admit(); err == nil || !strings.Contains(err.Error(), "shared state buffers") {
		t.Errorf("admission with the shared buffers at the limit: %v, want a refusal", err)
	}
	_ = a.Reserve(-(1 << 20))
}
