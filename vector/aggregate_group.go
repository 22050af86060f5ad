package vector

import (
	"context"

	"fmt"

	"github.com/apache/arrow/go/v17/arrow"
	"github.com/apache/arrow/go/v17/arrow/array"
	"github.com/apache/arrow/go/v17/arrow/memory"
)

// Groupers: from key columns to dense group ids, over the tables of
// hashtable.go.

// grouper assigns group ids to rows by key.
type grouper interface {
	// group writes the group of every row of the key columns (borrowed) to
	// gids, creating groups as needed.
	group(keys []arrow.Array, gids []int32) error
	// numGroups is the number of groups so far.
	numGroups() int
	// finish is called once after the input; it returns the row count of
	// every group.
	finish() []int64
	// keys returns the key columns of groups [lo, hi) (after finish).
	keys(mem memory.Allocator, lo, hi int) ([]arrow.Array, error)
	// release lets go of any Arrow memory held; it is idempotent.
	release()
	// heapBytes is the Go-heap memory the grouper holds.
	heapBytes() int64
}

func newGrouper(mem memory.Allocator, types []arrow.DataType) (grouper, error) {
	if len(types) == 0 {
		return &globalGrouper{}, nil
	}
	enc, err := NewKeyEncoder(mem, types)
	if err != nil {
		return nil, err
	}
	if enc.IsFixed() {
		t := newFixedTable()
		t.big = newBigMem(mem)
		return &fixedGrouper{t: t, enc: enc}, nil
	}
	if g := newWordsGrouper(types); g != nil {
		g.big = newBigMem(mem)
		return g, nil
	}
	t := newBytesTable()
	t.big = newBigMem(mem)
	return &bytesGrouper{t: t, enc: enc}, nil
}

// contextGrouper is a grouper whose table can grow interruptibly
// (HashAggregate uses it; a table of millions of groups doubles in one
// step that would otherwise hold up a cancelled query for hundreds of
// milliseconds). The table grows when and as group would grow it.
type contextGrouper interface {
	groupContext(ctx context.Context, keys []arrow.Array, gids []int32) error
}

// growReserver is a grouper whose table asks before it grows: fn is given
// the bytes a growth adds and refuses it with an error (the query's memory
// limit), which the growing groupContext then returns.
type growReserver interface {
	setGrowReserve(fn func(delta int64) error)
}

func (g *fixedGrouper) setGrowReserve(fn func(int64) error) { g.t.growReserve = fn }
func (g *bytesGrouper) setGrowReserve(fn func(int64) error) { g.t.growReserve = fn }
func (g *wordsGrouper) setGrowReserve(fn func(int64) error) { g.growReserve = fn }

func (g *fixedGrouper) groupContext(ctx context.Context, keys []arrow.Array, gids []int32) error {
	return g.t.withContext(ctx, func() error { return g.group(keys, gids) })
}

func (g *bytesGrouper) groupContext(ctx context.Context, keys []arrow.Array, gids []int32) error {
	return g.t.withContext(ctx, func() error { return g.group(keys, gids) })
}

// globalGrouper puts every row in group 0, which always exists.
type globalGrouper struct{ rows int64 }

func (g *globalGrouper) group(_ []arrow.Array, gids []int32) error {
	clear(gids)
	g.rows += int64(len(gids))
	return nil
}
func (g *globalGrouper) numGroups() int  { return 1 }
func (g *globalGrouper) finish() []int64 { return []int64{g.rows} }
func (g *globalGrouper) keys(memory.Allocator, int, int) ([]arrow.Array, error) {
	return nil, nil
}
func (g *globalGrouper) release() {}

// fixedGrouper groups by one fixed-width key. 64- and 32-bit integer keys
// (bigint, int, timestamp, date) are probed straight from the column's
// values; other fixed keys go through the KeyEncoder's words.
type fixedGrouper struct {
	t     *fixedTable
	enc   *KeyEncoder
	words []uint64
	nulls []bool
	mask  []bool
}

