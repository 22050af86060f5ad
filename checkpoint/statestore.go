package checkpoint

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/apache/arrow/go/v17/arrow"
	"github.com/apache/arrow/go/v17/arrow/array"
	"github.com/apache/arrow/go/v17/arrow/ipc"
	"github.com/apache/arrow/go/v17/arrow/memory"
	"github.com/klauspost/compress/zstd"
)

// StateStore is one epoch's view of a state partition: it reads version N
// and, on Commit, writes version N+1. Keys and values are opaque bytes
// (operators encode them); slices passed to Put are copied. A StateStore
// is used by one goroutine.
//
// Every read and write returns an error: a store that cannot read a key
// says so instead of answering "absent", so that an operator never builds
// an epoch's output from a failed read. A store also remembers its first
// error and fails Commit with it, so an epoch whose operator dropped an
// error is still not committed.
//
// Slices a store returns (Get's value, Range's and Scan's key and value)
// must not be modified and stay valid until the store is committed or
// aborted; a caller keeping one longer copies it.
type StateStore interface {
	// Version is the version this store reads (the epoch number).
	Version() int64
	// Get returns the live value of key; ok is false when key is absent.
	// An error means the value could not be read (not that it is absent).
	Get(key []byte) (value []byte, ok bool, err error)
	// Put sets key to value.
	Put(key, value []byte) error
	// Delete removes key (absent keys are ignored).
	Delete(key []byte) error
	// Range calls fn for every live key in ascending key order until fn
	// returns false. Updates made in this epoch are visible; fn may update
	// the store. The error is the store's failure to read, not fn's.
	Range(fn func(key, value []byte) bool) error
	// Scan is Range in no particular order, without sorting the keys:
	// for eviction and full reads that do not need key order.
	Scan(fn func(key, value []byte) bool) error
	// Len is the number of live keys.
	Len() int
	// Commit durably writes version Version()+1 and returns it. It fails
	// when any read or write of this store failed.
	Commit(ctx context.Context) (int64, error)
	// Abort discards this epoch's updates; nothing is written.
	Abort()
}

// StoreOptions tune a state partition.
type StoreOptions struct {
	// MinDeltasForSnapshot: a snapshot is written only when more deltas
	// than this have accumulated since the last one (Spark's default 10),
	// and then only when the deltas since the last snapshot hold as many
	// key and value bytes as the state (so that a snapshot, which costs
	// the state's size, is paid for by as many bytes of changes: amortized
	// O(changes) per epoch, not O(state) every ten epochs), or when
	// MaxDeltasForSnapshot deltas have accumulated.
	MinDeltasForSnapshot int
	// MaxDeltasForSnapshot: ten times it bounds the deltas a load replays
	// after its snapshot (default MinVersionsToRetain); their bytes are
	// bounded by the snapshot's (see snapshotDue).
	MaxDeltasForSnapshot int
	// MinVersionsToRetain: files needed to rebuild the latest this many
	// versions are kept; older ones are deleted (Spark's default 100).
	MinVersionsToRetain int
	// Allocator for the Arrow IPC encoding (nil: the Go allocator).
	Allocator memory.Allocator
	// NoLiveSnapshots makes every full snapshot of a changelog partition
	// a fold of its files, even where its operator could hand its live
	// state (LiveSnapshotter: WantsLiveSnapshot then says no); tests
	// compare the two.
	NoLiveSnapshots bool

	// compactSlots bounds the partitions compacting a snapshot at once
	// (set by the provider; nil: unbounded).
	compactSlots chan struct{}
	// maint runs background maintenance (set by the provider for all
	// its partitions; nil: a pool of one per partition).
	maint *maintPool
	// segmentSlack is the dead entries a snapshot chain may hold beyond
	// its live keys (0: minSegmentSlack; negative: none).
	segmentSlack int64
	// fullSnapshots turns segments off (benchmarks compare the two).
	fullSnapshots bool
	// PartitionSnapshotFiles writes each group-committed partition's
	// snapshots into files of its own (<partition>/<version>.snapshot),
	// as builds before snapshot packs did, instead of one pack per
	// operator and version (statestore_pack.go): checkpoints for builds
	// that do not read packs, and tests of such checkpoints.
	PartitionSnapshotFiles bool
}

