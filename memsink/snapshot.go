package memsink

import (
	"fmt"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/apache/arrow/go/v17/arrow"
	"github.com/apache/arrow/go/v17/arrow/array"
	"github.com/apache/arrow/go/v17/arrow/memory"

	"github.com/arrowstream/arrowstream/plan"
	"github.com/arrowstream/arrowstream/vector"
)

// Columns RecordsWithEpoch appends to a table's columns: the planner's
// table_changes columns.
const (
	// EpochColumn holds the epoch that committed a row (bigint).
	EpochColumn = plan.EpochColumn
	// CommitTimestampColumn holds that epoch's commit time (timestamp, µs
	// UTC).
	CommitTimestampColumn = plan.CommitTimestampColumn
)

// WithEpochSchema returns schema with the EpochColumn and
// CommitTimestampColumn fields appended: the schema of
// Snapshot.RecordsWithEpoch, which is plan.ChangesSchema.
func WithEpochSchema(schema *arrow.Schema) *arrow.Schema { return plan.ChangesSchema(schema) }

// version is one published, immutable state of a table. The table holds
// one reference to the current version; every Snapshot holds one more.
type version struct {
	refs    atomic.Int64
	latest  int64 // latest committed epoch, -1 when none
	evicted int64 // highest epoch evicted by retention, -1 when none

	segs   []*segment   // Append/Update/Complete: retained epochs, oldest first
	live   int          // segs[live:] are the current contents
	states []*viewState // views: retained states, oldest first; the last is current
	// pend are rows of the open epoch of a continuous query shown before
	// it commits (AddUncommitted); the next commit drops them.
	pend []*segment

	held Size

	// The current contents, built on first read and shared by every
	// Snapshot of the version.
	contentsOnce sync.Once
	contents     []part
	contentsRecs []arrow.Record // nil for views (resolved per snapshot)
	contentsRows int64
	contentsSize int64
}

// newVersion retains every segment and state it lists.
// w, when set, is the view writer whose records the version's size counts.
func newVersion(latest, evicted int64, segs []*segment, states []*viewState, w *viewWriter) *version {
	v := &version{latest: latest, evicted: evicted, segs: segs, states: states}
	v.refs.Store(1)
	for i, s := range segs {
		s.refs.Add(1)
		if s.info.Replaced {
			v.live = i
		}
	}
	for _, s := range states {
		s.refs.Add(1)
	}
	v.held = heldSize(segs, states, w)
	return v
}

// tryRetain takes a reference unless the last one is already gone: a
// version never comes back to life.
func (v *version) tryRetain() bool {
	for {
		n := v.refs.Load()
		if n == 0 {
			return false
		}
		if v.refs.CompareAndSwap(n, n+1) {
			return true
		}
	}
}

func (v *version) release() {
	if v.refs.Add(-1) != 0 {
		return
	}
	for _, s := range v.segs {
		s.release()
	}
	for _, s := range v.states {
		s.release()
	}
	for _, s := range v.pend {
		s.release()
	}
}

// current returns a snapshot of the latest contents; the caller has taken
// a reference to v for it. After the first call it costs one allocation.
func (v *version) current(schema *arrow.Schema) *Snapshot {
	v.contentsOnce.Do(func() {
		if len(v.states) > 0 {
			v.contents = stateParts(v.states[len(v.states)-1])
		} else {
			v.contents = segmentParts(slices.Concat(v.segs[v.live:], v.pend))
			v.contentsRecs = make([]arrow.Record, len(v.contents))
			for i, p := range v.contents {
				v.contentsRecs[i] = p.rec
			}
		}
		v.contentsRows, v.contentsSize = sumParts(v.contents)
	})
	s := &Snapshot{v: v, schema: schema, latest: v.latest, parts: v.contents,
		rows: v.contentsRows, bytes: v.contentsSize}
	if v.contentsRecs != nil {
		// Nothing to resolve: share the version's record list.
		s.once.Do(func() { s.resolved, s.recs = v.contents, v.contentsRecs })
	}
	return s
}

func sumParts(parts []part) (rows, bytes int64) {
	for _, p := range parts {
		rows += p.rows
		bytes += p.bytes
	}
	return rows, bytes
}

