package checkpoint

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
)

// Snapshot packs. A partition's snapshot (a full snapshot or a segment)
// used to be a file of its own, <operator>/<partition>/<version>.snapshot:
// at Spark's 200 shuffle partitions an operator whose partitions all
// became due together (they do: they share the epochs' rhythm) wrote 200
// files of a few KiB, each a temp file, an fsync, a rename and a
// directory fsync, after making the partition's directory: most of the
// system time of Nexmark q4 and q17 at 200 partitions. The snapshots that
// one commit makes due for an operator's group-committed partitions are
// now written into one file per snapshot version,
//
//	<operator>/<version>.<seq>.pack
//
// with one fsync (snapPacks.write). Its body is the partitions' snapshot
// files back to back, each unchanged (the same state file format, with
// its own CRC trailer, so a damaged body is named and costs only its
// partition's shortcut), then an index naming each entry's partition,
// kind ("snapshot" or "<base>.segment", as the file names have it),
// offset and length, and a footer:
//
//	index offset u64 | entries u32 | format u8 | 3 zero bytes |
//	CRC-32C of the index and the 16 footer bytes before it u32 | "ASPK"
//
// A partition reads its own entry back with one ReadAt. seq tells apart
// packs of one version (a flush of a large operator, or a snapshot of a
// version a pack already holds: a view kept at a version while the
// partition's maintenance was running); it is the first free one, and a
// pack is never overwritten.
//
// The partitions' file indexes hold a packed base under the key its own
// file would have, so chains, purging and the snapshot schedule are
// unchanged; a pack is deleted once every partition has dropped its
// entry (cleanup). A partition's own files of older builds are still read,
// and chains may mix both. A pack whose index cannot be read (torn,
// damaged) is a lost shortcut for every partition in it: each rebuilds
// from an older base and the deltas when they are all still there, else
// the load fails naming the pack. A pack of a newer format is refused.

const packExt = ".pack"

var packMagic = [4]byte{'A', 'S', 'P', 'K'}

// packFormat is the pack format this build writes and reads.
const packFormat = 1

const packFooterLen = 24

// packFlushBytes bounds the snapshot bytes a maintenance job holds before
// it writes them (a pack of its own): an operator's partitions' snapshots
// are otherwise all in memory until the pack is written.
const packFlushBytes = 64 << 20

// packEntry is one partition's base in a pack.
type packEntry struct {
	part string
	key  fileKey
	off  int64
	n    int64
}

// snapPack is one pack file and its index.
type snapPack struct {
	path    string
	version int64
	seq     int64
	entries []packEntry
	dropped []bool
	held    int // entries not dropped
}

// packDamage is a pack whose index could not be read.
type packDamage struct {
	version int64
	err     error
}

// snapPacks are the snapshot packs of one operator (its state directory
// dir), shared by its partitions. Listed once, at the first partition's
// file index; kept up to date by writes and drops after that.
type snapPacks struct {
	dir string
	w   *Writer

	mu      sync.Mutex
	listed  bool
	listErr error
	dirMade bool
	packs   map[string]*snapPack // by file name
	byPart  map[string]map[fileKey]packRef
	damaged []packDamage
}

// packRef locates a partition's base in a pack.
type packRef struct {
	pack *snapPack
	i    int
}

func newSnapPacks(dir string, w *Writer) *snapPacks {
	return &snapPacks{dir: dir, w: w, packs: map[string]*snapPack{}, byPart: map[string]map[fileKey]packRef{}}
}

// parsePackName parses "<version>.<seq>.pack".
func parsePackName(name string) (version, seq int64, ok bool) {
	rest, ok := strings.CutSuffix(name, packExt)
	if !ok {
		return 0, 0, false
	}
	v, s, ok := strings.Cut(rest, ".")
	if !ok {
		return 0, 0, false
	}
	version, ok1 := parseEpochName(v)
	seq, ok2 := parseEpochName(s)
	return version, seq, ok1 && ok2
}

