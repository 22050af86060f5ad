package checkpoint

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"sync/atomic"
	"testing"
)

var errEpochLimit = errors.New("over the epoch test limit")

// TestEpochWritesReserved: the memory provider's stores reserve an
// epoch's writes while it fills them (the pending map of Put, the
// changelog arena past its kept capacity) on the reserver their
// partition was given: past the limit a Put is refused, a logged epoch fails its
// commit, the reservation never passes the limit, and commits and aborts
// return it. Before session 14 they were reserved only after the commit.
func TestEpochWritesReserved(t *testing.T) {
	const limit = 1 << 20
	var held atomic.Int64
	reserve := func(n int64) error {
		if v := held.Add(n); n > 0 && v > limit {
			held.Add(-n)
			return errEpochLimit
		}
		return nil
	}
	ctx := context.Background()
	prov := NewMemoryProvider(&Writer{NoSync: true}, StoreOptions{})
	defer prov.Close()
	dir := t.TempDir()
	value := make([]byte, 100)

	t.Run("put", func(t *testing.T) {
		part, err := prov.OpenPartition(filepath.Join(dir, "put"))
		if err != nil {
			t.Fatal(err)
		}
		part.(EpochBufferPartition).SetEpochBufferReserver(reserve)
		st, err := part.Begin(0)
		if err != nil {
			t.Fatal(err)
		}
		var perr error
		n := 0
		for ; n < 100_000; n++ {
			if perr = st.Put(fmt.Appendf(nil, "k%08d", n), value); perr != nil {
				break
			}
		}
		t.Logf("Put refused after %d entries (%d bytes reserved): %v", n, held.Load(), perr)
		if !errors.Is(perr, errEpochLimit) {
			t.Fatalf("100K puts of %d bytes under a %d-byte limit: %v, want the limit's error", len(value), limit, perr)
		}
		if held.Load() > limit {
			t.Errorf("%d bytes reserved, over the limit", held.Load())
		}
		st.Abort()
		if held.Load() != 0 {
			t.Errorf("after the abort %d bytes stay reserved", held.Load())
		}
	})
	t.Run("changelog", func(t *testing.T) {
		part, err := prov.OpenPartition(filepath.Join(dir, "log"))
		if err != nil {
			t.Fatal(err)
		}
		part.(EpochBufferPartition).SetEpochBufferReserver(reserve)
		// A small epoch commits and returns its reservation.
		st, err := part.Begin(0)
		if err != nil {
			t.Fatal(err)
		}
		cw := st.(ChangelogWriter)
		for i := range 2000 {
			cw.LogUpsert(fmt.Appendf(nil, "k%08d", i), value)
		}
		if held.Load() == 0 {
			t.Errorf("an epoch logging %d bytes reserved nothing", 2000*(len(value)+9))
		}
		if _, err := st.Commit(ctx); err != nil {
			t.Fatal(err)
		}
		if held.Load() != 0 {
			t.Errorf("after the commit %d bytes stay reserved", held.Load())
		}
		// One past the limit fails its commit.
		st, err = part.Begin(1)
		if err != nil {
			t.Fatal(err)
		}
		cw = st.(ChangelogWriter)
		for i := range 100_000 {
			cw.LogUpsert(fmt.Appendf(nil, "k%08d", i), value)
		}
		if held.Load() > limit {
			t.Errorf("%d bytes reserved, over the limit", held.Load())
		}
		_, err = st.Commit(ctx)
		t.Logf("commit of 100K logged entries: %v", err)
		if !errors.Is(err, errEpochLimit) {
			t.Fatalf("an epoch logging %d bytes under a %d-byte limit committed: %v", 100_000*(len(value)+9), limit, err)
		}
		if held.Load() != 0 {
			t.Errorf("after the failed commit %d bytes stay reserved", held.Load())
		}
	})
}

// BenchmarkEpochWritesAccounted logs 4096 upserts (16-byte keys, 24-byte
// values) into a memory-provider store per epoch and commits, with and
// without the epoch writes' reservation (session 14): the hot path's
// cost is an addition and a comparison per write, a reservation per 64
// KiB.
//
//	go test -run '^$' -bench BenchmarkEpochWritesAccounted ./checkpoint/
func BenchmarkEpochWritesAccounted(b *testing.B) {
	for _, accounted := range []bool{false, true} {
		b.Run(fmt.Sprintf("accounted=%v", accounted), func(b *testing.B) {
			prov := NewMemoryProvider(&Writer{NoSync: true}, StoreOptions{MinDeltasForSnapshot: 1 << 30, MaxDeltasForSnapshot: 1 << 30, MinVersionsToRetain: 2})
			defer prov.Close()
			part, err := prov.OpenPartition(filepath.Join(b.TempDir(), "p"))
			if err != nil {
				b.Fatal(err)
			}
			if accounted {
				var held atomic.Int64
				part.(EpochBufferPartition).SetEpochBufferReserver(func(n int64) error { held.Add(n); return nil })
			}
			keys := make([][]byte, 4096)
			for i := range keys {
				keys[i] = fmt.Appendf(nil, "key-%012d", i)
			}
			value := make([]byte, 24)
			ctx := context.Background()
			b.ReportAllocs()
			v := int64(0)
			for b.Loop() {
				st, err := part.Begin(v)
				if err != nil {
					b.Fatal(err)
				}
				cw := st.(ChangelogWriter)
				for _, k := range keys {
					cw.LogUpsert(k, value)
				}
				if v, err = st.Commit(ctx); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
