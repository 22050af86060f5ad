package checkpoint

import (
	"context"
	"fmt"
	"math/rand"
	"os"
	"strings"
	"testing"
)

// TestSnapshotByDeclaredLiveBytes: a changelog partition whose operator
// declares its live bytes (LiveBytesSetter) is snapshotted only when a
// load would replay at least replayFactor times the live state. A state
// that only grows (a join side without eviction) is never snapshotted:
// its log is all live, and a snapshot would rewrite as many bytes to save
// a load nothing. A state that turns over (a join side evicted by
// watermark) is snapshotted so that what a load replays stays within
// about replayFactor times the live state, and the live bytes the
// snapshots rewrite stay within 1/(replayFactor-1) of the changes' bytes
// (at a factor of two they were about as many as the changes). Every
// version checked loads as a brute-force model says.
func TestSnapshotByDeclaredLiveBytes(t *testing.T) {
	for _, tc := range []struct {
		name   string
		window int64 // epochs a key lives (0: for ever)
	}{{"grows", 0}, {"turns over", 8}} {
		t.Run(tc.name, func(t *testing.T) {
			ctx := context.Background()
			dir := t.TempDir()
			// No slack of dead entries in a segment chain: the bound on
			// what a load replays is then in bytes alone (a chain may
			// otherwise hold minSegmentSlack dead entries more).
			opts := StoreOptions{MinDeltasForSnapshot: 2, MaxDeltasForSnapshot: 100, MinVersionsToRetain: 10_000, segmentSlack: -1}
			p, _ := openTestPartition(t, dir, opts)
			r := rand.New(rand.NewSource(7))
			model := map[string]string{}
			versions := []map[string]string{{}}
			born := map[int64][]string{} // keys by the epoch that wrote them
			const epochs, perEpoch = 150, 12
			var changes, maxEpoch int64
			// rewritten is the live bytes at the versions snapshotted:
			// what the snapshots cost.
			var rewritten int64
			bases := 0
			for e := int64(0); e < epochs; e++ {
				s, err := p.Begin(e)
				if err != nil {
					t.Fatal(err)
				}
				cw := s.(ChangelogWriter)
				var epochBytes int64
				for i := 0; i < perEpoch; i++ {
					k := fmt.Sprintf("k%06d", e*perEpoch+int64(i))
					v := strings.Repeat(string(rune('a'+r.Intn(26))), 50+r.Intn(400))
					cw.LogUpsert([]byte(k), []byte(v))
					model[k] = v
					born[e] = append(born[e], k)
					epochBytes += int64(len(k) + len(v))
				}
				if tc.window > 0 {
					for _, k := range born[e-tc.window] {
						cw.LogDelete([]byte(k))
						delete(model, k)
						epochBytes += int64(len(k))
					}
					delete(born, e-tc.window)
				}
				changes += epochBytes
				maxEpoch = max(maxEpoch, epochBytes)
				var live int64
				for k, v := range model {
					live += int64(len(k) + len(v))
				}
				cw.SetLiveRows(int64(len(model)))
				s.(LiveBytesSetter).SetLiveBytes(live)
				// The operator asks after its changes whether the
				// commit makes a snapshot due (it then hands a view of
				// its live state): the answer must be the maintenance's,
				// or the snapshot is folded from the files instead.
				wants := s.(LiveSnapshotter).WantsLiveSnapshot()
				if _, err := s.Commit(ctx); err != nil {
					t.Fatal(err)
				}
				if err := p.WaitMaintenance(); err != nil {
					t.Fatal(err)
				}
				if _, err := os.Stat(p.file(e+1, "snapshot")); err == nil && !wants && e > 0 {
					t.Fatalf("epoch %d: a full snapshot was written but the commit did not ask for the live view", e)
				}
				versions = append(versions, clone(model))
				if n := countBases(t, dir); n > bases {
					bases = n
					rewritten += live
				}
				p.mu.Lock()
				replay := p.sinceSnap + p.snapBytes
				p.mu.Unlock()
				// Between snapshots the replay grows by at most an
				// epoch's changes past replayFactor times the live
				// state, for at most MinDeltasForSnapshot+1 epochs after
				// a snapshot.
				if bound := replayFactor*live + int64(opts.MinDeltasForSnapshot+1)*maxEpoch; replay > bound {
					t.Fatalf("epoch %d: a load replays %d bytes for %d live bytes (bound %d)", e, replay, live, bound)
				}
			}
			var snaps int
			var snapBytes int64
			ents, err := os.ReadDir(dir)
			if err != nil {
				t.Fatal(err)
			}
			for _, ent := range ents {
				if n := ent.Name(); strings.HasSuffix(n, ".snapshot") || strings.HasSuffix(n, ".segment") {
					info, err := ent.Info()
					if err != nil {
						t.Fatal(err)
					}
					snaps++
					snapBytes += info.Size()
				}
			}
			switch {
			case tc.window == 0 && snaps > 0:
				t.Fatalf("a state that only grows was snapshotted %d times (%d bytes for %d bytes of changes)", snaps, snapBytes, changes)
			case tc.window > 0 && snaps == 0:
				t.Fatal("a state that turns over was never snapshotted: loads replay every delta")
			case snapBytes > changes:
				t.Fatalf("%d snapshots hold %d bytes for %d bytes of changes", snaps, snapBytes, changes)
			case rewritten*(replayFactor-1) > changes:
				t.Fatalf("%d snapshots rewrote %d live bytes for %d bytes of changes: more than 1/%d of them", snaps, rewritten, changes, replayFactor-1)
			}
			p2, _ := openTestPartition(t, dir, opts)
			for _, v := range []int64{1, 3, 40, 77, 120, epochs - 1, epochs} {
				got := readVersion(t, p2, v)
				if want := versions[v]; !equalMaps(got, want) {
					t.Fatalf("version %d: %d keys, want %d", v, len(got), len(want))
				}
			}
		})
	}
}

// countBases is the snapshots and segments in dir.
func countBases(t *testing.T, dir string) int {
	t.Helper()
	ents, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, ent := range ents {
		if name := ent.Name(); strings.HasSuffix(name, ".snapshot") || strings.HasSuffix(name, ".segment") {
			n++
		}
	}
	return n
}
