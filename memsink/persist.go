package memsink

import (
	"bytes"
	"cmp"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"
	"unsafe"

	"github.com/apache/arrow/go/v17/arrow"
	"github.com/apache/arrow/go/v17/arrow/ipc"
	"github.com/apache/arrow/go/v17/arrow/memory"

	"github.com/arrowstream/arrowstream/arrowstream/stream"
	"github.com/arrowstream/arrowstream/checkpoint"
)

// Persisted files live in <checkpoint>/sinks/memory:
//
//	<epoch>.arrow       an epoch's rows
//	<epoch>.view.arrow  a view's live rows as of epoch, with _epoch and
//	                    _commit_timestamp (written now and then so that
//	                    recovery need not replay every epoch)
//
// Each is an Arrow IPC stream (LZ4 frames; builds before session 29 wrote
// zstd for a large one, and the reader takes either) followed by an
// 8-byte trailer: CRC-32C of the IPC bytes, then "ASMS". The IPC
// schema's metadata records the epoch, its predecessor in the table's
// chain of files, the first file of the chain (the base: everything
// before it is superseded or evicted), the commit time, whether the epoch
// replaced the table, and the row count.
// Recovery walks the chain back from the newest file to its base, so a
// missing or damaged file is an error naming it.

// SinkDir is the directory, relative to the checkpoint, of persisted
// memory-sink files.
const SinkDir = "sinks/memory"

const (
	fileFormat = "1"
	metaPrefix = "arrowstream.memsink."
)

var (
	fileMagic  = [4]byte{'A', 'S', 'M', 'S'}
	castagnoli = crc32.MakeTable(crc32.Castagnoli)
)

// fileMeta is what a persisted file says about itself.
type fileMeta struct {
	View     bool
	Epoch    int64
	Prev     int64 // the previous epoch of the chain, -1 when none
	Base     string
	Commit   time.Time
	Replaced bool
	Rows     int64 // rows in the file
	// EpochRows is the rows the epoch committed (for a view snapshot, not
	// the rows in the file).
	EpochRows int64
}

func epochFile(e int64) string { return strconv.FormatInt(e, 10) + ".arrow" }
func viewFile(e int64) string  { return strconv.FormatInt(e, 10) + ".view.arrow" }

// parseFileName accepts only the names epochFile and viewFile produce.
func parseFileName(name string) (epoch int64, view, ok bool) {
	stem, found := strings.CutSuffix(name, ".arrow")
	if !found {
		return 0, false, false
	}
	stem, view = strings.CutSuffix(stem, ".view")
	if stem == "" || strings.TrimLeft(stem, "0123456789") != "" || len(stem) > 1 && stem[0] == '0' {
		return 0, false, false
	}
	e, err := strconv.ParseInt(stem, 10, 64)
	return e, view, err == nil
}

func (m fileMeta) metadata() arrow.Metadata {
	kind := "epoch"
	if m.View {
		kind = "view"
	}
	return arrow.NewMetadata(
		[]string{metaPrefix + "format", metaPrefix + "kind", metaPrefix + "epoch", metaPrefix + "prev",
			metaPrefix + "base", metaPrefix + "commit_us", metaPrefix + "replaced", metaPrefix + "rows", metaPrefix + "epoch_rows"},
		[]string{fileFormat, kind, strconv.FormatInt(m.Epoch, 10), strconv.FormatInt(m.Prev, 10),
			m.Base, strconv.FormatInt(m.Commit.UnixMicro(), 10), strconv.FormatBool(m.Replaced), strconv.FormatInt(m.Rows, 10), strconv.FormatInt(m.EpochRows, 10)})
}

