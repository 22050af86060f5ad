package checkpoint

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// The writer lock excludes a second writer of the same checkpoint, in this
// process too (another open file description), names the holder in the
// refusal without touching the lock file, and is free again once released.
func TestWriterLockExcludesSecondWriter(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "ck") // created by the lock
	l, err := LockWriter(dir, &Writer{NoSync: true}, `streaming query "a"`)
	if err != nil {
		t.Fatal(err)
	}
	if !l.Held() {
		t.Fatal("lock not held on a file system with flock")
	}
	lockFile := filepath.Join(dir, WriterLockFile)
	desc, err := os.ReadFile(lockFile)
	if err != nil {
		t.Fatal(err)
	}
	wantDesc := fmt.Sprintf("pid %d (streaming query \"a\", since ", os.Getpid())
	if !strings.HasPrefix(string(desc), wantDesc) {
		t.Fatalf("lock file says %q; want it to start %q", desc, wantDesc)
	}

	_, err = LockWriter(dir, &Writer{NoSync: true}, `streaming query "b"`)
	if !errors.Is(err, ErrInUse) || !strings.Contains(err.Error(), dir) || !strings.Contains(err.Error(), strings.TrimSpace(string(desc))) {
		t.Fatalf("second lock: %v; want ErrInUse naming %s and the holder %q", err, dir, desc)
	}
	if again, _ := os.ReadFile(lockFile); string(again) != string(desc) {
		t.Fatalf("the refused lock rewrote the lock file: %q, was %q", again, desc)
	}

	if err := l.Release(); err != nil {
		t.Fatal(err)
	}
	if err := l.Release(); err != nil {
		t.Fatalf("second release: %v", err)
	}
	l2, err := LockWriter(dir, &Writer{NoSync: true}, `streaming query "b"`)
	if err != nil {
		t.Fatalf("lock after release: %v", err)
	}
	defer l2.Release()
	if d, _ := os.ReadFile(lockFile); !strings.Contains(string(d), `"b"`) || strings.Contains(string(d), `"a"`) {
		t.Fatalf("lock file after the new holder took it: %q", d)
	}
}

// A refused lock whose holder has not described itself yet still names
// the directory, and says so.
func TestWriterLockRefusalBeforeDescription(t *testing.T) {
	dir := t.TempDir()
	f, err := os.OpenFile(filepath.Join(dir, WriterLockFile), os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if held, err := lockExclusive(f); err != nil || !held {
		t.Fatalf("lock: held %v, %v", held, err)
	}
	_, err = LockWriter(dir, nil, "x")
	if !errors.Is(err, ErrInUse) || !strings.Contains(err.Error(), dir) || !strings.Contains(err.Error(), "has not described itself") {
		t.Fatalf("lock: %v", err)
	}
}