func (g *fixedGrouper) group(keys []arrow.Array, gids []int32) error {
	col := keys[0]
	var bm []byte
	off := col.Data().Offset()
	if col.NullN() > 0 {
		bm = col.NullBitmapBytes()
	}
	switch a := col.(type) {
	case *array.Int64:
		probeFixedAny(g.t, a.Int64Values(), bm, off, gids)
	case *array.Timestamp:
		probeFixedAny(g.t, a.TimestampValues(), bm, off, gids)
	case *array.Int32:
		probeFixedAny(g.t, a.Int32Values(), bm, off, gids)
	case *array.Date32:
		probeFixedAny(g.t, a.Date32Values(), bm, off, gids)
	default:
		if err := g.enc.Encode(keys); err != nil {
			return err
		}
		var nulls []bool
		if g.enc.AnyNull() {
			g.mask = grow(g.mask, len(gids))
			nulls = g.mask[:len(gids)]
			for i := range nulls {
				nulls[i] = g.enc.HasNull(i)
			}
		}
		probeFixedMasked(g.t, g.enc.Fixed(), nulls, gids)
	}
	return nil
}

func probeFixedAny[K fixedKey](t *fixedTable, vals []K, bm []byte, off int, gids []int32) {
	if bm == nil {
		probeFixed(t, vals, gids)
	} else {
		probeFixedNullable(t, vals, bm, off, gids)
	}
}

func (g *fixedGrouper) release() { g.t.release() }

func (g *fixedGrouper) numGroups() int { return g.t.n }

func (g *fixedGrouper) finish() []int64 {
	words, nulls, rows := g.t.finish()
	g.words, g.nulls = words, nulls
	return rows
}

func (g *fixedGrouper) keys(mem memory.Allocator, lo, hi int) ([]arrow.Array, error) {
	var nulls []bool
	if g.nulls != nil {
		nulls = g.nulls[lo:hi]
	}
	a, err := g.enc.DecodeFixed(mem, g.words[lo:hi], nulls)
	if err != nil {
		return nil, err
	}
	return []arrow.Array{a}, nil
}

// bytesGrouper groups by normalized key bytes (composite, string, decimal
// and struct keys).
//
// A single dictionary-encoded string key without nulls takes a shortcut:
// each dictionary entry is encoded and probed once, when a row first refers
// to it (and again only when a batch brings another dictionary), and every
// row then takes its entry's group by index. Streaming sources usually keep
// one dictionary for many batches, so the per-row work is one gather.
type bytesGrouper struct {
	t   *bytesTable
	enc *KeyEncoder

	dict     arrow.Array // the dictionary dictGids maps (retained)
	dictGids []int32     // group of each dictionary entry, -1 while none
	extra    []int64     // rows counted outside the slots, by group
	pending  []int32     // scratch: entries to add
	newGids  []int32     // scratch: their groups

	tuples tupleCache // composite keys of dictionary and fixed-width columns

	// views is keyViews' scratch, kept: made per call it was fresh
	// memory every epoch of q8 (24 bytes a logged or evicted group).
	views [][]byte
}

// keyViews returns views of the keys of groups gids, valid until the next
// call or a change of the groups.
func (g *bytesGrouper) keyViews(gids []int32) [][]byte {
	v := grow(g.views, len(gids))[:len(gids)]
	for i, gid := range gids {
		v[i] = g.t.key(int(gid))
	}
	g.views = v
	return v
}

func (g *bytesGrouper) group(keys []arrow.Array, gids []int32) error {
	if d, ok := keys[0].(*array.Dictionary); ok && len(keys) == 1 && d.NullN() == 0 {
		if done, err := g.groupDictionary(d, gids); done || err != nil {
			return err
		}
	}
	if len(keys) > 1 {
		if done, err := g.tuples.group(g, keys, gids); done || err != nil {
			return err
		}
	}
	if err := g.enc.Encode(keys); err != nil {
		return err
	}
	g.t.probe(g.enc, gids)
	return nil
}

