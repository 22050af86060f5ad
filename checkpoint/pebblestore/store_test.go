package pebblestore

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/arrowstream/arrowstream/checkpoint"
)

func newTestProvider(t *testing.T, opts Options) *Provider {
	t.Helper()
	opts.Writer = &checkpoint.Writer{NoSync: true}
	p, err := NewProvider(opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := p.Close(); err != nil {
			t.Errorf("close: %v", err)
		}
	})
	return p
}

func begin(t *testing.T, part checkpoint.StatePartition, v int64) checkpoint.StateStore {
	t.Helper()
	st, err := part.Begin(v)
	if err != nil {
		t.Fatalf("begin %d: %v", v, err)
	}
	return st
}

func commit(t *testing.T, st checkpoint.StateStore) {
	t.Helper()
	if _, err := st.Commit(context.Background()); err != nil {
		t.Fatalf("commit: %v", err)
	}
}

func contents(st checkpoint.StateStore) map[string]string {
	out := map[string]string{}
	st.Scan(func(k, v []byte) bool { out[string(k)] = string(v); return true })
	return out
}

func TestPartitionVersions(t *testing.T) {
	dir := t.TempDir()
	tests := []struct {
		name      string
		localDir  string
		changelog bool
	}{
		{"local dir in checkpoint", "", false},
		{"separate local dir", t.TempDir(), false},
		{"changelog checkpointing", "", true},
	}
	for i, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			pdir := filepath.Join(dir, fmt.Sprint(i))
			prov := newTestProvider(t, Options{LocalDir: tc.localDir, MinVersionsToRetain: 3, ChangelogCheckpointing: tc.changelog, MinDeltasForSnapshot: 2})
			part, err := prov.OpenPartition(pdir)
			if err != nil {
				t.Fatal(err)
			}
			// Epoch 0: a, b. Epoch 1: c, delete a, overwrite b. Epoch 2: aborted.
			st := begin(t, part, 0)
			st.Put([]byte("a"), []byte("1"))
			st.Put([]byte("b"), []byte("2"))
			if v, ok, err := st.Get([]byte("a")); err != nil || !ok || string(v) != "1" {
				t.Fatalf("get a in epoch = %q %v", v, ok)
			}
			commit(t, st)
			st = begin(t, part, 1)
			st.Put([]byte("c"), []byte("3"))
			st.Delete([]byte("a"))
			st.Delete([]byte("zz"))
			st.Put([]byte("b"), []byte("22"))
			if st.Len() != 2 {
				t.Fatalf("len = %d, want 2", st.Len())
			}
			var order []string
			st.Range(func(k, v []byte) bool { order = append(order, string(k)); return true })
			if fmt.Sprint(order) != "[b c]" {
				t.Fatalf("range order %v", order)
			}
			commit(t, st)
			st = begin(t, part, 2)
			st.Put([]byte("x"), []byte("lost"))
			st.Abort()
			// With changelogs, version 1 is a changelog and 2 a snapshot.
			_, err = os.Stat(filepath.Join(pdir, "1.changelog"))
			if (err == nil) != tc.changelog {
				t.Errorf("1.changelog: %v", err)
			}

			// A fresh provider restores each version from the checkpoint.
			prov.Close()
			want := map[int64]string{0: "map[]", 1: "map[a:1 b:2]", 2: "map[b:22 c:3]"}
			prov2 := newTestProvider(t, Options{LocalDir: tc.localDir})
			part2, err := prov2.OpenPartition(pdir)
			if err != nil {
				t.Fatal(err)
			}
			for _, v := range []int64{2, 1, 0, 2} {
				st := begin(t, part2, v)
				if got := fmt.Sprint(contents(st)); got != want[v] {
					t.Errorf("version %d = %s, want %s", v, got, want[v])
				}
				st.Abort()
			}
		})
	}
}

func TestPartitionCleanupKeepsRetained(t *testing.T) {
	for _, changelog := range []bool{false, true} {
		t.Run(fmt.Sprint("changelog=", changelog), func(t *testing.T) { testCleanup(t, changelog) })
	}
}