func (o StoreOptions) withDefaults() StoreOptions {
	if o.MinDeltasForSnapshot <= 0 {
		o.MinDeltasForSnapshot = 10
	}
	if o.MinVersionsToRetain <= 0 {
		o.MinVersionsToRetain = 100
	}
	if o.MaxDeltasForSnapshot <= 0 {
		o.MaxDeltasForSnapshot = max(o.MinVersionsToRetain, o.MinDeltasForSnapshot+1)
	}
	if o.Allocator == nil {
		o.Allocator = memory.NewGoAllocator()
	}
	if o.maint == nil {
		o.maint = newMaintPool(1)
	}
	if o.segmentSlack == 0 {
		o.segmentSlack = minSegmentSlack
	}
	o.segmentSlack = max(o.segmentSlack, 0)
	return o
}

// StorePartition is the durable state of one (operator, partition):
// <dir>/<version>.delta and <version>.snapshot files, with the latest
// version kept in memory. Version 0 is empty.
type StorePartition struct {
	dir  string
	w    *Writer
	opts StoreOptions
	// epochReserve reserves its stores' epoch writes
	// (epoch_account.go).
	epochReserve epochReserver

	mu      sync.Mutex
	version int64             // version held in data, -1 when none loaded
	data    map[string][]byte // the loaded version
	bytes   int64             // key and value bytes held in data
	// memBytes is bytes as of the last change, for MemoryBytes
	// (stored under mu wherever bytes changes).
	memBytes atomic.Int64
	// arenaBytes is the capacity of the changelog arena the partition
	// keeps between epochs, for BufferBytes.
	arenaBytes atomic.Int64
	busy       bool // a store is open on this partition
	// dirMade: the partition's directory is known to exist (ensureDir).
	dirMade atomic.Bool
	// dataless: the last commit was a changelog (ChangelogWriter): the
	// operator holds the state, data is nil and is loaded from the files
	// only when a store reads it; rows is the key count it declared and
	// estBytes an estimate of the state's key and value bytes.
	dataless bool
	rows     int64
	estBytes int64
	// liveBytes is the live state's key and value bytes as its operator
	// last declared them (LiveBytesSetter), when liveBytesKnown: the
	// measure snapshotDue compares the replay with.
	liveBytes      int64
	liveBytesKnown bool
	// files indexes the partition's delta and snapshot files: listed once
	// (at the first load or maintenance), then kept up to date, so that
	// commits and maintenance never list the directory.
	files map[fileKey]bool
	// baseVers are the versions of the bases in files, ascending
	// (noteBases), read by the provider's purge without p.mu.
	baseVers atomic.Pointer[[]int64]
	// glog, when set, is the provider's state log (group commit): the
	// deltas of the versions it covers are there, under rel
	// ("<operator>/<partition>"), not in <version>.delta files.
	glog *StateLog
	rel  string
	// sinceSnap is the key and value bytes of the deltas written since
	// the newest snapshot (an estimate after a restart: their file sizes).
	sinceSnap int64
	// snapBytes is the key and value bytes of the newest snapshot this
	// process wrote, with its chain's segments (0: none yet, the state's
	// size stands in).
	snapBytes int64
	// chain is the snapshot chain this process last wrote (segmented
	// snapshots, statestore_segment.go).
	chain snapChain

	// Maintenance (snapshots, cleanup) runs in the background after a
	// commit, as Spark's state store maintenance task does, so that the
	// epoch that makes a snapshot due does not wait for it. At most one
	// runs at a time; its error fails the next commit.
	maint        sync.WaitGroup
	maintRunning bool  // under mu
	maintErr     error // under mu
	// nextMaint is the version from which an unchanged partition's
	// commit runs maintenance (nextMaintenance; 0: the next commit), and
	// maintAgain records a changing commit made while maintenance ran:
	// a commit that changes nothing schedules no work before then.
	nextMaint  int64 // under mu
	maintAgain bool  // under mu

	// cur is the store Begin hands out (reset at every Begin).
	cur store
	// arena holds the changelog of the open store, kept from epoch to
	// epoch (statestore_changelog.go; nil until the first change).
	arena *changeArena
	// live is the operator's view of the state at a committed version
	// (LiveSnapshotter), kept until maintenance writes a snapshot from it
	// or a newer version makes it useless. Under mu.
	live liveSnap
	// liveTaken is the version of the view maintenance took to write a
	// snapshot from and has not finished with (0: none); under mu. While
	// it is set, WantsLiveSnapshot says no: the snapshot under way covers
	// the changes that made it due, and a second view, copied by the next
	// epoch before the first one's snapshot was installed, went unused
	// (q11 copied its sessions twice for one snapshot on a loaded machine).
	liveTaken int64
	// liveSnaps counts the snapshots written from live views (tests).
	liveSnaps int64
	// packs are the operator's snapshot packs (statestore_pack.go), read
	// by its group-committed partitions and written unless
	// PartitionSnapshotFiles; nil without group commit. packPart names
	// the partition in them.
	packs    *snapPacks
	packPart string
	// mbatch is the pack batch of the operator maintenance job running
	// this partition's snapshot (putBase); only that job sets and reads
	// it, while the partition's maintenance is running.
	mbatch *packBatch
}

