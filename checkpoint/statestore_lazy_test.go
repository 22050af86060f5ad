package checkpoint

import (
	"context"
	"fmt"
	"math/rand"
	"path/filepath"
	"testing"
)

// runLazy runs epoch version → version+1 as the engine does with lazy
// stores: only the partitions with changes are opened (their handles'
// first write), the others are settled (carried forward), and the group
// commits version+1 whatever was opened. When declare is set, every
// partition's live rows are declared (from model) as changelog operators
// do every epoch.
func (q *groupQuery) runLazy(version int64, changes map[int]change, useLog bool, model []map[string]string, declare bool) error {
	handles := make([]LazyLogStore, len(q.parts))
	for i, p := range q.parts {
		handles[i].Reset(p, version)
	}
	next := applyChanges(model, changes)
	for i := range handles {
		h := &handles[i]
		for k, v := range changes[i] {
			var err error
			switch {
			case useLog && v == "":
				h.LogDelete([]byte(k))
			case useLog:
				h.LogUpsert([]byte(k), []byte(v))
			case v == "":
				err = h.Delete([]byte(k))
			default:
				err = h.Put([]byte(k), []byte(v))
			}
			if err != nil {
				q.t.Fatal(err)
			}
		}
		if useLog && declare {
			h.SetLiveRows(int64(len(next[i])))
		}
	}
	var all []StateStore
	for i := range handles {
		st, n, err := handles[i].Settle()
		if err != nil {
			for _, s := range all {
				s.Abort()
			}
			return err
		}
		if st == nil && useLog && declare && n != int64(len(next[i])) {
			q.t.Fatalf("partition %d carried with %d live rows, the model holds %d", i, n, len(next[i]))
		}
		if st != nil {
			all = append(all, st)
		}
	}
	return q.prov.CommitGroupAt(context.Background(), version+1, all)
}

// TestLazyEpochsModel runs random epochs through lazy stores, where most
// partitions are neither opened nor written, with in-process re-runs of
// committed epochs (the engine's replay of an epoch's recorded input)
// and reopens from
// disk (a restart: carried versions map to their last written one). Every
// version reads as the model says.
func TestLazyEpochsModel(t *testing.T) {
	for _, useLog := range []bool{false, true} {
		for seed := int64(1); seed <= 4; seed++ {
			t.Run(fmt.Sprintf("changelog=%v/seed=%d", useLog, seed), func(t *testing.T) {
				lazyModelRun(t, seed, useLog)
			})
		}
	}
}

func lazyModelRun(t *testing.T, seed int64, useLog bool) {
	const parts, epochs = 6, 60
	r := rand.New(rand.NewSource(seed))
	root := t.TempDir()
	w := &Writer{NoSync: true}
	opts := StoreOptions{MinDeltasForSnapshot: 3, MaxDeltasForSnapshot: 6, MinVersionsToRetain: 8}
	q := openGroupQuery(t, root, w, parts, opts)
	models := [][]map[string]string{make([]map[string]string, parts)}
	for i := range models[0] {
		models[0][i] = map[string]string{}
	}
	carried := 0
	for v := int64(0); v < epochs; v++ {
		changes := randomChanges(r, parts, models[v])
		if r.Intn(2) == 0 {
			changes = map[int]change{} // an empty epoch
		}
		carried += parts - len(changes)
		if err := q.runLazy(v, changes, useLog, models[v], true); err != nil {
			t.Fatalf("epoch %d: %v", v, err)
		}
		models = append(models[:v+1], applyChanges(models[v], changes))
		switch r.Intn(6) {
		case 0:
			// In-process re-run of the epoch with its recorded input
			// (the same changes, as the engine replays it): the
			// partitions it wrote hold version v+1 already and are
			// reloaded at v, the others carried again.
			if err := q.runLazy(v, changes, useLog, models[v], true); err != nil {
				t.Fatalf("re-run of epoch %d: %v", v, err)
			}
		case 1:
			// Restart: everything in memory goes.
			for _, p := range q.parts {
				if err := p.(*StorePartition).WaitMaintenance(); err != nil {
					t.Fatal(err)
				}
			}
			q.prov.Close()
			q = openGroupQuery(t, root, w, parts, opts)
		}
		if r.Intn(5) == 0 {
			got, err := q.read(v + 1)
			if err != nil {
				t.Fatalf("version %d: %v", v+1, err)
			}
			if !equalStates(got, models[v+1]) {
				t.Fatalf("version %d reads %v, model %v", v+1, got, models[v+1])
			}
		}
	}
	if carried == 0 {
		t.Fatal("no partition was carried: the test tests nothing lazy")
	}
	for v := int64(epochs - opts.MinVersionsToRetain); v <= epochs; v++ {
		got, err := q.read(v)
		if err != nil {
			t.Fatalf("version %d: %v", v, err)
		}
		if !equalStates(got, models[v]) {
			t.Fatalf("version %d reads %v, model %v", v, got, models[v])
		}
	}
}

