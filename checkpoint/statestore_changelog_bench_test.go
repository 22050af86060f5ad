package checkpoint

import (
	"context"
	"encoding/binary"
	"fmt"
	"path/filepath"
	"testing"
)

// BenchmarkChangelogEpoch is one epoch of a changelog operator under
// group commit: rows upserts (16-byte keys, 24-byte values) logged over
// two partitions, encoded and appended to the state log. ns/op is per
// epoch; allocs/op shows what the changelog path allocates per epoch.
func BenchmarkChangelogEpoch(b *testing.B) {
	for _, rows := range []int{1000, 10000, 100000} {
		b.Run(fmt.Sprintf("rows=%d", rows), func(b *testing.B) {
			root := b.TempDir()
			w := &Writer{NoSync: true}
			prov := NewMemoryProvider(w, StoreOptions{MinDeltasForSnapshot: 1 << 30, MaxDeltasForSnapshot: 1 << 30, MinVersionsToRetain: 4})
			defer prov.Close()
			if err := prov.OpenStateLog(filepath.Join(root, "state")); err != nil {
				b.Fatal(err)
			}
			var parts [2]StatePartition
			for i := range parts {
				p, err := prov.OpenPartition(filepath.Join(root, "state", "0", fmt.Sprint(i)))
				if err != nil {
					b.Fatal(err)
				}
				parts[i] = p
			}
			key, val := make([]byte, 16), make([]byte, 24)
			stores := make([]StateStore, len(parts))
			b.SetBytes(int64(rows * (len(key) + len(val))))
			b.ReportAllocs()
			b.ResetTimer()
			for v := 0; v < b.N; v++ {
				for i, p := range parts {
					st, err := p.Begin(int64(v))
					if err != nil {
						b.Fatal(err)
					}
					stores[i] = st
				}
				for r := 0; r < rows; r++ {
					binary.LittleEndian.PutUint64(key, uint64(r))
					binary.LittleEndian.PutUint64(val, uint64(v+r))
					stores[r%2].(ChangelogWriter).LogUpsert(key, val)
				}
				for _, st := range stores {
					st.(ChangelogWriter).SetLiveRows(int64(rows / 2))
				}
				if err := prov.CommitGroup(context.Background(), stores); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
