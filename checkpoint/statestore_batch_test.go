package checkpoint

import (
	"bytes"
	"context"
	"fmt"
	"maps"
	"math/rand/v2"
	"path/filepath"
	"slices"
	"testing"
)

// batchOp is a run of changes logged one by one or as one batch.
type batchOp struct {
	del          bool
	keys, values [][]byte
}

// randomBatchOps draws runs of upserts and deletes over a small key
// space (keys repeat, values may be empty).
func randomBatchOps(r *rand.Rand, n int) []batchOp {
	var ops []batchOp
	for range n {
		op := batchOp{del: r.IntN(3) == 0}
		for range r.IntN(20) {
			op.keys = append(op.keys, fmt.Appendf(nil, "key%d", r.IntN(40)))
			if !op.del {
				op.values = append(op.values, bytes.Repeat([]byte{byte(r.IntN(256))}, r.IntN(12)))
			}
		}
		ops = append(ops, op)
	}
	return ops
}

// flatten lays entries end to end with their end offsets.
func flatten(entries [][]byte) ([]byte, []uint32) {
	var b []byte
	var ends []uint32
	for _, e := range entries {
		b = append(b, e...)
		ends = append(ends, uint32(len(b)))
	}
	return b, ends
}

// logOps logs ops into w: one by one (mode 0), each run as one batch
// (1), or as one batch of views (2: LogUpsertsOf, LogDeletesOf).
func logOps(w ChangelogWriter, ops []batchOp, mode int) {
	for _, op := range ops {
		if mode == 2 {
			b := w.(ChangelogBatcher)
			if op.del {
				b.LogDeletesOf(len(op.keys), EntriesFunc(func(i int) ([]byte, []byte) { return op.keys[i], nil }))
			} else {
				b.LogUpsertsOf(len(op.keys), EntriesFunc(func(i int) ([]byte, []byte) { return op.keys[i], op.values[i] }))
			}
			continue
		}
		if mode == 1 {
			b := w.(ChangelogBatcher)
			keys, kend := flatten(op.keys)
			if op.del {
				b.LogDeletes(keys, kend)
			} else {
				vals, vend := flatten(op.values)
				b.LogUpserts(keys, kend, vals, vend)
			}
			continue
		}
		for i, k := range op.keys {
			if op.del {
				w.LogDelete(k)
			} else {
				w.LogUpsert(k, op.values[i])
			}
		}
	}
}

// TestChangelogBatchesMatchSingles: runs of changes logged as batches
// (ChangelogBatcher: end to end, or from views) leave the changelog arena, and so the delta, byte for
// byte as the same changes logged one by one, through the store and
// through a lazy handle; the versions load the same.
func TestChangelogBatchesMatchSingles(t *testing.T) {
	for seed := uint64(1); seed <= 20; seed++ {
		r := rand.New(rand.NewPCG(seed, 7))
		var arenas [3]changeArena
		ops := randomBatchOps(r, 1+r.IntN(12))
		for i := range arenas {
			for _, op := range ops {
				keys, kend := flatten(op.keys)
				n, kb, vb := len(op.keys), len(keys), 0
				for _, v := range op.values {
					vb += len(v)
				}
				switch {
				case i == 2 && op.del:
					arenas[i].addKeys(n, kb, EntriesFunc(func(j int) ([]byte, []byte) { return op.keys[j], nil }))
				case i == 2:
					arenas[i].addEntries(n, kb, vb, EntriesFunc(func(j int) ([]byte, []byte) { return op.keys[j], op.values[j] }), true)
				case i == 0 && op.del:
					for _, k := range op.keys {
						arenas[i].add(k, nil, false)
					}
				case i == 0:
					for j, k := range op.keys {
						arenas[i].add(k, op.values[j], true)
					}
				case op.del:
					arenas[i].addBatch(keys, kend, nil, nil, false)
				default:
					vals, vend := flatten(op.values)
					arenas[i].addBatch(keys, kend, vals, vend, true)
				}
			}
		}
		for i := 1; i < len(arenas); i++ {
			if a, b := arenas[0].appendDelta(nil, nil), arenas[i].appendDelta(nil, nil); !bytes.Equal(a, b) {
				t.Fatalf("seed %d: batched delta (%d) differs from single changes'\nsingle %x\nbatch  %x", seed, i, a, b)
			}
		}
	}
	for _, lazy := range []bool{false, true} {
		t.Run(fmt.Sprintf("lazy=%v", lazy), func(t *testing.T) {
			r := rand.New(rand.NewPCG(3, 4))
			root := t.TempDir()
			var parts [3]*StorePartition
			for i := range parts {
				parts[i], _ = openTestPartition(t, filepath.Join(root, fmt.Sprint(i)), StoreOptions{MinDeltasForSnapshot: 3, MaxDeltasForSnapshot: 5})
			}
			for v := int64(0); v < 15; v++ {
				ops := randomBatchOps(r, 1+r.IntN(6))
				for i, p := range parts {
					var w ChangelogWriter
					var commit func() error
					if lazy {
						var h LazyLogStore
						h.Reset(p, v)
						w = &h
						commit = func() error {
							st, _, err := h.Settle()
							if err != nil || st == nil {
								return err
							}
							_, err = st.Commit(context.Background())
							return err
						}
					} else {
						st, err := p.Begin(v)
						if err != nil {
							t.Fatal(err)
						}
						w = st.(ChangelogWriter)
						commit = func() error { _, err := st.Commit(context.Background()); return err }
					}
					logOps(w, ops, i)
					w.SetLiveRows(0) // not read by this test
					if err := commit(); err != nil {
						t.Fatal(err)
					}
					if err := p.WaitMaintenance(); err != nil {
						t.Fatal(err)
					}
				}
				var got [3]map[string]string
				for i, p := range parts {
					st, err := p.Begin(v + 1)
					if err != nil {
						t.Fatal(err)
					}
					got[i] = readAll(t, st)
					st.Abort()
				}
				for i := 1; i < len(got); i++ {
					if !maps.Equal(got[0], got[i]) {
						t.Fatalf("version %d: batched (%d) %v, single %v", v+1, i, slices.Sorted(maps.Keys(got[i])), slices.Sorted(maps.Keys(got[0])))
					}
				}
			}
		})
	}
}
