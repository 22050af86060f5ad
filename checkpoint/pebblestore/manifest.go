package pebblestore

import (
	"bytes"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"hash/crc32"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/arrowstream/arrowstream/checkpoint"
)

const (
	sstDir         = "sst"
	manifestSuffix = ".pebble"
	manifestFormat = "arrowstream-pebble/1"
)

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// manifest describes one committed version of a partition.
type manifest struct {
	Format  string `json:"format"`
	Version int64  `json:"version"`
	// NumKeys is the version's live key count (StateStore.Len).
	NumKeys int64 `json:"numKeys"`
	// Files are the shared immutable files (SST, blob) the version needs.
	Files []fileEntry `json:"files"`
	// Meta are Pebble's small per-version files, stored inline.
	Meta []metaFile `json:"meta"`
}

type fileEntry struct {
	Name   string `json:"name"`   // in the working directory
	Remote string `json:"remote"` // in <partition>/sst
	Size   int64  `json:"size"`
}

type metaFile struct {
	Name string `json:"name"`
	Data []byte `json:"data"`
}

type remoteFile struct {
	name string
	size int64
}

func (p *Partition) manifestPath(version int64) string {
	return filepath.Join(p.dir, strconv.FormatInt(version, 10)+manifestSuffix)
}

// encodeManifest renders m as JSON followed by a line with its CRC-32C, so
// that damage is reported instead of restoring a wrong state.
func encodeManifest(m *manifest) ([]byte, error) {
	body, err := json.Marshal(m)
	if err != nil {
		return nil, err
	}
	var sum [4]byte
	crc := crc32.Checksum(body, castagnoli)
	sum[0], sum[1], sum[2], sum[3] = byte(crc>>24), byte(crc>>16), byte(crc>>8), byte(crc)
	return append(append(body, '\n'), hex.EncodeToString(sum[:])+"\n"...), nil
}

// decodeManifest parses and validates a manifest file's content.
func decodeManifest(raw []byte) (*manifest, error) {
	body, sumLine, ok := bytes.Cut(bytes.TrimSuffix(raw, []byte("\n")), []byte("\n"))
	if !ok {
		return nil, fmt.Errorf("no checksum line (truncated?): %w", checkpoint.ErrCorrupt)
	}
	sum, err := hex.DecodeString(string(sumLine))
	if err != nil || len(sum) != 4 {
		return nil, fmt.Errorf("bad checksum line %q: %w", sumLine, checkpoint.ErrCorrupt)
	}
	want := uint32(sum[0])<<24 | uint32(sum[1])<<16 | uint32(sum[2])<<8 | uint32(sum[3])
	if got := crc32.Checksum(body, castagnoli); got != want {
		return nil, fmt.Errorf("checksum mismatch (file has %08x, content gives %08x): %w", want, got, checkpoint.ErrCorrupt)
	}
	var m manifest
	if err := json.Unmarshal(body, &m); err != nil {
		return nil, fmt.Errorf("%v: %w", err, checkpoint.ErrCorrupt)
	}
	if m.Format != manifestFormat {
		return nil, fmt.Errorf("unknown format %q (want %q): %w", m.Format, manifestFormat, checkpoint.ErrCorrupt)
	}
	if m.NumKeys < 0 {
		return nil, fmt.Errorf("negative key count %d: %w", m.NumKeys, checkpoint.ErrCorrupt)
	}
	for _, f := range m.Files {
		if !plainName(f.Name) || !plainName(f.Remote) || f.Size < 0 {
			return nil, fmt.Errorf("bad file entry %q → %q: %w", f.Name, f.Remote, checkpoint.ErrCorrupt)
		}
	}
	for _, f := range m.Meta {
		if !plainName(f.Name) {
			return nil, fmt.Errorf("bad file name %q: %w", f.Name, checkpoint.ErrCorrupt)
		}
	}
	return &m, nil
}

// plainName reports whether name is a file name without a directory: a
// damaged manifest must not make a restore write outside its directory.
func plainName(name string) bool {
	return name != "" && name != "." && name != ".." && !strings.ContainsAny(name, `/\`) && filepath.Base(name) == name
}

func (p *Partition) readManifest(version int64) (*manifest, error) {
	path := p.manifestPath(version)
	raw, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("pebblestore: cannot load version %d: %w", version, err)
	}
	m, err := decodeManifest(raw)
	if err != nil {
		return nil, fmt.Errorf("pebblestore: %s: %w", path, err)
	}
	if m.Version != version {
		return nil, fmt.Errorf("pebblestore: %s holds version %d: %w", path, m.Version, checkpoint.ErrCorrupt)
	}
	p.referenced[version] = remoteNames(m)
	return m, nil
}

func remoteNames(m *manifest) []string {
	out := make([]string, len(m.Files))
	for i, f := range m.Files {
		out[i] = f.Remote
	}
	return out
}

// parseManifestName returns the version of a <version>.pebble file name.
func parseManifestName(name string) (int64, bool) {
	v, ok := strings.CutSuffix(name, manifestSuffix)
	if !ok {
		return 0, false
	}
	n, err := strconv.ParseInt(v, 10, 64)
	return n, err == nil && n >= 0 && strconv.FormatInt(n, 10) == v
}