// MemoryBytes returns the bytes of keys and values the partition holds in
// memory for its latest version (Go map overhead not included). It takes
// no lock: progress asks every partition after every epoch.
func (p *StorePartition) MemoryBytes() int64 {
	return p.memBytes.Load()
}

// BufferBytes returns the bytes of the changelog encode arena the
// partition keeps between epochs (reused by its next epochs; at most
// maxKeptArena unless its epochs use a quarter of it). It takes no lock.
func (p *StorePartition) BufferBytes() int64 { return p.arenaBytes.Load() }

// OpenStorePartition opens the partition in dir. Nothing is loaded until
// Begin, and the directory is not created until the partition writes a
// file into it (ensureDir): with the state log a partition's deltas are
// not files, so most partitions of a query with many (Spark's default 200
// shuffle partitions, a directory each per stateful operator) never need
// one, and making them all at start cost 5–9 % of a short query's CPU.
// A missing directory reads as a partition without files.
func OpenStorePartition(dir string, w *Writer, opts StoreOptions) (*StorePartition, error) {
	return &StorePartition{dir: dir, w: w, opts: opts.withDefaults(), version: -1}, nil
}

// ensureDir creates the partition's directory (durably, as
// Writer.MkdirAll does) before its first file is written. Commits and
// background maintenance may both call it; MkdirAll is idempotent.
func (p *StorePartition) ensureDir() error {
	if p.dirMade.Load() {
		return nil
	}
	if err := p.w.MkdirAll(p.dir); err != nil {
		return err
	}
	p.dirMade.Store(true)
	return nil
}

// writeFile writes one of the partition's files (a delta or a snapshot),
// creating the directory first when needed.
func (p *StorePartition) writeFile(path string, raw []byte) error {
	if err := p.ensureDir(); err != nil {
		return err
	}
	return p.w.WriteFile(path, raw, true)
}

