package memsink

import (
	"context"
	"fmt"
	"math/bits"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/apache/arrow/go/v17/arrow"
	"github.com/apache/arrow/go/v17/arrow/array"
	"github.com/apache/arrow/go/v17/arrow/memory"

	"github.com/arrowstream/arrowstream/vector"
)

// A materialized view (Options.UpdateAsView) keeps the latest row per key.
//
// The writer keeps every epoch's records as chunks (with _epoch and
// _commit_timestamp columns appended, built once per epoch and shared by
// slicing) and an index key → (chunk, row) of each key's live row: a
// vector.KeyIndex numbers the keys (the batch hash aggregation's typed
// tables, probed a chunk's key columns at a time) and a slice indexed by
// that number holds the row. An epoch's row for a key marks the previous
// row dead. Each commit publishes, per chunk, an immutable viewChunk: the
// record and a copy of its dead-row bitmap; chunks no row died in since
// keep their published viewChunk, so a commit costs the epoch's rows (and
// a word per 64 rows of the chunks they touched). Readers gather the live
// rows of a chunk with dead rows once (vector.Take, cached in the
// viewChunk and shared by every snapshot that lists it), so commits never
// copy rows on behalf of readers. When too much is dead, or too many
// chunks are small, compaction rewrites the affected chunks into full ones
// and moves their index entries, without touching published chunks: each
// chunk keeps its rows' key numbers (4 bytes a row), so moved rows are
// repointed by number, not probed in the index again.

const (
	// smallChunkRows: chunks with fewer live rows are merged by compaction.
	smallChunkRows = MaxRecordRows / 8
	// maxSmallChunks small chunks trigger a compaction.
	maxSmallChunks = 16
)

// viewChunk is one published, immutable chunk of a view.
type viewChunk struct {
	refs   atomic.Int64
	mem    memory.Allocator
	schema *arrow.Schema // the table's
	rec    arrow.Record  // the table's columns plus _epoch and _commit_timestamp
	dead   []uint64      // bitmap of rec's dead rows (the writer's, copied); nil when all are live
	rows   int64         // live rows
	held   int64         // rows of rec
	bytes  int64
	minEp  int64
	maxEp  int64
	commit time.Time // when minEp == maxEp

	once sync.Once
	full arrow.Record // live rows of rec
	pub  arrow.Record // the table's columns of full
}

func (c *viewChunk) release() {
	if c.refs.Add(-1) != 0 {
		return
	}
	c.rec.Release()
	if c.full != nil {
		c.full.Release()
		c.pub.Release()
	}
}

// resolve returns the chunk's live rows, gathering them on first use.
func (c *viewChunk) resolve() (full, pub arrow.Record) {
	c.once.Do(func() {
		full := c.rec
		if c.dead == nil {
			full.Retain()
		} else {
			var err error
			if full, err = takeRecord(c.mem, c.rec, liveRows(c.dead, c.held, c.rows)); err != nil {
				// New checked that every column type supports Take.
				panic(fmt.Sprintf("memsink: gather view rows: %v", err))
			}
		}
		c.full = full
		c.pub = array.NewRecord(c.schema, full.Columns()[:full.NumCols()-2], full.NumRows())
	})
	return c.full, c.pub
}

func (c *viewChunk) part() part {
	p := part{vc: c, epoch: -1, rows: c.rows, bytes: c.bytes}
	if c.minEp == c.maxEp {
		p.epoch, p.commit = c.minEp, c.commit
	}
	return p
}

// viewPart describes a record with the internal columns (full) and its
// table-column projection (pub).
func viewPart(full, pub arrow.Record, bytes int64) part {
	mn, mx := epochRange(full)
	p := part{rec: pub, full: full, epoch: -1, rows: full.NumRows(), bytes: bytes}
	if mn == mx {
		p.epoch = mn
		ts := full.Column(int(full.NumCols()) - 1).(*array.Timestamp).TimestampValues()
		p.commit = time.UnixMicro(int64(ts[0])).UTC()
	}
	return p
}

// epochRange returns the smallest and largest _epoch of a non-empty record
// with the internal columns.
func epochRange(full arrow.Record) (mn, mx int64) {
	ep := full.Column(int(full.NumCols()) - 2).(*array.Int64).Int64Values()
	mn, mx = ep[0], ep[0]
	for _, e := range ep[1:] {
		mn, mx = min(mn, e), max(mx, e)
	}
	return mn, mx
}

