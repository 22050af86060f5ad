package checkpoint

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"math/rand"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/arrowstream/arrowstream/internal/testutil/poisonmem"
)

// groupQuery is a query's state under group commit in a test: a memory
// provider with its state log over parts partitions of operator 0.
type groupQuery struct {
	t     testing.TB
	root  string
	prov  *MemoryProvider
	parts []StatePartition
}

func openGroupQuery(t testing.TB, root string, w *Writer, parts int, opts StoreOptions) *groupQuery {
	t.Helper()
	mem := poisonmem.New()
	opts.Allocator = mem
	prov := NewMemoryProvider(w, opts)
	if err := prov.OpenStateLog(filepath.Join(root, "state")); err != nil {
		t.Fatal(err)
	}
	q := &groupQuery{t: t, root: root, prov: prov}
	for i := 0; i < parts; i++ {
		p, err := prov.OpenPartition(filepath.Join(root, "state", "0", fmt.Sprint(i)))
		if err != nil {
			t.Fatal(err)
		}
		q.parts = append(q.parts, p)
	}
	t.Cleanup(func() {
		prov.Close()
		mem.AssertSize(t, 0)
	})
	return q
}

// change is one partition's changes in an epoch: key → value ("" deletes).
type change map[string]string

// run runs epoch version → version+1: partitions with an entry in changes
// apply them (logged when useLog[i], else through Put/Delete).
func (q *groupQuery) run(version int64, changes map[int]change, useLog bool) error {
	stores := make([]StateStore, len(q.parts))
	for i, p := range q.parts {
		s, err := p.Begin(version)
		if err != nil {
			for _, s := range stores[:i] {
				s.Abort()
			}
			return err
		}
		stores[i] = s
	}
	for i, s := range stores {
		if useLog {
			cw := s.(ChangelogWriter)
			for k, v := range changes[i] {
				if v == "" {
					cw.LogDelete([]byte(k))
				} else {
					cw.LogUpsert([]byte(k), []byte(v))
				}
			}
			cw.SetLiveRows(0)
			continue
		}
		for k, v := range changes[i] {
			var err error
			if v == "" {
				err = s.Delete([]byte(k))
			} else {
				err = s.Put([]byte(k), []byte(v))
			}
			if err != nil {
				q.t.Fatal(err)
			}
		}
	}
	return q.prov.CommitGroup(context.Background(), stores)
}

// read returns every partition's contents at version.
func (q *groupQuery) read(version int64) ([]map[string]string, error) {
	out := make([]map[string]string, len(q.parts))
	for i, p := range q.parts {
		s, err := p.Begin(version)
		if err != nil {
			return nil, err
		}
		m := map[string]string{}
		err = s.Range(func(k, v []byte) bool {
			m[string(k)] = string(v)
			return true
		})
		s.Abort()
		if err != nil {
			return nil, err
		}
		out[i] = m
	}
	return out, nil
}

func randomChanges(r *rand.Rand, parts int, model []map[string]string) map[int]change {
	out := map[int]change{}
	for i := 0; i < parts; i++ {
		if r.Intn(3) != 0 {
			continue // most partitions do not change
		}
		c := change{}
		for n := r.Intn(4); n >= 0; n-- {
			k := fmt.Sprintf("k%d", r.Intn(6))
			if r.Intn(4) == 0 {
				if _, ok := model[i][k]; ok {
					c[k] = ""
				}
				continue
			}
			c[k] = fmt.Sprintf("v%d", r.Intn(1000))
		}
		out[i] = c
	}
	return out
}

func applyChanges(model []map[string]string, changes map[int]change) []map[string]string {
	next := make([]map[string]string, len(model))
	for i := range model {
		next[i] = maps.Clone(model[i])
		for k, v := range changes[i] {
			if v == "" {
				delete(next[i], k)
			} else {
				next[i][k] = v
			}
		}
	}
	return next
}

func equalStates(a, b []map[string]string) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if !maps.Equal(a[i], b[i]) {
			return false
		}
	}
	return true
}

// errCrash is the fault the tests' hooks inject.
var errCrash = errors.New("injected crash")

// TestGroupCommitModelWithCrashes runs random epochs against a model of
// committed states and crashes at every write step the state log makes
// (the hook fails it; the test then leaves what a crash may leave: nothing,
// a torn part of the record, or a whole record of other changes for the
// epoch that did not commit), reopens everything from disk and re-runs the
// epoch (with other changes; with the same ones when its state had
// committed, as the engine replays an epoch's recorded input). Every committed version must read as the model says, and the
// run's uncommitted changes never.
func TestGroupCommitModelWithCrashes(t *testing.T) {
	for _, useLog := range []bool{false, true} {
		for seed := int64(1); seed <= 6; seed++ {
			t.Run(fmt.Sprintf("changelog=%v/seed=%d", useLog, seed), func(t *testing.T) {
				groupModelRun(t, seed, useLog)
			})
		}
	}
}

