package checkpoint

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/apache/arrow/go/v17/arrow/memory"

	"github.com/arrowstream/arrowstream/internal/testutil/poisonmem"
)

func openTestPartition(t *testing.T, dir string, opts StoreOptions) (*StorePartition, *poisonmem.Allocator) {
	t.Helper()
	mem := poisonmem.New()
	t.Cleanup(func() { mem.AssertSize(t, 0) })
	opts.Allocator = mem
	p, err := OpenStorePartition(dir, &Writer{NoSync: true}, opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { p.Close() }) // before the allocator check: waits for maintenance
	return p, mem
}

func contents(s StateStore) string {
	var b strings.Builder
	s.Range(func(k, v []byte) bool {
		fmt.Fprintf(&b, "%s=%s;", k, v)
		return true
	})
	return b.String()
}

func TestStateStoreVersions(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	p, _ := openTestPartition(t, dir, StoreOptions{})
	s, err := p.Begin(0)
	if err != nil {
		t.Fatal(err)
	}
	s.Put([]byte("b"), []byte("2"))
	s.Put([]byte("a"), []byte("1"))
	s.Put([]byte("c"), []byte("3"))
	if v, ok, err := s.Get([]byte("a")); err != nil || !ok || string(v) != "1" {
		t.Fatalf("Get before commit: %q %v", v, ok)
	}
	if _, err := p.Begin(0); err == nil {
		t.Fatal("second open store allowed")
	}
	if v, err := s.Commit(ctx); err != nil || v != 1 {
		t.Fatal(v, err)
	}
	s, _ = p.Begin(1)
	s.Delete([]byte("b"))
	s.Put([]byte("a"), []byte("10"))
	s.Put([]byte("d"), nil) // empty value is a value, not a delete
	if got := contents(s); got != "a=10;c=3;d=;" || s.Len() != 3 {
		t.Fatalf("epoch 1 view: %q len %d", got, s.Len())
	}
	if _, err := s.Commit(ctx); err != nil {
		t.Fatal(err)
	}
	// Aborted epoch: nothing written, nothing applied.
	s, _ = p.Begin(2)
	s.Put([]byte("z"), []byte("x"))
	s.Abort()
	if _, err := os.Stat(filepath.Join(dir, "3.delta")); !os.IsNotExist(err) {
		t.Fatalf("aborted epoch left a file: %v", err)
	}
	// A new process rebuilds every version from the files.
	p2, _ := openTestPartition(t, dir, StoreOptions{})
	for version, want := range map[int64]string{0: "", 1: "a=1;b=2;c=3;", 2: "a=10;c=3;d=;"} {
		s, err := p2.Begin(version)
		if err != nil {
			t.Fatal(err)
		}
		if got := contents(s); got != want {
			t.Errorf("version %d: %q, want %q", version, got, want)
		}
		s.Abort()
	}
	// Re-running epoch 1 rewrites version 2.
	s, _ = p2.Begin(1)
	s.Put([]byte("e"), []byte("5"))
	if _, err := s.Commit(ctx); err != nil {
		t.Fatal(err)
	}
	s, _ = p2.Begin(2)
	if got := contents(s); got != "a=1;b=2;c=3;e=5;" {
		t.Errorf("after re-run: %q", got)
	}
	s.Abort()
	if _, err := p2.Begin(7); err == nil || !errors.Is(err, ErrCorrupt) || !strings.Contains(err.Error(), "3.delta") {
		t.Errorf("loading a version with missing deltas: %v", err)
	}
}

func TestStateStoreSnapshotsAndCleanup(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	p, _ := openTestPartition(t, dir, StoreOptions{MinDeltasForSnapshot: 2, MinVersionsToRetain: 3})
	for e := int64(0); e < 12; e++ {
		s, err := p.Begin(e)
		if err != nil {
			t.Fatal(err)
		}
		s.Put([]byte(fmt.Sprintf("k%02d", e)), []byte(fmt.Sprint(e)))
		if e > 0 {
			s.Delete([]byte(fmt.Sprintf("k%02d", e-1)))
		}
		if _, err := s.Commit(ctx); err != nil {
			t.Fatal(err)
		}
		// Maintenance runs in the background; wait so that every commit
		// gets its turn, as when epochs are slower than maintenance.
		if err := p.WaitMaintenance(); err != nil {
			t.Fatal(err)
		}
	}
	files, _ := p.listFiles()
	snaps := 0
	for k := range files {
		if k.kind == "snapshot" {
			snaps++
		}
		if k.version < 12-3-3 {
			t.Errorf("old file kept: %v", k)
		}
	}
	if snaps == 0 {
		t.Fatal("no snapshot written")
	}
	// Every retained version still loads in a fresh process.
	p2, _ := openTestPartition(t, dir, StoreOptions{})
	for v := int64(12 - 3); v <= 12; v++ {
		s, err := p2.Begin(v)
		if err != nil {
			t.Fatalf("version %d: %v", v, err)
		}
		if got, want := contents(s), fmt.Sprintf("k%02d=%d;", v-1, v-1); got != want {
			t.Errorf("version %d: %q want %q", v, got, want)
		}
		s.Abort()
	}
}

