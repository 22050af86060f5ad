package kafka

import (
	"context"
	"fmt"
	"maps"
	"math/rand/v2"
	"testing"

	"github.com/arrowstream/arrowstream/checkpoint"
)

// TestSnapshotOverlayMatchesModel: a partition restored from its local
// snapshot plus the changelog's tail (overlaySnapshot) holds the
// snapshot with the tail laid over it, and after the epoch's own changes
// (through Put/Delete or the changelog path, as the operator uses) and
// its commit, the inner store read back from its files holds exactly
// that, over random snapshots, tails and epochs, although only the keys
// touched since the snapshot are written.
func TestSnapshotOverlayMatchesModel(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	open := func() (*checkpoint.MemoryProvider, checkpoint.StatePartition) {
		prov := checkpoint.NewMemoryProvider(&checkpoint.Writer{NoSync: true}, checkpoint.StoreOptions{})
		part, err := prov.OpenPartition(dir)
		if err != nil {
			t.Fatal(err)
		}
		return prov, part
	}
	model := map[string]string{}
	rng := rand.New(rand.NewPCG(3, 5))
	key := func() string { return fmt.Sprintf("k%03d", rng.IntN(200)) }
	val := func() string { return fmt.Sprintf("v%d", rng.IntN(1<<20)) }
	for version := int64(0); version < 60; version++ {
		prov, part := open()
		st, err := part.Begin(version)
		if err != nil {
			t.Fatal(err)
		}
		cw := st.(checkpoint.ChangelogWriter)
		ms := &movingStore{inner: st, cw: cw, liveRows: -1}
		logPath := version%2 == 1
		snapshot := version%3 != 0
		if snapshot {
			// What other owners wrote after the snapshot: upserts and
			// deletions (of keys held or not), the last change of each key.
			tail := map[string][]byte{}
			for range rng.IntN(40) {
				k := key()
				if rng.IntN(3) == 0 {
					tail[k] = nil
					delete(model, k)
					continue
				}
				v := val()
				tail[k] = []byte(v)
				model[k] = v
			}
			if err := ms.overlaySnapshot(tail); err != nil {
				t.Fatal(err)
			}
			if got := toStrings(ms.cur); !maps.Equal(got, model) {
				t.Fatalf("version %d: the snapshot overlay holds %d keys, the model %d", version, len(got), len(model))
			}
			if len(ms.touched) > len(tail) {
				t.Fatalf("version %d: %d keys touched by a tail of %d", version, len(ms.touched), len(tail))
			}
		}
		var w checkpoint.ChangelogWriter = &movingLogStore{ms}
		for range rng.IntN(15) {
			k := key()
			if rng.IntN(3) == 0 {
				if logPath {
					w.LogDelete([]byte(k))
				} else if err := ms.Delete([]byte(k)); err != nil {
					t.Fatal(err)
				}
				delete(model, k)
				continue
			}
			v := val()
			if logPath {
				w.LogUpsert([]byte(k), []byte(v))
			} else if err := ms.Put([]byte(k), []byte(v)); err != nil {
				t.Fatal(err)
			}
			model[k] = v
		}
		if logPath {
			w.SetLiveRows(int64(len(model)))
		}
		if ms.over {
			if err := ms.writeOverlay(); err != nil {
				t.Fatal(err)
			}
		}
		if _, err := st.Commit(ctx); err != nil {
			t.Fatal(err)
		}
		prov.Close()
		prov, part = open()
		rd, err := part.Begin(version + 1)
		if err != nil {
			t.Fatal(err)
		}
		got := map[string]string{}
		if err := rd.Range(func(k, v []byte) bool { got[string(k)] = string(v); return true }); err != nil {
			t.Fatal(err)
		}
		rd.Abort()
		prov.Close()
		if !maps.Equal(got, model) {
			t.Fatalf("version %d (snapshot %v, changelog path %v): the store holds %d keys, the model %d", version+1, snapshot, logPath, len(got), len(model))
		}
	}
}