func groupModelRun(t *testing.T, seed int64, useLog bool) {
	const parts, epochs = 5, 40
	r := rand.New(rand.NewSource(seed))
	root := t.TempDir()
	var crashAt int // write steps until the next crash; 0: none
	steps := 0
	w := &Writer{NoSync: true, Hook: func(step WriteStep, path string) error {
		if !strings.Contains(path, StateLogDir) {
			return nil
		}
		steps++
		if crashAt > 0 && steps == crashAt {
			return errCrash
		}
		return nil
	}}
	opts := StoreOptions{MinDeltasForSnapshot: 3, MaxDeltasForSnapshot: 6, MinVersionsToRetain: 8}
	q := openGroupQuery(t, root, w, parts, opts)
	q.prov.glog.segVersions = 5 // rotate and purge often
	models := [][]map[string]string{make([]map[string]string, parts)}
	for i := range models[0] {
		models[0][i] = map[string]string{}
	}
	committed := int64(0)
	crashes := 0
	var replay map[int]change
	for committed < epochs {
		changes := randomChanges(r, parts, models[committed])
		if replay != nil {
			// The engine re-runs an epoch with its recorded input: the
			// same changes (a snapshot of the first run may exist).
			changes = replay
		}
		steps, crashAt = 0, 0
		if r.Intn(3) == 0 {
			crashAt = 1 + r.Intn(3)
		}
		err := q.run(committed, changes, useLog)
		if err == nil {
			models = append(models[:committed+1], applyChanges(models[committed], changes))
			committed++
			replay = nil
			if r.Intn(4) != 0 {
				continue
			}
			// The epoch's state is durable but the "commit record" is
			// not written: a crash before it re-runs the epoch.
			committed--
			models = models[:committed+1]
			replay = changes
		} else if !errors.Is(err, errCrash) {
			t.Fatalf("epoch %d: %v", committed, err)
		} else {
			leaveCrashDebris(t, r, q, committed+1, parts)
		}
		crashes++
		// Crash: everything in memory goes; reopen from disk.
		q.prov.Close()
		crashAt = 0
		q = openGroupQuery(t, root, w, parts, opts)
		q.prov.glog.segVersions = 5
		got, err := q.read(committed)
		if err != nil {
			t.Fatalf("after crash %d at version %d: %v", crashes, committed, err)
		}
		if !equalStates(got, models[committed]) {
			t.Fatalf("after crash %d, version %d reads %v, model %v", crashes, committed, got, models[committed])
		}
	}
	// Every retained version still reads as committed.
	for v := committed - int64(opts.MinVersionsToRetain); v <= committed; v++ {
		got, err := q.read(v)
		if err != nil {
			t.Fatalf("version %d: %v", v, err)
		}
		if !equalStates(got, models[v]) {
			t.Fatalf("version %d reads %v, model %v", v, got, models[v])
		}
	}
	if crashes == 0 {
		t.Fatal("no crash injected")
	}
	// Unchanged partitions wrote nothing: no delta files at all.
	filepath.WalkDir(root, func(path string, d os.DirEntry, err error) error {
		if strings.HasSuffix(path, ".delta") {
			t.Errorf("group commit wrote %s", path)
		}
		return nil
	})
}

