package memsink

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/apache/arrow/go/v17/arrow"
	"github.com/apache/arrow/go/v17/arrow/array"
	"github.com/apache/arrow/go/v17/arrow/memory"

	"github.com/arrowstream/arrowstream/arrowstream/stream"
	"github.com/arrowstream/arrowstream/checkpoint"
	"github.com/arrowstream/arrowstream/vector"
)

// MaxRecordRows is the length of the longest record a table keeps. Longer
// records are split by zero-copy slicing, so that readers stream bounded
// batches (64K-row batches stay well under Flight's 16 MiB message limit
// and were the fastest to stream: docs/performance.md, "Machine and
// library facts").
const MaxRecordRows = 64 * 1024

// ErrClosed is returned by AddBatch and Clear on a closed table.
var ErrClosed = errors.New("memsink: table is closed")

// Options configure a Table. The zero value reproduces Spark's memory sink
// (docs/semantics.md §1): Append and Update tables keep every epoch, a Complete
// table keeps only the latest result, nothing is persisted.
type Options struct {
	// MaxEpochs bounds the epochs a table retains, oldest evicted first.
	// Zero means no bound for Append and Update tables, and 1 (the current
	// contents only, no time travel) for Complete tables and views, whose
	// older epochs are superseded and kept only for AsOf.
	MaxEpochs int
	// MaxRows bounds the rows held (superseded ones included); zero means
	// no bound. The latest epoch is never evicted, even when it alone is
	// over the limit.
	MaxRows int64
	// MaxBytes bounds the bytes of the Arrow buffers held; zero means no
	// bound. The latest epoch is never evicted.
	MaxBytes int64
	// UpdateAsView turns an Update-mode table into a materialized view that
	// keeps only the latest row per key (SinkInfo.KeyColumns) instead of
	// appending every epoch's rows.
	UpdateAsView bool
	// Persist writes each committed epoch under
	// <SinkInfo.CheckpointDir>/sinks/memory before it becomes visible, and
	// New rebuilds the table from those files.
	Persist bool
	// Writer performs the durable writes (nil: fsync everything). Tests set
	// NoSync or a fault hook.
	Writer *checkpoint.Writer
	// Logger receives the table's logs (nil: slog.Default()).
	Logger *slog.Logger
	// Now returns commit times (nil: time.Now).
	Now func() time.Time
	// OffHeap maps the large buffers of merged records outside the Go
	// heap (when the table's allocator is Go's, or a pool over it): they
	// no longer raise the collector's heap goal and go back to the OS as
	// soon as they are released. Every reader must then copy the values
	// it keeps after releasing its snapshot (as Arrow's ownership rules
	// require): a Go string still pointing into a released buffer faults
	// instead of keeping the buffer alive.
	OffHeap bool
	// CompactAfter is the number of small epochs (under half of
	// MaxRecordRows rows) committed since the last compaction that starts
	// a background merge of the table's small epochs into large records
	// (see Compact). Zero means 32; negative disables it.
	CompactAfter int
}

// Table is the memory sink of one streaming query: the committed epochs as
// an immutable, snapshot-readable Arrow table. It implements
// arrowstream.Sink.
//
// AddBatch, Clear and Close are serialized among themselves; every read
// method is safe for concurrent use with them and with each other, and is
// never blocked by a writer.
type Table struct {
	mem    memory.Allocator
	long   memory.Allocator // merged records (longLived(mem))
	info   stream.SinkInfo
	schema *arrow.Schema
	opts   Options
	log    *slog.Logger
	now    func() time.Time

	cur atomic.Pointer[version]

	mu      sync.Mutex // serializes writers; readers never take it
	closed  atomic.Bool
	broken  error       // set when an internal invariant failed mid-commit
	view    *viewWriter // UpdateAsView only
	persist *persister  // Persist only

	notifyMu sync.Mutex
	changed  chan struct{} // closed by publish; nil until Changed is called

	// Background compaction (compact.go): counted and started under mu,
	// stopped by Close.
	smallEpochs int
	compacting  bool
	bg          sync.WaitGroup
	bgCtx       context.Context
	bgStop      context.CancelFunc
}

var _ stream.Sink = (*Table)(nil)

// New returns a table for the query described by info. With opts.Persist
// it first rebuilds the table from the files a previous process persisted
// (see Open).
func New(mem memory.Allocator, info stream.SinkInfo, opts Options) (*Table, error) {
	return Open(context.Background(), mem, info, opts)
}

