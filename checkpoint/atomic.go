package checkpoint

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
)

// ErrExists is returned when a file that must not be overwritten exists:
// for a log entry it means the epoch was already written, possibly by
// another query using the same checkpoint concurrently.
var ErrExists = errors.New("file already exists")

// WriteStep names a point of an atomic write, for fault injection.
type WriteStep int

// The steps of an atomic write, in order.
const (
	BeforeTempWrite WriteStep = iota
	AfterTempWrite
	AfterRename
	BeforeDirSync
)

func (s WriteStep) String() string {
	switch s {
	case BeforeTempWrite:
		return "before temp write"
	case AfterTempWrite:
		return "after temp write"
	case AfterRename:
		return "after rename"
	case BeforeDirSync:
		return "before directory fsync"
	}
	return fmt.Sprintf("step %d", int(s))
}

// FaultHook is called at each step of every atomic write with the target
// path; a non-nil error aborts the write at that step (as a crash would,
// except that the temp file is cleaned up). Crash tests use it to kill the
// process at precise points. Nil means no hook.
type FaultHook func(step WriteStep, path string) error

// Writer performs atomic durable writes.
type Writer struct {
	// Hook, when set, is called at each step (fault injection).
	Hook FaultHook
	// NoSync skips fsync: tests of logic, and files that are only caches
	// (a reader recovers from their loss or damage), never checkpoint state.
	NoSync bool
	// LogFormat is the offset and commit log format of a new checkpoint:
	// 0 or 2 for the v2 epoch log, 1 for Spark's one file per epoch. An
	// existing checkpoint keeps its own format (OpenEpochLogs).
	LogFormat int
	// BufferedAppends writes the segment logs' appends through the page
	// cache only, as where O_DIRECT is refused (appendfile.go); tests use
	// it to force that path.
	BufferedAppends bool
	// DirectAppendMin is the least bytes of whole blocks an append writes
	// with O_DIRECT; 0 means DefaultDirectAppendMin.
	DirectAppendMin int
	// Prefault, when set, maps in the pages of a segment log's new write
	// buffer before an append builds its records in it (the query sets
	// vector.PrefaultScratch, as this package may not import vector): a fresh
	// query's first appends otherwise fault in the buffer a trap per page
	// (on q20 about 430 pages a run, the epoch's state records).
	Prefault func(b []byte)
}

// prefault maps in b's pages through w.Prefault, if set.
func (w *Writer) prefault(b []byte) {
	if w != nil && w.Prefault != nil {
		w.Prefault(b)
	}
}

func (w *Writer) step(s WriteStep, path string) error {
	if w == nil || w.Hook == nil {
		return nil
	}
	if err := w.Hook(s, path); err != nil {
		return fmt.Errorf("checkpoint: write %s aborted %s: %w", path, s, err)
	}
	return nil
}

func (w *Writer) sync() bool { return w == nil || !w.NoSync }

// WriteFile writes data to path atomically: a temp file in the same
// directory is written and fsynced, then moved into place and the directory
// fsynced. With overwrite false an existing path is left untouched and
// ErrExists is returned; the no-overwrite move uses a hard link, which the
// file system makes atomic, so two writers racing for the same name cannot
// both succeed. On any error the temp file is removed.
func (w *Writer) WriteFile(path string, data []byte, overwrite bool) (err error) {
	return w.writeFileParts(path, [][]byte{data}, overwrite)
}

// writeFileParts is WriteFile of the concatenation of parts, written one
// after another (a snapshot pack's partition bodies and index are not
// copied into one buffer first).
func (w *Writer) writeFileParts(path string, parts [][]byte, overwrite bool) (err error) {
	dir := filepath.Dir(path)
	if err := w.step(BeforeTempWrite, path); err != nil {
		return err
	}
	// The temp name carries this process's token (stale.go), so that the
	// sweep of stale temp files never takes a write of this process.
	tmp, err := TempPath(path)
	if err != nil {
		return err
	}
	f, err := os.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
	if err != nil {
		return fmt.Errorf("checkpoint: create temp file for %s: %w", path, err)
	}
	defer func() {
		if f != nil {
			f.Close()
		}
		if err != nil {
			os.Remove(tmp)
		}
	}()
	// A large file's whole blocks go with O_DIRECT, as a segment log's
	// appends do (appendfile.go): a snapshot or a persisted epoch is
	// written once and read back rarely.
	a := &appendFile{path: tmp, f: f, min: w.directMin()}
	var werr error
	off := int64(0)
	for _, data := range parts {
		if werr = a.writeAt(data, off); werr != nil {
			break
		}
		off += int64(len(data))
	}
	if a.d != nil {
		werr = errors.Join(werr, a.d.Close())
		a.d = nil
	}
	if werr != nil {
		return fmt.Errorf("checkpoint: write %s: %w", tmp, werr)
	}
	if w.sync() {
		if err := f.Sync(); err != nil {
			return fmt.Errorf("checkpoint: fsync %s: %w", tmp, err)
		}
	}
	if err := f.Close(); err != nil {
		f = nil
		return fmt.Errorf("checkpoint: close %s: %w", tmp, err)
	}
	f = nil
	if err := w.step(AfterTempWrite, path); err != nil {
		return err
	}
	if overwrite {
		if err := os.Rename(tmp, path); err != nil {
			return fmt.Errorf("checkpoint: rename %s to %s: %w", tmp, path, err)
		}
	} else {
		if err := os.Link(tmp, path); err != nil {
			if errors.Is(err, fs.ErrExist) {
				return fmt.Errorf("checkpoint: %s: %w", path, ErrExists)
			}
			return fmt.Errorf("checkpoint: link %s to %s: %w", tmp, path, err)
		}
		os.Remove(tmp)
	}
	if err := w.step(AfterRename, path); err != nil {
		return err
	}
	if err := w.step(BeforeDirSync, path); err != nil {
		return err
	}
	if w.sync() {
		if err := syncDir(dir); err != nil {
			return err
		}
	}
	return nil
}

// syncDir fsyncs a directory so that a rename in it is durable.
func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return fmt.Errorf("checkpoint: open directory %s: %w", dir, err)
	}
	defer d.Close()
	if err := d.Sync(); err != nil {
		return fmt.Errorf("checkpoint: fsync directory %s: %w", dir, err)
	}
	return nil
}

// MkdirAll creates dir and its parents and fsyncs the parent so that the
// new directory survives a crash.
func (w *Writer) MkdirAll(dir string) error {
	if st, err := os.Stat(dir); err == nil && st.IsDir() {
		return nil
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("checkpoint: create directory %s: %w", dir, err)
	}
	if w.sync() {
		return syncDir(filepath.Dir(dir))
	}
	return nil
}