// part is one record of a snapshot.
type part struct {
	rec    arrow.Record // the table's columns; nil for an unresolved view chunk
	full   arrow.Record // views: the table's columns, _epoch, _commit_timestamp
	vc     *viewChunk   // views: resolved on first read
	epoch  int64        // -1: rows of several epochs
	commit time.Time
	rows   int64
	bytes  int64
	seg    *segment // a compacted run's record spanning several epochs: its run
	off    int64    // and the record's first row in it
}

func segmentParts(segs []*segment) []part {
	n := 0
	for _, s := range segs {
		n += len(s.recs)
	}
	out := make([]part, 0, n)
	for _, s := range segs {
		out = s.appendParts(out)
	}
	return out
}

// share is the part of total bytes that rows of all rows account for.
func share(total, rows, all int64) int64 {
	if all == 0 {
		return 0
	}
	return int64(float64(total) * float64(rows) / float64(all))
}

// Snapshot is a consistent, immutable view of a table: whole epochs only,
// unaffected by later commits, eviction, Clear or Close. It holds a
// reference to every record it lists until Release. A Snapshot may be read
// from several goroutines at once.
type Snapshot struct {
	v      *version
	schema *arrow.Schema
	latest int64
	parts  []part // may be shared with the version: never modified
	owned  []arrow.Record
	rows   int64
	bytes  int64

	once     sync.Once
	resolved []part
	recs     []arrow.Record
	released atomic.Bool
}

// newSnapshot wraps parts of v; the caller has taken a reference to v for
// the snapshot.
func newSnapshot(v *version, schema *arrow.Schema, latest int64, parts []part, owned []arrow.Record) *Snapshot {
	s := &Snapshot{v: v, schema: schema, latest: latest, parts: parts, owned: owned}
	s.rows, s.bytes = sumParts(parts)
	return s
}

// Schema is the schema of the snapshot's records.
func (s *Snapshot) Schema() *arrow.Schema { return s.schema }

// LatestEpoch is the latest epoch the snapshot reflects (for AsOf, the
// last committed epoch at or before the one asked for), -1 when none.
func (s *Snapshot) LatestEpoch() int64 { return s.latest }

// NumRows is the number of rows of the snapshot's records.
func (s *Snapshot) NumRows() int64 { return s.rows }

// NumBytes is the size of the Arrow buffers the records reference (shared
// buffers apportioned by rows).
func (s *Snapshot) NumBytes() int64 { return s.bytes }

// Records returns the snapshot's records in commit order. They are
// borrowed: valid until Release, to be Retained by a reader that keeps
// them longer. The slice must not be modified.
func (s *Snapshot) Records() []arrow.Record {
	s.resolve()
	return s.recs
}

// Part is one record of a snapshot and the epoch that committed its rows.
type Part struct {
	// Record is borrowed, as those of Records.
	Record arrow.Record
	// Epoch committed the rows, or is -1 when they come from several
	// epochs (a compacted view, or small epochs merged by compaction);
	// RecordsWithEpoch has per-row epochs.
	Epoch int64
	// CommitTime is the commit time of Epoch (zero when Epoch is -1).
	CommitTime time.Time
}

// Parts returns the records with their epochs, in the order of Records.
func (s *Snapshot) Parts() []Part {
	s.resolve()
	out := make([]Part, len(s.resolved))
	for i, p := range s.resolved {
		out[i] = Part{Record: p.rec, Epoch: p.epoch, CommitTime: p.commit}
		if p.epoch < 0 {
			out[i].CommitTime = time.Time{}
		}
	}
	return out
}

// resolve turns view chunks into records (materialized once per chunk and
// shared by every snapshot that lists it).
func (s *Snapshot) resolve() {
	s.once.Do(func() {
		s.resolved = make([]part, len(s.parts))
		s.recs = make([]arrow.Record, len(s.parts))
		for i, p := range s.parts {
			if p.vc != nil {
				p.full, p.rec = p.vc.resolve()
				p.vc = nil
			}
			s.resolved[i] = p
			s.recs[i] = p.rec
		}
	})
}

