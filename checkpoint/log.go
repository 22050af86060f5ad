package checkpoint

import (
	"bytes"
	"errors"
	"fmt"
	"hash/crc32"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
)

// ErrCorrupt marks a checkpoint file that cannot be trusted: truncated,
// damaged, or written in an unknown format. The error names the file.
var ErrCorrupt = errors.New("corrupt checkpoint file")

// ErrNewerFormat marks a checkpoint file written in a format newer than
// this build reads (the error also wraps ErrCorrupt: the file cannot be
// used). Nothing is rebuilt around such a file: the checkpoint belongs to
// a later version.
var ErrNewerFormat = errors.New("checkpoint file written by a newer version")

// newerFormat is the error for path written in format version got, when
// this build reads up to max.
func newerFormat(path, what string, got, max int) error {
	return fmt.Errorf("checkpoint: %s: written in %s format v%d, this build reads up to v%d; upgrade Arrowstream to read it: %w (%w)", path, what, got, max, ErrNewerFormat, ErrCorrupt)
}

// FormatVersion is the newest log format this build writes and reads.
const FormatVersion = 1

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

const checksumPrefix = "crc32c:"

// encodeEntry frames a log entry body as Spark's text layout ("v1" line,
// then the body) followed by a checksum line over everything before it.
func encodeEntry(body []byte) []byte {
	var b bytes.Buffer
	fmt.Fprintf(&b, "v%d\n", FormatVersion)
	b.Write(body)
	sum := crc32.Checksum(b.Bytes(), castagnoli)
	fmt.Fprintf(&b, "\n%s%08x", checksumPrefix, sum)
	return b.Bytes()
}

// decodeEntry checks the version line and the checksum and returns the
// body. path names the file in errors.
func decodeEntry(path string, data []byte) ([]byte, error) {
	cut := bytes.LastIndexByte(data, '\n')
	if cut < 0 || !bytes.HasPrefix(data[cut+1:], []byte(checksumPrefix)) {
		return nil, fmt.Errorf("checkpoint: %s: missing checksum line (truncated?): %w", path, ErrCorrupt)
	}
	want, err := strconv.ParseUint(string(data[cut+1+len(checksumPrefix):]), 16, 32)
	if err != nil {
		return nil, fmt.Errorf("checkpoint: %s: malformed checksum line: %w", path, ErrCorrupt)
	}
	content := data[:cut]
	if got := crc32.Checksum(content, castagnoli); uint64(got) != want {
		return nil, fmt.Errorf("checkpoint: %s: checksum mismatch (file has %08x, content gives %08x): %w", path, want, got, ErrCorrupt)
	}
	first, body, _ := bytes.Cut(content, []byte("\n"))
	if len(first) < 2 || first[0] != 'v' {
		return nil, fmt.Errorf("checkpoint: %s: first line %q is not a version: %w", path, first, ErrCorrupt)
	}
	v, err := strconv.Atoi(string(first[1:]))
	if err != nil || v < 1 {
		return nil, fmt.Errorf("checkpoint: %s: bad version line %q: %w", path, first, ErrCorrupt)
	}
	if v > FormatVersion {
		return nil, newerFormat(path, "log", v, FormatVersion)
	}
	return body, nil
}

// Log is a metadata log: one immutable file per epoch in a directory,
// named by the epoch's decimal number (HDFSMetadataLog's layout). An entry
// is never overwritten. Files whose names are not numbers (temp files,
// checksums of other tools) are ignored. Safe for concurrent use.
type Log struct {
	dir string
	w   *Writer

	mu    sync.Mutex
	cache map[int64][]byte // the latest two entries, as Spark keeps
	// purgedBelow: no entry below it is left (-1: unknown until the first
	// Purge lists the directory). Later purges delete the entries from it
	// up to their bound by name, so that retention, which runs every
	// epoch, does not list the directory.
	purgedBelow int64
}

// OpenLog opens (creating if needed) the log in dir.
func OpenLog(dir string, w *Writer) (*Log, error) {
	if err := w.MkdirAll(dir); err != nil {
		return nil, err
	}
	return &Log{dir: dir, w: w, cache: map[int64][]byte{}, purgedBelow: -1}, nil
}

// Dir returns the log's directory.
func (l *Log) Dir() string { return l.dir }

func (l *Log) path(epoch int64) string {
	return filepath.Join(l.dir, strconv.FormatInt(epoch, 10))
}