// Begin opens the store for an epoch reading version. Only one store may be
// open per partition at a time.
func (p *StorePartition) Begin(version int64) (StateStore, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.busy {
		return nil, fmt.Errorf("checkpoint: state %s: a store is already open", p.dir)
	}
	if version < 0 {
		return nil, fmt.Errorf("checkpoint: state %s: negative version %d", p.dir, version)
	}
	if p.version != version {
		data, err := p.load(version)
		if err != nil {
			return nil, err
		}
		p.data, p.version, p.dataless = data, version, false
		p.bytes = 0
		for k, v := range data {
			p.bytes += int64(len(k) + len(v))
		}
		p.memBytes.Store(p.bytes)
	}
	p.busy = true
	// pending and deleted are made by the first Put or Delete: most
	// partitions of most epochs write nothing, or through the changelog.
	// The store is the partition's own, reset: one store is open at a
	// time, and an epoch of 200 partitions made 200 of them (the largest
	// allocation of an empty epoch). A store is not used after its
	// Commit or Abort (StateStore), so the next Begin may take it over.
	s := &p.cur
	*s = store{p: p, version: version, acct: epochMeter{reserve: p.epochReserve.get()}}
	return s, nil
}

func (p *StorePartition) file(version int64, kind string) string {
	return filepath.Join(p.dir, strconv.FormatInt(version, 10)+"."+kind)
}

// load rebuilds a version from the newest snapshot at or below it plus the
// deltas after that snapshot.
func (p *StorePartition) load(version int64) (map[string][]byte, error) {
	data := map[string][]byte{}
	if version == 0 {
		return data, nil
	}
	files, err := p.fileIndex()
	if err != nil {
		return nil, err
	}
	// The newest usable snapshot at or below version is the base. A
	// damaged snapshot is only a shortcut lost: the version is rebuilt
	// from an older snapshot (or from nothing) and the deltas after it,
	// when they are all still there. A snapshot in a newer format is not
	// worked around: the checkpoint belongs to a later version.
	base := int64(0)
	var snapErr error
	for _, k := range basesAtOrBelow(files, version) {
		v := k.version
		if snapErr != nil && !p.deltasFrom(files, v+1, version) {
			break
		}
		err := p.readChain(files, k, data, false)
		if err == nil {
			base = v
			break
		}
		if errors.Is(err, ErrNewerFormat) || !errors.Is(err, ErrCorrupt) {
			return nil, err
		}
		if snapErr == nil {
			snapErr = err
		}
		clear(data)
	}
	if snapErr == nil && p.packs != nil {
		// A pack whose index is unreadable may have held a newer base
		// of this partition: a lost shortcut when the deltas since the
		// base found are all there, else the load fails naming it.
		snapErr = p.packs.damage(base, version)
	}
	if snapErr != nil {
		if !p.deltasFrom(files, base+1, version) {
			return nil, snapErr
		}
		slog.Warn("state snapshot unreadable; rebuilt from deltas", "err", snapErr, "from_version", base)
	}
	p.sinceSnap = 0
	var lr logReader
	defer lr.close()
	for v := base + 1; v <= version; v++ {
		n, err := p.applyDelta(&lr, files, v, version, data)
		if err != nil {
			return nil, err
		}
		p.sinceSnap += int64(n)
	}
	return data, nil
}

// deltasFrom reports whether the deltas of versions from..to all exist.
func (p *StorePartition) deltasFrom(files map[fileKey]bool, from, to int64) bool {
	for v := from; v <= to; v++ {
		if !p.hasDelta(files, v) {
			return false
		}
	}
	return true
}

type fileKey struct {
	version int64
	kind    string
}

func (p *StorePartition) listFiles() (map[fileKey]bool, error) {
	ents, err := os.ReadDir(p.dir)
	if errors.Is(err, fs.ErrNotExist) {
		// Not created yet (ensureDir): no files.
		return map[fileKey]bool{}, nil
	}
	if err != nil {
		return nil, fmt.Errorf("checkpoint: list %s: %w", p.dir, err)
	}
	p.dirMade.Store(true)
	out := map[fileKey]bool{}
	for _, e := range ents {
		name, kind, ok := strings.Cut(e.Name(), ".")
		if _, seg := segmentBase(kind); !ok || kind != "delta" && kind != "snapshot" && !seg {
			continue
		}
		if v, ok := parseEpochName(name); ok {
			out[fileKey{v, kind}] = true
		}
	}
	return out, nil
}

