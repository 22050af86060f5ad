package checkpoint

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
)

// Temp files of atomic writes.
//
// Every atomic write (WriteFile) writes .<name>.<16 hex digits>.tmp beside
// its target and renames or links it into place. A process killed between
// the temp write and the move (SIGKILL, OOM kill, a machine crash) leaves
// that file behind for good: readers ignore it, and nothing removed it, so
// a crash loop grew a pile of them that MaxCheckpointBytes-style quotas
// count. The single writer of a directory removes them (RemoveStaleTemps)
// once it holds the lock that makes it the single writer: the epoch log's
// segment lock for a query's checkpoint, the root lock for the catalog.
//
// Which temp files are stale: the first 8 hex digits of every temp name
// this process writes are processToken, drawn once at start, so that a
// sweep never removes a write of its own still in flight (a maintenance
// goroutine's snapshot, the sink's file) whatever goroutine makes it. A
// temp file with another token belongs to another process; under the lock
// no other live process writes there, so it is a dead writer's. (Two
// processes drawing the same token, one chance in 2^32, only leave a stale
// file in place.)

// processToken starts every temp name this process writes. It is set once,
// at package initialization, and never changes.
var processToken = newProcessToken()

func newProcessToken() string {
	var b [4]byte
	if _, err := rand.Read(b[:]); err != nil {
		// crypto/rand does not fail on supported platforms; a fixed
		// token would only make sweeps skip more files, never remove
		// a live one of this process.
		return "00000000"
	}
	return hex.EncodeToString(b[:])
}

// tempSuffixLen is the length of a temp name's hex part.
const tempSuffixLen = 16

// TempPath returns a fresh temp path for an atomic write of path: in the
// same directory, .<base>.<processToken><8 random hex digits>.tmp.
func TempPath(path string) (string, error) {
	var r [4]byte
	if _, err := rand.Read(r[:]); err != nil {
		return "", fmt.Errorf("checkpoint: temp name for %s: %w", path, err)
	}
	dir, base := filepath.Dir(path), filepath.Base(path)
	return filepath.Join(dir, "."+base+"."+processToken+hex.EncodeToString(r[:])+".tmp"), nil
}

// IsTempName reports whether name is exactly the name of a temp file of an
// atomic write: "." + a non-empty target name + "." + 16 lower-case hex
// digits + ".tmp". Any other name (a user's dot-file, another program's
// .tmp) is not ours and is never removed.
func IsTempName(name string) bool {
	rest, ok := strings.CutPrefix(name, ".")
	if !ok {
		return false
	}
	rest, ok = strings.CutSuffix(rest, ".tmp")
	if !ok {
		return false
	}
	i := len(rest) - tempSuffixLen - 1
	if i < 1 || rest[i] != '.' || strings.ContainsRune(rest[:i], '/') {
		return false
	}
	for _, c := range rest[i+1:] {
		if !(c >= '0' && c <= '9' || c >= 'a' && c <= 'f') {
			return false
		}
	}
	return true
}

// isCheckpointDir reports whether dir is a query's checkpoint (it has an
// epoch log, or v1 offsets): one nested in the swept directory, which its
// own query sweeps under its own lock.
func isCheckpointDir(dir string) bool {
	for _, sub := range []string{EpochLogDir, "offsets"} {
		if st, err := os.Stat(filepath.Join(dir, sub)); err == nil && st.IsDir() {
			return true
		}
	}
	return false
}

// isOwnTemp reports whether a temp name was written by this process.
func isOwnTemp(name string) bool {
	rest := strings.TrimSuffix(name, ".tmp")
	return strings.HasPrefix(rest[len(rest)-tempSuffixLen:], processToken)
}

// StaleTemps is what RemoveStaleTemps removed.
type StaleTemps struct {
	Files int
	Bytes int64
}

// RemoveStaleTemps removes the temp files of interrupted atomic writes
// (IsTempName) of other processes from dir and its subdirectories (but
// not from another query's checkpoint nested in dir), and
// logs what it removed (count and bytes). The caller must hold the lock
// that makes it the single writer of dir: a temp file of another live
// writer would be removed under it. Readers never call it. A directory
// that does not exist holds nothing to remove. Errors (a listing or a
// removal refused) end the sweep and are returned with what was removed
// until then; a stale file left in place harms nothing but space. log nil
// means slog.Default().
func RemoveStaleTemps(ctx context.Context, dir string, log *slog.Logger) (StaleTemps, error) {
	var got StaleTemps
	err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			if errors.Is(err, fs.ErrNotExist) {
				return nil // removed while walking (a purge, a drop)
			}
			return err
		}
		if err := ctx.Err(); err != nil {
			return err
		}
		if d.IsDir() && path != dir && isCheckpointDir(path) {
			return fs.SkipDir // another query's checkpoint: not ours to sweep
		}
		if !d.Type().IsRegular() || !IsTempName(d.Name()) || isOwnTemp(d.Name()) {
			return nil
		}
		info, err := d.Info()
		if err != nil {
			if errors.Is(err, fs.ErrNotExist) {
				return nil
			}
			return err
		}
		if err := os.Remove(path); err != nil {
			if errors.Is(err, fs.ErrNotExist) {
				return nil
			}
			return err
		}
		got.Files++
		got.Bytes += info.Size()
		return nil
	})
	if got.Files > 0 {
		if log == nil {
			log = slog.Default()
		}
		log.Info("checkpoint: removed stale temp files of interrupted writes", "dir", dir, "files", got.Files, "bytes", got.Bytes)
	}
	if err != nil {
		return got, fmt.Errorf("checkpoint: remove stale temp files under %s: %w", dir, err)
	}
	return got, nil
}
