package checkpoint

import (
	"context"
	"fmt"
	"maps"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
)

// gatedView is a mapView whose Entries waits for gate after it has
// signalled started: the snapshot that reads it is held mid-way.
type gatedView struct {
	*mapView
	started chan struct{}
	gate    chan struct{}
	once    sync.Once
}

func (v *gatedView) Entries(ctx context.Context, emit func(key, value []byte) error) error {
	v.once.Do(func() { close(v.started) })
	<-v.gate
	return v.mapView.Entries(ctx, emit)
}

// TestNoSecondViewWhileSnapshotting: while maintenance writes a snapshot
// from an operator's live view, the next epochs are not asked for
// another one. The changes that made the snapshot due are still counted
// until it is installed, so the rule alone said yes again, and the
// operator copied its whole state into a view that the maintenance then
// dropped unused (q11 copied its sessions twice for one snapshot when the
// machine was loaded). Once the snapshot is in, every version loads as
// the model says.
func TestNoSecondViewWhileSnapshotting(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	opts := StoreOptions{MinDeltasForSnapshot: 1, MaxDeltasForSnapshot: 1000, MinVersionsToRetain: 1000}
	p, _ := openTestPartition(t, dir, opts)
	var held atomic.Int64
	model := map[string]string{}
	versions := []map[string]string{{}}
	// epoch logs a new key and rewrites every older one (a state that
	// turns over: the log soon holds many times the live bytes), and
	// hands view when the store asks for one; it reports whether it did.
	epoch := func(e int64, view func(map[string]string) LiveView) bool {
		t.Helper()
		s, err := p.Begin(e)
		if err != nil {
			t.Fatal(err)
		}
		cw := s.(ChangelogWriter)
		model[fmt.Sprintf("k%03d", e)] = ""
		var live int64
		for k := range model {
			v := strings.Repeat(string(rune('a'+e%26)), 200)
			model[k] = v
			cw.LogUpsert([]byte(k), []byte(v))
			live += int64(len(k) + len(v))
		}
		cw.SetLiveRows(int64(len(model)))
		s.(LiveBytesSetter).SetLiveBytes(live)
		asked := false
		if s.(LiveSnapshotter).WantsLiveSnapshot() && view != nil {
			held.Add(1)
			s.(LiveSnapshotter).SetLiveSnapshot(view(maps.Clone(model)))
			asked = true
		}
		if _, err := s.Commit(ctx); err != nil {
			t.Fatal(err)
		}
		versions = append(versions, clone(model))
		return asked
	}
	plain := func(m map[string]string) LiveView { return &mapView{data: m, released: &held} }
	e := int64(0)
	// Until the first view is asked for (the first maintenance lists the
	// directory; the deltas must outweigh the live state).
	for ; e < 50; e++ {
		if err := p.WaitMaintenance(); err != nil {
			t.Fatal(err)
		}
		if epoch(e, plain) {
			break
		}
	}
	if err := p.WaitMaintenance(); err != nil {
		t.Fatal(err)
	}
	if e == 50 {
		t.Fatal("no live view was asked for in 50 epochs")
	}
	// Run up to the next snapshot with the maintenance held inside the
	// view's entries.
	g := &gatedView{started: make(chan struct{}), gate: make(chan struct{})}
	gated := func(m map[string]string) LiveView {
		g.mapView = &mapView{data: m, released: &held}
		return g
	}
	for e++; ; e++ {
		if e > 200 {
			t.Fatal("no second live view was asked for in 200 epochs")
		}
		if err := p.WaitMaintenance(); err != nil {
			t.Fatal(err)
		}
		if epoch(e, gated) {
			break
		}
	}
	<-g.started
	// The snapshot of version e+1 is under way: the next epochs, whose
	// changes alone are not enough for another, are not asked for a view.
	for i := 0; i < 3; i++ {
		e++
		if epoch(e, plain) {
			close(g.gate)
			t.Fatalf("epoch %d was asked for a live view while the snapshot of an earlier one was being written", e)
		}
	}
	close(g.gate)
	if err := p.WaitMaintenance(); err != nil {
		t.Fatal(err)
	}
	if n := p.LiveSnapshots(); n != 2 {
		t.Fatalf("%d snapshots from live views, want 2", n)
	}
	p2, _ := openTestPartition(t, dir, opts)
	for v := int64(1); v < int64(len(versions)); v++ {
		got := readVersion(t, p2, v)
		if !maps.Equal(got, versions[v]) {
			t.Fatalf("version %d loads %d keys, the model has %d", v, len(got), len(versions[v]))
		}
	}
	if n := held.Load(); n != 0 {
		t.Fatalf("%d live views not released", n)
	}
}