// RecordsWithEpoch returns the snapshot's records with EpochColumn and
// CommitTimestampColumn appended (schema WithEpochSchema(Schema())), owned
// by the caller. The table's columns are shared, not copied; the two new
// columns are built from mem (views keep them, so they are shared too).
func (s *Snapshot) RecordsWithEpoch(mem memory.Allocator) ([]arrow.Record, error) {
	s.resolve()
	out := make([]arrow.Record, 0, len(s.resolved))
	schema := WithEpochSchema(s.schema)
	for _, p := range s.resolved {
		if p.full != nil {
			out = append(out, array.NewRecord(schema, p.full.Columns(), p.full.NumRows()))
			continue
		}
		n := int(p.rec.NumRows())
		var ep, ts arrow.Array
		if p.seg != nil {
			ep, ts = p.seg.epochColumns(mem, p.off, n)
		} else {
			ep, ts = constantEpochColumns(mem, p.epoch, p.commit, n)
		}
		cols := make([]arrow.Array, 0, p.rec.NumCols()+2)
		cols = append(append(cols, p.rec.Columns()...), ep, ts)
		out = append(out, array.NewRecord(schema, cols, int64(n)))
		ep.Release()
		ts.Release()
	}
	return out, nil
}

// constantEpochColumns builds n-row _epoch and _commit_timestamp columns.
func constantEpochColumns(mem memory.Allocator, epoch int64, commit time.Time, n int) (arrow.Array, arrow.Array) {
	us := commit.UnixMicro()
	return buildEpochColumns(mem, n, func(ep, ts []int64) {
		for i := range ep {
			ep[i], ts[i] = epoch, us
		}
	})
}

// buildEpochColumns builds n-row _epoch and _commit_timestamp (µs) columns
// whose values fill writes.
func buildEpochColumns(mem memory.Allocator, n int, fill func(ep, ts []int64)) (arrow.Array, arrow.Array) {
	eb := memory.NewResizableBuffer(mem)
	eb.Resize(n * 8)
	tb := memory.NewResizableBuffer(mem)
	tb.Resize(n * 8)
	fill(arrow.Int64Traits.CastFromBytes(eb.Bytes()), arrow.Int64Traits.CastFromBytes(tb.Bytes()))
	ed := array.NewData(vector.Int64, n, []*memory.Buffer{nil, eb}, nil, 0, 0)
	td := array.NewData(vector.Timestamp, n, []*memory.Buffer{nil, tb}, nil, 0, 0)
	eb.Release()
	tb.Release()
	ea, ta := array.MakeFromData(ed), array.MakeFromData(td)
	ed.Release()
	td.Release()
	return ea, ta
}

// Release drops the snapshot's references. It is idempotent; the records
// must not be used afterwards.
func (s *Snapshot) Release() {
	if s.released.Swap(true) {
		return
	}
	releaseAll(s.owned)
	if s.v != nil {
		s.v.release()
	}
}

// Snapshot returns the table's current contents. The caller releases it.
func (t *Table) Snapshot() *Snapshot {
	return t.acquire().current(t.schema)
}

// AllData is Spark's MemorySink.allData: the rows of every epoch the table
// holds (Complete mode: the latest result). It is Snapshot.
func (t *Table) AllData() *Snapshot { return t.Snapshot() }

// LatestEpoch is the id of the latest committed epoch, -1 when none
// (Spark's latestBatchId).
func (t *Table) LatestEpoch() int64 { return t.cur.Load().latest }

// DebugString renders the contents as Spark's toDebugString does: one line
// per record, "<epoch>: <rows joined by space>", each row as [v1,v2,...].
func (t *Table) DebugString() string {
	s := t.Snapshot()
	defer s.Release()
	var b strings.Builder
	for _, p := range s.Parts() {
		if p.Epoch >= 0 {
			fmt.Fprintf(&b, "%d:", p.Epoch)
		} else {
			b.WriteString("*:")
		}
		for r := 0; r < int(p.Record.NumRows()); r++ {
			b.WriteString(" [")
			for c, col := range p.Record.Columns() {
				if c > 0 {
					b.WriteByte(',')
				}
				b.WriteString(vector.FormatValue(vector.ValueAt(col, r), col.DataType()))
			}
			b.WriteByte(']')
		}
		b.WriteByte('\n')
	}
	return b.String()
}