// leaveCrashDebris leaves in the state log what a crash during the
// append of version may leave behind.
func leaveCrashDebris(t *testing.T, r *rand.Rand, q *groupQuery, version int64, parts int) {
	t.Helper()
	l := q.prov.glog
	if len(l.segs) == 0 {
		return
	}
	seg := l.segs[len(l.segs)-1].path
	raw, err := encodeState(q.prov.opts.Allocator, []string{"orphan"}, map[string][]byte{"orphan": []byte("x")}, nil)
	if err != nil {
		t.Fatal(err)
	}
	rec := appendStateRecord(nil, version, []StateDelta{{Path: fmt.Sprintf("0/%d", r.Intn(parts)), Raw: raw}}, nil)
	switch r.Intn(3) {
	case 0:
		return
	case 1:
		rec = rec[:1+r.Intn(len(rec)-1)]
	}
	f, err := os.OpenFile(seg, os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if _, err := f.Write(rec); err != nil {
		t.Fatal(err)
	}
}

// TestGroupCommitWritesOnlyChanged: an epoch that changes nothing writes
// nothing; one that changes some partitions appends one record naming
// just those.
func TestGroupCommitWritesOnlyChanged(t *testing.T) {
	root := t.TempDir()
	var writes []string
	w := &Writer{NoSync: true, Hook: func(step WriteStep, path string) error {
		if step == BeforeTempWrite {
			writes = append(writes, filepath.Base(path))
		}
		return nil
	}}
	q := openGroupQuery(t, root, w, 20, StoreOptions{})
	if err := q.run(0, map[int]change{3: {"a": "1"}, 7: {"b": "2"}}, true); err != nil {
		t.Fatal(err)
	}
	if len(writes) != 1 || writes[0] != "1.seg" {
		t.Fatalf("first epoch wrote %v, want one append to 1.seg", writes)
	}
	writes = nil
	for v := int64(1); v < 5; v++ {
		if err := q.run(v, nil, true); err != nil {
			t.Fatal(err)
		}
	}
	q.prov.Close() // waits for maintenance
	if len(writes) != 0 {
		t.Fatalf("empty epochs wrote %v", writes)
	}
	l, err := OpenStateLog(filepath.Join(root, "state", StateLogDir), &Writer{})
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	if l.MaxVersion() != 1 || len(l.index) != 2 {
		t.Fatalf("log holds versions to %d for %d partitions, want 1 and 2", l.MaxVersion(), len(l.index))
	}
	q = openGroupQuery(t, root, w, 20, StoreOptions{})
	got, err := q.read(5)
	if err != nil {
		t.Fatal(err)
	}
	if got[3]["a"] != "1" || got[7]["b"] != "2" || len(got[0]) != 0 {
		t.Fatalf("version 5 reads %v", got)
	}
}

// TestGroupCommitAfterFileDeltas: a checkpoint whose state was written one
// file per partition and version (before group commit) continues under
// group commit; both parts of the history load.
func TestGroupCommitAfterFileDeltas(t *testing.T) {
	root := t.TempDir()
	w := &Writer{NoSync: true}
	mem := poisonmem.New()
	defer mem.AssertSize(t, 0)
	old := NewMemoryProvider(w, StoreOptions{Allocator: mem})
	for v := int64(0); v < 3; v++ {
		for i := 0; i < 2; i++ {
			p, err := old.OpenPartition(filepath.Join(root, "state", "0", fmt.Sprint(i)))
			if err != nil {
				t.Fatal(err)
			}
			s, err := p.Begin(v)
			if err != nil {
				t.Fatal(err)
			}
			s.Put([]byte(fmt.Sprint("old", v)), []byte("x"))
			if _, err := s.Commit(context.Background()); err != nil {
				t.Fatal(err)
			}
		}
	}
	old.Close()
	q := openGroupQuery(t, root, w, 2, StoreOptions{})
	if err := q.run(3, map[int]change{1: {"new": "y"}}, false); err != nil {
		t.Fatal(err)
	}
	if err := q.run(4, nil, false); err != nil {
		t.Fatal(err)
	}
	q.prov.Close()
	q = openGroupQuery(t, root, w, 2, StoreOptions{})
	got, err := q.read(5)
	if err != nil {
		t.Fatal(err)
	}
	want := []map[string]string{{"old0": "x", "old1": "x", "old2": "x"}, {"old0": "x", "old1": "x", "old2": "x", "new": "y"}}
	if !equalStates(got, want) {
		t.Fatalf("version 5 reads %v, want %v", got, want)
	}
	// A direct Commit on a group-committed partition is refused.
	s, _ := q.parts[0].Begin(5)
	if _, err := s.Commit(context.Background()); err == nil || !strings.Contains(err.Error(), "CommitGroup") {
		t.Fatalf("direct commit: %v", err)
	}
}

// TestStateLogDamage: damage in the state log is reported with the file
// and the offset; a missing segment between two others is refused.
func TestStateLogDamage(t *testing.T) {
	build := func(t *testing.T) (string, []string) {
		root := t.TempDir()
		q := openGroupQuery(t, root, &Writer{NoSync: true}, 3, StoreOptions{})
		q.prov.glog.segVersions = 2
		for v := int64(0); v < 6; v++ {
			if err := q.run(v, map[int]change{int(v % 3): {"k": fmt.Sprint(v)}}, true); err != nil {
				t.Fatal(err)
			}
		}
		q.prov.Close()
		dir := filepath.Join(root, "state", StateLogDir)
		ents, _ := os.ReadDir(dir)
		var segs []string
		for _, e := range ents {
			segs = append(segs, filepath.Join(dir, e.Name()))
		}
		return dir, segs
	}
	cases := []struct {
		name   string
		damage func(t *testing.T, segs []string)
		want   string
	}{
		{"flipped byte in an older segment", func(t *testing.T, segs []string) {
			b, _ := os.ReadFile(segs[0])
			b[stateLogHeaderLen+recordHeaderLen+2] ^= 0xff
			os.WriteFile(segs[0], b, 0o644)
		}, "checksum mismatch"},
		{"torn older segment", func(t *testing.T, segs []string) {
			b, _ := os.ReadFile(segs[0])
			os.WriteFile(segs[0], b[:len(b)-3], 0o644)
		}, "torn record"},
		{"missing middle segment", func(t *testing.T, segs []string) {
			os.Remove(segs[1])
		}, "is missing"},
		{"future format", func(t *testing.T, segs []string) {
			b, _ := os.ReadFile(segs[0])
			b[4] = 9
			os.WriteFile(segs[0], b, 0o644)
		}, "upgrade Arrowstream"},
		{"not a segment", func(t *testing.T, segs []string) {
			os.WriteFile(segs[0], []byte("hello, world, this is not it"), 0o644)
		}, "not a state log segment"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			dir, segs := build(t)
			if len(segs) < 3 {
				t.Fatalf("want at least 3 segments, have %v", segs)
			}
			c.damage(t, segs)
			_, err := OpenStateLog(dir, &Writer{})
			if err == nil || !errors.Is(err, ErrCorrupt) || !strings.Contains(err.Error(), c.want) || !strings.Contains(err.Error(), dir) {
				t.Fatalf("got %v, want ErrCorrupt naming %s and %q", err, dir, c.want)
			}
		})
	}
}