// Add writes the entry of epoch. It returns false, and writes nothing, when
// the epoch already has an entry. A race with another writer for the same
// epoch is reported as an error mentioning concurrent queries.
func (l *Log) Add(epoch int64, body []byte) (bool, error) {
	if epoch < 0 {
		return false, fmt.Errorf("checkpoint: negative epoch %d", epoch)
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if _, ok := l.cache[epoch]; ok {
		return false, nil
	}
	p := l.path(epoch)
	if _, err := os.Stat(p); err == nil {
		return false, nil
	}
	if err := l.w.WriteFile(p, encodeEntry(body), false); err != nil {
		if errors.Is(err, ErrExists) {
			return false, fmt.Errorf("checkpoint: %s appeared while writing it: multiple streaming queries are concurrently using %s: %w", p, l.dir, err)
		}
		return false, err
	}
	l.remember(epoch, body)
	return true, nil
}

func (l *Log) remember(epoch int64, body []byte) {
	l.cache[epoch] = body
	if len(l.cache) > 2 {
		lowest := epoch
		for e := range l.cache {
			lowest = min(lowest, e)
		}
		delete(l.cache, lowest)
	}
}

// Get returns the body of epoch's entry, or false when there is none.
func (l *Log) Get(epoch int64) ([]byte, bool, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if b, ok := l.cache[epoch]; ok {
		return b, true, nil
	}
	p := l.path(epoch)
	data, err := os.ReadFile(p)
	if errors.Is(err, os.ErrNotExist) {
		return nil, false, nil
	}
	if err != nil {
		return nil, false, fmt.Errorf("checkpoint: read %s: %w", p, err)
	}
	body, err := decodeEntry(p, data)
	if err != nil {
		return nil, false, err
	}
	return body, true, nil
}

// Epochs lists the epochs that have entries, ascending.
func (l *Log) Epochs() ([]int64, error) {
	ents, err := os.ReadDir(l.dir)
	if err != nil {
		return nil, fmt.Errorf("checkpoint: list %s: %w", l.dir, err)
	}
	var out []int64
	for _, e := range ents {
		n, ok := parseEpochName(e.Name())
		if ok && e.Type().IsRegular() {
			out = append(out, n)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i] < out[j] })
	return out, nil
}

// parseEpochName accepts only canonical decimal names ("7", not "07" or
// "+7").
func parseEpochName(name string) (int64, bool) {
	if name == "" || strings.TrimLeft(name, "0123456789") != "" || len(name) > 1 && name[0] == '0' {
		return 0, false
	}
	n, err := strconv.ParseInt(name, 10, 64)
	return n, err == nil
}

// Latest returns the highest epoch and its body, or false when the log is
// empty.
func (l *Log) Latest() (int64, []byte, bool, error) {
	epochs, err := l.Epochs()
	if err != nil || len(epochs) == 0 {
		return 0, nil, false, err
	}
	e := epochs[len(epochs)-1]
	body, ok, err := l.Get(e)
	if err != nil {
		return 0, nil, false, err
	}
	if !ok {
		return 0, nil, false, fmt.Errorf("checkpoint: %s vanished while reading it", l.path(e))
	}
	return e, body, true, nil
}

// Purge deletes the entries of epochs before the given one (retention).
// Only the first purge of a Log lists the directory.
func (l *Log) Purge(before int64) error {
	l.mu.Lock()
	from := l.purgedBelow
	l.mu.Unlock()
	var err error
	if from < 0 {
		err = l.deleteWhere(func(e int64) bool { return e < before })
	} else {
		err = l.deleteRange(from, before)
	}
	if err != nil {
		return err
	}
	l.mu.Lock()
	l.purgedBelow = max(l.purgedBelow, before)
	l.mu.Unlock()
	return nil
}

// deleteRange deletes the entries of epochs from..before-1 by name.
func (l *Log) deleteRange(from, before int64) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	for e := from; e < before; e++ {
		delete(l.cache, e)
		if err := os.Remove(l.path(e)); err != nil && !errors.Is(err, os.ErrNotExist) {
			return fmt.Errorf("checkpoint: purge %s: %w", l.path(e), err)
		}
	}
	return nil
}

// PurgeAfter deletes the entries of epochs after the given one.
func (l *Log) PurgeAfter(after int64) error {
	return l.deleteWhere(func(e int64) bool { return e > after })
}

func (l *Log) deleteWhere(drop func(int64) bool) error {
	epochs, err := l.Epochs()
	if err != nil {
		return err
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	for _, e := range epochs {
		if !drop(e) {
			continue
		}
		delete(l.cache, e)
		if err := os.Remove(l.path(e)); err != nil && !errors.Is(err, os.ErrNotExist) {
			return fmt.Errorf("checkpoint: purge %s: %w", l.path(e), err)
		}
	}
	return nil
}

func crc32c(b []byte) uint32 { return crc32.Checksum(b, castagnoli) }
