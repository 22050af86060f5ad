package checkpoint

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
)

// partitionBases lists the snapshots and segments of partition part of
// the operator in opDir: its own files and its entries in the operator's
// packs.
func partitionBases(t *testing.T, opDir, part string) []string {
	t.Helper()
	var out []string
	ents, _ := os.ReadDir(filepath.Join(opDir, part))
	for _, e := range ents {
		if n := e.Name(); strings.HasSuffix(n, ".snapshot") || strings.HasSuffix(n, ".segment") {
			out = append(out, n)
		}
	}
	packs, _ := filepath.Glob(filepath.Join(opDir, "*"+packExt))
	for _, pk := range packs {
		entries, err := readPackIndex(pk)
		if err != nil {
			t.Fatalf("pack %s: %v", pk, err)
		}
		for _, e := range entries {
			if e.part == part {
				out = append(out, fmt.Sprintf("%s:%d.%s", filepath.Base(pk), e.key.version, e.key.kind))
			}
		}
	}
	return out
}

// fileCounter counts the files written through a Writer (its Hook), by
// kind: pack, snapshot (a partition's own snapshot or segment file),
// other.
type fileCounter struct {
	mu sync.Mutex
	n  map[string]int
}

func (c *fileCounter) writer() *Writer {
	c.n = map[string]int{}
	return &Writer{NoSync: true, Hook: func(step WriteStep, path string) error {
		if step != BeforeTempWrite {
			return nil
		}
		kind := "other"
		switch {
		case strings.HasSuffix(path, packExt):
			kind = "pack"
		case strings.HasSuffix(path, ".snapshot"), strings.HasSuffix(path, ".segment"):
			kind = "snapshot"
		}
		c.mu.Lock()
		c.n[kind]++
		c.mu.Unlock()
		return nil
	}}
}

func (c *fileCounter) get(kind string) int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.n[kind]
}

// waitAll waits for every partition's maintenance.
func (q *groupQuery) waitAll(t *testing.T) {
	t.Helper()
	for _, p := range q.parts {
		if err := p.(*StorePartition).WaitMaintenance(); err != nil {
			t.Fatal(err)
		}
	}
}

// churn is epoch v's changes of every one of parts partitions: keys
// rewritten and a few deleted, so that snapshots fall due together.
func churn(v int64, parts int) map[int]change {
	ch := map[int]change{}
	for i := range parts {
		c := change{fmt.Sprint("k", v%4): fmt.Sprint(v, "/", i), fmt.Sprint("n", v): "x"}
		if v >= 3 {
			c[fmt.Sprint("n", v-3)] = "" // deleted
		}
		ch[i] = c
	}
	return ch
}

// TestSnapshotPacksOnePerOperatorVersion: the snapshots a group commit
// makes due for an operator's partitions are written as one pack file
// per version (counted through the Writer's hook), not a file per
// partition; the restarted partitions read every retained version from
// them as the model has it, with the state log's deltas after them.
// Written per partition (PartitionSnapshotFiles, the old way) the same
// run writes a file for each partition's snapshot.
func TestSnapshotPacksOnePerOperatorVersion(t *testing.T) {
	const parts, epochs = 40, 60
	// Full snapshots only (a chain of segments keeps its links), so that
	// cleanup deletes old bases and with them whole packs.
	opts := StoreOptions{MinDeltasForSnapshot: 4, MaxDeltasForSnapshot: 6, MinVersionsToRetain: 8, fullSnapshots: true}
	counts := map[bool][2]int{} // perPartition → pack files, own files
	for _, perPartition := range []bool{false, true} {
		t.Run(fmt.Sprintf("perPartition=%v", perPartition), func(t *testing.T) {
			root := t.TempDir()
			var fc fileCounter
			o := opts
			o.PartitionSnapshotFiles = perPartition
			q := openGroupQuery(t, root, fc.writer(), parts, o)
			model := make([]map[string]string, parts)
			for i := range model {
				model[i] = map[string]string{}
			}
			models := map[int64][]map[string]string{0: model}
			for v := int64(0); v < epochs; v++ {
				ch := churn(v, parts)
				if err := q.run(v, ch, true); err != nil {
					t.Fatal(err)
				}
				model = applyChanges(model, ch)
				models[v+1] = model
				q.waitAll(t)
			}
			if err := q.prov.Close(); err != nil {
				t.Fatal(err)
			}
			packs, own := fc.get("pack"), fc.get("snapshot")
			counts[perPartition] = [2]int{packs, own}
			t.Logf("%d partitions, %d epochs: %d pack files, %d partition snapshot files", parts, epochs, packs, own)
			if perPartition {
				if packs != 0 || own < parts {
					t.Fatalf("per partition: %d packs, %d own files; want 0 and at least %d", packs, own, parts)
				}
			} else if own != 0 || packs == 0 || packs > epochs/opts.MinDeltasForSnapshot+1 {
				t.Fatalf("packs: %d packs, %d own files; want 1..%d packs (one per snapshot version) and no own file", packs, own, epochs/opts.MinDeltasForSnapshot+1)
			}
			// Old packs go once no partition needs them: the packs left
			// hold the bases of the retained versions.
			left, _ := filepath.Glob(filepath.Join(root, "state", "0", "*"+packExt))
			if !perPartition && (len(left) >= packs || len(left) > 3) {
				t.Fatalf("%d of %d packs still on disk: cleanup deleted none (%v)", len(left), packs, left)
			}
			q = openGroupQuery(t, root, &Writer{NoSync: true}, parts, o)
			for v := int64(epochs - opts.MinVersionsToRetain); v <= epochs; v++ {
				got, err := q.read(v)
				if err != nil {
					t.Fatalf("version %d: %v", v, err)
				}
				if !equalStates(got, models[v]) {
					t.Fatalf("version %d reads %v, model %v", v, got, models[v])
				}
			}
		})
	}
	if c := counts[false]; c[0] == 0 || counts[true][1] < 10*c[0] {
		t.Fatalf("packs wrote %d files against %d per partition: want at most a tenth", c[0], counts[true][1])
	}
}

