package checkpoint

import (
	"context"
	"fmt"
	"maps"
	"strings"
	"sync/atomic"
	"testing"
)

// logLiveEpoch commits one changelog epoch as logEpoch does and, when the
// partition asks, hands it a view of next, the state the epoch leaves.
func logLiveEpoch(t *testing.T, p *StorePartition, v int64, upserts map[string]string, deletes []string, next map[string]string, held *atomic.Int64) {
	t.Helper()
	s, err := p.Begin(v)
	if err != nil {
		t.Fatal(err)
	}
	cw := s.(ChangelogWriter)
	for k, val := range upserts {
		cw.LogUpsert([]byte(k), []byte(val))
	}
	for _, k := range deletes {
		cw.LogDelete([]byte(k))
	}
	cw.SetLiveRows(int64(len(next)))
	if ls := s.(LiveSnapshotter); ls.WantsLiveSnapshot() {
		held.Add(1)
		ls.SetLiveSnapshot(&mapView{data: maps.Clone(next), released: held})
	}
	if _, err := s.Commit(context.Background()); err != nil {
		t.Fatal(err)
	}
	if err := p.WaitMaintenance(); err != nil {
		t.Fatal(err)
	}
}

// TestLiveViewOrSegment: a partition holding a live view snapshots from
// it when the view is smaller than the changes a segment would copy. A
// state that turns over (each key upserted twice and deleted within three
// epochs, as a windowed aggregation's groups) writes full snapshots from
// its views and no segment after the first snapshot (the segments had
// copied every change since the last snapshot, many times the live
// entries); a state that only grows keeps writing segments although it
// is offered views. Both load as the model says.
func TestLiveViewOrSegment(t *testing.T) {
	for _, churn := range []bool{true, false} {
		t.Run(fmt.Sprintf("churn=%v", churn), func(t *testing.T) {
			dir := t.TempDir()
			opts := StoreOptions{MinDeltasForSnapshot: 4, MaxDeltasForSnapshot: 8, MinVersionsToRetain: 4}
			p, _ := openTestPartition(t, dir, opts)
			var held atomic.Int64
			model := map[string]string{}
			const epochs, perEpoch = 120, 30
			segments, fulls := 0, 0
			seen := map[string]bool{}
			for e := int64(0); e < epochs; e++ {
				up := map[string]string{}
				var del []string
				for i := range perEpoch {
					k := fmt.Sprintf("k%06d", e*perEpoch+int64(i))
					up[k] = fmt.Sprintf("first%03d", e)
					if churn && e > 0 {
						// Last epoch's keys change again.
						up[fmt.Sprintf("k%06d", (e-1)*perEpoch+int64(i))] = fmt.Sprintf("again%03d", e)
					}
					if churn && e > 2 {
						del = append(del, fmt.Sprintf("k%06d", (e-3)*perEpoch+int64(i)))
					}
				}
				maps.Copy(model, up)
				for _, k := range del {
					delete(model, k)
				}
				logLiveEpoch(t, p, e, up, del, model, &held)
				for n := range baseFiles(t, dir) {
					if seen[n] {
						continue
					}
					seen[n] = true
					if strings.HasSuffix(n, segmentSuffix) {
						segments++
					} else {
						fulls++
					}
				}
			}
			live := p.LiveSnapshots()
			t.Logf("full snapshots %d (from live views %d), segments %d", fulls, live, segments)
			if churn && (segments > 0 || fulls < 5 || live < int64(fulls)-1) {
				t.Fatalf("turning-over state: %d segments, %d full snapshots of which %d from live views; want no segment, every full snapshot after the first from a view", segments, fulls, live)
			}
			if !churn && segments == 0 {
				t.Fatalf("growing state: no segment (%d full snapshots, %d from live views)", fulls, live)
			}
			q, _ := openTestPartition(t, dir, opts)
			s, err := q.Begin(epochs)
			if err != nil {
				t.Fatal(err)
			}
			defer s.Abort()
			if got := readAll(t, s); !maps.Equal(got, model) {
				t.Fatalf("loaded %d keys, model %d", len(got), len(model))
			}
			p.Close()
			if n := held.Load(); n != 0 {
				t.Fatalf("%d live views not released", n)
			}
		})
	}
}