func packName(version, seq int64) string {
	return strconv.FormatInt(version, 10) + "." + strconv.FormatInt(seq, 10) + packExt
}

// list reads the operator's packs' indexes (once). Callers hold s.mu.
func (s *snapPacks) list() error {
	if s.listed {
		return s.listErr
	}
	s.listed = true
	ents, err := os.ReadDir(s.dir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		s.listErr = fmt.Errorf("checkpoint: list %s: %w", s.dir, err)
		return s.listErr
	}
	s.dirMade = true
	for _, e := range ents {
		v, seq, ok := parsePackName(e.Name())
		if !ok || e.IsDir() {
			continue
		}
		path := filepath.Join(s.dir, e.Name())
		entries, err := readPackIndex(path)
		if err != nil {
			if errors.Is(err, ErrNewerFormat) || !errors.Is(err, ErrCorrupt) {
				s.listErr = err
				return err
			}
			slog.Warn("state snapshot pack unreadable; its partitions rebuild from older snapshots and deltas", "err", err)
			s.damaged = append(s.damaged, packDamage{version: v, err: err})
			continue
		}
		s.add(&snapPack{path: path, version: v, seq: seq, entries: entries})
	}
	return nil
}

// add indexes pk. An entry for a partition's key that another pack holds
// already is dropped from the older pack (by seq): both describe the same
// committed version. Callers hold s.mu.
func (s *snapPacks) add(pk *snapPack) {
	pk.dropped = make([]bool, len(pk.entries))
	pk.held = len(pk.entries)
	s.packs[filepath.Base(pk.path)] = pk
	for i, e := range pk.entries {
		m := s.byPart[e.part]
		if m == nil {
			m = map[fileKey]packRef{}
			s.byPart[e.part] = m
		}
		if old, ok := m[e.key]; ok {
			if old.pack.seq > pk.seq {
				s.dropLocked(packRef{pk, i})
				continue
			}
			s.dropLocked(old)
		}
		m[e.key] = packRef{pk, i}
	}
}

// keys returns the keys of part's bases in packs.
func (s *snapPacks) keys(part string) ([]fileKey, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := s.list(); err != nil {
		return nil, err
	}
	m := s.byPart[part]
	out := make([]fileKey, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	return out, nil
}

// lookup returns where part's base k is packed.
func (s *snapPacks) lookup(part string, k fileKey) (packRef, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	r, ok := s.byPart[part][k]
	return r, ok
}

// damage returns the error of a pack whose index was unreadable and whose
// version lies in (after, upTo]: a base a load of upTo may have lost.
func (s *snapPacks) damage(after, upTo int64) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	var errs []error
	for _, d := range s.damaged {
		if d.version > after && d.version <= upTo {
			errs = append(errs, d.err)
		}
	}
	return errors.Join(errs...)
}

// drop releases part's base k from its pack, deleting the pack once no
// partition holds an entry of it; ok is false when k is not packed.
func (s *snapPacks) drop(part string, k fileKey) (ok bool, err error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	r, ok := s.byPart[part][k]
	if !ok {
		return false, nil
	}
	delete(s.byPart[part], k)
	return true, s.dropLocked(r)
}

// dropLocked marks r's entry dropped and deletes its pack when it was the
// last held. Callers hold s.mu.
func (s *snapPacks) dropLocked(r packRef) error {
	pk := r.pack
	if pk.dropped[r.i] {
		return nil
	}
	pk.dropped[r.i] = true
	pk.held--
	if pk.held > 0 {
		return nil
	}
	delete(s.packs, filepath.Base(pk.path))
	if err := os.Remove(pk.path); err != nil && !errors.Is(err, os.ErrNotExist) {
		return fmt.Errorf("checkpoint: delete state snapshot pack: %w", err)
	}
	return nil
}