// Open is New with a context for the recovery it performs when
// opts.Persist is set: every persisted epoch file is read and checked, and
// a missing or damaged file fails Open with an error naming it (wrapping
// checkpoint.ErrCorrupt). That recovery modifies the table's directory
// (it cuts a torn log tail, deletes files and segments outside the
// recovered chain), so the caller must be the checkpoint's single
// writer: a query's Start opens the table holding checkpoint.LockWriter
// of info.CheckpointDir; a program that opens a persisted table itself
// takes that lock first.
func Open(ctx context.Context, mem memory.Allocator, info stream.SinkInfo, opts Options) (*Table, error) {
	if mem == nil {
		mem = memory.DefaultAllocator
	}
	name := info.QueryName
	switch {
	case info.Schema == nil:
		return nil, fmt.Errorf("memsink: table %q: no schema", name)
	case opts.MaxEpochs < 0 || opts.MaxRows < 0 || opts.MaxBytes < 0:
		return nil, fmt.Errorf("memsink: table %q: negative retention limit (MaxEpochs %d, MaxRows %d, MaxBytes %d)", name, opts.MaxEpochs, opts.MaxRows, opts.MaxBytes)
	case opts.UpdateAsView && info.Mode != stream.Update:
		return nil, fmt.Errorf("memsink: table %q: UpdateAsView needs update output mode, query uses %s", name, info.Mode)
	case opts.Persist && info.CheckpointDir == "":
		return nil, fmt.Errorf("memsink: table %q: Persist needs a checkpoint directory", name)
	}
	t := &Table{
		mem:    mem,
		long:   longLived(mem, opts.OffHeap),
		info:   info,
		schema: info.Schema,
		opts:   opts,
		log:    opts.Logger,
		now:    opts.Now,
	}
	if t.log == nil {
		t.log = slog.Default()
	}
	t.log = t.log.With("table", name)
	if t.now == nil {
		t.now = time.Now
	}
	t.bgCtx, t.bgStop = context.WithCancel(context.Background())
	if opts.UpdateAsView {
		w, err := newViewWriter(mem, info.Schema, info.KeyColumns)
		if err != nil {
			return nil, fmt.Errorf("memsink: table %q: %w", name, err)
		}
		t.view = w
	}
	t.cur.Store(newVersion(-1, -1, nil, nil, nil))
	if opts.Persist {
		for _, f := range info.Schema.Fields() {
			if err := checkPersistable(f); err != nil {
				return nil, fmt.Errorf("memsink: table %q: %w", name, err)
			}
		}
		t.persist = newPersister(t)
		if err := t.recover(ctx); err != nil {
			t.Close()
			return nil, err
		}
		if err := t.checkCommitted(); err != nil {
			t.Close()
			return nil, err
		}
	}
	return t, nil
}

// Name is the query name the table was created for.
func (t *Table) Name() string { return t.info.QueryName }

// Schema is the schema of the table's rows.
func (t *Table) Schema() *arrow.Schema { return t.schema }

// Mode is the output mode of the query writing the table.
func (t *Table) Mode() stream.OutputMode { return t.info.Mode }

// IsView reports whether the table is a materialized view (UpdateAsView).
func (t *Table) IsView() bool { return t.view != nil }

// EpochIdempotent implements stream.EpochIdempotentSink: AddBatch of an
// epoch at or below the latest committed one is discarded.
func (t *Table) EpochIdempotent() bool { return true }

