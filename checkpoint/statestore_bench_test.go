package checkpoint

import (
	"context"
	"encoding/binary"
	"fmt"
	"testing"

	"github.com/apache/arrow/go/v17/arrow/memory"
)

// BenchmarkStateCommitLargeState commits epochs that change 100 keys of a
// 200K-key state (ns/op is per epoch, maintenance included: the benchmark
// waits for it). "snapshot=amortized" is the default policy (a snapshot
// once the deltas since the last hold as many bytes as that snapshot);
// "snapshot=every-110" sets MaxDeltasForSnapshot to 11, which forces a
// snapshot after every 110 deltas (ten times it), a cost per epoch that
// grows with the state.
func BenchmarkStateCommitLargeState(b *testing.B) {
	const keys, changes = 200_000, 100
	for _, c := range []struct {
		name     string
		maxDelta int
	}{{"snapshot=amortized", 0}, {"snapshot=every-110", 11}} {
		b.Run(c.name, func(b *testing.B) {
			ctx := context.Background()
			p, err := OpenStorePartition(b.TempDir(), &Writer{NoSync: true}, StoreOptions{
				MinDeltasForSnapshot: 10, MaxDeltasForSnapshot: c.maxDelta, Allocator: memory.NewGoAllocator()})
			if err != nil {
				b.Fatal(err)
			}
			defer p.Close()
			key := func(i int) []byte { return []byte(fmt.Sprintf("key-%08d", i)) }
			var val [16]byte
			s, err := p.Begin(0)
			if err != nil {
				b.Fatal(err)
			}
			for i := 0; i < keys; i++ {
				binary.LittleEndian.PutUint64(val[:], uint64(i))
				if err := s.Put(key(i), val[:]); err != nil {
					b.Fatal(err)
				}
			}
			if _, err := s.Commit(ctx); err != nil {
				b.Fatal(err)
			}
			b.ResetTimer()
			for e := 0; e < b.N; e++ {
				s, err := p.Begin(int64(e + 1))
				if err != nil {
					b.Fatal(err)
				}
				for i := 0; i < changes; i++ {
					binary.LittleEndian.PutUint64(val[:], uint64(e))
					if err := s.Put(key((e*changes+i*7919)%keys), val[:]); err != nil {
						b.Fatal(err)
					}
				}
				if _, err := s.Commit(ctx); err != nil {
					b.Fatal(err)
				}
				if err := p.WaitMaintenance(); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkCompactRead compares, in one run, the two ways of applying a
// state file of format v2 to a map: readInto (every key and value copied,
// the load path) and readAliased (entries alias the file's bytes,
// compaction's transient merge), on a 100K-entry snapshot.
func BenchmarkCompactRead(b *testing.B) {
	dir := b.TempDir()
	p, err := OpenStorePartition(dir, &Writer{NoSync: true}, StoreOptions{})
	if err != nil {
		b.Fatal(err)
	}
	defer p.Close()
	keys, values, _ := testState(100_000)
	raw, err := encodeState(nil, keys, values, nil)
	if err != nil {
		b.Fatal(err)
	}
	path := p.file(1, "snapshot")
	if err := p.w.WriteFile(path, raw, true); err != nil {
		b.Fatal(err)
	}
	b.Run("copy", func(b *testing.B) {
		for b.Loop() {
			if _, err := p.readInto(path, make(map[string][]byte, len(keys))); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("alias", func(b *testing.B) {
		for b.Loop() {
			if err := p.readAliased(path, make(map[string][]byte, len(keys))); err != nil {
				b.Fatal(err)
			}
		}
	})
}

// BenchmarkGrowingStateSnapshots commits 300 changelog epochs of 1000 new
// keys each (a join side that never evicts; ns/op is the whole run,
// background maintenance waited for after every epoch), with snapshot
// segments and with full snapshots compacted from the files, in one run.
func BenchmarkGrowingStateSnapshots(b *testing.B) {
	const epochs, perEpoch = 300, 1000
	for _, full := range []bool{false, true} {
		b.Run(fmt.Sprintf("full=%v", full), func(b *testing.B) {
			ctx := context.Background()
			var val [32]byte
			for b.Loop() {
				p, err := OpenStorePartition(b.TempDir(), &Writer{NoSync: true}, StoreOptions{
					Allocator: memory.NewGoAllocator(), fullSnapshots: full})
				if err != nil {
					b.Fatal(err)
				}
				for e := range epochs {
					s, err := p.Begin(int64(e))
					if err != nil {
						b.Fatal(err)
					}
					cw := s.(ChangelogWriter)
					for i := range perEpoch {
						n := e*perEpoch + i
						binary.LittleEndian.PutUint64(val[:], uint64(n))
						cw.LogUpsert([]byte(fmt.Sprintf("key-%09d", n)), val[:])
					}
					cw.SetLiveRows(int64((e + 1) * perEpoch))
					if _, err := s.Commit(ctx); err != nil {
						b.Fatal(err)
					}
					if err := p.WaitMaintenance(); err != nil {
						b.Fatal(err)
					}
				}
				if err := p.Close(); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