var stateFields = []arrow.Field{
	{Name: "key", Type: arrow.BinaryTypes.Binary},
	{Name: "value", Type: arrow.BinaryTypes.Binary, Nullable: true}, // null: deleted
}

// StateFormatVersion is the newest state file format this build writes
// and reads. Version 2 (statecolumns.go) is told by its magic; version 1
// files are Arrow IPC streams, whose schema metadata may hold the version
// under stateFormatKey.
const StateFormatVersion = 2

const stateFormatKey = "arrowstream.state.format"

var stateSchema = arrow.NewSchema(stateFields, nil)

// stateTrailer ends every state file: CRC-32C of everything before it, then
// a magic, so that truncation and damage are detected before decoding.
var stateMagic = [4]byte{'A', 'S', 'S', 'T'}

// encodeState writes entries (in the order of keys; deleted ones as
// deletes) as a state file of format v2 (statecolumns.go): the key and
// value columns' buffers, S2-compressed from stateCompressMin bytes (a
// smaller body, such as the delta of an epoch that changed little, is
// stored as it is), plus the trailer. decodeState also reads the v1 files
// of older builds: an Arrow IPC stream, plain, in one zstd frame, or with
// zstd-compressed IPC buffers.
func encodeState(_ memory.Allocator, keys []string, values map[string][]byte, deleted map[string]bool) ([]byte, error) {
	c := newStateChunks()
	defer c.release()
	for _, k := range keys {
		c.add(k, values[k], deleted[k])
	}
	return c.done()
}

// readInto applies a delta or snapshot file to data and returns the
// file's size.
func (p *StorePartition) readInto(path string, data map[string][]byte) (int, error) {
	raw, err := readFile(path)
	if err != nil {
		return 0, err
	}
	if err := decodeState(p.opts.Allocator, raw, data); err != nil {
		return 0, fmt.Errorf("checkpoint: %s: %w", path, err)
	}
	return len(raw), nil
}

// readFile reads a state file, naming it in the error.
func readFile(path string) ([]byte, error) {
	raw, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("checkpoint: read %s: %w", path, err)
	}
	return raw, nil
}

func decodeState(mem memory.Allocator, raw []byte, data map[string][]byte) error {
	return decodeStateBounded(mem, raw, data, maxDecodeBuffer)
}

