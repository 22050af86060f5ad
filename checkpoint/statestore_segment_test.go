package checkpoint

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// baseFiles lists the partition's snapshot and segment files by name.
func baseFiles(t *testing.T, dir string) map[string]bool {
	t.Helper()
	ents, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]bool{}
	for _, e := range ents {
		if strings.HasSuffix(e.Name(), ".snapshot") || strings.HasSuffix(e.Name(), segmentSuffix) {
			out[e.Name()] = true
		}
	}
	return out
}

// logEpoch commits one changelog epoch: upserts then deletes.
func logEpoch(t *testing.T, p *StorePartition, v int64, upserts map[string]string, deletes []string, rows int) {
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
	cw.SetLiveRows(int64(rows))
	if _, err := s.Commit(context.Background()); err != nil {
		t.Fatal(err)
	}
	if err := p.WaitMaintenance(); err != nil {
		t.Fatal(err)
	}
}

// TestSegmentedSnapshotsMatchModel: random upserts and deletes through the
// changelog, with snapshots due every few epochs and only a few versions
// retained (so that the deltas under a chain are gone and the chain alone
// rebuilds the state): every version a fresh process loads equals a
// brute-force model's, and both a segment and a full snapshot were
// written along the way.
func TestSegmentedSnapshotsMatchModel(t *testing.T) {
	for seed := range uint64(6) {
		t.Run(fmt.Sprint(seed), func(t *testing.T) {
			rng := rand.New(rand.NewPCG(seed, 11))
			dir := t.TempDir()
			opts := StoreOptions{MinDeltasForSnapshot: 2, MaxDeltasForSnapshot: 4, MinVersionsToRetain: 3}
			if seed%2 == 1 {
				// No slack: chains fold into full snapshots as soon as
				// they hold more dead entries than live keys.
				opts.segmentSlack = -1
			}
			p, _ := openTestPartition(t, dir, opts)
			model := map[string]string{}
			seen := map[string]bool{}
			// Enough keys that the slack lets chains grow, few enough
			// that overwrites and deletes accumulate dead entries.
			keys := 400 + rng.IntN(2000)
			for v := int64(0); v < 120; v++ {
				up := map[string]string{}
				var del []string
				for range rng.IntN(60) {
					k := fmt.Sprintf("k%05d", rng.IntN(keys))
					if rng.IntN(4) == 0 {
						delete(up, k)
						del = append(del, k)
						delete(model, k)
						continue
					}
					up[k] = fmt.Sprintf("v%d.%d", v, rng.IntN(1000))
				}
				// Deletes are logged after upserts: a key in both ends
				// deleted, as in the model.
				for k, val := range up {
					if !slicesContains(del, k) {
						model[k] = val
					}
				}
				logEpoch(t, p, v, up, del, len(model))
				for n := range baseFiles(t, dir) {
					seen[n] = true
				}
				if v%7 == 6 {
					q, _ := openTestPartition(t, dir, opts)
					s, err := q.Begin(v + 1)
					if err != nil {
						t.Fatalf("load version %d: %v (files %v)", v+1, err, baseFiles(t, dir))
					}
					if got := readAll(t, s); !maps.Equal(got, model) {
						t.Fatalf("version %d loads %d keys, want %d", v+1, len(got), len(model))
					}
					s.Abort()
					q.Close()
				}
			}
			var segs, fulls int
			for n := range seen {
				if strings.HasSuffix(n, segmentSuffix) {
					segs++
				} else {
					fulls++
				}
			}
			if segs == 0 || seed%2 == 1 && fulls == 0 {
				t.Fatalf("%d segments and %d full snapshots written: %v", segs, fulls, seen)
			}
			t.Logf("%d segments, %d full snapshots written", segs, fulls)
		})
	}
}

func slicesContains(s []string, v string) bool {
	for _, x := range s {
		if x == v {
			return true
		}
	}
	return false
}