// AddBatch implements arrowstream.Sink: it consumes data (always closing
// it) and commits its rows as epoch. An epoch at or below the latest
// committed one is drained and ignored. The rows become visible atomically
// once data is exhausted (and, with Persist, durable); an error from data,
// a schema mismatch or a failed write leaves the table unchanged.
func (t *Table) AddBatch(ctx context.Context, epoch int64, data vector.Operator) (err error) {
	defer func() {
		if cerr := data.Close(); cerr != nil && err == nil {
			err = fmt.Errorf("memsink: table %q: epoch %d: close input: %w", t.Name(), epoch, cerr)
		}
	}()
	if epoch < 0 {
		return fmt.Errorf("memsink: table %q: negative epoch %d", t.Name(), epoch)
	}
	if t.closed.Load() {
		return fmt.Errorf("memsink: table %q: epoch %d: %w", t.Name(), epoch, ErrClosed)
	}
	if latest := t.cur.Load().latest; epoch <= latest {
		t.log.Debug("skipping already committed epoch", "epoch", epoch, "latest", latest)
		return t.discard(ctx, epoch, data)
	}
	recs, rows, bytes, err := t.collect(ctx, epoch, data)
	if err != nil {
		return err
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	switch {
	case t.closed.Load():
		err = ErrClosed
	case t.broken != nil:
		err = t.broken
	case epoch <= t.cur.Load().latest:
		// A concurrent AddBatch committed this epoch while we drained.
		releaseAll(recs)
		return nil
	}
	if err != nil {
		releaseAll(recs)
		return fmt.Errorf("memsink: table %q: epoch %d: %w", t.Name(), epoch, err)
	}
	info := EpochInfo{Epoch: epoch, Rows: rows, Bytes: bytes, CommitTime: t.now().UTC(), Replaced: t.info.Mode == stream.Complete}
	if t.view != nil {
		return t.commitView(info, recs)
	}
	return t.commitSegment(info, recs)
}

// discard drains an already committed epoch's input without keeping rows.
func (t *Table) discard(ctx context.Context, epoch int64, data vector.Operator) error {
	for {
		rec, err := data.Next(ctx)
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return fmt.Errorf("memsink: table %q: replayed epoch %d: %w", t.Name(), epoch, err)
		}
		rec.Release()
	}
}

// collect drains data into records the table can keep: schema checked
// (and re-labelled with the table's schema when only nullability or
// metadata differ), empty records dropped, long records sliced. It returns
// the rows and the bytes of the distinct buffers the records hold. On
// error nothing is kept.
func (t *Table) collect(ctx context.Context, epoch int64, data vector.Operator) ([]arrow.Record, int64, int64, error) {
	if err := checkShape(data.Schema(), t.schema); err != nil {
		return nil, 0, 0, fmt.Errorf("memsink: table %q: epoch %d: %w", t.Name(), epoch, err)
	}
	var recs []arrow.Record
	var rows, bytes int64
	seen := map[*memory.Buffer]struct{}{}
	for {
		rec, err := data.Next(ctx)
		if errors.Is(err, io.EOF) {
			return recs, rows, bytes, nil
		}
		if err == nil && rec.NumRows() == 0 {
			rec.Release()
			continue
		}
		if err == nil {
			rec, err = t.adopt(rec)
		}
		if err != nil {
			releaseAll(recs)
			return nil, 0, 0, fmt.Errorf("memsink: table %q: epoch %d: %w", t.Name(), epoch, err)
		}
		rows += rec.NumRows()
		bytes += recordBytes(seen, rec)
		recs = appendSplit(recs, rec)
	}
}

// adopt takes ownership of rec and returns it with the table's schema.
func (t *Table) adopt(rec arrow.Record) (arrow.Record, error) {
	s := rec.Schema()
	if s == t.schema || s.Equal(t.schema) {
		return rec, nil
	}
	if err := checkShape(s, t.schema); err != nil {
		rec.Release()
		return nil, err
	}
	out := array.NewRecord(t.schema, rec.Columns(), rec.NumRows())
	rec.Release()
	return out, nil
}

// checkShape accepts a schema with the table's column names and types.
func checkShape(got, want *arrow.Schema) error {
	ok := got.NumFields() == want.NumFields()
	for i := 0; ok && i < got.NumFields(); i++ {
		g, w := got.Field(i), want.Field(i)
		// vector.TypesEqual: arrow.TypeEqual allocates (reflect) for
		// most types, and this runs for every column of every epoch.
		ok = g.Name == w.Name && vector.TypesEqual(g.Type, w.Type)
	}
	if !ok {
		return fmt.Errorf("input has columns (%s), table has (%s)", describe(got), describe(want))
	}
	return nil
}

func describe(s *arrow.Schema) string {
	parts := make([]string, s.NumFields())
	for i, f := range s.Fields() {
		parts[i] = f.Name + " " + vector.TypeName(f.Type)
	}
	return strings.Join(parts, ", ")
}