// decodeStateBounded is decodeState refusing buffers over maxBuffer bytes
// (fuzzing uses a small bound to stay within its memory).
func decodeStateBounded(mem memory.Allocator, raw []byte, data map[string][]byte, maxBuffer int) (err error) {
	body, err := stateBody(raw)
	if err != nil {
		return err
	}
	if bytes.HasPrefix(body, stateColumnsMagic) {
		return decodeColumns(body, data, maxBuffer)
	}
	if err := checkNewerColumns(body); err != nil {
		return err
	}
	if bytes.HasPrefix(body, zstdFrameMagic) {
		// The frame declares its decompressed size: refuse a damaged one
		// that would make us reserve more than a state file can hold.
		var h zstd.Header
		if err := h.Decode(body); err != nil || !h.HasFCS || h.FrameContentSize > uint64(maxBuffer) {
			return fmt.Errorf("zstd frame header unusable or over %d bytes: %w", maxBuffer, ErrCorrupt)
		}
		dec, err := stateZstd()
		if err != nil {
			return err
		}
		if body, err = dec.DecodeAll(body, make([]byte, 0, h.FrameContentSize)); err != nil {
			return fmt.Errorf("zstd: %v: %w", err, ErrCorrupt)
		}
	}
	if err := CheckIPCFraming(body); err != nil {
		return fmt.Errorf("%v: %w", err, ErrCorrupt)
	}
	defer func() {
		// The IPC reader trusts its input once the checksum matched; a
		// checksummed file from a buggy writer must still not crash us.
		if r := recover(); r != nil {
			err = fmt.Errorf("undecodable Arrow IPC: %v: %w", r, ErrCorrupt)
		}
	}()
	r, err := ipc.NewReader(bytes.NewReader(body), ipc.WithAllocator(boundedAllocator{mem, maxBuffer}))
	if err != nil {
		return fmt.Errorf("arrow IPC: %v: %w", err, ErrCorrupt)
	}
	defer r.Release()
	if !r.Schema().Equal(stateSchema) {
		return fmt.Errorf("unexpected schema %s: %w", r.Schema(), ErrCorrupt)
	}
	if md := r.Schema().Metadata(); md.FindKey(stateFormatKey) >= 0 {
		v, err := strconv.Atoi(md.Values()[md.FindKey(stateFormatKey)])
		if err != nil || v < 1 {
			return fmt.Errorf("bad state format %q: %w", md.Values()[md.FindKey(stateFormatKey)], ErrCorrupt)
		}
		if v > StateFormatVersion {
			return fmt.Errorf("written in state format v%d, this build reads up to v%d; upgrade Arrowstream to read it: %w (%w)", v, StateFormatVersion, ErrNewerFormat, ErrCorrupt)
		}
	}
	for r.Next() {
		rec := r.Record()
		keys := rec.Column(0).(*array.Binary)
		vals := rec.Column(1).(*array.Binary)
		for i := 0; i < keys.Len(); i++ {
			k := string(keys.Value(i))
			if vals.IsNull(i) {
				delete(data, k)
			} else {
				data[k] = bytes.Clone(vals.Value(i))
			}
		}
	}
	if err := r.Err(); err != nil {
		return fmt.Errorf("arrow IPC: %v: %w", err, ErrCorrupt)
	}
	return nil
}

// store is the StateStore of one epoch over a StorePartition.
type store struct {
	p       *StorePartition
	version int64
	pending map[string][]byte
	deleted map[string]bool
	done    bool
	cl      *changelog // this epoch's changes when logged (ChangelogWriter)
	clBuf   changelog  // what cl points to once set
	changed bool       // prepare found changes (maintenance is then due)
	err     error      // the first failed read: fails Commit
	live    LiveView   // the state after this epoch, when the operator handed one (LiveSnapshotter)
	acct    epochMeter // reserves the epoch's writes (epoch_account.go)
	// due, during a group commit, collects the partition's maintenance
	// for its operator's job instead of submitting it (published).
	due *maintDue
}

func (s *store) Version() int64 { return s.version }

// Get implements StateStore: the loaded version is in memory, so reads
// cannot fail once Begin succeeded.
func (s *store) Get(key []byte) ([]byte, bool, error) {
	if err := s.materialize(); err != nil {
		return nil, false, err
	}
	v, ok := s.get(key)
	return v, ok, nil
}

func (s *store) get(key []byte) ([]byte, bool) {
	k := string(key)
	if s.deleted[k] {
		return nil, false
	}
	if v, ok := s.pending[k]; ok {
		return v, true
	}
	v, ok := s.p.data[k]
	return v, ok
}

func (s *store) Put(key, value []byte) error {
	if s.cl != nil {
		return errMixedWrites
	}
	if err := s.materialize(); err != nil {
		return err
	}
	if err := s.acct.grow(int64(len(key)+len(value)) + storeEntryBytes); err != nil {
		return fmt.Errorf("checkpoint: put into state %s: %w", s.p.dir, err)
	}
	k := string(key)
	delete(s.deleted, k)
	if s.pending == nil {
		s.pending = map[string][]byte{}
	}
	s.pending[k] = bytes.Clone(value)
	if s.pending[k] == nil {
		s.pending[k] = []byte{}
	}
	return nil
}

func (s *store) Delete(key []byte) error {
	if s.cl != nil {
		return errMixedWrites
	}
	if err := s.materialize(); err != nil {
		return err
	}
	k := string(key)
	delete(s.pending, k)
	if _, ok := s.p.data[k]; ok {
		if s.deleted == nil {
			s.deleted = map[string]bool{}
		}
		s.deleted[k] = true
	}
	return nil
}

