package pebblestore

import (
	"context"
	"encoding/binary"
	"fmt"
	"math/rand"
	"os"
	"testing"
	"time"

	"github.com/arrowstream/arrowstream/checkpoint"
)

// BenchmarkStateProviders compares the memory and Pebble providers in one
// run (and Pebble with changelog checkpointing, a snapshot every 10th
// version): a running count whose state holds `keys` keys, each epoch updating
// 10 000 random keys (Get then Put) and committing. Reported per epoch:
// epochs/s, commit latency, and the bytes written into the checkpoint.
// 1e7 keys run only without -short.
//
//	go test -run '^$' -bench StateProviders -benchtime 20x -short ./checkpoint/pebblestore/
func BenchmarkStateProviders(b *testing.B) {
	sizes := []int{1e4, 1e6}
	if !testing.Short() {
		sizes = append(sizes, 1e7)
	}
	const updates = 10_000
	for _, keys := range sizes {
		for _, provider := range []string{"memory", "pebble", "pebble-changelog"} {
			b.Run(fmt.Sprintf("keys=%.0e/%s", float64(keys), provider), func(b *testing.B) {
				var written int64 // checkpoint bytes through the Writer
				w := &checkpoint.Writer{Hook: func(step checkpoint.WriteStep, path string) error {
					if step == checkpoint.AfterRename {
						if st, err := os.Stat(path); err == nil {
							written += st.Size()
						}
					}
					return nil
				}}
				var prov checkpoint.StateStoreProvider
				if provider == "memory" {
					prov = checkpoint.NewMemoryProvider(w, checkpoint.StoreOptions{})
				} else {
					var err error
					if prov, err = NewProvider(Options{Writer: w, ChangelogCheckpointing: provider == "pebble-changelog"}); err != nil {
						b.Fatal(err)
					}
				}
				defer prov.Close()
				part, err := prov.OpenPartition(b.TempDir())
				if err != nil {
					b.Fatal(err)
				}
				ctx := context.Background()
				key := func(i int) []byte {
					k := append([]byte("count/"), make([]byte, 8)...)
					binary.BigEndian.PutUint64(k[6:], uint64(i))
					return k
				}
				one := binary.BigEndian.AppendUint64(nil, 1)
				version := int64(0)
				for lo := 0; lo < keys; lo += 1e6 { // load in epochs of at most 1e6 keys
					st, err := part.Begin(version)
					if err != nil {
						b.Fatal(err)
					}
					for i := lo; i < min(keys, lo+1e6); i++ {
						st.Put(key(i), one)
					}
					if version, err = st.Commit(ctx); err != nil {
						b.Fatal(err)
					}
				}
				r := rand.New(rand.NewSource(1))
				written = 0
				pebbleBytes := int64(0)
				var commit time.Duration
				b.ResetTimer()
				for n := 0; n < b.N; n++ {
					st, err := part.Begin(version)
					if err != nil {
						b.Fatal(err)
					}
					for u := 0; u < updates; u++ {
						k := key(r.Intn(keys))
						v, _, _ := st.Get(k)
						c := uint64(0)
						if len(v) == 8 {
							c = binary.BigEndian.Uint64(v)
						}
						st.Put(k, binary.BigEndian.AppendUint64(nil, c+1))
					}
					start := time.Now()
					if version, err = st.Commit(ctx); err != nil {
						b.Fatal(err)
					}
					commit += time.Since(start)
					pebbleBytes += part.Metrics()["pebbleBytesCopied"]
				}
				elapsed := b.Elapsed()
				b.ReportMetric(float64(b.N)/elapsed.Seconds(), "epochs/s")
				b.ReportMetric(float64(commit.Microseconds())/float64(b.N), "commit-µs/epoch")
				// The Writer sees manifests and deltas/snapshots; Pebble's
				// SST copies are counted by the partition.
				b.ReportMetric(float64(written+pebbleBytes)/float64(b.N), "ckpt-bytes/epoch")
				b.ReportMetric(float64(part.MemoryBytes()+prov.MemoryBytes()), "mem-bytes")
			})
		}
	}
}