// viewState is the view as of one epoch.
type viewState struct {
	refs   atomic.Int64
	info   EpochInfo
	chunks []*viewChunk
	rows   int64
}

func (s *viewState) release() {
	if s.refs.Add(-1) != 0 {
		return
	}
	for _, c := range s.chunks {
		c.release()
	}
}

func stateParts(st *viewState) []part {
	out := make([]part, len(st.chunks))
	for i, c := range st.chunks {
		out[i] = c.part()
	}
	return out
}

// loc is where a key's live row is.
type loc struct{ chunk, row uint32 }

// noChunk marks a slot whose key has no row yet.
const noChunk = ^uint32(0)

// wchunk is the writer's side of a chunk.
type wchunk struct {
	rec    arrow.Record // the writer's reference
	dead   []uint64     // bitmap of dead rows; nil while none
	ndead  int64
	bytes  int64
	minEp  int64
	maxEp  int64
	commit time.Time
	pub    *viewChunk // published form; nil when rows died since
	// keys[i] is the key number (the index's) of row i, kept so that
	// compaction moves rows by number without probing the index again.
	keys []int32
}

func (c *wchunk) live() int64 { return c.rec.NumRows() - c.ndead }

// liveRows lists the rows of an n-row chunk not set in its dead bitmap
// (live of them).
func liveRows(dead []uint64, n, live int64) []int32 {
	out := make([]int32, 0, live)
	for w, word := range dead {
		base := int32(w * 64)
		alive := ^word
		if rest := n - int64(base); rest < 64 {
			alive &= 1<<rest - 1
		}
		for alive != 0 {
			out = append(out, base+int32(bits.TrailingZeros64(alive)))
			alive &= alive - 1
		}
	}
	return out
}

// viewWriter maintains a view; it is used under the table's writer lock.
type viewWriter struct {
	mem     memory.Allocator
	schema  *arrow.Schema // the table's
	full    *arrow.Schema // plus _epoch and _commit_timestamp
	keys    []int
	keyCols []arrow.Array
	types   []arrow.DataType // of the key columns

	// index numbers the keys (the batch hash aggregation's typed tables:
	// a chunk's key columns are hashed and probed column-wise); slots[id]
	// is where key id's live row is.
	index *vector.KeyIndex
	slots slotPages

	chunks []*wchunk // by id; nil once compacted away
	order  []uint32  // ids of the current chunks, in publication order
	total  int64     // rows of the current chunks
	dead   int64     // dead rows of the current chunks

	// gatherSrc and gatherRows are gather's row lists, kept for the next
	// compaction (they were fresh memory at every one). At most
	// MaxRecordRows each; dropped when a compaction used less than a
	// quarter of them, so that one large compaction does not pin its
	// size. Nothing outside gather sees them.
	gatherSrc, gatherRows []int32
}

func newViewWriter(mem memory.Allocator, schema *arrow.Schema, keyNames []string) (*viewWriter, error) {
	if len(keyNames) == 0 {
		return nil, fmt.Errorf("UpdateAsView needs key columns (SinkInfo.KeyColumns)")
	}
	w := &viewWriter{mem: mem, schema: schema, full: WithEpochSchema(schema)}
	types := make([]arrow.DataType, len(keyNames))
	for i, name := range keyNames {
		c, err := findColumn(schema, name)
		if err != nil {
			return nil, err
		}
		w.keys = append(w.keys, c)
		types[i] = schema.Field(c).Type
	}
	// Fail early on a key type the index cannot take.
	probe, err := vector.NewKeyIndex(mem, types)
	if err != nil {
		return nil, fmt.Errorf("view key (%s): %w", strings.Join(keyNames, ", "), err)
	}
	probe.Release()
	w.types = types
	w.keyCols = make([]arrow.Array, len(w.keys))
	for _, f := range schema.Fields() {
		if err := checkGather(mem, f); err != nil {
			return nil, err
		}
	}
	w.reset()
	return w, nil
}

