package main

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/arrowstream/arrowstream/arrowstream"
)

// Two processes writing one checkpoint root lose queries half-way (both
// write "offsets for batch 5"), and the catalog log allows one writer. A
// process that uses a root therefore holds an advisory lock (flock) on
// <root>/_arrowstream/lock for its lifetime; the kernel releases it when
// the process dies, however it dies, so there is no stale lock to clean
// up. The file's content says who holds it (PID, command, addresses), so
// that the refusal can name the holder.

// rootLock is a held lock on a checkpoint root.
type rootLock struct {
	f    *os.File
	path string
}

// lockPath is the lock file of a checkpoint root.
func lockPath(root string) string { return filepath.Join(root, arrowstream.ReservedDir, "lock") }

// errRootLocked is the refusal when another process holds the root.
type errRootLocked struct {
	root   string
	holder string // the holder's description, "" if it wrote none yet
}

func (e *errRootLocked) Error() string {
	who := e.holder
	if who == "" {
		who = "a process that is starting (it has not written its PID yet)"
	}
	return fmt.Sprintf("checkpoint root %s is in use by another arrowstream process: %s.\n"+
		"Two processes on one root would overwrite each other's checkpoints: stop that process, or pass another --checkpoint", e.root, who)
}

// lockRoot takes the lock of root, or fails naming its holder.
func lockRoot(root, command string) (*rootLock, error) {
	p := lockPath(root)
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		return nil, fmt.Errorf("checkpoint root lock: %w", err)
	}
	f, err := os.OpenFile(p, os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		return nil, fmt.Errorf("checkpoint root lock: %w", err)
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		defer f.Close()
		if errors.Is(err, syscall.EWOULDBLOCK) {
			data, _ := os.ReadFile(p)
			return nil, &errRootLocked{root: root, holder: strings.TrimSpace(string(data))}
		}
		return nil, fmt.Errorf("checkpoint root lock %s: %w", p, err)
	}
	l := &rootLock{f: f, path: p}
	if err := l.describe(command, nil); err != nil {
		l.release()
		return nil, err
	}
	return l, nil
}

// describe writes who holds the lock: the PID, the command, when it
// started and the addresses it serves (name=address pairs, in order).
// The file is rewritten in place: the lock belongs to its inode.
func (l *rootLock) describe(command string, addrs []string) error {
	var b strings.Builder
	fmt.Fprintf(&b, "pid %d (arrowstream %s, started %s", os.Getpid(), command, time.Now().UTC().Format(time.RFC3339))
	for _, a := range addrs {
		fmt.Fprintf(&b, ", %s", a)
	}
	b.WriteString(")\n")
	if err := l.f.Truncate(0); err != nil {
		return fmt.Errorf("checkpoint root lock %s: %w", l.path, err)
	}
	if _, err := l.f.WriteAt([]byte(b.String()), 0); err != nil {
		return fmt.Errorf("checkpoint root lock %s: %w", l.path, err)
	}
	return nil
}

// release gives the lock up (closing the file releases the flock). The
// file stays: removing it would let a third process lock a new inode
// while a second one waits on the old.
func (l *rootLock) release() {
	if l != nil && l.f != nil {
		l.f.Close()
		l.f = nil
	}
}
