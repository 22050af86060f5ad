package pebblestore

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/cockroachdb/pebble/v2"
	"github.com/klauspost/compress/zstd"

	"github.com/arrowstream/arrowstream/checkpoint"
)

// Changelog checkpointing (Options.ChangelogCheckpointing): a version that
// is not a snapshot version writes only <version>.changelog, the epoch's
// Pebble batch as is, instead of flushing and copying SST files; every
// MinDeltasForSnapshot-th version is a full snapshot (<version>.pebble).
// Restoring a version opens the newest snapshot at or below it and applies
// the changelogs after it.

const changelogSuffix = ".changelog"

var changelogMagic = [4]byte{'A', 'S', 'C', 'L'}

func (p *Partition) changelogPath(version int64) string {
	return filepath.Join(p.dir, strconv.FormatInt(version, 10)+changelogSuffix)
}

// encodeChangelog: magic, version and key count (little-endian int64),
// the batch representation compressed with zstd, then CRC-32C of
// everything before it.
func encodeChangelog(enc *zstd.Encoder, version, numKeys int64, repr []byte) []byte {
	out := make([]byte, 0, 24+len(repr)/2)
	out = append(out, changelogMagic[:]...)
	out = binary.LittleEndian.AppendUint64(out, uint64(version))
	out = binary.LittleEndian.AppendUint64(out, uint64(numKeys))
	out = enc.EncodeAll(repr, out)
	return binary.LittleEndian.AppendUint32(out, crc32.Checksum(out, castagnoli))
}

// decodeChangelog validates a changelog file and decompresses its batch.
func decodeChangelog(dec *zstd.Decoder, raw []byte) (version, numKeys int64, repr []byte, err error) {
	version, numKeys, compressed, err := checkChangelog(raw)
	if err != nil {
		return 0, 0, nil, err
	}
	if repr, err = dec.DecodeAll(compressed, nil); err != nil {
		return 0, 0, nil, fmt.Errorf("zstd: %v: %w", err, checkpoint.ErrCorrupt)
	}
	return version, numKeys, repr, nil
}

// checkChangelog checks a changelog's framing; the payload aliases raw.
func checkChangelog(raw []byte) (version, numKeys int64, payload []byte, err error) {
	if len(raw) < 24 || !bytes.Equal(raw[:4], changelogMagic[:]) {
		return 0, 0, nil, fmt.Errorf("not a changelog (truncated?): %w", checkpoint.ErrCorrupt)
	}
	body := raw[:len(raw)-4]
	if got, want := crc32.Checksum(body, castagnoli), binary.LittleEndian.Uint32(raw[len(raw)-4:]); got != want {
		return 0, 0, nil, fmt.Errorf("checksum mismatch (file has %08x, content gives %08x): %w", want, got, checkpoint.ErrCorrupt)
	}
	version = int64(binary.LittleEndian.Uint64(body[4:12]))
	numKeys = int64(binary.LittleEndian.Uint64(body[12:20]))
	if version <= 0 || numKeys < 0 {
		return 0, 0, nil, fmt.Errorf("bad version %d or key count %d: %w", version, numKeys, checkpoint.ErrCorrupt)
	}
	return version, numKeys, body[20:], nil
}

// writeChangelog makes version next durable as a changelog.
func (p *Partition) writeChangelog(next, numKeys int64, repr []byte, metrics map[string]int64) error {
	raw := encodeChangelog(p.prov.zenc, next, numKeys, repr)
	// A re-run epoch rewrites its version: overwrite.
	if err := p.prov.opts.Writer.WriteFile(p.changelogPath(next), raw, true); err != nil {
		return err
	}
	metrics["pebbleCheckpointBytesWritten"] += int64(len(raw))
	metrics["pebbleChangelogBytes"] = int64(len(raw))
	return nil
}

// applyChangelog replays version's changelog into the open db and returns
// the version's key count.
func (p *Partition) applyChangelog(version int64) (int64, error) {
	path := p.changelogPath(version)
	raw, err := os.ReadFile(path)
	if err != nil {
		return 0, fmt.Errorf("pebblestore: cannot load version %d: %w", version, err)
	}
	return p.applyChangelogBytes(version, raw, path)
}

// applyChangelogBytes replays a changelog's bytes (read from path, which
// names it in errors) into the open db.
func (p *Partition) applyChangelogBytes(version int64, raw []byte, path string) (int64, error) {
	v, numKeys, repr, err := decodeChangelog(p.prov.zdec, raw)
	if err != nil {
		return 0, fmt.Errorf("pebblestore: %s: %w", path, err)
	}
	if v != version {
		return 0, fmt.Errorf("pebblestore: %s holds version %d: %w", path, v, checkpoint.ErrCorrupt)
	}
	b := p.db.NewBatch()
	defer b.Close()
	if err := b.SetRepr(repr); err != nil {
		return 0, fmt.Errorf("pebblestore: %s: %v: %w", path, err, checkpoint.ErrCorrupt)
	}
	if err := p.db.Apply(b, pebble.NoSync); err != nil {
		return 0, fmt.Errorf("pebblestore: apply %s: %w", path, err)
	}
	return numKeys, nil
}

// snapshotBase returns the newest version at or below version that has a
// manifest (0: none, start from empty).
func (p *Partition) snapshotBase(version int64) (int64, error) {
	ents, err := os.ReadDir(p.dir)
	if err != nil {
		return 0, fmt.Errorf("pebblestore: list %s: %w", p.dir, err)
	}
	base := int64(0)
	for _, e := range ents {
		if v, ok := parseManifestName(e.Name()); ok && v <= version && v > base {
			base = v
		}
	}
	return base, nil
}

// parseChangelogName returns the version of a <version>.changelog name.
func parseChangelogName(name string) (int64, bool) {
	v, ok := strings.CutSuffix(name, changelogSuffix)
	if !ok {
		return 0, false
	}
	n, err := strconv.ParseInt(v, 10, 64)
	return n, err == nil && n > 0 && strconv.FormatInt(n, 10) == v
}

// removeChangelogs deletes the changelogs at or below version: the
// snapshot at version replaces them.
func (p *Partition) removeChangelogs(ents []os.DirEntry, version int64) error {
	for _, e := range ents {
		if v, ok := parseChangelogName(e.Name()); ok && v <= version {
			if err := os.Remove(p.changelogPath(v)); err != nil && !errors.Is(err, fs.ErrNotExist) {
				return fmt.Errorf("pebblestore: delete old changelog: %w", err)
			}
		}
	}
	return nil
}
