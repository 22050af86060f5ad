package stateful

import (
	"sync/atomic"
	"testing"

	"github.com/apache/arrow/go/v17/arrow/memory"

	"github.com/arrowstream/arrowstream/arrowstream/stream"
	"github.com/arrowstream/arrowstream/internal/testutil/poisonmem"
)

// byteCounter counts the bytes allocated through it (the operator's
// allocators included).
type byteCounter struct {
	memory.Allocator
	n atomic.Int64
}

func (m *byteCounter) Allocate(size int) []byte {
	m.n.Add(int64(size))
	return m.Allocator.Allocate(size)
}

func (m *byteCounter) ForOperator(string) memory.Allocator { return m }

// TestSessionStatesWithoutIds: the save reads the touched sessions'
// states without their session ids (LiveAggregate.Values), which are
// not stored: the Arrow bytes an epoch allocates grow by less than 29
// per session it saves (count(*): the window's two bounds and the
// count, 24.6 measured; 33.0 with the session id column built and
// dropped). Measured as the slope between epochs that extend 1,000 and
// 4,000 keys' sessions, so that the epoch's fixed work cancels.
func TestSessionStatesWithoutIds(t *testing.T) {
	const gap = 2_000_000 // µs
	perSession := func(keys int) int64 {
		mem := poisonmem.New()
		defer mem.AssertSize(t, 0)
		bc := &byteCounter{Allocator: mem}
		dir := t.TempDir()
		stores := newTestStores(t, mem, dir, 2)
		defer stores.close()
		op, err := newStatefulSessionWindow(bc, 0, sessionInSchema, sessionCountSpec, 1, 1, true, stream.Append)
		if err != nil {
			t.Fatal(err)
		}
		defer op.Close()
		var n int64
		for id := int64(0); id < 3; id++ {
			// Every key's one session is extended (no eviction: the
			// watermark stays at 0): the save logs every key's session.
			var rows [][2]int64
			for k := 0; k < keys; k++ {
				rows = append(rows, [2]int64{int64(k), id * 1_000_000})
			}
			before := bc.n.Load()
			recs, _ := runSessionEpoch(t, bc, op, stores, dir, id, 0, 0, rows, gap)
			n = bc.n.Load() - before
			releaseRecords(recs)
		}
		if op.index.dec == nil {
			t.Fatal("the decoded sessions are not in use")
		}
		return n
	}
	small, large := perSession(1000), perSession(4000)
	slope := float64(large-small) / 3000
	t.Logf("%d Arrow bytes for an epoch saving 1,000 sessions, %d for 4,000: %.1f per session", small, large, slope)
	if slope >= 29 {
		t.Fatalf("%.1f Arrow bytes per saved session, want under 29 (no session id column)", slope)
	}
}