// TestStateLogPurge: retention drops whole old segments once every
// partition's retained versions rebuild from a snapshot after them, and
// the retained versions still load.
func TestStateLogPurge(t *testing.T) {
	for _, useLog := range []bool{false, true} {
		t.Run(fmt.Sprintf("changelog=%v", useLog), func(t *testing.T) { testStateLogPurge(t, useLog) })
	}
}

// testStateLogPurge: under group commit, maintenance snapshots the
// partitions that changed and retention drops the state log's old
// segments; useLog runs it with stores written through ChangelogWriter
// (whose changes the commit encodes out of its builders: a partition must
// still count as changed, else no snapshot is ever made and the log is
// never purged).
func testStateLogPurge(t *testing.T, useLog bool) {
	root := t.TempDir()
	opts := StoreOptions{MinDeltasForSnapshot: 2, MaxDeltasForSnapshot: 4, MinVersionsToRetain: 4}
	q := openGroupQuery(t, root, &Writer{NoSync: true}, 2, opts)
	q.prov.glog.segVersions = 3
	model := []map[string]string{{}, {}}
	models := map[int64][]map[string]string{0: model}
	for v := int64(0); v < 60; v++ {
		ch := map[int]change{0: {fmt.Sprint("k", v%5): fmt.Sprint(v)}}
		if v%7 == 0 {
			ch[1] = change{"x": fmt.Sprint(v)}
		}
		if err := q.run(v, ch, useLog); err != nil {
			t.Fatal(err)
		}
		model = applyChanges(model, ch)
		models[v+1] = model
		for _, p := range q.parts {
			p.(*StorePartition).WaitMaintenance()
		}
		if v == 11 {
			// Partition 0 changed in every one of 12 versions: a snapshot
			// (or segment) is due by now (MaxDeltasForSnapshot 4).
			if len(partitionBases(t, filepath.Join(root, "state", "0"), "0")) == 0 {
				t.Fatalf("no snapshot of partition 0 after 12 changed versions")
			}
		}
	}
	dir := filepath.Join(root, "state", StateLogDir)
	ents, _ := os.ReadDir(dir)
	// A chain of segments keeps its base's version as the partition's base,
	// so changelog partitions hold a little more of the log.
	limit := 8
	if useLog {
		limit = 10
	}
	if len(ents) > limit {
		t.Fatalf("%d segments after 60 versions of 3: retention dropped too few", len(ents))
	}
	if _, err := os.Stat(filepath.Join(dir, "1.seg")); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("the first segment is still there: %v", err)
	}
	q.prov.Close()
	q = openGroupQuery(t, root, &Writer{NoSync: true}, 2, opts)
	for v := int64(60 - 4); v <= 60; v++ {
		got, err := q.read(v)
		if err != nil {
			t.Fatalf("version %d: %v", v, err)
		}
		if !equalStates(got, models[v]) {
			t.Fatalf("version %d reads %v, model %v", v, got, models[v])
		}
	}
}