func testCleanup(t *testing.T, changelog bool) {
	dir := t.TempDir()
	prov := newTestProvider(t, Options{MinVersionsToRetain: 3, ChangelogCheckpointing: changelog, MinDeltasForSnapshot: 4})
	part, err := prov.OpenPartition(dir)
	if err != nil {
		t.Fatal(err)
	}
	for v := int64(0); v < 2*cleanupEvery; v++ {
		st := begin(t, part, v)
		st.Put([]byte(fmt.Sprintf("k%03d", v)), []byte("v"))
		commit(t, st)
	}
	latest := int64(2 * cleanupEvery)
	if !changelog {
		for v := int64(1); v <= latest; v++ {
			_, err := os.Stat(filepath.Join(dir, fmt.Sprintf("%d.pebble", v)))
			if retained := v > latest-3; retained != (err == nil) {
				t.Errorf("manifest %d: retained %v, stat err %v", v, retained, err)
			}
		}
	} else {
		// Oldest retained 18: snapshot 16 and changelogs 17.. rebuild it.
		ents, _ := os.ReadDir(dir)
		var names []string
		for _, e := range ents {
			if e.Name() != sstDir && e.Name() != "_local" {
				names = append(names, e.Name())
			}
		}
		if got := fmt.Sprint(names); got != "[16.pebble 17.changelog 18.changelog 19.changelog 20.pebble]" {
			t.Errorf("files after cleanup: %s", got)
		}
	}
	prov.Close()
	prov2 := newTestProvider(t, Options{})
	part2, _ := prov2.OpenPartition(dir)
	st := begin(t, part2, latest-2)
	if st.Len() != int(latest-2) || len(contents(st)) != int(latest-2) {
		t.Errorf("oldest retained version has %d keys, want %d", st.Len(), latest-2)
	}
	st.Abort()
	if _, err := part2.Begin(1); err == nil {
		t.Errorf("version 1 should be gone")
	}
}

func TestUploadFaultLeavesPreviousVersion(t *testing.T) {
	dir := t.TempDir()
	fail := errors.New("injected")
	armed := false
	prov := newTestProvider(t, Options{UploadHook: func(string) error {
		if armed {
			return fail
		}
		return nil
	}})
	part, _ := prov.OpenPartition(dir)
	st := begin(t, part, 0)
	st.Put([]byte("a"), []byte("1"))
	commit(t, st)
	armed = true
	st = begin(t, part, 1)
	st.Put([]byte("b"), []byte("2"))
	if _, err := st.Commit(context.Background()); !errors.Is(err, fail) {
		t.Fatalf("commit err = %v, want injected", err)
	}
	armed = false
	// The failed commit left the db ahead: Begin restores version 1.
	st = begin(t, part, 1)
	if got := fmt.Sprint(contents(st)); got != "map[a:1]" {
		t.Fatalf("after failed upload: %s", got)
	}
	st.Put([]byte("b"), []byte("3"))
	commit(t, st)
	st = begin(t, part, 2)
	if got := fmt.Sprint(contents(st)); got != "map[a:1 b:3]" {
		t.Fatalf("re-run: %s", got)
	}
	st.Abort()
	if m := part.Metrics(); m["pebbleSstFileCount"] == 0 {
		t.Errorf("metrics %v", m)
	}
}

func FuzzDecodeManifest(f *testing.F) {
	good, _ := encodeManifest(&manifest{Format: manifestFormat, Version: 3, NumKeys: 2,
		Files: []fileEntry{{Name: "000005.sst", Remote: "000005-ab.sst", Size: 10}},
		Meta:  []metaFile{{Name: "MANIFEST-000001", Data: []byte{1, 2}}}})
	f.Add(good)
	f.Add([]byte("{}\n00000000\n"))
	f.Add([]byte(""))
	f.Fuzz(func(t *testing.T, raw []byte) {
		m, err := decodeManifest(raw)
		if err != nil {
			return
		}
		for _, fe := range m.Files {
			if !plainName(fe.Name) || !plainName(fe.Remote) {
				t.Fatalf("accepted path %q %q", fe.Name, fe.Remote)
			}
		}
	})
}

func FuzzDecodeChangelog(f *testing.F) {
	prov, err := NewProvider(Options{})
	if err != nil {
		f.Fatal(err)
	}
	defer prov.Close()
	f.Add(encodeChangelog(prov.zenc, 3, 2, []byte("0123456789abcdef")))
	f.Add([]byte("ASCL"))
	f.Add([]byte{})
	f.Fuzz(func(t *testing.T, raw []byte) {
		v, n, _, err := decodeChangelog(prov.zdec, raw)
		if err != nil {
			return
		}
		if v <= 0 || n < 0 {
			t.Fatalf("accepted version %d keys %d", v, n)
		}
	})
}
