package stateful

import (
	"context"
	"path/filepath"
	"strconv"
	"testing"

	"github.com/apache/arrow/go/v17/arrow/memory"

	"github.com/arrowstream/arrowstream/checkpoint"
)

// testStores opens, commits and aborts an operator's state partitions
// the way the engine does, for tests that drive an operator directly.
type testStores struct {
	t        *testing.T
	provider *checkpoint.MemoryProvider
	parts    []checkpoint.StatePartition
	open     []checkpoint.StateStore
}

func newTestStores(t *testing.T, mem memory.Allocator, dir string, n int) *testStores {
	t.Helper()
	ts := &testStores{t: t, provider: checkpoint.NewMemoryProvider(&checkpoint.Writer{NoSync: true}, checkpoint.StoreOptions{Allocator: mem})}
	for p := 0; p < n; p++ {
		part, err := ts.provider.OpenPartition(filepath.Join(dir, "state", "0", strconv.Itoa(p)))
		if err != nil {
			t.Fatal(err)
		}
		ts.parts = append(ts.parts, part)
	}
	return ts
}

// begin opens every partition at version.
func (ts *testStores) begin(version int64) []checkpoint.StateStore {
	ts.t.Helper()
	ts.open = nil
	for _, part := range ts.parts {
		st, err := part.Begin(version)
		if err != nil {
			ts.t.Fatal(err)
		}
		ts.open = append(ts.open, st)
	}
	return ts.open
}

// commit commits the open stores and returns what the engine tells the
// operator.
func (ts *testStores) commit(ctx context.Context) StateCommit {
	ts.t.Helper()
	var c StateCommit
	for _, st := range ts.open {
		c.NumRowsTotal += int64(st.Len())
		if _, err := st.Commit(ctx); err != nil {
			ts.t.Fatal(err)
		}
	}
	c.Partitions = int64(len(ts.open))
	ts.open = nil
	return c
}

func (ts *testStores) abort() {
	for _, st := range ts.open {
		st.Abort()
	}
	ts.open = nil
}

// waitMaintenance waits for the partitions' background snapshots.
func (ts *testStores) waitMaintenance() {
	ts.t.Helper()
	for _, p := range ts.parts {
		if err := p.(*checkpoint.StorePartition).WaitMaintenance(); err != nil {
			ts.t.Fatal(err)
		}
	}
}

// close waits for the partitions' background snapshots.
func (ts *testStores) close() {
	if err := ts.provider.Close(); err != nil {
		ts.t.Error(err)
	}
}
