package engine

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/apache/arrow/go/v17/arrow/memory"

	"github.com/arrowstream/arrowstream/arrowstream/internal/stateful"
	"github.com/arrowstream/arrowstream/checkpoint"
	"github.com/arrowstream/arrowstream/checkpoint/pebblestore"
)

// countingReserver is a vector.MemoryReserver that counts what is
// reserved and remembers the names it was labelled with.
type countingReserver struct {
	memory.Allocator
	held  atomic.Int64
	mu    sync.Mutex
	names []string
}

func (r *countingReserver) Reserve(n int64) error { r.held.Add(n); return nil }

func (r *countingReserver) ForOperator(name string) memory.Allocator {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.names = append(r.names, name)
	return r
}

// TestPebbleMemoryBoundReserved: with the Pebble provider the table's
// account holds the bounds its settings give (the block cache while the
// provider is open; two memtables a partition after each commit), not
// the partitions' key count times a per-entry overhead: keys and values
// live on disk. Before session 13 the block cache was not reserved and
// 100K keys reserved 8 MB (80 bytes a key) besides the memtables.
func TestPebbleMemoryBoundReserved(t *testing.T) {
	const cache, memtable, parts, keys = 8 << 20, 1 << 20, 3, 100_000
	ctx := context.Background()
	r := &countingReserver{Allocator: memory.NewGoAllocator()}
	w := &checkpoint.Writer{NoSync: true}
	l := newStateLifecycle(w, r, []stateful.StateDecl{{OpID: 0, Schema: "dedup key:bigint"}})
	l.newProvider = func(map[string]string, *checkpoint.Writer) (checkpoint.StateStoreProvider, error) {
		return pebblestore.NewProvider(pebblestore.Options{Writer: w, BlockCacheBytes: cache, MemtableBytes: memtable})
	}
	dir := t.TempDir()
	if err := l.open(dir, 0, parts, nil); err != nil {
		t.Fatal(err)
	}
	if got := r.held.Load(); got != cache {
		t.Errorf("after open: %d bytes reserved, want the block cache's %d", got, cache)
	}
	stores := l.stores(0)
	for i := range keys {
		st := stores[i%len(stores)]
		if err := st.Put(fmt.Appendf(nil, "key%08d", i), []byte("v")); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := l.commit(ctx); err != nil {
		t.Fatal(err)
	}
	want := int64(cache + parts*2*memtable)
	t.Logf("%d keys in %d partitions: %d bytes reserved (labels %v)", keys, parts, r.held.Load(), r.names)
	if got := r.held.Load(); got != want {
		t.Errorf("after a commit of %d keys: %d bytes reserved, want the cache and two memtables a partition, %d", keys, got, want)
	}
	if err := l.close(); err != nil {
		t.Fatal(err)
	}
	if got := r.held.Load(); got != 0 {
		t.Errorf("after close: %d bytes stay reserved", got)
	}
}