// TestCarryRefuses: Carry moves a partition only when a Begin and an
// empty commit would do nothing else.
func TestCarryRefuses(t *testing.T) {
	root := t.TempDir()
	w := &Writer{NoSync: true}
	q := openGroupQuery(t, root, w, 1, StoreOptions{})
	p := q.parts[0].(*StorePartition)
	if _, ok := p.Carry(0, -1); ok {
		t.Fatal("carried a partition that holds no loaded version (and whose maintenance is due)")
	}
	model := []map[string]string{{}}
	if err := q.runLazy(0, map[int]change{0: {"a": "1", "b": "2"}}, true, model, true); err != nil {
		t.Fatal(err)
	}
	if err := p.WaitMaintenance(); err != nil {
		t.Fatal(err)
	}
	p.mu.Lock()
	p.nextMaint = 1000 // no maintenance due for a while
	p.mu.Unlock()
	if _, ok := p.Carry(0, -1); ok {
		t.Fatal("carried from version 0, the partition holds 1")
	}
	if _, ok := p.Carry(1, 5); ok {
		t.Fatal("carried with 5 declared rows, the partition holds 2")
	}
	if n, ok := p.Carry(1, 2); !ok || n != 2 {
		t.Fatalf("Carry(1, 2) = %d, %v; want 2, true", n, ok)
	}
	p.mu.Lock()
	p.nextMaint = 3
	p.mu.Unlock()
	if _, ok := p.Carry(2, 2); ok {
		t.Fatal("carried into a version whose maintenance is due")
	}
	st, err := p.Begin(2)
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := p.Carry(2, -1); ok {
		t.Fatal("carried a partition with an open store")
	}
	st.Abort()

	// Without a state log every version needs its delta file.
	solo, err := OpenStorePartition(filepath.Join(root, "solo"), w, StoreOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer solo.Close()
	if s, err := solo.Begin(0); err != nil {
		t.Fatal(err)
	} else if _, err := s.Commit(context.Background()); err != nil {
		t.Fatal(err)
	}
	if err := solo.WaitMaintenance(); err != nil {
		t.Fatal(err)
	}
	if _, ok := solo.Carry(1, -1); ok {
		t.Fatal("carried a partition that is not group-committed")
	}
}

// TestLazyStoreBeginFailure: a handle whose Begin fails returns the error
// from every read and write and from Settle, and nothing stays open.
func TestLazyStoreBeginFailure(t *testing.T) {
	q := openGroupQuery(t, t.TempDir(), &Writer{NoSync: true}, 1, StoreOptions{})
	p := q.parts[0]
	busy, err := p.Begin(0)
	if err != nil {
		t.Fatal(err)
	}
	defer busy.Abort()
	var h LazyLogStore
	h.Reset(p, 0)
	if _, _, err := h.Get([]byte("k")); err == nil {
		t.Fatal("Get on a partition with a store open elsewhere succeeded")
	}
	h.LogUpsert([]byte("k"), []byte("v")) // kept: fails Settle
	if st, _, err := h.Settle(); err == nil || st != nil {
		t.Fatalf("Settle = %v, %v; want the Begin error", st, err)
	}
	h.Abort()
}