func parseMeta(md arrow.Metadata) (fileMeta, error) {
	get := func(k string) (string, error) {
		i := md.FindKey(metaPrefix + k)
		if i < 0 {
			return "", fmt.Errorf("no %s%s in the schema metadata", metaPrefix, k)
		}
		return md.Values()[i], nil
	}
	var m fileMeta
	f, err := get("format")
	if err != nil {
		return m, err
	}
	if f != fileFormat {
		if v, err := strconv.Atoi(f); err == nil && v > 1 {
			return m, fmt.Errorf("written in memory sink file format v%d, this build reads up to v%s; upgrade Arrowstream to read it", v, fileFormat)
		}
		return m, fmt.Errorf("written in format %q, this build reads %q", f, fileFormat)
	}
	vals := map[string]string{}
	for _, k := range []string{"kind", "epoch", "prev", "base", "commit_us", "replaced", "rows", "epoch_rows"} {
		if vals[k], err = get(k); err != nil {
			return m, err
		}
	}
	ints := map[string]int64{}
	for _, k := range []string{"epoch", "prev", "commit_us", "rows", "epoch_rows"} {
		if ints[k], err = strconv.ParseInt(vals[k], 10, 64); err != nil {
			return m, fmt.Errorf("bad %s %q", k, vals[k])
		}
	}
	if m.Replaced, err = strconv.ParseBool(vals["replaced"]); err != nil {
		return m, fmt.Errorf("bad replaced %q", vals["replaced"])
	}
	switch vals["kind"] {
	case "epoch":
	case "view":
		m.View = true
	default:
		return m, fmt.Errorf("unknown kind %q", vals["kind"])
	}
	m.Epoch, m.Prev, m.Rows, m.EpochRows = ints["epoch"], ints["prev"], ints["rows"], ints["epoch_rows"]
	m.Commit = time.UnixMicro(ints["commit_us"]).UTC()
	m.Base = vals["base"]
	if _, _, ok := parseFileName(m.Base); !ok || m.Epoch < 0 || m.Rows < 0 || m.EpochRows < 0 || m.Prev < -1 {
		return m, fmt.Errorf("inconsistent metadata (epoch %d, prev %d, base %q, rows %d)", m.Epoch, m.Prev, m.Base, m.Rows)
	}
	return m, nil
}

// encodeFile frames recs (of schema) with meta as a per-epoch file of
// the format earlier builds wrote (tests build such directories with it).
func encodeFile(mem memory.Allocator, schema *arrow.Schema, m fileMeta, recs []arrow.Record) ([]byte, error) {
	return encodeFileWith(mem, schema, m, recs, fileCodec())
}

// encodeFileWith is encodeFile with the codec given (tests write files
// compressed as earlier builds did).
func encodeFileWith(mem memory.Allocator, schema *arrow.Schema, m fileMeta, recs []arrow.Record, codec ipc.Option) ([]byte, error) {
	var buf bytes.Buffer
	if err := encodeIPC(&buf, mem, schema, m, recs, codec); err != nil {
		return nil, err
	}
	var tr [8]byte
	binary.LittleEndian.PutUint32(tr[:4], crc32.Checksum(buf.Bytes(), castagnoli))
	copy(tr[4:], fileMagic[:])
	buf.Write(tr[:])
	return buf.Bytes(), nil
}

// encodeIPC writes recs (of schema) with meta as an Arrow IPC stream. The
// IPC stream format is used rather than the file format: it allows each
// record its own dictionaries (the file format allows one per column),
// and arrow/go v17's file writer leaks the dictionaries it wrote.
func encodeIPC(dst io.Writer, mem memory.Allocator, schema *arrow.Schema, m fileMeta, recs []arrow.Record, codec ipc.Option) error {
	md := m.metadata()
	w := ipc.NewWriter(dst, ipc.WithSchema(arrow.NewSchema(schema.Fields(), &md)), ipc.WithAllocator(mem), codec)
	for _, r := range recs {
		if err := w.Write(r); err != nil {
			w.Close()
			return err
		}
	}
	return w.Close()
}

// fileCodec is the compression of every record the sink writes: LZ4,
// whatever the epoch's size. Until session 29 an epoch of 1 MiB of
// columns or more was zstd, for its smaller files (about half LZ4's bytes
// per row: 5.1 against 9.7 for the passthrough's short strings, 11
// against 26 for bid-like rows). But arrow/go v17's IPC writer builds a
// zstd encoder with its default 8 MiB window per writer, so per persisted
// epoch: 20–23 MB of fresh memory (140–2,000 heap bytes per row of a
// 150K/10K-row epoch, BenchmarkPersistEpochSize), and zstd's encoding
// costs 1.5–4× LZ4's CPU per row even with an encoder kept across epochs
// (BenchmarkEncodeKeptWriter), which v17 allows only by splicing one
// long-lived writer's messages into each epoch's stream, pinning those
// 20 MB per table. With LZ4 an epoch's persisting costs no more per row
// when it is large (docs/cluster.md, session 29). The reader still takes
// zstd: files and log records of earlier builds load.
func fileCodec() ipc.Option { return ipc.WithLZ4() }