// findColumn resolves a key column: exact name first, then a unique
// case-insensitive match (Spark resolves names case-insensitively).
func findColumn(schema *arrow.Schema, name string) (int, error) {
	if idx := schema.FieldIndices(name); len(idx) == 1 {
		return idx[0], nil
	}
	found := -1
	for i, f := range schema.Fields() {
		if strings.EqualFold(f.Name, name) {
			if found >= 0 {
				return 0, fmt.Errorf("view key column %q is ambiguous (columns: %s)", name, describe(schema))
			}
			found = i
		}
	}
	if found < 0 {
		return 0, fmt.Errorf("view key column %q not found (columns: %s)", name, describe(schema))
	}
	return found, nil
}

// checkGather makes sure a column type supports the gather and
// concatenation that views and compaction use, so that they cannot fail
// later.
func checkGather(mem memory.Allocator, f arrow.Field) (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("column %s of type %s cannot be kept in a view: %v", f.Name, vector.TypeName(f.Type), r)
		}
	}()
	a := array.MakeArrayOfNull(mem, f.Type, 1)
	defer a.Release()
	t, err := vector.Take(mem, a, []int32{0})
	if err != nil {
		return fmt.Errorf("column %s of type %s cannot be kept in a view: %w", f.Name, vector.TypeName(f.Type), err)
	}
	defer t.Release()
	c, err := vector.Concatenate([]arrow.Array{a, t}, mem)
	if err != nil {
		return fmt.Errorf("column %s of type %s cannot be kept in a view: %w", f.Name, vector.TypeName(f.Type), err)
	}
	c.Release()
	return nil
}

func takeRecord(mem memory.Allocator, rec arrow.Record, idx []int32) (arrow.Record, error) {
	return vector.TakeRecord(mem, rec, idx)
}

// reset drops every chunk and key.
func (w *viewWriter) reset() {
	for _, c := range w.chunks {
		if c != nil {
			c.rec.Release()
		}
	}
	w.chunks, w.order = nil, nil
	w.slots.reset()
	if w.index != nil {
		w.index.Release()
		w.index = nil
	}
	w.total, w.dead = 0, 0
}

// apply adds an epoch's records (owned; the table's columns) to the view.
func (w *viewWriter) apply(info EpochInfo, recs []arrow.Record) error {
	defer releaseAll(recs)
	longest := int64(0)
	for _, r := range recs {
		longest = max(longest, r.NumRows())
	}
	if longest == 0 {
		return nil
	}
	ep, ts := constantEpochColumns(w.mem, info.Epoch, info.CommitTime, int(longest))
	defer ep.Release()
	defer ts.Release()
	for _, rec := range recs {
		n := rec.NumRows()
		e, s := array.NewSlice(ep, 0, n), array.NewSlice(ts, 0, n)
		cols := make([]arrow.Array, 0, rec.NumCols()+2)
		cols = append(append(cols, rec.Columns()...), e, s)
		full := array.NewRecord(w.full, cols, n)
		vector.SettleNullCounts(full)
		e.Release()
		s.Release()
		c := &wchunk{rec: full, bytes: share(info.Bytes, n, info.Rows) + 16*n,
			minEp: info.Epoch, maxEp: info.Epoch, commit: info.CommitTime}
		if err := w.add(c); err != nil {
			return err
		}
	}
	return nil
}

// load adds records that already carry the internal columns (a persisted
// view snapshot), taking ownership of them.
func (w *viewWriter) load(recs []arrow.Record) error {
	seen := map[*memory.Buffer]struct{}{}
	for i, rec := range recs {
		c := &wchunk{rec: rec, bytes: recordBytes(seen, rec)}
		c.minEp, c.maxEp = epochRange(rec)
		if c.minEp == c.maxEp {
			c.commit = time.UnixMicro(int64(rec.Column(int(rec.NumCols()) - 1).(*array.Timestamp).Value(0))).UTC()
		}
		if err := w.add(c); err != nil {
			releaseAll(recs[i+1:])
			return err
		}
	}
	return nil
}