// TestSnapshotPacksMixedWithFiles: a checkpoint whose partitions wrote
// their snapshots as files of their own (older builds) continues with
// packs, segments on the old full snapshots included, and back; every
// restart reads the retained versions as the model has them.
func TestSnapshotPacksMixedWithFiles(t *testing.T) {
	const parts = 6
	root := t.TempDir()
	opts := StoreOptions{MinDeltasForSnapshot: 3, MaxDeltasForSnapshot: 5, MinVersionsToRetain: 30}
	model := make([]map[string]string, parts)
	for i := range model {
		model[i] = map[string]string{}
	}
	models := map[int64][]map[string]string{0: model}
	v := int64(0)
	for round, perPartition := range []bool{true, false, true, false} {
		o := opts
		o.PartitionSnapshotFiles = perPartition
		q := openGroupQuery(t, root, &Writer{NoSync: true}, parts, o)
		for from := max(v-int64(opts.MinVersionsToRetain), 0); from <= v; from++ {
			got, err := q.read(from)
			if err != nil {
				t.Fatalf("round %d: version %d: %v", round, from, err)
			}
			if !equalStates(got, models[from]) {
				t.Fatalf("round %d: version %d reads %v, model %v", round, from, got, models[from])
			}
		}
		for end := v + 12; v < end; v++ {
			ch := churn(v, parts)
			if v%5 == 0 {
				delete(ch, 2) // a partition that skips epochs
			}
			if err := q.run(v, ch, true); err != nil {
				t.Fatal(err)
			}
			model = applyChanges(model, ch)
			models[v+1] = model
			q.waitAll(t)
		}
		if err := q.prov.Close(); err != nil {
			t.Fatal(err)
		}
		var packed, own int
		for i := range parts {
			for _, b := range partitionBases(t, filepath.Join(root, "state", "0"), fmt.Sprint(i)) {
				if strings.Contains(b, packExt) {
					packed++
				} else {
					own++
				}
			}
		}
		t.Logf("round %d (per partition %v): %d packed bases, %d own files", round, perPartition, packed, own)
		if round == 1 && (packed == 0 || own == 0) {
			t.Fatalf("round 1 should leave both kinds of bases: %d packed, %d own", packed, own)
		}
	}
}