// appendSplit appends rec (owned) to recs, sliced into MaxRecordRows-row
// pieces when longer. What it appends has its null counts settled
// (vector.SettleNullCounts): a slice starts with unknown counts, which the
// first reader would compute into the shared data while other readers of
// the table do the same.
func appendSplit(recs []arrow.Record, rec arrow.Record) []arrow.Record {
	n := rec.NumRows()
	if n <= MaxRecordRows {
		vector.SettleNullCounts(rec)
		return append(recs, rec)
	}
	for i := int64(0); i < n; i += MaxRecordRows {
		piece := rec.NewSlice(i, min(i+MaxRecordRows, n))
		vector.SettleNullCounts(piece)
		recs = append(recs, piece)
	}
	rec.Release()
	return recs
}

// recordBytes adds up the buffers of rec not yet in seen. Slices of one
// record share buffers; counting each buffer once measures what is held.
func recordBytes(seen map[*memory.Buffer]struct{}, rec arrow.Record) int64 {
	var n int64
	for _, c := range rec.Columns() {
		n += dataBytes(seen, c.Data())
	}
	return n
}

func dataBytes(seen map[*memory.Buffer]struct{}, d arrow.ArrayData) int64 {
	var n int64
	for _, b := range d.Buffers() {
		if b == nil {
			continue
		}
		if _, ok := seen[b]; ok {
			continue
		}
		seen[b] = struct{}{}
		n += int64(b.Cap()) // what was allocated, padding included
	}
	for _, c := range d.Children() {
		n += dataBytes(seen, c)
	}
	// Dictionary returns a typed nil when there is none.
	if dict, ok := d.Dictionary().(*array.Data); ok && dict != nil {
		n += dataBytes(seen, dict)
	}
	return n
}

func releaseAll(recs []arrow.Record) {
	for _, r := range recs {
		r.Release()
	}
}

// commitSegment commits an Append, Update or Complete epoch: the new
// version is the retained epochs plus this one, written durably first when
// persisting. Called with t.mu held; takes ownership of recs.
func (t *Table) commitSegment(info EpochInfo, recs []arrow.Record) error {
	old := t.cur.Load()
	seg := newSegment(info, recs)
	defer seg.release() // the creator's reference
	segs, evicted, trimmed := t.evict(appendSegment(old.segs, seg), old.evicted)
	if trimmed != nil {
		defer trimmed.release() // the creator's reference
	}
	base := epochFile(segs[0].info.Epoch)
	if t.persist != nil {
		if err := t.persist.writeEpoch(info, old.latest, base, t.schema, recs); err != nil {
			return err
		}
	}
	v := newVersion(info.Epoch, evicted, segs, nil, nil)
	v.keepPending(old.pend, info.Epoch)
	t.publish(v)
	if evicted > old.evicted {
		t.log.Debug("evicted epochs", "through", evicted)
	}
	if t.persist != nil {
		t.persist.trim(base)
	}
	t.compactIfDue(v)
	return nil
}

// appendSegment returns the current version's segments (cur) with seg
// after them, in cur's own array when it has room. That is safe because
// every version is made from the current one (commits, compaction,
// uncommitted rows) or from a fresh array (Clear, recovery, a trimmed
// run), so no published version sharing cur's array ends after cur: the
// slot written belongs to none, and readers of older versions never look
// past their own length. A full array is replaced by one of twice the
// length, so that an epoch's commit does not copy every retained
// segment's pointer (it did: a copy per epoch, of fresh memory, growing
// with the retained epochs).
func appendSegment(cur []*segment, seg *segment) []*segment {
	if len(cur) < cap(cur) {
		return append(cur, seg)
	}
	grown := make([]*segment, len(cur), 2*len(cur)+4)
	copy(grown, cur)
	return append(grown, seg)
}

// evict applies the retention limits to segs: it returns the segments
// kept and the highest evicted epoch (at least evicted). A run partly
// evicted is replaced by a trimmed segment, returned with the creator's
// reference for the caller to release once a version lists it.
func (t *Table) evict(segs []*segment, evicted int64) (kept []*segment, through int64, trimmed *segment) {
	l := t.limits()
	// A trimmed run's size is its own (its records' structs, its share of
	// the bytes), which the per-epoch costs evictSegments subtracts only
	// estimate: evict again until the segments kept fit exactly.
	for {
		k, m := l.evictSegments(segs)
		if k == 0 && m == 0 {
			return segs, evicted, trimmed
		}
		for _, s := range segs[:k] {
			evicted = max(evicted, s.lastEpoch())
		}
		segs = segs[k:]
		if k > 0 && trimmed != nil {
			// The run trimmed in the previous round is evicted whole.
			trimmed.release()
			trimmed = nil
		}
		if m > 0 {
			evicted = max(evicted, segs[0].epochID(m-1))
			next := segs[0].dropEpochs(m)
			if trimmed != nil {
				trimmed.release() // next holds its own slices
			}
			trimmed = next
			segs = append([]*segment{trimmed}, segs[1:]...)
		}
	}
}