// decodeFile checks and decodes a per-epoch file: its metadata, its
// schema (without the metadata) and its records (owned by the caller).
// Damage is reported as an error wrapping checkpoint.ErrCorrupt, never a
// panic.
func decodeFile(mem memory.Allocator, raw []byte) (m fileMeta, schema *arrow.Schema, recs []arrow.Record, err error) {
	if len(raw) < 8 || !bytes.Equal(raw[len(raw)-4:], fileMagic[:]) {
		return m, nil, nil, fmt.Errorf("missing trailer (truncated?): %w", checkpoint.ErrCorrupt)
	}
	body := raw[:len(raw)-8]
	if got, want := crc32.Checksum(body, castagnoli), binary.LittleEndian.Uint32(raw[len(raw)-8:]); got != want {
		return m, nil, nil, fmt.Errorf("checksum mismatch (file has %08x, content gives %08x): %w", want, got, checkpoint.ErrCorrupt)
	}
	return decodeIPC(mem, body)
}

// decodeIPC decodes a checked IPC stream of a file or a log record.
func decodeIPC(mem memory.Allocator, body []byte) (m fileMeta, schema *arrow.Schema, recs []arrow.Record, err error) {
	// Lengths that point past the end would make the IPC reader allocate
	// them before noticing (up to 2 GiB per message).
	if err := checkpoint.CheckIPCFraming(body); err != nil {
		return m, nil, nil, fmt.Errorf("%v: %w", err, checkpoint.ErrCorrupt)
	}
	scope := &scopedAllocator{mem: mem, live: map[*byte][]byte{}}
	defer func() {
		// The IPC reader trusts input whose checksum matched; a file from a
		// buggy writer must still not crash the process. A panic strands
		// the buffers the reader had allocated: free them all, including
		// those of the records already decoded, which are dropped.
		if r := recover(); r != nil {
			err = fmt.Errorf("undecodable Arrow IPC: %v: %w", r, checkpoint.ErrCorrupt)
			recs = nil
			scope.freeAll()
			return
		}
		if err != nil {
			releaseAll(recs)
			recs = nil
			scope.freeAll() // anything the reader leaked on its error path
		}
	}()
	r, err := ipc.NewReader(bytes.NewReader(body), ipc.WithAllocator(scope))
	if err != nil {
		return m, nil, nil, fmt.Errorf("arrow IPC: %v: %w", err, checkpoint.ErrCorrupt)
	}
	defer r.Release()
	if m, err = parseMeta(r.Schema().Metadata()); err != nil {
		return m, nil, nil, fmt.Errorf("%v: %w", err, checkpoint.ErrCorrupt)
	}
	schema = arrow.NewSchema(r.Schema().Fields(), nil)
	var rows int64
	for i := 0; r.Next(); i++ {
		rec := r.Record()
		rec.Retain()
		recs = append(recs, rec)
		if err := validateRecord(rec); err != nil {
			return m, nil, recs, fmt.Errorf("record %d: %v: %w", i, err, checkpoint.ErrCorrupt)
		}
		rows += rec.NumRows()
	}
	if err := r.Err(); err != nil {
		return m, nil, recs, fmt.Errorf("arrow IPC: %v: %w", err, checkpoint.ErrCorrupt)
	}
	if rows != m.Rows {
		return m, nil, recs, fmt.Errorf("%d rows, metadata says %d: %w", rows, m.Rows, checkpoint.ErrCorrupt)
	}
	return m, schema, recs, nil
}

// scopedAllocator tracks the allocations of one decode so that those a
// panicking reader strands can be freed.
type scopedAllocator struct {
	mem  memory.Allocator
	mu   sync.Mutex
	live map[*byte][]byte
}

// maxDecodeBuffer bounds one decoded buffer: a column of MaxRecordRows
// rows never needs more (string data is limited by 32-bit offsets), while
// damaged sizes would exhaust memory.
const maxDecodeBuffer = 1 << 31

func (a *scopedAllocator) Allocate(size int) []byte {
	if size < 0 || size > maxDecodeBuffer {
		panic(fmt.Sprintf("buffer of %d bytes", size))
	}
	b := a.mem.Allocate(size)
	a.track(nil, b)
	return b
}

func (a *scopedAllocator) Reallocate(size int, old []byte) []byte {
	if size < 0 || size > maxDecodeBuffer {
		panic(fmt.Sprintf("buffer of %d bytes", size))
	}
	b := a.mem.Reallocate(size, old)
	a.track(old, b)
	return b
}

func (a *scopedAllocator) Free(b []byte) {
	a.track(b, nil)
	a.mem.Free(b)
}

func (a *scopedAllocator) track(gone, added []byte) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if cap(gone) > 0 {
		delete(a.live, unsafe.SliceData(gone[:1]))
	}
	if cap(added) > 0 {
		a.live[unsafe.SliceData(added[:1])] = added
	}
}

