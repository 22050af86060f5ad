package checkpoint

import (
	"context"
	"errors"
	"fmt"
	"io"
	"maps"
	"math/rand"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync/atomic"
	"testing"
)

// mapView is a LiveView of a model partition: a copy of its map taken
// when handed over (as an operator's view is immutable). drop leaves one
// key out, so that the test can show it notices a wrong view.
type mapView struct {
	data     map[string]string
	drop     bool
	released *atomic.Int64
}

func (v *mapView) Entries(_ context.Context, emit func(key, value []byte) error) error {
	keys := make([]string, 0, len(v.data))
	for k := range v.data {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	if v.drop && len(keys) > 0 {
		keys = keys[1:]
	}
	for _, k := range keys {
		if err := emit([]byte(k), []byte(v.data[k])); err != nil {
			return err
		}
	}
	return nil
}

func (v *mapView) Release() {
	if v.released.Add(-1) < 0 {
		panic("live view released twice")
	}
}

// runLive is runLazy with live views: after its changes, every opened
// partition that wants a snapshot gets a view of its model state.
func (q *groupQuery) runLive(version int64, changes map[int]change, model []map[string]string, drop bool, held *atomic.Int64) error {
	handles := make([]LazyLogStore, len(q.parts))
	for i, p := range q.parts {
		handles[i].Reset(p, version)
	}
	next := applyChanges(model, changes)
	for i := range handles {
		h := &handles[i]
		for k, v := range changes[i] {
			if v == "" {
				h.LogDelete([]byte(k))
			} else {
				h.LogUpsert([]byte(k), []byte(v))
			}
		}
		h.SetLiveRows(int64(len(next[i])))
		if h.WantsLiveSnapshot() {
			held.Add(1)
			h.SetLiveSnapshot(&mapView{data: maps.Clone(next[i]), drop: drop, released: held})
		}
	}
	var all []StateStore
	for i := range handles {
		st, _, err := handles[i].Settle()
		if err != nil {
			for _, s := range all {
				s.Abort()
			}
			return err
		}
		if st != nil {
			all = append(all, st)
		}
	}
	return q.prov.CommitGroupAt(context.Background(), version+1, all)
}

// liveSnapshots sums the partitions' snapshots made from live views.
func (q *groupQuery) liveSnapshots() int64 {
	var n int64
	for _, p := range q.parts {
		sp := p.(*StorePartition)
		sp.mu.Lock()
		n += sp.liveSnaps
		sp.mu.Unlock()
	}
	return n
}

// liveModelRun runs random epochs whose snapshots are made from live
// views, with maintenance now and then behind the commits, in-process
// re-runs of committed epochs, restarts (the
// process gone after a snapshot was written and before the next commit
// purges the state log: a crash between the two) and few retained
// versions (so that loads rebuild from the live snapshots, the deltas
// under them purged). It returns the first version that reads otherwise
// than the model, or nil, and the snapshots made from live views.
func liveModelRun(t *testing.T, seed int64, opts StoreOptions, drop bool) (error, int64) {
	const parts, epochs = 4, 80
	r := rand.New(rand.NewSource(seed))
	root := t.TempDir()
	w := &Writer{NoSync: true}
	var held atomic.Int64
	q := openGroupQuery(t, root, w, parts, opts)
	models := [][]map[string]string{make([]map[string]string, parts)}
	for i := range models[0] {
		models[0][i] = map[string]string{}
	}
	live := int64(0)
	check := func(v int64) error {
		got, err := q.read(v)
		if err != nil {
			return fmt.Errorf("version %d: %w", v, err)
		}
		if !equalStates(got, models[v]) {
			return fmt.Errorf("version %d reads %v, model %v", v, got, models[v])
		}
		return nil
	}
	for v := int64(0); v < epochs; v++ {
		changes := randomChanges(r, parts, models[v])
		if err := q.runLive(v, changes, models[v], drop, &held); err != nil {
			t.Fatalf("epoch %d: %v", v, err)
		}
		models = append(models[:v+1], applyChanges(models[v], changes))
		if r.Intn(3) != 0 {
			// Else maintenance runs behind the next commits, which hand
			// views of later versions meanwhile.
			for _, p := range q.parts {
				if err := p.(*StorePartition).WaitMaintenance(); err != nil {
					t.Fatal(err)
				}
			}
		}
		wrote := q.liveSnapshots()
		switch {
		case r.Intn(6) == 0:
			// In-process re-run with the recorded input.
			if err := q.runLive(v, changes, models[v], drop, &held); err != nil {
				t.Fatalf("re-run of epoch %d: %v", v, err)
			}
			for _, p := range q.parts {
				if err := p.(*StorePartition).WaitMaintenance(); err != nil {
					t.Fatal(err)
				}
			}
			wrote = q.liveSnapshots()
			fallthrough
		case wrote > 0 && r.Intn(2) == 0, r.Intn(8) == 0:
			// Restart right after the snapshot's write, before the next
			// commit purges the log.
			live += wrote
			q.prov.Close()
			if n := held.Load(); n != 0 {
				t.Fatalf("epoch %d: %d live views not released after close", v, n)
			}
			q = openGroupQuery(t, root, w, parts, opts)
			if err := check(v + 1); err != nil {
				return err, live
			}
		}
		if err := check(v + 1); err != nil {
			return err, live + q.liveSnapshots()
		}
	}
	live += q.liveSnapshots()
	for v := int64(epochs - opts.MinVersionsToRetain); v <= epochs; v++ {
		if err := check(v); err != nil {
			return err, live
		}
	}
	q.prov.Close()
	if n := held.Load(); n != 0 {
		t.Fatalf("%d live views not released", n)
	}
	return nil, live
}

// TestLiveSnapshotsMatchModel: the state loaded from snapshots made from
// the operator's live views plus the state log's deltas equals the
// model's at every version, across re-runs and restarts; with a view
// that leaves a key out, the same run reads a wrong version (the test
// sees what a wrong live snapshot does).
func TestLiveSnapshotsMatchModel(t *testing.T) {
	for seed := int64(1); seed <= 6; seed++ {
		opts := StoreOptions{MinDeltasForSnapshot: 2, MaxDeltasForSnapshot: 4, MinVersionsToRetain: 3}
		if seed%2 == 0 {
			opts.fullSnapshots = true
		} else {
			opts.segmentSlack = -1
		}
		t.Run(fmt.Sprintf("seed=%d", seed), func(t *testing.T) {
			err, live := liveModelRun(t, seed, opts, false)
			if err != nil {
				t.Fatal(err)
			}
			if live == 0 {
				t.Fatal("no snapshot was made from a live view")
			}
		})
		t.Run(fmt.Sprintf("seed=%d/wrong view", seed), func(t *testing.T) {
			if err, _ := liveModelRun(t, seed, opts, true); err == nil {
				t.Fatal("a view missing a key went unnoticed")
			}
		})
	}
}

// TestLiveSnapshotDamage: a damaged snapshot made from a live view is
// named at load when the deltas under it are gone, as any snapshot is,
// and a torn one too.
func TestLiveSnapshotDamage(t *testing.T) {
	for _, damage := range []string{"flip", "torn"} {
		t.Run(damage, func(t *testing.T) {
			dir := t.TempDir()
			opts := StoreOptions{MinDeltasForSnapshot: 2, MaxDeltasForSnapshot: 4, MinVersionsToRetain: 1, fullSnapshots: true}
			p, _ := openTestPartition(t, dir, opts)
			model := map[string]string{}
			var held atomic.Int64
			for v := int64(0); v < 12; v++ {
				s, err := p.Begin(v)
				if err != nil {
					t.Fatal(err)
				}
				for i := range 30 {
					k := fmt.Sprintf("k%04d", int(v)*30+i)
					model[k] = fmt.Sprint(v)
					s.(ChangelogWriter).LogUpsert([]byte(k), []byte(model[k]))
				}
				s.(ChangelogWriter).SetLiveRows(int64(len(model)))
				if ls := s.(LiveSnapshotter); ls.WantsLiveSnapshot() {
					held.Add(1)
					ls.SetLiveSnapshot(&mapView{data: maps.Clone(model), released: &held})
				}
				if _, err := s.Commit(context.Background()); err != nil {
					t.Fatal(err)
				}
				if err := p.WaitMaintenance(); err != nil {
					t.Fatal(err)
				}
			}
			if p.liveSnaps == 0 {
				t.Fatal("no snapshot was made from a live view")
			}
			p.Close()
			newest := int64(-1)
			for n := range baseFiles(t, dir) {
				var v int64
				if _, err := fmt.Sscanf(n, "%d.snapshot", &v); err == nil && v > newest {
					newest = v
				}
			}
			name := fmt.Sprintf("%d.snapshot", newest)
			path := filepath.Join(dir, name)
			b, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			if damage == "flip" {
				b[len(b)/2] ^= 0xff
			} else {
				b = b[:len(b)*2/3]
			}
			if err := os.WriteFile(path, b, 0o644); err != nil {
				t.Fatal(err)
			}
			dropDeltas(t, dir)
			q, _ := openTestPartition(t, dir, opts)
			_, err = q.Begin(newest)
			if !errors.Is(err, ErrCorrupt) || !strings.Contains(err.Error(), name) {
				t.Fatalf("want an error naming %s, got %v", name, err)
			}
		})
	}
}

// sizedView is a mapView that tells its entries' bytes (LiveSizer),
// possibly wrong: the hint only sizes the body.
type sizedView struct {
	*mapView
	hint int64
}

func (v sizedView) EntryBytes() int64 { return v.hint }

// streamedView is a mapView that writes its large values through
// emitFrom (LiveStreamer), in pieces.
type streamedView struct{ *mapView }

func (v streamedView) StreamEntries(ctx context.Context, emit func(key, value []byte) error, emitFrom func(key []byte, write func(w io.Writer) error) error) error {
	return v.Entries(ctx, func(key, value []byte) error {
		if len(value) < 1000 {
			return emit(key, value)
		}
		return emitFrom(key, func(w io.Writer) error {
			for i := 0; i < len(value); i += 4097 {
				if _, err := w.Write(value[i:min(i+4097, len(value))]); err != nil {
					return err
				}
			}
			return nil
		})
	})
}

// TestEncodeLiveViewLargeValues: a view whose values straddle
// liveDirectMin (written as chunks of their own) between small ones (in
// the arena's chunks) decodes to its entries, with or without a size
// hint, right or wrong, and with the large ones written by the view
// straight into the body (LiveStreamer).
func TestEncodeLiveViewLargeValues(t *testing.T) {
	r := rand.New(rand.NewSource(5))
	data := map[string]string{}
	var total int64
	for i := range 40 {
		n := r.Intn(16)
		switch i % 4 {
		case 1:
			n = liveDirectMin - 1 + r.Intn(3)
		case 3:
			n = liveDirectMin * (1 + r.Intn(4))
		}
		v := make([]byte, n)
		r.Read(v)
		k := fmt.Sprintf("k%03d", i)
		data[k] = string(v)
		total += int64(len(k) + n)
	}
	var held atomic.Int64
	for _, hint := range []int64{-2, -1, 0, total / 3, total} {
		held.Add(1)
		mv := &mapView{data: data, released: &held}
		var view LiveView = mv
		switch {
		case hint == -2:
			view = streamedView{mv}
		case hint >= 0:
			view = sizedView{mv, hint}
		}
		raw, entries, state, err := encodeLiveView(view)
		view.Release()
		if err != nil {
			t.Fatal(err)
		}
		if entries != int64(len(data)) || state != total {
			t.Fatalf("hint %d: %d entries of %d bytes, want %d of %d", hint, entries, state, len(data), total)
		}
		got := map[string][]byte{}
		if err := decodeState(nil, raw, got); err != nil {
			t.Fatalf("hint %d: %v", hint, err)
		}
		if len(got) != len(data) {
			t.Fatalf("hint %d: %d entries decoded, want %d", hint, len(got), len(data))
		}
		for k, v := range data {
			if string(got[k]) != v {
				t.Fatalf("hint %d: key %s decodes %d bytes, want %d", hint, k, len(got[k]), len(v))
			}
		}
	}
}