// commitView commits an epoch of a view: written durably first when
// persisting, then applied to the writer, compacted if due and published.
// Called with t.mu held; takes ownership of recs.
func (t *Table) commitView(info EpochInfo, recs []arrow.Record) error {
	old := t.cur.Load()
	var base string
	if t.persist != nil {
		base = t.persist.viewBase(info.Epoch)
		if err := t.persist.writeEpoch(info, old.latest, base, t.schema, recs); err != nil {
			releaseAll(recs)
			return err
		}
	}
	if err := t.view.apply(info, recs); err != nil {
		t.broken = fmt.Errorf("view broken by epoch %d: %w", info.Epoch, err)
		return fmt.Errorf("memsink: table %q: %w", t.Name(), t.broken)
	}
	if moved, err := t.view.compact(); err != nil {
		t.broken = fmt.Errorf("view broken by compaction at epoch %d: %w", info.Epoch, err)
		return fmt.Errorf("memsink: table %q: %w", t.Name(), t.broken)
	} else if moved > 0 {
		t.log.Debug("compacted view", "epoch", info.Epoch, "moved_rows", moved, "chunks", len(t.view.order))
	}
	st := t.view.state(info)
	defer st.release() // the creator's reference
	states := make([]*viewState, 0, len(old.states)+1)
	states = append(append(states, old.states...), st)
	k := t.limits().evictStates(states)
	t.publish(newVersion(info.Epoch, -1, nil, states[k:], t.view))
	if t.persist != nil {
		t.persist.afterView(st)
	}
	return nil
}

// publish makes v the current version. Readers that loaded the previous
// one keep it alive until they release it.
func (t *Table) publish(v *version) {
	t.cur.Swap(v).release()
	t.notifyMu.Lock()
	if t.changed != nil {
		close(t.changed)
		t.changed = nil
	}
	t.notifyMu.Unlock()
}

// Changed returns a channel closed when the table's contents next change
// (a commit, uncommitted rows of a continuous query, a clear or close):
// readers that follow a table wait on it instead of polling, then ask
// again.
func (t *Table) Changed() <-chan struct{} {
	t.notifyMu.Lock()
	defer t.notifyMu.Unlock()
	if t.changed == nil {
		t.changed = make(chan struct{})
	}
	return t.changed
}

// acquire returns the current version with a reference the caller
// releases. A version whose last reference is gone has been replaced, so
// a failed try-retain just reloads the pointer.
func (t *Table) acquire() *version {
	for {
		v := t.cur.Load()
		if v.tryRetain() {
			return v
		}
	}
}

// Clear drops every epoch; afterwards any epoch id is accepted again (a
// test helper, as Spark's MemorySink.clear). With Persist the persisted
// files are deleted too. Snapshots taken before keep their data.
func (t *Table) Clear() error {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.closed.Load() {
		return fmt.Errorf("memsink: table %q: clear: %w", t.Name(), ErrClosed)
	}
	t.publish(newVersion(-1, -1, nil, nil, nil))
	if t.view != nil {
		t.view.reset()
	}
	t.smallEpochs = 0
	t.broken = nil
	if t.persist != nil {
		return t.persist.clear()
	}
	return nil
}

// Close releases the table's data; snapshots that readers hold stay valid
// until released. Further AddBatch calls fail with ErrClosed and reads see
// an empty table. Close is idempotent.
func (t *Table) Close() error {
	t.mu.Lock()
	if t.closed.Swap(true) {
		t.mu.Unlock()
		return nil
	}
	t.publish(newVersion(-1, -1, nil, nil, nil))
	if t.view != nil {
		t.view.reset()
	}
	if t.persist != nil {
		t.persist.close()
	}
	t.mu.Unlock()
	// A compaction in progress drops its work once it sees the table
	// closed; waiting for it means Close leaves nothing allocated behind.
	t.bgStop()
	t.bg.Wait()
	return nil
}