// TestSegmentCostOfGrowingState: a state that only grows (a join side
// that never evicts), logged through the changelog, is snapshotted in
// segments that each hold only the rows added since the last snapshot:
// the key and value bytes of all snapshot files written stay within 1.25×
// the bytes of changes (full snapshots at each doubling wrote about 2×,
// and read as much again), and the last version loads whole from them.
func TestSegmentCostOfGrowingState(t *testing.T) {
	dir := t.TempDir()
	opts := StoreOptions{MinDeltasForSnapshot: 2, MaxDeltasForSnapshot: 6, MinVersionsToRetain: 4}
	p, _ := openTestPartition(t, dir, opts)
	const epochs, perEpoch = 200, 20
	var changes, written int64
	counted := map[string]bool{}
	for e := int64(0); e < epochs; e++ {
		up := map[string]string{}
		for i := range perEpoch {
			k := fmt.Sprintf("k%06d", e*perEpoch+int64(i))
			up[k] = "0123456789abcdef"
			changes += int64(len(k) + 16)
		}
		logEpoch(t, p, e, up, nil, int((e+1)*perEpoch))
		for n := range baseFiles(t, dir) {
			if counted[n] {
				continue
			}
			counted[n] = true
			data := map[string][]byte{}
			if _, err := p.readInto(filepath.Join(dir, n), data); err != nil {
				t.Fatal(err)
			}
			for k, v := range data {
				written += int64(len(k) + len(v))
			}
		}
	}
	if written > changes*5/4 {
		t.Fatalf("snapshots wrote %d key and value bytes for %d bytes of changes (files %v)", written, changes, counted)
	}
	q, _ := openTestPartition(t, dir, opts)
	s, err := q.Begin(epochs)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Abort()
	if n := len(readAll(t, s)); n != epochs*perEpoch {
		t.Fatalf("loaded %d keys, want %d", n, epochs*perEpoch)
	}
}

// TestSegmentDamage: a damaged segment, or a chain whose base is gone,
// is worked around from an older snapshot when the deltas after it are
// still there, and otherwise refused with the damaged file named.
func TestSegmentDamage(t *testing.T) {
	build := func(t *testing.T, retain int) (string, map[string]string, StoreOptions) {
		dir := t.TempDir()
		opts := StoreOptions{MinDeltasForSnapshot: 2, MaxDeltasForSnapshot: 4, MinVersionsToRetain: retain}
		p, _ := openTestPartition(t, dir, opts)
		model := map[string]string{}
		for v := int64(0); v < 12; v++ {
			up := map[string]string{}
			for i := range 30 {
				k := fmt.Sprintf("k%04d", int(v)*30+i)
				up[k] = fmt.Sprint(v)
				model[k] = up[k]
			}
			logEpoch(t, p, v, up, nil, len(model))
		}
		p.Close()
		return dir, model, opts
	}
	newestSegment := func(t *testing.T, dir string) (name string, base string) {
		best := int64(-1)
		for n := range baseFiles(t, dir) {
			var v, b int64
			if _, err := fmt.Sscanf(n, "%d.%d.segment", &v, &b); err == nil && v > best {
				best, name, base = v, n, fmt.Sprint(b)
			}
		}
		if best < 0 {
			t.Fatalf("no segment in %v", baseFiles(t, dir))
		}
		return name, base
	}
	flip := func(t *testing.T, path string) {
		b, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		b[len(b)/2] ^= 0xff
		if err := os.WriteFile(path, b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	t.Run("damaged segment, deltas kept", func(t *testing.T) {
		dir, model, opts := build(t, 1000)
		seg, _ := newestSegment(t, dir)
		flip(t, filepath.Join(dir, seg))
		q, _ := openTestPartition(t, dir, opts)
		s, err := q.Begin(12)
		if err != nil {
			t.Fatalf("rebuild around %s: %v", seg, err)
		}
		defer s.Abort()
		if got := readAll(t, s); !maps.Equal(got, model) {
			t.Fatalf("rebuilt %d keys, want %d", len(got), len(model))
		}
	})
	t.Run("damaged segment, deltas gone", func(t *testing.T) {
		dir, _, opts := build(t, 1)
		seg, _ := newestSegment(t, dir)
		flip(t, filepath.Join(dir, seg))
		dropDeltas(t, dir)
		q, _ := openTestPartition(t, dir, opts)
		_, err := q.Begin(12)
		if !errors.Is(err, ErrCorrupt) || !strings.Contains(err.Error(), seg) {
			t.Fatalf("want an error naming %s, got %v", seg, err)
		}
	})
	t.Run("missing base, deltas gone", func(t *testing.T) {
		dir, _, opts := build(t, 1)
		seg, base := newestSegment(t, dir)
		if base == "0" {
			t.Skip("the newest segment is on the empty version")
		}
		for n := range baseFiles(t, dir) {
			if strings.HasPrefix(n, base+".") {
				if err := os.Remove(filepath.Join(dir, n)); err != nil {
					t.Fatal(err)
				}
			}
		}
		dropDeltas(t, dir)
		q, _ := openTestPartition(t, dir, opts)
		_, err := q.Begin(12)
		if !errors.Is(err, ErrCorrupt) || !strings.Contains(err.Error(), seg) || !strings.Contains(err.Error(), "missing") {
			t.Fatalf("want an error naming %s and its missing base %s, got %v", seg, base, err)
		}
	})
}

// dropDeltas removes the partition's delta files: what is left to load
// from is its snapshots.
func dropDeltas(t *testing.T, dir string) {
	t.Helper()
	deltas, err := filepath.Glob(filepath.Join(dir, "*.delta"))
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range deltas {
		if err := os.Remove(d); err != nil {
			t.Fatal(err)
		}
	}
}