// read returns the bytes of r's entry: a state file.
func (r packRef) read() ([]byte, error) {
	e := r.pack.entries[r.i]
	f, err := os.Open(r.pack.path)
	if err != nil {
		return nil, fmt.Errorf("checkpoint: read %s: %w", r.pack.path, err)
	}
	defer f.Close()
	raw := make([]byte, e.n)
	if _, err := f.ReadAt(raw, e.off); err != nil {
		if errors.Is(err, io.EOF) {
			err = fmt.Errorf("%v: %w", err, ErrCorrupt)
		}
		return nil, fmt.Errorf("checkpoint: read %s: %w", r.name(), err)
	}
	return raw, nil
}

// name names r's entry in errors.
func (r packRef) name() string {
	e := r.pack.entries[r.i]
	return fmt.Sprintf("%s (partition %s's %s, %d bytes at %d)", r.pack.path, e.part, e.key.kind, e.n, e.off)
}

// pendingBase is a partition's snapshot waiting for its pack.
type pendingBase struct {
	p       *StorePartition
	key     fileKey
	raw     []byte
	install func()
}

// write writes bases (all of one version) as one pack and indexes it;
// on error nothing is indexed.
func (s *snapPacks) write(version int64, bases []pendingBase) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := s.list(); err != nil {
		return err
	}
	if !s.dirMade {
		if err := s.w.MkdirAll(s.dir); err != nil {
			return err
		}
		s.dirMade = true
	}
	parts := make([][]byte, 0, len(bases)+1)
	entries := make([]packEntry, len(bases))
	off := int64(0)
	for i, b := range bases {
		entries[i] = packEntry{part: b.p.packPart, key: b.key, off: off, n: int64(len(b.raw))}
		parts = append(parts, b.raw)
		off += int64(len(b.raw))
	}
	parts = append(parts, appendPackIndex(nil, entries, off))
	for seq := int64(0); ; seq++ {
		name := packName(version, seq)
		if s.packs[name] != nil {
			continue
		}
		path := filepath.Join(s.dir, name)
		err := s.w.writeFileParts(path, parts, false)
		if errors.Is(err, ErrExists) {
			continue // an unreadable pack of an earlier run
		}
		if err != nil {
			return err
		}
		s.add(&snapPack{path: path, version: version, seq: seq, entries: entries})
		return nil
	}
}

// appendPackIndex appends the index of entries and the footer; indexOff
// is where the index starts in the file.
func appendPackIndex(dst []byte, entries []packEntry, indexOff int64) []byte {
	start := len(dst)
	for _, e := range entries {
		dst = binary.LittleEndian.AppendUint16(dst, uint16(len(e.part)))
		dst = append(dst, e.part...)
		dst = binary.LittleEndian.AppendUint16(dst, uint16(len(e.key.kind)))
		dst = append(dst, e.key.kind...)
		dst = binary.LittleEndian.AppendUint64(dst, uint64(e.off))
		dst = binary.LittleEndian.AppendUint64(dst, uint64(e.n))
	}
	dst = binary.LittleEndian.AppendUint64(dst, uint64(indexOff))
	dst = binary.LittleEndian.AppendUint32(dst, uint32(len(entries)))
	dst = append(dst, packFormat, 0, 0, 0)
	dst = binary.LittleEndian.AppendUint32(dst, crc32c(dst[start:]))
	return append(dst, packMagic[:]...)
}