// TestSnapshotPackDamage: damage in a pack is named. A partition whose
// body in the pack is damaged, or all of them when the pack's index is,
// rebuild from the state log when it still holds their deltas; once the
// log is purged past the pack, the load fails naming the pack. A pack of
// a newer format is refused.
func TestSnapshotPackDamage(t *testing.T) {
	const parts = 4
	build := func(t *testing.T, epochs int64, segVersions int64) (string, StoreOptions, []map[string]string) {
		root := t.TempDir()
		opts := StoreOptions{MinDeltasForSnapshot: 2, MaxDeltasForSnapshot: 3, MinVersionsToRetain: 3}
		q := openGroupQuery(t, root, &Writer{NoSync: true}, parts, opts)
		if segVersions > 0 {
			q.prov.glog.segVersions = segVersions
		}
		model := make([]map[string]string, parts)
		for i := range model {
			model[i] = map[string]string{}
		}
		for v := range epochs {
			ch := churn(v, parts)
			if err := q.run(v, ch, true); err != nil {
				t.Fatal(err)
			}
			model = applyChanges(model, ch)
			q.waitAll(t)
		}
		if err := q.prov.Close(); err != nil {
			t.Fatal(err)
		}
		return root, opts, model
	}
	newest := func(t *testing.T, root string) (string, []packEntry) {
		packs, _ := filepath.Glob(filepath.Join(root, "state", "0", "*"+packExt))
		best, bestV := "", int64(-1)
		for _, pk := range packs {
			v, _, _ := parsePackName(filepath.Base(pk))
			if v > bestV {
				best, bestV = pk, v
			}
		}
		if best == "" {
			t.Fatal("no pack")
		}
		entries, err := readPackIndex(best)
		if err != nil {
			t.Fatal(err)
		}
		return best, entries
	}
	const epochs = 14
	t.Run("body damaged, deltas kept", func(t *testing.T) {
		root, opts, model := build(t, epochs, 0)
		pk, entries := newest(t, root)
		b, _ := os.ReadFile(pk)
		e := entries[0]
		b[e.off+e.n/2] ^= 0xff
		os.WriteFile(pk, b, 0o644)
		q := openGroupQuery(t, root, &Writer{NoSync: true}, parts, opts)
		got, err := q.read(epochs)
		if err != nil || !equalStates(got, model) {
			t.Fatalf("got %v, %v; want the model", got, err)
		}
	})
	t.Run("index damaged, deltas kept", func(t *testing.T) {
		root, opts, model := build(t, epochs, 0)
		pk, _ := newest(t, root)
		b, _ := os.ReadFile(pk)
		os.WriteFile(pk, b[:len(b)-3], 0o644)
		q := openGroupQuery(t, root, &Writer{NoSync: true}, parts, opts)
		got, err := q.read(epochs)
		if err != nil || !equalStates(got, model) {
			t.Fatalf("got %v, %v; want the model", got, err)
		}
	})
	for _, c := range []struct {
		name   string
		damage func(b []byte, e packEntry) []byte
	}{
		{"body damaged, log purged", func(b []byte, e packEntry) []byte { b[e.off+e.n/2] ^= 0xff; return b }},
		{"index damaged, log purged", func(b []byte, _ packEntry) []byte { b[len(b)-packFooterLen-3] ^= 0xff; return b }},
		{"truncated, log purged", func(b []byte, _ packEntry) []byte { return b[:len(b)/2] }},
	} {
		t.Run(c.name, func(t *testing.T) {
			// Every pack damaged: the log no longer holds the deltas
			// from version 1, so no partition can do without them.
			root, opts, _ := build(t, 40, 2)
			if _, err := os.Stat(filepath.Join(root, "state", StateLogDir, "1.seg")); !errors.Is(err, os.ErrNotExist) {
				t.Fatalf("the state log was not purged: %v", err)
			}
			packs, _ := filepath.Glob(filepath.Join(root, "state", "0", "*"+packExt))
			for _, pk := range packs {
				entries, err := readPackIndex(pk)
				if err != nil {
					t.Fatal(err)
				}
				b, _ := os.ReadFile(pk)
				os.WriteFile(pk, c.damage(b, entries[0]), 0o644)
			}
			q := openGroupQuery(t, root, &Writer{NoSync: true}, parts, opts)
			_, err := q.read(40)
			if err == nil || !errors.Is(err, ErrCorrupt) || !strings.Contains(err.Error(), filepath.Join(root, "state", "0")) || !strings.Contains(err.Error(), packExt) {
				t.Fatalf("got %v, want ErrCorrupt naming a pack", err)
			}
		})
	}
	t.Run("future format", func(t *testing.T) {
		root, opts, _ := build(t, epochs, 0)
		pk, _ := newest(t, root)
		b, _ := os.ReadFile(pk)
		// Rewrite the footer as a format 2 pack would: a valid CRC.
		n := len(b)
		b[n-packFooterLen+12] = packFormat + 1
		crcStart := int(leUint64(b[n-packFooterLen:]))
		putLeUint32(b[n-8:], crc32c(b[crcStart:n-8]))
		os.WriteFile(pk, b, 0o644)
		q := openGroupQuery(t, root, &Writer{NoSync: true}, parts, opts)
		_, err := q.read(epochs)
		if err == nil || !errors.Is(err, ErrNewerFormat) || !strings.Contains(err.Error(), pk) {
			t.Fatalf("got %v, want ErrNewerFormat naming %s", err, pk)
		}
	})
}

func leUint64(b []byte) uint64 {
	var v uint64
	for i := 7; i >= 0; i-- {
		v = v<<8 | uint64(b[i])
	}
	return v
}

func putLeUint32(b []byte, v uint32) {
	b[0], b[1], b[2], b[3] = byte(v), byte(v>>8), byte(v>>16), byte(v>>24)
}

// FuzzPackIndex: a pack's index and footer, whatever their bytes, parse
// or fail with ErrCorrupt (never a panic).
func FuzzPackIndex(f *testing.F) {
	f.Add(appendPackIndex(nil, []packEntry{{part: "0", key: fileKey{11, "snapshot"}, off: 0, n: 30}, {part: "7", key: fileKey{11, "3.segment"}, off: 30, n: 12}}, 42), int64(42))
	f.Add(appendPackIndex(nil, nil, 0), int64(0))
	f.Fuzz(func(t *testing.T, buf []byte, indexOff int64) {
		entries, err := parsePackIndex("11.0.pack", buf, indexOff)
		if err != nil {
			if !errors.Is(err, ErrCorrupt) {
				t.Fatalf("error not ErrCorrupt: %v", err)
			}
			return
		}
		for _, e := range entries {
			if e.off < 0 || e.n < 0 || e.off+e.n > indexOff {
				t.Fatalf("entry %+v outside %d bytes", e, indexOff)
			}
		}
	})
}