func (a *scopedAllocator) freeAll() {
	a.mu.Lock()
	live := a.live
	a.live = map[*byte][]byte{}
	a.mu.Unlock()
	for _, b := range live {
		a.mem.Free(b)
	}
}

// persister writes a table's epochs to its log (sinklog.go); a
// directory written by an earlier build also holds per-epoch files,
// which stay in the chain until superseded. It is used under the table's
// writer lock.
type persister struct {
	t     *Table
	dir   string
	w     *checkpoint.Writer
	log   *sinkLog
	chain []string // the table's chain (logical file names), oldest (the base) first
	// rowsSinceBase counts, for a view, the rows of the epoch files after
	// the base; a view snapshot is written when they exceed the view's.
	rowsSinceBase int64
	// codec compresses what the table writes: fileCodec, or in tests the
	// zstd earlier builds wrote for large epochs.
	codec ipc.Option
}

func newPersister(t *Table) *persister {
	dir := filepath.Join(t.info.CheckpointDir, filepath.FromSlash(SinkDir))
	return &persister{t: t, dir: dir, w: t.opts.Writer, log: newSinkLog(dir, t.opts.Writer), codec: fileCodec()}
}

func (p *persister) path(name string) string { return filepath.Join(p.dir, name) }

// where names a chain entry's storage in errors: its log record or its
// per-epoch file.
func (p *persister) where(name string) string {
	if loc, ok := p.log.at[name]; ok {
		return loc.where()
	}
	return p.path(name)
}

// writeEpoch durably writes an epoch's records as the chain's next entry.
func (p *persister) writeEpoch(info EpochInfo, prev int64, base string, schema *arrow.Schema, recs []arrow.Record) error {
	name := epochFile(info.Epoch)
	m := fileMeta{Epoch: info.Epoch, Prev: prev, Base: base, Commit: info.CommitTime, Replaced: info.Replaced, Rows: info.Rows, EpochRows: info.Rows}
	if err := p.write(name, m, schema, recs); err != nil {
		return err
	}
	p.chain = append(p.chain, name)
	return nil
}

func (p *persister) write(name string, m fileMeta, schema *arrow.Schema, recs []arrow.Record) error {
	buf := bytes.NewBuffer(p.log.frameStart())
	if err := encodeIPC(buf, p.t.mem, schema, m, recs, p.codec); err != nil {
		return fmt.Errorf("memsink: table %q: encode %s in %s: %w", p.t.Name(), name, p.dir, err)
	}
	if err := p.log.append(name, m.View, m.Epoch, buf.Bytes()); err != nil {
		return fmt.Errorf("memsink: table %q: persist epoch %d: %w", p.t.Name(), m.Epoch, err)
	}
	return nil
}

// trim drops the chain's entries before base (superseded or evicted, now
// that a later entry is durable): a segment without live records left is
// deleted whole, a per-epoch file of an earlier build one by one.
// Failures are logged: recovery deletes leftovers too.
func (p *persister) trim(base string) {
	i := 0
	for i < len(p.chain) && p.chain[i] != base {
		i++
	}
	if i == len(p.chain) || i == 0 {
		return
	}
	warn := func(path string, err error) {
		p.t.log.Warn("cannot delete superseded sink file", "file", path, "err", err)
	}
	for _, name := range p.chain[:i] {
		if p.log.drop(name, warn) {
			continue
		}
		if err := os.Remove(p.path(name)); err != nil && !errors.Is(err, fs.ErrNotExist) {
			warn(p.path(name), err)
		}
	}
	p.chain = append(p.chain[:0], p.chain[i:]...)
}

// viewBase is the base a view's next epoch file names: the chain's first
// file, or the new file itself when the chain is empty.
func (p *persister) viewBase(epoch int64) string {
	if len(p.chain) > 0 {
		return p.chain[0]
	}
	return epochFile(epoch)
}

// afterView writes a view snapshot once the epoch files since the base
// hold more rows than the view, so that recovery work and disk use stay
// proportional to the view; the older files are then deleted.
func (p *persister) afterView(st *viewState) {
	p.rowsSinceBase += st.info.Rows
	if p.rowsSinceBase <= max(st.rows, MaxRecordRows) {
		return
	}
	recs := make([]arrow.Record, len(st.chunks))
	for i, c := range st.chunks {
		recs[i], _ = c.resolve()
	}
	name := viewFile(st.info.Epoch)
	m := fileMeta{View: true, Epoch: st.info.Epoch, Prev: -1, Base: name, Commit: st.info.CommitTime, Rows: st.rows, EpochRows: st.info.Rows}
	if err := p.write(name, m, p.t.view.full, recs); err != nil {
		p.t.log.Warn("cannot write view snapshot; will retry", "err", err)
		return
	}
	p.chain = append(p.chain, name)
	p.trim(name)
	p.rowsSinceBase = 0
}

