package pebblestore

import (
	"errors"
	"fmt"
	"runtime"
	"sync/atomic"
	"testing"

	"github.com/arrowstream/arrowstream/checkpoint"
)

var errBatchLimit = errors.New("over the batch test limit")

// TestEpochBatchReserved: a store's epoch batch reserves the keys and
// values it holds on the account its partition was given, a chunk at a
// time: an epoch that writes more than the limit fails a write near it
// (before the commit), the reservation never passes the limit, and both
// an abort and a commit return it. Before session 14 the batch was
// reserved by no one. The estimate is checked against the heap the batch
// really holds (runtime.ReadMemStats), within 2x either way.
func TestEpochBatchReserved(t *testing.T) {
	const limit, valueLen = 8 << 20, 100
	var held atomic.Int64
	reserve := func(n int64) error {
		if v := held.Add(n); n > 0 && v > limit {
			held.Add(-n)
			return errBatchLimit
		}
		return nil
	}
	prov := newTestProvider(t, Options{})
	part, err := prov.OpenPartition(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	part.(checkpoint.EpochBufferPartition).SetEpochBufferReserver(reserve)
	value := make([]byte, valueLen)

	// Under the limit: the batch's heap and its reservation.
	st := begin(t, part, 0)
	before := heapAlloc()
	const keys = 20_000
	for i := range keys {
		if err := st.Put(fmt.Appendf(nil, "key-%08d", i), value); err != nil {
			t.Fatal(err)
		}
	}
	grown := heapAlloc() - before
	res := held.Load()
	t.Logf("%d keys of %d-byte values: reserved %d, heap grew %d (%.2fx)", keys, valueLen, res, grown, float64(res)/float64(max(grown, 1)))
	if res <= 0 || res < grown/2 || res > 2*grown {
		t.Errorf("the batch reserved %d bytes for %d of heap growth: not within 2x", res, grown)
	}
	commit(t, st)
	if n := held.Load(); n != 0 {
		t.Errorf("after the commit %d bytes stay reserved", n)
	}

	// Over the limit: a write is refused near it.
	st = begin(t, part, 1)
	var werr error
	written := 0
	for i := range 200_000 {
		if werr = st.Put(fmt.Appendf(nil, "big-%08d", i), value); werr != nil {
			break
		}
		written++
	}
	if !errors.Is(werr, errBatchLimit) {
		t.Fatalf("an epoch batch past the %d-byte limit: %v after %d writes, want the limit's error", limit, werr, written)
	}
	if n := held.Load(); n > limit {
		t.Errorf("%d bytes reserved, over the limit %d", n, limit)
	}
	t.Logf("refused after %d writes (%d bytes reserved)", written, held.Load())
	st.Abort()
	if n := held.Load(); n != 0 {
		t.Errorf("after the abort %d bytes stay reserved", n)
	}
}

func heapAlloc() int64 {
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	return int64(ms.HeapAlloc)
}