func (s *store) Len() int {
	if s.cl != nil && s.cl.rows >= 0 {
		return int(s.cl.rows)
	}
	if s.materialize() != nil {
		return 0 // the error fails Commit
	}
	n := len(s.p.data) - len(s.deleted)
	for k := range s.pending {
		if _, ok := s.p.data[k]; !ok {
			n++
		}
	}
	return n
}

func (s *store) Range(fn func(key, value []byte) bool) error {
	if err := s.materialize(); err != nil {
		return err
	}
	keys := make([]string, 0, s.Len())
	for k := range s.p.data {
		if !s.deleted[k] {
			if _, ok := s.pending[k]; !ok {
				keys = append(keys, k)
			}
		}
	}
	for k := range s.pending {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		v, ok := s.get([]byte(k))
		if !ok {
			continue // deleted by fn meanwhile
		}
		if !fn([]byte(k), v) {
			return nil
		}
	}
	return nil
}

func (s *store) Scan(fn func(key, value []byte) bool) error {
	if err := s.materialize(); err != nil {
		return err
	}
	for k, v := range s.p.data {
		if s.deleted[k] {
			continue
		}
		if _, ok := s.pending[k]; ok {
			continue
		}
		if !fn([]byte(k), v) {
			return nil
		}
	}
	for k, v := range s.pending {
		if !fn([]byte(k), v) {
			return nil
		}
	}
	return nil
}

// Commit writes <version+1>.delta, applies the updates to the in-memory
// version and runs maintenance (snapshot, cleanup). A partition in group
// commit (its provider has a state log) commits through the provider's
// CommitGroup instead.
func (s *store) Commit(ctx context.Context) (int64, error) {
	if s.p.glog != nil && !s.done {
		s.Abort()
		return 0, fmt.Errorf("checkpoint: state %s is group-committed: commit it with the provider's CommitGroup", s.p.dir)
	}
	raw, _, err := s.prepare(ctx, true)
	if err != nil {
		return 0, err
	}
	next := s.version + 1
	// A re-run epoch rewrites the same version: overwrite is allowed.
	if err := s.p.writeFile(s.p.file(next, "delta"), raw); err != nil {
		s.Abort()
		return 0, err
	}
	s.finish(next, true)
	return next, nil
}

// published ends a commit whose delta for next is durable (a file when
// file is set, else in the state log or nothing): with the partition's
// lock held (it releases it), it records the file and the new version,
// frees the partition for the next Begin, and starts background
// maintenance unless it runs already.
func (s *store) published(next int64, file bool) {
	p := s.p
	if file && p.files != nil {
		p.files[fileKey{next, "delta"}] = true
	}
	p.version = next
	p.busy = false
	changed := file || s.changed || len(s.pending) > 0 || len(s.deleted) > 0 || s.cl != nil && s.cl.arena != nil && s.cl.arena.len() > 0
	// The store is done before the partition is free: the next Begin
	// takes the same store over (p.cur).
	s.releaseChangelog()
	s.acct.release()
	s.done = true
	start := false
	if p.maintRunning {
		p.maintAgain = p.maintAgain || changed
	} else if p.maintenanceDue(next, changed) {
		start = true
		p.maintRunning = true
		p.maint.Add(1)
	}
	due := s.due
	s.due = nil
	p.mu.Unlock()
	switch {
	case !start:
	case due != nil && p.packs != nil && !p.opts.PartitionSnapshotFiles:
		due.add(p) // the group commit submits its operator's job
	default:
		p.opts.maint.submit(p)
	}
}

func (s *store) Abort() {
	if s.done {
		return
	}
	s.done = true
	s.releaseChangelog()
	s.acct.release()
	s.p.mu.Lock()
	s.p.busy = false
	s.p.mu.Unlock()
}