// groupDictionary groups the rows of d by dictionary index; it reports
// false when it leaves the batch to the general path.
func (g *bytesGrouper) groupDictionary(d *array.Dictionary, gids []int32) (bool, error) {
	dict := d.Dictionary()
	if g.dict == nil || g.dict.Data() != dict.Data() {
		if dict.Len() > max(1024, 2*d.Len()) {
			return false, nil // a new dictionary larger than the batch
		}
		g.dictGids = growFill(g.dictGids[:0], dict.Len(), -1)
		if g.dict != nil {
			g.dict.Release()
		}
		dict.Retain()
		g.dict = dict
	}
	var err error
	switch ix := d.Indices().(type) {
	case *array.Int32:
		err = mapDictionary(g, gids, ix.Int32Values())
	case *array.Int8:
		err = mapDictionary(g, gids, ix.Int8Values())
	case *array.Int16:
		err = mapDictionary(g, gids, ix.Int16Values())
	case *array.Int64:
		err = mapDictionary(g, gids, ix.Int64Values())
	case *array.Uint8:
		err = mapDictionary(g, gids, ix.Uint8Values())
	case *array.Uint16:
		err = mapDictionary(g, gids, ix.Uint16Values())
	case *array.Uint32:
		err = mapDictionary(g, gids, ix.Uint32Values())
	default:
		return false, nil
	}
	return true, err
}

type dictIndex interface {
	int8 | int16 | int32 | int64 | uint8 | uint16 | uint32
}

// mapDictionary gives every row the group of its dictionary entry and
// counts it. Entries seen for the first time (group -1) get their groups
// from the table, in order of appearance, when the loop reaches them.
func mapDictionary[T dictIndex](g *bytesGrouper, gids []int32, idx []T) error {
	dg := g.dictGids
	gids = gids[:len(idx)]
	for start := 0; start < len(idx); {
		g.extra = growZero(g.extra, g.t.n)
		rows := g.extra
		i := start
		for ; i < len(idx); i++ {
			j := idx[i]
			if uint64(j) >= uint64(len(dg)) {
				return fmt.Errorf("vector: dictionary index %d out of range (dictionary of %d entries): %w", j, len(dg), ErrType)
			}
			gid := dg[j]
			if gid < 0 {
				break
			}
			gids[i] = gid
			rows[gid]++
		}
		if i == len(idx) {
			return nil
		}
		if err := addDictEntries(g, idx[i:]); err != nil {
			return err
		}
		start = i
	}
	return nil
}

// addDictEntries gives a group to every dictionary entry that idx refers
// to and that has none yet, probing the entries' keys in order of first
// reference.
func addDictEntries[T dictIndex](g *bytesGrouper, idx []T) error {
	pending := g.pending[:0]
	for _, j := range idx {
		if uint64(j) < uint64(len(g.dictGids)) && g.dictGids[j] == -1 {
			g.dictGids[j] = -2 // pending: listed once
			pending = append(pending, int32(j))
		}
	}
	g.pending = pending
	entries, err := Take(g.enc.mem, g.dict, pending)
	if err != nil {
		return err
	}
	defer entries.Release()
	if err := g.enc.Encode([]arrow.Array{entries}); err != nil {
		return err
	}
	g.newGids = grow(g.newGids, len(pending))
	newGids := g.newGids[:len(pending)]
	g.t.probe(g.enc, newGids)
	g.extra = growZero(g.extra, g.t.n)
	for k, j := range pending {
		gid := newGids[k]
		g.dictGids[j] = gid
		g.extra[gid]-- // the probe counted a row for the entry
	}
	return nil
}

func (g *bytesGrouper) numGroups() int { return g.t.n }

func (g *bytesGrouper) finish() []int64 {
	rows, _ := g.finishContext(context.Background())
	return rows
}

func (g *bytesGrouper) release() {
	g.views = nil
	g.t.release()
	g.tuples.release()
	if g.dict != nil {
		g.dict.Release()
		g.dict = nil
	}
}

func (g *bytesGrouper) keys(mem memory.Allocator, lo, hi int) ([]arrow.Array, error) {
	keys := make([][]byte, hi-lo)
	for i := range keys {
		keys[i] = g.t.key(lo + i)
	}
	return g.enc.DecodeKeys(mem, keys)
}
