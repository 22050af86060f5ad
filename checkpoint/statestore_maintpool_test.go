package checkpoint

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
)

// TestChangedCommitStartsMaintenanceOnlyWhenDue: a commit that changes a
// partition starts its background maintenance (a job on the pool, which
// wakes a thread) only when a snapshot is due or nextMaint is reached, not
// after every changed epoch; the snapshots are still written when due and
// every version still loads as the model says. Small changes to a large
// state make no snapshot due for many epochs; large ones make one due
// after MinDeltasForSnapshot epochs.
func TestChangedCommitStartsMaintenanceOnlyWhenDue(t *testing.T) {
	for _, tc := range []struct {
		name     string
		perEpoch int // keys changed per epoch after the first
		maxJobs  int64
		minSnaps int
	}{
		{"small changes", 1, 2, 0},
		{"large changes", 2000, 12, 2},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx := context.Background()
			dir := t.TempDir()
			p, _ := openTestPartition(t, dir, StoreOptions{MinDeltasForSnapshot: 10, MinVersionsToRetain: 10_000})
			model := map[string]string{}
			const epochs, keys = 40, 2000
			var versions []map[string]string
			for e := int64(0); e < epochs; e++ {
				s, err := p.Begin(e)
				if err != nil {
					t.Fatal(err)
				}
				n := tc.perEpoch
				if e == 0 {
					n = keys
				}
				for i := 0; i < n; i++ {
					k := fmt.Sprintf("k%05d", (int(e)*7+i)%keys)
					v := fmt.Sprintf("v%d-%d", e, i)
					if err := s.Put([]byte(k), []byte(v)); err != nil {
						t.Fatal(err)
					}
					model[k] = v
				}
				if _, err := s.Commit(ctx); err != nil {
					t.Fatal(err)
				}
				if err := p.WaitMaintenance(); err != nil {
					t.Fatal(err)
				}
				versions = append(versions, clone(model))
			}
			p.opts.maint.mu.Lock()
			jobs := p.opts.maint.submitted
			p.opts.maint.mu.Unlock()
			if jobs > tc.maxJobs {
				t.Errorf("%d maintenance jobs for %d changed commits, want at most %d", jobs, epochs, tc.maxJobs)
			}
			snaps := 0
			p.mu.Lock()
			for k := range p.files {
				if isBase(k) {
					snaps++
				}
			}
			p.mu.Unlock()
			if snaps < tc.minSnaps {
				t.Errorf("%d snapshots written in %d epochs, want at least %d", snaps, epochs, tc.minSnaps)
			}
			t.Logf("%d jobs, %d snapshots", jobs, snaps)
			// Every version loads as the model says, from a fresh
			// partition reading the files alone.
			q, _ := openTestPartition(t, dir, StoreOptions{MinDeltasForSnapshot: 10, MinVersionsToRetain: 10_000})
			for v := int64(1); v <= epochs; v++ {
				s, err := q.Begin(v)
				if err != nil {
					t.Fatal(err)
				}
				if got, want := contents(s), modelContents(versions[v-1]); got != want {
					t.Fatalf("version %d: loaded %.200s, want %.200s", v, got, want)
				}
				s.Abort()
			}
		})
	}
}

// modelContents renders a model as contents renders a store.
func modelContents(m map[string]string) string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	var b strings.Builder
	for _, k := range keys {
		fmt.Fprintf(&b, "%s=%s;", k, m[k])
	}
	return b.String()
}