// clear deletes every segment and file of the table.
func (p *persister) clear() error {
	if err := p.log.clear(); err != nil {
		return fmt.Errorf("memsink: table %q: clear: %w", p.t.Name(), err)
	}
	names, _, err := p.list()
	if err != nil {
		return err
	}
	for _, n := range names {
		if err := os.Remove(p.path(n)); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return fmt.Errorf("memsink: table %q: clear: %w", p.t.Name(), err)
		}
	}
	p.chain, p.rowsSinceBase = nil, 0
	return nil
}

// close closes the log's open segment.
func (p *persister) close() { p.log.closeActive() }

// list returns the names of the table's per-epoch files (oldest first, an
// epoch's view snapshot after the epoch's file) and the sequence numbers
// of its log segments (ascending). Temp files of interrupted writes are
// skipped, not removed: recovery runs before the query holds the
// checkpoint's lock (the epoch log's, at its first append), when a temp
// file may still be another live writer's; the query removes the stale
// ones once it holds the lock (checkpoint.RemoveStaleTemps).
func (p *persister) list() (names []string, segs []int64, err error) {
	ents, err := os.ReadDir(p.dir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil, nil
	}
	if err != nil {
		return nil, nil, fmt.Errorf("memsink: table %q: list %s: %w", p.t.Name(), p.dir, err)
	}
	for _, e := range ents {
		if !e.Type().IsRegular() {
			continue
		}
		if _, _, ok := parseFileName(e.Name()); ok {
			names = append(names, e.Name())
		} else if seq, ok := parseLogSegmentName(e.Name()); ok {
			segs = append(segs, seq)
		}
	}
	sortFiles(names)
	slices.Sort(segs)
	return names, segs, nil
}

// sortFiles orders entry names by epoch, an epoch's file before its view
// snapshot, keeping the given order otherwise. Each name is parsed once
// and the sort is O(n log n): a table recovered from a log of a few
// hundred thousand epochs (a selective query's empty epochs, each
// recorded) sorted them by insertion for minutes before its query could
// start.
func sortFiles(names []string) {
	type keyed struct {
		name  string
		epoch int64
		view  bool
	}
	ks := make([]keyed, len(names))
	for i, n := range names {
		e, v, _ := parseFileName(n)
		ks[i] = keyed{n, e, v}
	}
	slices.SortStableFunc(ks, func(a, b keyed) int {
		if c := cmp.Compare(a.epoch, b.epoch); c != 0 {
			return c
		}
		switch {
		case !a.view && b.view:
			return -1
		case a.view && !b.view:
			return 1
		}
		return 0
	})
	for i, k := range ks {
		names[i] = k.name
	}
}

// NotRecoverableError is Spark's refusal to restart an Append or Update
// query with a memory sink from an existing checkpoint: without
// persistence the sink's earlier rows are gone, and replaying only the
// tail would silently lose them.
type NotRecoverableError struct {
	// OffsetsDir is the offset log: <checkpoint>/epochlog, or offsets in
	// a v1 checkpoint.
	OffsetsDir string
}

func (e *NotRecoverableError) Error() string {
	return "This query does not support recovering from checkpoint location. Delete " + e.OffsetsDir + " to start over."
}

// CanRecover applies docs/semantics.md §1.5 before a memory-sink query starts from
// checkpointDir: Complete mode may always resume (its next epoch rewrites
// everything); Append and Update may resume only with persisted sink data.
// It returns a *NotRecoverableError when <checkpointDir>/offsets exists
// and the query may not resume (with persist, when the sink's directory
// is missing, since the rows it held would be lost).
func CanRecover(checkpointDir string, mode stream.OutputMode, persist bool) error {
	if mode == stream.Complete {
		return nil
	}
	started, err := checkpoint.HasEpochLog(checkpointDir)
	if err != nil {
		return fmt.Errorf("memsink: check %s: %w", checkpointDir, err)
	}
	if !started {
		return nil
	}
	offsets := checkpoint.OffsetLogPath(checkpointDir)
	if persist {
		sink := filepath.Join(checkpointDir, filepath.FromSlash(SinkDir))
		if _, err := os.Stat(sink); err == nil {
			return nil
		}
	}
	return &NotRecoverableError{OffsetsDir: offsets}
}