// add appends a chunk and indexes its rows, each superseding the row its
// key had. The cost is the chunk's rows: its key columns are numbered in
// one column-wise pass, then each row's slot is set (and the row it
// replaces marked dead) by number; no other chunk is read.
func (w *viewWriter) add(c *wchunk) error {
	if w.index == nil {
		x, err := vector.NewKeyIndex(w.mem, w.types)
		if err != nil {
			return fmt.Errorf("view key: %w", err)
		}
		w.index = x
	}
	n := int(c.rec.NumRows())
	ids := make([]int32, n)
	for k, col := range w.keys {
		w.keyCols[k] = c.rec.Column(col)
	}
	err := w.index.Index(context.Background(), w.keyCols, ids)
	clear(w.keyCols)
	if err != nil {
		c.rec.Release()
		return fmt.Errorf("view key: %w", err)
	}
	c.keys = ids
	id := w.appendChunk(c)
	// Keys new to the index get an empty slot first (noChunk), so that
	// nothing depends on the order the index numbers them in.
	w.slots.extend(w.index.Len())
	for i, s := range ids {
		l := loc{id, uint32(i)}
		if w.slots.at(s).chunk == noChunk {
			w.slots.set(s, l)
			continue
		}
		w.point(s, l)
	}
	return nil
}

// relocate appends a chunk of live rows moved by compaction, whose key
// numbers c.keys carries: their slots are repointed, nothing dies, and
// the index is not probed.
func (w *viewWriter) relocate(c *wchunk) {
	id := w.appendChunk(c)
	for i, s := range c.keys {
		w.slots.set(s, loc{id, uint32(i)})
	}
}

// appendChunk makes c a current chunk and returns its id.
func (w *viewWriter) appendChunk(c *wchunk) uint32 {
	id := uint32(len(w.chunks))
	w.chunks = append(w.chunks, c)
	w.order = append(w.order, id)
	w.total += c.rec.NumRows()
	return id
}

// point makes slot s point at l; the row it pointed at is superseded.
func (w *viewWriter) point(s int32, l loc) {
	old := w.slots.at(s)
	c := w.chunks[old.chunk]
	if c.dead == nil {
		c.dead = make([]uint64, (c.rec.NumRows()+63)/64)
	}
	c.dead[old.row/64] |= 1 << (old.row % 64)
	c.ndead++
	c.pub = nil
	w.dead++
	w.slots.set(s, l)
}

// state publishes the view as of info: one viewChunk per chunk with live
// rows, reusing those of unchanged chunks. The caller holds the one
// reference to the result.
func (w *viewWriter) state(info EpochInfo) *viewState {
	st := &viewState{info: info, chunks: make([]*viewChunk, 0, len(w.order))}
	st.refs.Store(1)
	for _, id := range w.order {
		c := w.chunks[id]
		if c.live() == 0 {
			continue
		}
		if c.pub == nil {
			c.pub = w.publish(c)
		}
		c.pub.refs.Add(1)
		st.chunks = append(st.chunks, c.pub)
		st.rows += c.live()
	}
	return st
}

func (w *viewWriter) publish(c *wchunk) *viewChunk {
	c.rec.Retain()
	vc := &viewChunk{mem: w.mem, schema: w.schema, rec: c.rec, rows: c.live(), held: c.rec.NumRows(),
		bytes: c.bytes, minEp: c.minEp, maxEp: c.maxEp, commit: c.commit}
	if c.ndead > 0 {
		// A copy of the bitmap (a word per 64 rows), not the live rows:
		// a commit costs the changed rows, not the rows of every chunk
		// they touched; the first reader lists the live rows (resolve).
		vc.dead = slices.Clone(c.dead)
	}
	return vc
}