// readPackIndex reads the index of the pack at path; its version is the
// one in the file's name.
func readPackIndex(path string) ([]packEntry, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("checkpoint: read %s: %w", path, err)
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return nil, fmt.Errorf("checkpoint: read %s: %w", path, err)
	}
	size := st.Size()
	if size < packFooterLen {
		return nil, fmt.Errorf("checkpoint: %s: %d bytes, shorter than a snapshot pack's footer (truncated?): %w", path, size, ErrCorrupt)
	}
	var foot [packFooterLen]byte
	if _, err := f.ReadAt(foot[:], size-packFooterLen); err != nil {
		return nil, fmt.Errorf("checkpoint: read %s: %w", path, err)
	}
	if [4]byte(foot[20:]) != packMagic {
		return nil, fmt.Errorf("checkpoint: %s: snapshot pack footer missing (truncated?): %w", path, ErrCorrupt)
	}
	indexOff := int64(binary.LittleEndian.Uint64(foot[:8]))
	if indexOff < 0 || indexOff > size-packFooterLen || size-packFooterLen-indexOff > maxDecodeBuffer {
		return nil, fmt.Errorf("checkpoint: %s: snapshot pack index at %d outside the file's %d bytes: %w", path, indexOff, size, ErrCorrupt)
	}
	buf := make([]byte, size-indexOff)
	if _, err := f.ReadAt(buf, indexOff); err != nil {
		return nil, fmt.Errorf("checkpoint: read %s: %w", path, err)
	}
	return parsePackIndex(path, buf, indexOff)
}

// parsePackIndex parses a pack's index and footer (buf, from indexOff to
// the file's end).
func parsePackIndex(path string, buf []byte, indexOff int64) ([]packEntry, error) {
	corrupt := func(what string) error {
		return fmt.Errorf("checkpoint: %s: snapshot pack index %s: %w", path, what, ErrCorrupt)
	}
	if len(buf) < packFooterLen {
		return nil, corrupt("truncated")
	}
	n := len(buf)
	if got, want := crc32c(buf[:n-8]), binary.LittleEndian.Uint32(buf[n-8:]); got != want {
		return nil, corrupt(fmt.Sprintf("checksum mismatch (file has %08x, content gives %08x)", want, got))
	}
	foot := buf[n-packFooterLen:]
	if f := foot[12]; f != packFormat {
		if f > packFormat {
			return nil, fmt.Errorf("checkpoint: %s: snapshot pack in format v%d, this build reads up to v%d; upgrade Arrowstream to read it: %w (%w)", path, f, packFormat, ErrNewerFormat, ErrCorrupt)
		}
		return nil, corrupt(fmt.Sprintf("format %d", f))
	}
	count := int(binary.LittleEndian.Uint32(foot[8:12]))
	idx := buf[:n-packFooterLen]
	if count > len(idx)/20 {
		return nil, corrupt(fmt.Sprintf("of %d entries in %d bytes", count, len(idx)))
	}
	entries := make([]packEntry, 0, count)
	v, _, _ := parsePackName(filepath.Base(path))
	str := func() (string, bool) {
		if len(idx) < 2 {
			return "", false
		}
		l := int(binary.LittleEndian.Uint16(idx))
		if len(idx) < 2+l {
			return "", false
		}
		s := string(idx[2 : 2+l])
		idx = idx[2+l:]
		return s, true
	}
	for range count {
		part, ok1 := str()
		kind, ok2 := str()
		if !ok1 || !ok2 || len(idx) < 16 {
			return nil, corrupt("entry truncated")
		}
		off := int64(binary.LittleEndian.Uint64(idx))
		size := int64(binary.LittleEndian.Uint64(idx[8:]))
		idx = idx[16:]
		if _, seg := segmentBase(kind); kind != "snapshot" && !seg || part == "" || strings.ContainsAny(part, "/\\") {
			return nil, corrupt(fmt.Sprintf("entry %q of partition %q", kind, part))
		}
		if off < 0 || size < 0 || off > indexOff || size > indexOff-off {
			return nil, corrupt(fmt.Sprintf("entry of partition %s at %d+%d outside the %d bytes of bodies", part, off, size, indexOff))
		}
		entries = append(entries, packEntry{part: part, key: fileKey{v, kind}, off: off, n: size})
	}
	if len(idx) != 0 {
		return nil, corrupt(fmt.Sprintf("has %d bytes after its entries", len(idx)))
	}
	return entries, nil
}
