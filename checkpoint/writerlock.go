package checkpoint

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"
)

// The single-writer lock of a checkpoint.
//
// A checkpoint has one writer. The epoch log's segment lock (segmentlog.go)
// is taken at the first append, but a query's start does work that
// modifies files before that append: the memory sink's recovery cuts a
// torn log tail and deletes files outside its recovered chain, the state
// logs cut their torn tails, a source's checkpoint drops stale entries.
// Started twice on one checkpoint (two servers on one directory, a restart
// while the old process still runs), the second start did that work under
// the live writer, whose torn-looking tail is an append in flight and
// whose files outside the chain are ones it has not linked yet: silent
// data loss, and only then did the second start fail at the segment lock.
//
// So a query takes this lock, an exclusive flock on <checkpoint>/
// writer.lock, before it opens anything of its checkpoint, and keeps it
// until it has stopped and closed its sink and state; a second start is
// refused with ErrInUse naming the directory and the holder, before it
// has read or written a file. The lock belongs to an open file
// description, so a second start in the same process (another Session) is
// refused too; the kernel releases it when the process dies, however it
// dies, so a crash leaves no stale lock to clean up. The file is never
// removed: a third start would lock a new inode while a second one holds
// the old.
//
// Readers (a table's snapshot read by another process, a tool listing the
// checkpoint) do not take it and never delete. On a file system without
// flock the lock is not held (Held reports false) and the epoch log's size
// check at the first append is the only guard, as before.

// WriterLockFile is the name of a checkpoint's lock file.
const WriterLockFile = "writer.lock"

// ErrInUse is returned when another writer (of this process or another)
// holds a checkpoint's lock.
var ErrInUse = errors.New("checkpoint in use by another writer")

// WriterLock is a held single-writer lock of a checkpoint.
type WriterLock struct {
	dir  string
	mu   sync.Mutex
	f    *os.File // nil once released
	held bool
}

// LockWriter takes the single-writer lock of the checkpoint in dir,
// creating dir when it does not exist, without waiting. holder describes
// the caller (a query's name); with the process id and the time it is
// written into the lock file, so that a refused start can name who holds
// the checkpoint. A lock held elsewhere fails with ErrInUse, naming dir
// and the holder.
func LockWriter(dir string, w *Writer, holder string) (*WriterLock, error) {
	if dir == "" {
		return nil, errors.New("checkpoint: writer lock: no checkpoint directory")
	}
	if err := w.MkdirAll(dir); err != nil {
		return nil, fmt.Errorf("checkpoint: writer lock of %s: %w", dir, err)
	}
	path := filepath.Join(dir, WriterLockFile)
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		return nil, fmt.Errorf("checkpoint: writer lock of %s: %w", dir, err)
	}
	held, err := lockExclusive(f)
	if err != nil {
		f.Close()
		who := "a writer that is starting (it has not described itself yet)"
		if data, rerr := os.ReadFile(path); rerr == nil && len(strings.TrimSpace(string(data))) > 0 {
			who = strings.TrimSpace(string(data))
		}
		return nil, fmt.Errorf("checkpoint: %s is in use by another writer: %s; "+
			"two writers on one checkpoint would overwrite each other's files: stop that query, or start this one with another checkpoint location: %w",
			dir, who, ErrInUse)
	}
	l := &WriterLock{dir: dir, f: f, held: held}
	if held {
		// Rewritten in place: the lock belongs to the inode. A failure
		// only leaves the holder unnamed in a refusal.
		desc := fmt.Sprintf("pid %d (%s, since %s)\n", os.Getpid(), holder, time.Now().UTC().Format(time.RFC3339))
		if f.Truncate(0) == nil {
			f.WriteAt([]byte(desc), 0)
		}
	}
	return l, nil
}

// Held reports whether the lock is held (false on a file system without
// flock, where nothing excludes a second writer before the epoch log's
// first append).
func (l *WriterLock) Held() bool { return l != nil && l.held }

// Dir is the checkpoint directory the lock guards.
func (l *WriterLock) Dir() string { return l.dir }

// Release gives the lock up. The file stays (see above). Release is
// idempotent and nil-safe.
func (l *WriterLock) Release() error {
	if l == nil {
		return nil
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.f == nil {
		return nil
	}
	err := l.f.Close()
	l.f = nil
	if err != nil {
		return fmt.Errorf("checkpoint: release the writer lock of %s: %w", l.dir, err)
	}
	return nil
}