func TestStateStoreDetectsDamage(t *testing.T) {
	ctx := context.Background()
	for name, damage := range map[string]func([]byte) []byte{
		"truncated":    func(b []byte) []byte { return b[:len(b)/2] },
		"flipped-byte": func(b []byte) []byte { b[len(b)/3] ^= 1; return b },
		"empty":        func([]byte) []byte { return nil },
	} {
		t.Run(name, func(t *testing.T) {
			dir := t.TempDir()
			p, _ := openTestPartition(t, dir, StoreOptions{})
			s, _ := p.Begin(0)
			s.Put([]byte("a"), []byte("1"))
			if _, err := s.Commit(ctx); err != nil {
				t.Fatal(err)
			}
			f := filepath.Join(dir, "1.delta")
			raw, _ := os.ReadFile(f)
			os.WriteFile(f, damage(raw), 0o644)
			p2, _ := openTestPartition(t, dir, StoreOptions{})
			_, err := p2.Begin(1)
			if err == nil || !errors.Is(err, ErrCorrupt) || !strings.Contains(err.Error(), f) {
				t.Fatalf("want corrupt error naming %s, got %v", f, err)
			}
		})
	}
}

func FuzzDecodeState(f *testing.F) {
	mem := memory.NewGoAllocator()
	good, _ := encodeState(mem, []string{"a", "b"}, map[string][]byte{"a": []byte("1")}, map[string]bool{"b": true})
	f.Add(good)
	v1, _ := encodeStateV1(mem, []string{"a", "b"}, map[string][]byte{"a": []byte("1")}, map[string]bool{"b": true}, "1")
	f.Add(v1)
	f.Add([]byte("ASST"))
	f.Fuzz(func(t *testing.T, raw []byte) {
		// Damaged files must be rejected by the trailer check. Inputs that
		// carry a valid checksum are not fuzzed through the IPC decoder:
		// arrow-go v17's reader allocates whatever a crafted schema message
		// asks for (seen: out of memory in schemaFromFB), and only someone
		// who can already write the checkpoint can produce such a file.
		_ = decodeState(mem, raw, map[string][]byte{})
	})
}

func TestStateStoreMemoryBytes(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	p, _ := openTestPartition(t, dir, StoreOptions{})
	s, _ := p.Begin(0)
	s.Put([]byte("ab"), []byte("123"))
	s.Put([]byte("c"), []byte("4"))
	s.Commit(ctx)
	if got := p.MemoryBytes(); got != 7 {
		t.Fatalf("after puts: %d bytes, want 7", got)
	}
	s, _ = p.Begin(1)
	s.Put([]byte("ab"), []byte("1"))
	s.Delete([]byte("c"))
	s.Commit(ctx)
	if got := p.MemoryBytes(); got != 3 {
		t.Fatalf("after update and delete: %d bytes, want 3", got)
	}
	p2, _ := openTestPartition(t, dir, StoreOptions{})
	s, _ = p2.Begin(2)
	s.Abort()
	if got := p2.MemoryBytes(); got != 3 {
		t.Fatalf("after reload: %d bytes, want 3", got)
	}
}

func TestStateStoreScanSeesTheSameRowsAsRange(t *testing.T) {
	ctx := context.Background()
	p, _ := openTestPartition(t, t.TempDir(), StoreOptions{})
	s, _ := p.Begin(0)
	for _, k := range []string{"a", "b", "c", "d"} {
		s.Put([]byte(k), []byte(k+k))
	}
	s.Commit(ctx)
	s, _ = p.Begin(1)
	defer s.Abort()
	s.Delete([]byte("b"))
	s.Put([]byte("c"), []byte("new"))
	s.Put([]byte("e"), []byte("ee"))
	ranged, scanned := map[string]string{}, map[string]string{}
	s.Range(func(k, v []byte) bool { ranged[string(k)] = string(v); return true })
	s.Scan(func(k, v []byte) bool { scanned[string(k)] = string(v); return true })
	if fmt.Sprint(ranged) != fmt.Sprint(scanned) || len(scanned) != 4 || scanned["c"] != "new" {
		t.Fatalf("Range %v, Scan %v", ranged, scanned)
	}
	n := 0
	s.Scan(func([]byte, []byte) bool { n++; return false })
	if n != 1 {
		t.Fatalf("Scan did not stop: %d calls", n)
	}
}