// compact rewrites chunks when more than half of the rows are dead (every
// chunk with dead rows) or when maxSmallChunks chunks are small (those,
// and chunks at least half dead): their live rows are gathered into
// MaxRecordRows-row chunks and their index entries moved. Published
// chunks are untouched; snapshots keep reading them. It returns the rows
// moved.
func (w *viewWriter) compact() (int64, error) {
	small := 0
	for _, id := range w.order {
		if w.chunks[id].live() < smallChunkRows {
			small++
		}
	}
	global := w.dead*2 > w.total
	if !global && small < maxSmallChunks {
		return 0, nil
	}
	var victims, keep []uint32
	for _, id := range w.order {
		c := w.chunks[id]
		if global && c.ndead > 0 || c.ndead*2 >= c.rec.NumRows() || c.live() < smallChunkRows {
			victims = append(victims, id)
		} else {
			keep = append(keep, id)
		}
	}
	if len(victims) == 0 || len(victims) == 1 && w.chunks[victims[0]].ndead == 0 {
		return 0, nil
	}
	out, err := w.gather(victims)
	if err != nil {
		return 0, err
	}
	for _, id := range victims {
		c := w.chunks[id]
		w.total -= c.rec.NumRows()
		w.dead -= c.ndead
		c.rec.Release()
		w.chunks[id] = nil
	}
	w.order = keep
	seen := map[*memory.Buffer]struct{}{}
	moved := int64(0)
	for _, c := range out {
		rec := c.rec
		c.bytes = recordBytes(seen, rec)
		c.minEp, c.maxEp = epochRange(rec)
		if c.minEp == c.maxEp {
			c.commit = time.UnixMicro(int64(rec.Column(int(rec.NumCols()) - 1).(*array.Timestamp).Value(0))).UTC()
		}
		moved += rec.NumRows()
		w.relocate(c)
	}
	return moved, nil
}

// gather returns the live rows of the given chunks packed into new chunks
// of up to MaxRecordRows rows (their records owned by the caller), with
// the rows' key numbers. Each output column is one vector.GatherChunks
// over the victims' columns, so a row is copied once (a Take per chunk
// and a concatenation copied it twice), and the key numbers travel with
// the rows, so the index is not probed again.
func (w *viewWriter) gather(ids []uint32) (out []*wchunk, err error) {
	defer func() {
		if err != nil {
			for _, c := range out {
				c.rec.Release()
			}
			out = nil
		}
	}()
	ncols := len(w.full.Fields())
	cols := make([][]arrow.Array, ncols)
	for j := range cols {
		cols[j] = make([]arrow.Array, len(ids))
		for v, id := range ids {
			cols[j][v] = w.chunks[id].rec.Column(j)
		}
	}
	live := int64(0)
	for _, id := range ids {
		live += w.chunks[id].live()
	}
	room := int(min(live, MaxRecordRows))
	// src and rows are reset scratch; keys is handed to the chunk it is
	// flushed into (made afresh for the next one), not cloned.
	src, rows := slices.Grow(w.gatherSrc[:0], room), slices.Grow(w.gatherRows[:0], room)
	defer func() {
		if 4*room < cap(src) {
			src, rows = nil, nil
		}
		w.gatherSrc, w.gatherRows = src[:0], rows[:0]
	}()
	keys := make([]int32, 0, room)
	left := live // rows not yet flushed
	flush := func() error {
		if len(rows) == 0 {
			return nil
		}
		arrs := make([]arrow.Array, ncols)
		defer func() {
			for _, a := range arrs {
				if a != nil {
					a.Release()
				}
			}
		}()
		for j := range arrs {
			a, err := vector.GatherChunks(w.mem, cols[j], src, rows)
			if err != nil {
				return fmt.Errorf("view compaction: column %s: %w", w.full.Field(j).Name, err)
			}
			arrs[j] = a
		}
		rec := array.NewRecord(w.full, arrs, int64(len(rows)))
		vector.SettleNullCounts(rec)
		out = append(out, &wchunk{rec: rec, keys: keys})
		left -= int64(len(rows))
		src, rows, keys = src[:0], rows[:0], nil
		if left > 0 {
			keys = make([]int32, 0, min(left, MaxRecordRows))
		}
		return nil
	}
	for v, id := range ids {
		c := w.chunks[id]
		// The live rows read off the dead bitmap word by word, not listed
		// first (a list per chunk was a compaction's allocation).
		n := int32(c.rec.NumRows())
		for base := int32(0); base < n; base += 64 {
			alive := ^uint64(0)
			if c.dead != nil {
				alive = ^c.dead[base/64]
			}
			if rest := n - base; rest < 64 {
				alive &= 1<<rest - 1
			}
			for ; alive != 0; alive &= alive - 1 {
				r := base + int32(bits.TrailingZeros64(alive))
				src = append(src, int32(v))
				rows = append(rows, r)
				keys = append(keys, c.keys[r])
				if len(rows) == MaxRecordRows {
					if err := flush(); err != nil {
						return nil, err
					}
				}
			}
		}
	}
	if err := flush(); err != nil {
		return nil, err
	}
	return out, nil
}
