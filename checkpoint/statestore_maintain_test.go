package checkpoint

import (
	"context"
	"fmt"
	"math/rand"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestSnapshotCostIsAmortizedOverChanges: a large state changed a little
// per epoch is not rewritten every MinDeltasForSnapshot epochs (the cost
// that grew with the square of the epochs): the bytes of snapshots written
// stay within a small multiple of the bytes of changes, and every version
// still loads as a brute-force model says.
func TestSnapshotCostIsAmortizedOverChanges(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	p, _ := openTestPartition(t, dir, StoreOptions{MinDeltasForSnapshot: 10, MinVersionsToRetain: 10_000})
	r := rand.New(rand.NewSource(1))
	value := func() []byte { return []byte(fmt.Sprintf("%016x%016x", r.Uint64(), r.Uint64())) }
	model := map[string]string{}
	var versions []map[string]string
	const epochs, keys, perEpoch = 300, 2000, 10
	for e := int64(0); e < epochs; e++ {
		s, err := p.Begin(e)
		if err != nil {
			t.Fatal(err)
		}
		n := perEpoch
		if e == 0 {
			n = keys
		}
		for i := 0; i < n; i++ {
			k := fmt.Sprintf("k%05d", r.Intn(keys))
			if e == 0 {
				k = fmt.Sprintf("k%05d", i)
			}
			if r.Intn(10) == 0 && e > 0 {
				if err := s.Delete([]byte(k)); err != nil {
					t.Fatal(err)
				}
				delete(model, k)
				continue
			}
			v := value()
			if err := s.Put([]byte(k), v); err != nil {
				t.Fatal(err)
			}
			model[k] = string(v)
		}
		if _, err := s.Commit(ctx); err != nil {
			t.Fatal(err)
		}
		if err := p.WaitMaintenance(); err != nil {
			t.Fatal(err)
		}
		versions = append(versions, clone(model))
	}
	var snapBytes, deltaBytes int64
	snaps := 0
	ents, _ := os.ReadDir(dir)
	for _, e := range ents {
		info, _ := e.Info()
		switch {
		case strings.HasSuffix(e.Name(), ".snapshot"):
			snaps++
			snapBytes += info.Size()
		case strings.HasSuffix(e.Name(), ".delta") && e.Name() != "1.delta":
			deltaBytes += info.Size()
		}
	}
	if snaps == 0 {
		t.Fatal("no snapshot written: loads replay every delta")
	}
	// Every MinDeltasForSnapshot epochs would be 27 snapshots of the whole
	// state, about 15 times the bytes of the changes.
	if snapBytes > 3*deltaBytes {
		t.Fatalf("%d snapshots hold %d bytes for %d bytes of changes: snapshots are not amortized over changes", snaps, snapBytes, deltaBytes)
	}
	p2, _ := openTestPartition(t, dir, StoreOptions{})
	for _, v := range []int64{1, 50, 150, 299, epochs} {
		got := readVersion(t, p2, v)
		if want := versions[v-1]; !equalMaps(got, want) {
			t.Fatalf("version %d: %d keys, want %d", v, len(got), len(want))
		}
	}
	if _, err := os.Stat(filepath.Join(dir, "1.delta")); err != nil {
		t.Fatal(err)
	}
}

// TestSnapshotEveryMinDeltasWhenChangesAreLarge: when each epoch rewrites
// about the whole state, a snapshot costs no more than the deltas and is
// written every MinDeltasForSnapshot epochs, as before.
func TestSnapshotEveryMinDeltasWhenChangesAreLarge(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	p, _ := openTestPartition(t, dir, StoreOptions{MinDeltasForSnapshot: 3, MinVersionsToRetain: 1000})
	for e := int64(0); e < 20; e++ {
		s, err := p.Begin(e)
		if err != nil {
			t.Fatal(err)
		}
		for i := 0; i < 50; i++ {
			if err := s.Put([]byte(fmt.Sprintf("k%02d", i)), []byte(fmt.Sprint(e))); err != nil {
				t.Fatal(err)
			}
		}
		if _, err := s.Commit(ctx); err != nil {
			t.Fatal(err)
		}
		if err := p.WaitMaintenance(); err != nil {
			t.Fatal(err)
		}
	}
	var got []string
	ents, _ := os.ReadDir(dir)
	for _, e := range ents {
		if strings.HasSuffix(e.Name(), ".snapshot") {
			got = append(got, e.Name())
		}
	}
	if len(got) != 5 { // versions 4, 8, 12, 16, 20
		t.Fatalf("snapshots %v, want one every 4 versions", got)
	}
}

func clone(m map[string]string) map[string]string {
	out := make(map[string]string, len(m))
	for k, v := range m {
		out[k] = v
	}
	return out
}

func equalMaps(a, b map[string]string) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if w, ok := b[k]; !ok || w != v {
			return false
		}
	}
	return true
}

// TestSnapshotCostOfGrowingStateIsAmortized: a state that only grows (a
// join side that never evicts), on both write paths, is snapshotted each
// time it has grown by a fraction, not every MaxDeltasForSnapshot epochs
// at its growing size: the bytes of snapshots written stay within a small
// multiple of the bytes of changes (every 6 epochs it was 16 times
// here, and growing with the run), and the last version loads whole.
func TestSnapshotCostOfGrowingStateIsAmortized(t *testing.T) {
	for _, changelog := range []bool{false, true} {
		t.Run(fmt.Sprintf("changelog=%v", changelog), func(t *testing.T) {
			ctx := context.Background()
			dir := t.TempDir()
			opts := StoreOptions{MinDeltasForSnapshot: 2, MaxDeltasForSnapshot: 6, MinVersionsToRetain: 10_000}
			p, _ := openTestPartition(t, dir, opts)
			const epochs, perEpoch = 200, 20
			var changes, snapshots int64
			for e := int64(0); e < epochs; e++ {
				s, err := p.Begin(e)
				if err != nil {
					t.Fatal(err)
				}
				for i := 0; i < perEpoch; i++ {
					k, v := []byte(fmt.Sprintf("k%06d", e*perEpoch+int64(i))), []byte("0123456789abcdef")
					changes += int64(len(k) + len(v))
					if changelog {
						s.(ChangelogWriter).LogUpsert(k, v)
					} else if err := s.Put(k, v); err != nil {
						t.Fatal(err)
					}
				}
				if changelog {
					s.(ChangelogWriter).SetLiveRows((e + 1) * perEpoch)
				}
				if _, err := s.Commit(ctx); err != nil {
					t.Fatal(err)
				}
				if err := p.WaitMaintenance(); err != nil {
					t.Fatal(err)
				}
				if _, err := os.Stat(p.file(e+1, "snapshot")); err == nil {
					snapshots += (e + 1) * perEpoch * int64(len("k000000")+16)
				}
			}
			if snapshots > 4*changes {
				t.Fatalf("snapshots wrote %d key and value bytes for %d bytes of changes", snapshots, changes)
			}
			p2, _ := openTestPartition(t, dir, opts)
			s, err := p2.Begin(epochs)
			if err != nil {
				t.Fatal(err)
			}
			defer s.Abort()
			if n := s.Len(); n != epochs*perEpoch {
				t.Fatalf("loaded %d keys, want %d", n, epochs*perEpoch)
			}
		})
	}
}
