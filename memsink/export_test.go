package memsink

import (
	"encoding/binary"
	"hash/crc32"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/apache/arrow/go/v17/arrow/ipc"
)

// ChainForTest returns the persisted chain's entries (per-epoch file names
// of the records recovery would read), oldest first.
func (t *Table) ChainForTest() []string {
	t.mu.Lock()
	defer t.mu.Unlock()
	return slices.Clone(t.persist.chain)
}

// SetSegmentBytesForTest sets the size past which the log starts a new
// segment.
func (t *Table) SetSegmentBytesForTest(n int64) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.persist.log.segmentBytes = n
}

// WriteZstdForTest makes the table write what it persists with zstd, as
// builds before session 29 did for epochs of 1 MiB of columns or more.
func (t *Table) WriteZstdForTest() {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.persist.codec = ipc.WithZstd()
}

// ToLegacyFiles rewrites the log segments in checkpointDir's sink
// directory as the per-epoch files earlier builds wrote (each record's IPC
// stream with its trailer), then removes the segments: a directory as an
// earlier build would have left it.
func ToLegacyFiles(t testing.TB, checkpointDir string) {
	t.Helper()
	dir := filepath.Join(checkpointDir, filepath.FromSlash(SinkDir))
	ents, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var segs []int64
	for _, e := range ents {
		if seq, ok := parseLogSegmentName(e.Name()); ok {
			segs = append(segs, seq)
		}
	}
	slices.Sort(segs)
	for _, seq := range segs {
		path := filepath.Join(dir, logSegmentName(seq))
		data, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		scan, err := decodeLogSegment(path, data)
		if err != nil || scan.torn != "" {
			t.Fatalf("%s: %v %s", path, err, scan.torn)
		}
		for _, r := range scan.records {
			body := data[r.ipc : r.ipc+r.n]
			raw := slices.Clip(slices.Clone(body))
			raw = binary.LittleEndian.AppendUint32(raw, crc32.Checksum(body, castagnoli))
			raw = append(raw, fileMagic[:]...)
			if err := os.WriteFile(filepath.Join(dir, r.name()), raw, 0o644); err != nil {
				t.Fatal(err)
			}
		}
		if err := os.Remove(path); err != nil {
			t.Fatal(err)
		}
	}
}
