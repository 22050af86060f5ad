package checkpoint

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"testing"
)

// TestPartitionDirectoriesMadeLazily: a partition's directory is made by
// its first file (a snapshot under group commit, a delta without it), not
// when it is opened; partitions that never write a file have none, and
// every partition, with a directory or without, loads the model's state
// after a restart. Opening made all 20 directories before. With snapshot
// packs (the default) no partition makes a directory: the snapshots are
// in the operator's packs.
func TestPartitionDirectoriesMadeLazily(t *testing.T) {
	for _, perPartition := range []bool{true, false} {
		t.Run(fmt.Sprintf("perPartition=%v", perPartition), func(t *testing.T) {
			testPartitionDirectoriesMadeLazily(t, perPartition)
		})
	}
}

func testPartitionDirectoriesMadeLazily(t *testing.T, perPartition bool) {
	root := t.TempDir()
	w := &Writer{NoSync: true}
	opts := StoreOptions{MinDeltasForSnapshot: 2, MaxDeltasForSnapshot: 3, PartitionSnapshotFiles: perPartition}
	const parts = 20
	q := openGroupQuery(t, root, w, parts, opts)
	model := make([]map[string]string, parts)
	for i := range model {
		model[i] = map[string]string{}
	}
	changed := map[int]bool{3: true, 7: true}
	const epochs = 12
	for v := int64(0); v < epochs; v++ {
		c := map[int]change{}
		for p := range changed {
			// Every key rewritten: the log turns over and the
			// partition is snapshotted.
			c[p] = change{"a": fmt.Sprint("x", v), "b": fmt.Sprint("y", v)}
		}
		if err := q.run(v, c, true); err != nil {
			t.Fatal(err)
		}
		model = applyChanges(model, c)
	}
	if err := q.prov.Close(); err != nil { // waits for maintenance
		t.Fatal(err)
	}
	snapshotted := 0
	for i := 0; i < parts; i++ {
		dir := filepath.Join(root, "state", "0", fmt.Sprint(i))
		ents, err := os.ReadDir(dir)
		switch {
		case !perPartition && !errors.Is(err, os.ErrNotExist):
			t.Errorf("partition %d has a directory (%v, %d entries): its snapshots belong in packs", i, err, len(ents))
		case !perPartition:
			if changed[i] && len(partitionBases(t, filepath.Join(root, "state", "0"), fmt.Sprint(i))) > 0 {
				snapshotted++
			}
		case changed[i] && err == nil && len(ents) > 0:
			snapshotted++
		case changed[i] && err != nil && !errors.Is(err, os.ErrNotExist):
			t.Fatal(err)
		case !changed[i] && !errors.Is(err, os.ErrNotExist):
			t.Errorf("partition %d never wrote a file but has a directory (%v, %d entries)", i, err, len(ents))
		}
	}
	if snapshotted == 0 {
		t.Fatal("no partition wrote a snapshot: the test does not cover the directory made by maintenance")
	}
	q = openGroupQuery(t, root, w, parts, opts)
	got, err := q.read(epochs)
	if err != nil {
		t.Fatal(err)
	}
	if !equalStates(got, model) {
		t.Fatalf("after a restart version %d reads %v, want %v", epochs, got, model)
	}
	// The restarted partitions continue, and an untouched one's first
	// file makes its directory.
	if err := q.run(epochs, map[int]change{11: {"c": "1"}}, true); err != nil {
		t.Fatal(err)
	}
	model = applyChanges(model, map[int]change{11: {"c": "1"}})
	if err := q.prov.Close(); err != nil {
		t.Fatal(err)
	}
	// A snapshotted partition whose directory is lost is rebuilt from
	// the state log, which still holds every version here (the
	// partitions that never snapshot keep it): a snapshot is a shortcut.
	if err := os.RemoveAll(filepath.Join(root, "state", "0", "3")); err != nil {
		t.Fatal(err)
	}
	packs, _ := filepath.Glob(filepath.Join(root, "state", "0", "*"+packExt))
	if !perPartition && len(packs) == 0 {
		t.Fatal("no snapshot pack")
	}
	for _, pk := range packs {
		if err := os.Remove(pk); err != nil {
			t.Fatal(err)
		}
	}
	q = openGroupQuery(t, root, w, parts, opts)
	got, err = q.read(epochs + 1)
	if err != nil {
		t.Fatal(err)
	}
	if !equalStates(got, model) {
		t.Fatalf("without partition 3's directory version %d reads %v, want %v", epochs+1, got, model)
	}
}

// TestPartitionDirectoryMadeByDeltaFile: without a state log a commit's
// delta file is the partition's first file and makes its directory.
func TestPartitionDirectoryMadeByDeltaFile(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "state", "0", "5")
	p, err := OpenStorePartition(dir, &Writer{NoSync: true}, StoreOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	if _, err := os.Stat(dir); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("opening made %s (%v)", dir, err)
	}
	s, err := p.Begin(0)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Put([]byte("k"), []byte("v")); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Commit(context.Background()); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(dir, "1.delta")); err != nil {
		t.Fatal(err)
	}
}
