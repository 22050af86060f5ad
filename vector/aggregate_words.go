package vector

import (
	"context"
	"fmt"
	"math/bits"
	"unsafe"

	"github.com/apache/arrow/go/v17/arrow"
	"github.com/apache/arrow/go/v17/arrow/array"
	"github.com/apache/arrow/go/v17/arrow/bitutil"
	"github.com/apache/arrow/go/v17/arrow/memory"
)

// wordsGrouper groups by a composite key whose leaves are all fixed-width
// integers (bigint, int, timestamp, date, …), directly or as the fields of
// a struct: GROUP BY window(ts, '10 seconds'), key, the shape of most
// streaming aggregations. Each row's key becomes a tuple of words — one
// per leaf, plus one word of null bits — looked up in an open-addressing
// table that stores the tuples in group order. No key is ever encoded to
// bytes: the keys are rebuilt from the words when asked for. Groups are
// exactly those of the general path (equal keys, nulls equal), numbered
// in order of first appearance.
type wordsGrouper struct {
	types  []arrow.DataType // the key columns' types
	leaves []wordLeaf
	k      int // words stored per tuple (aggregate_words_layout.go)

	// The stored layout (aggregate_words_layout.go): nw logical words
	// (the leaves and the null word), rel how each is had from a tuple,
	// pcols the scratch columns of the stored ones in tuple order,
	// inOrder when every word is stored in logical order; full and ids
	// are keysOf's scratch for the logical words of the groups it rebuilds.
	nw      int
	rel     []wordRel
	pcols   [][]uint64
	inOrder bool
	full    []uint64
	ids     []int32

	tuples []uint64 // group g holds tuples[g*k : g*k+k]
	rows   []int64  // by group: rows counted (unless noRows)
	// noRows is set by a LiveAggregate, which counts its groups' rows
	// itself (and resets them on Delete), and by a KeyIndex, which reads
	// none: the grouper's own count, one more random write per row and 8
	// bytes per group, would go unread.
	noRows bool
	// slots holds the open-addressing table, one word a slot: 0 for
	// empty, else wordsSlot(hash, group). The keys are compared in the
	// group's tuple, which the grouper keeps anyway: a slot that also held
	// the key's words (k+1 words, as until session 29) made the table
	// three times the size for two stored words, and a streaming state
	// growing from nothing pays for every fresh page of it and of each
	// rehash (aggregate_words_table.go).
	slots []uint64
	mask  int  // slot count - 1
	shift uint // 64 - log2(slot count): a hash's home is h >> shift
	// hashDrop clears bits of every key's hash (zero in use): tests set
	// it to force keys onto the same tags and homes.
	hashDrop uint64

	cols   [][]uint64 // scratch: per word, its value for every row
	hashes []uint64   // scratch: per row

	// Scratch of the run-length path (aggregate_words_runs.go): the
	// leaf columns, the runs' starts (and the previous leaf's, split by
	// the next), the runs' groups.
	runCols   []arrow.Array
	runStarts []int32
	runSplit  []int32
	runGids   []int32
	// noRuns turns the run-length path off (tests: the generic path as
	// the oracle); runBatches counts the batches it grouped.
	noRuns     bool
	runBatches int
	nullw      []uint64 // scratch of keysOf: the null word of each group asked for

	// Interruptible growth (aggregate_words_grow.go): big holds slot
	// tables taken from the allocator's large-buffer cache; growCtx is
	// set for one batch by groupContext, growErr records a growth it
	// cancelled.
	big     bigMem
	growCtx context.Context
	growErr error
	// growReserve, when set, is asked for a growth's added slot bytes
	// before the growth (slotTable.growReserve).
	growReserve func(delta int64) error
}

// wordLeaf is one fixed-width value of the key: column col, or field
// field of struct column col (field -1: the column itself).
type wordLeaf struct {
	col, field int
	dt         arrow.DataType
	width      int // bytes
}

// maxWordLeaves bounds the leaves (a tuple is at most that plus one words).
const maxWordLeaves = 3

// wordWidth returns the byte width of a type whose values are stored as
// words, or 0 when it is not one.
func wordWidth(dt arrow.DataType) int {
	switch dt.ID() {
	case arrow.INT8, arrow.UINT8:
		return 1
	case arrow.INT16, arrow.UINT16:
		return 2
	case arrow.INT32, arrow.UINT32, arrow.DATE32, arrow.TIME32:
		return 4
	case arrow.INT64, arrow.UINT64, arrow.TIMESTAMP, arrow.DATE64, arrow.TIME64, arrow.DURATION:
		return 8
	}
	return 0
}

// newWordsGrouper returns a grouper for types, or nil when they are not a
// composite of at most maxWordLeaves fixed-width leaves (a single plain
// column is the fixed grouper's).
func newWordsGrouper(types []arrow.DataType) *wordsGrouper {
	var leaves []wordLeaf
	for c, dt := range types {
		if st, ok := dt.(*arrow.StructType); ok {
			for f, field := range st.Fields() {
				w := wordWidth(field.Type)
				if w == 0 {
					return nil
				}
				leaves = append(leaves, wordLeaf{col: c, field: f, dt: field.Type, width: w})
			}
			continue
		}
		w := wordWidth(dt)
		if w == 0 {
			return nil
		}
		leaves = append(leaves, wordLeaf{col: c, field: -1, dt: dt, width: w})
	}
	if len(leaves) == 0 || len(leaves) > maxWordLeaves || len(types) == 1 && leaves[0].field < 0 {
		return nil
	}
	g := &wordsGrouper{types: types, leaves: leaves}
	g.initLayout(len(leaves) + 1)
	g.setSlots(make([]uint64, minWordsSlots))
	return g
}

// Null bits of the tuple's last word: leaf i null sets bit i; struct
// column c null sets bit 32+c (its fields' words and bits are then zero,
// as a null struct's fields do not make its key).
const structNullBit = 32

func (g *wordsGrouper) group(keys []arrow.Array, gids []int32) error {
	if len(keys) != len(g.types) {
		return fmt.Errorf("vector: grouping by %d key columns, got %d: %w", len(g.types), len(keys), ErrType)
	}
	if g.groupRuns(keys, gids) {
		g.countRows(gids)
		return nil
	}
	n := len(gids)
	if cap(g.cols) < g.nw {
		g.cols = make([][]uint64, g.nw)
	}
	g.cols = g.cols[:g.nw]
	for i := range g.cols {
		g.cols[i] = grow(g.cols[i], n)[:n]
	}
	nullw := g.cols[g.nw-1]
	clear(nullw)
	nulls := false // some row has a null bit
	for i, l := range g.leaves {
		col := keys[l.col]
		if col.Len() != n {
			return fmt.Errorf("vector: key column %d has %d rows, want %d: %w", l.col, col.Len(), n, ErrType)
		}
		if l.field >= 0 {
			st, ok := col.(*array.Struct)
			if !ok {
				return fmt.Errorf("vector: key column %d is a %s, want a struct: %w", l.col, col.DataType(), ErrType)
			}
			col = st.Field(l.field)
		}
		if err := leafWords(col, g.cols[i]); err != nil {
			return err
		}
		if col.NullN() > 0 {
			nulls = true
			bit := uint64(1) << i
			for r := range n {
				if col.IsNull(r) {
					g.cols[i][r] = 0
					nullw[r] |= bit
				}
			}
		}
	}
	for c, col := range keys {
		st, ok := col.(*array.Struct)
		if !ok || st.NullN() == 0 {
			continue
		}
		nulls = true
		bit := uint64(1) << (structNullBit + c)
		for r := range n {
			if !st.IsNull(r) {
				continue
			}
			nullw[r] |= bit
			for i, l := range g.leaves {
				if l.col == c {
					g.cols[i][r] = 0
					nullw[r] &^= 1 << i
				}
			}
		}
	}
	// Only the stored words are hashed and compared: the derived ones
	// follow from them for every group and, once checked, every row.
	g.fitLayout(n, nulls)
	hashes := g.hashStored(n)
	probeWords(g, gids, hashes, g.k)
	g.countRows(gids)
	return nil
}

// countRows adds the batch's rows to their groups' counts (unless noRows,
// or a growth of this batch was cancelled: its rows are then not counted).
func (g *wordsGrouper) countRows(gids []int32) {
	if g.growErr != nil || g.noRows || !g.growRows(len(g.tuples)/g.k) {
		return
	}
	rows := g.rows
	for _, gid := range gids {
		rows[gid]++
	}
}

// wordsProbeChunk is how many rows probeWords looks up before it adds the
// missing ones: large enough for many independent loads in flight, small
// enough that a key new in the batch is added before most of its later
// rows are looked up.
const wordsProbeChunk = 512

// probeWords finds or adds the tuple of every row (its k stored words,
// aggregate_words_layout.go), a chunk of rows at a time in two passes.
// The first looks every row up at its home slot only and does not write
// the table, so that the loads of successive rows do not wait on one
// another and their cache misses overlap: in a steady stream most rows
// find their group there, and the tag rules out other keys before their
// tuple is loaded. The second takes the
// chunk's remaining rows in order (collisions and new keys) through the
// full probe, which adds groups; ids are thus given in order of first
// appearance, as one sequential pass would give them.
func probeWords(g *wordsGrouper, gids []int32, hashes []uint64, k int) {
	cols := g.pcols[:k]
	for lo := 0; lo < len(hashes); lo += wordsProbeChunk {
		hi := min(lo+wordsProbeChunk, len(hashes))
		var misses int
		if k == 2 {
			misses = findHome2(g, cols[0][lo:hi], cols[1][lo:hi], gids[lo:hi], hashes[lo:hi])
		} else {
			misses = findHome(g, cols, gids, hashes, lo, hi, k)
		}
		if misses == 0 {
			continue
		}
		if need := len(g.tuples) + misses*k; need > cap(g.tuples) && !g.growTuples(need) {
			return // cancelled: groupContext returns growErr
		}
		if k == 2 {
			c0, c1 := cols[0], cols[1]
			for i := lo; i < hi; i++ {
				if gids[i] < 0 {
					gids[i] = probeWordsRow2(g, c0[i], c1[i], hashes[i])
					if g.growErr != nil {
						return // a growth was cancelled: groupContext returns it
					}
				}
			}
			continue
		}
		for i := lo; i < hi; i++ {
			if gids[i] < 0 {
				gids[i] = probeWordsRow(g, cols, i, hashes[i], k)
				if g.growErr != nil {
					return // a growth was cancelled: groupContext returns it
				}
			}
		}
	}
}

// findHome sets gids[i] for the rows in [lo, hi) whose key is in its home
// slot, -1 for the others, and returns how many are -1.
func findHome(g *wordsGrouper, cols [][]uint64, gids []int32, hashes []uint64, lo, hi, k int) int {
	slots, tuples, shift, misses := g.slots, g.tuples, g.shift, 0
	for i := lo; i < hi; i++ {
		h := hashes[i]
		if s := slots[h>>shift]; s != 0 && s&^slotGroup == h&^slotGroup {
			gid := int(uint32(s)) - 1
			t := tuples[gid*k : gid*k+k : gid*k+k]
			eq := true
			for j, col := range cols {
				if t[j] != col[i] {
					eq = false
					break
				}
			}
			if eq {
				gids[i] = int32(gid)
				continue
			}
		}
		gids[i] = -1
		misses++
	}
	return misses
}

// findHome2 is findHome for two stored words (a window and a key, the
// usual streaming key), on one chunk's rows, without the inner loop. A
// key pushed off its home slot is most often in the next, on the same
// cache line seven times in eight, so that slot is tried too.
func findHome2(g *wordsGrouper, c0, c1 []uint64, gids []int32, hashes []uint64) int {
	slots, tuples, shift, mask, misses := g.slots, g.tuples, g.shift, g.mask, 0
	c0, c1, gids = c0[:len(hashes)], c1[:len(hashes)], gids[:len(hashes)]
	for i, h := range hashes {
		p := int(h >> shift)
		s := slots[p]
		if s == 0 {
			gids[i] = -1
			misses++
			continue
		}
		tag := h &^ slotGroup
		if s&^slotGroup == tag {
			gid := int(uint32(s)) - 1
			if t := tuples[2*gid : 2*gid+2 : 2*gid+2]; t[0] == c0[i] && t[1] == c1[i] {
				gids[i] = int32(gid)
				continue
			}
		}
		if s = slots[(p+1)&mask]; s != 0 && s&^slotGroup == tag {
			gid := int(uint32(s)) - 1
			if t := tuples[2*gid : 2*gid+2 : 2*gid+2]; t[0] == c0[i] && t[1] == c1[i] {
				gids[i] = int32(gid)
				continue
			}
		}
		gids[i] = -1
		misses++
	}
	return misses
}

// slotGroup is the part of a slot's word that holds the group (+1); the
// rest holds the high half of the key's hash, which rules out most other
// keys met on the way without loading their tuples, and whose top bits
// are the home slot (so that a growth moves a slot without its key).
const slotGroup = 1<<32 - 1

// wordsSlot is the slot word of group gid whose key hashes to h.
func wordsSlot(h uint64, gid int32) uint64 { return h&^slotGroup | uint64(uint32(gid)+1) }

// probeWordsRow finds or adds the tuple of row i, with no row counted.
func probeWordsRow(g *wordsGrouper, cols [][]uint64, i int, h uint64, k int) int32 {
	if 2*(len(g.tuples)+k) > k*(g.mask+1) { // 2*(groups+1) > slots, without a division
		g.growTable()
	}
	slots, tuples, mask, tag := g.slots, g.tuples, g.mask, h&^slotGroup
	for p := int(h >> g.shift); ; p = (p + 1) & mask {
		s := slots[p]
		if s == 0 {
			gid := int32(len(tuples) / k)
			for _, col := range cols {
				tuples = append(tuples, col[i])
			}
			g.tuples = tuples
			slots[p] = wordsSlot(h, gid)
			return gid
		}
		if s&^slotGroup == tag {
			gid := int(uint32(s)) - 1
			t := tuples[gid*k : gid*k+k : gid*k+k]
			eq := true
			for j, col := range cols {
				if t[j] != col[i] {
					eq = false
					break
				}
			}
			if eq {
				return int32(gid)
			}
		}
	}
}

// probeWordsRow2 is probeWordsRow for two stored words w0, w1 (the
// window and key of the usual streaming key): the words compared without
// a loop. About a third of a windowed batch's rows come here (new
// groups, and keys neither in their home slot nor in the next).
func probeWordsRow2(g *wordsGrouper, w0, w1, h uint64) int32 {
	if len(g.tuples)+2 > g.mask+1 { // 2*(groups+1) > slots
		g.growTable()
	}
	slots, tuples, mask, tag := g.slots, g.tuples, g.mask, h&^slotGroup
	for p := int(h >> g.shift); ; p = (p + 1) & mask {
		s := slots[p]
		if s == 0 {
			gid := int32(len(tuples) / 2)
			g.tuples = append(tuples, w0, w1)
			slots[p] = tag | uint64(uint32(gid)+1)
			return gid
		}
		if s&^slotGroup == tag {
			gid := int(uint32(s)) - 1
			if t := tuples[2*gid : 2*gid+2 : 2*gid+2]; t[0] == w0 && t[1] == w1 {
				return int32(gid)
			}
		}
	}
}

// numSlots is the table's slot count (0 once released).
func (g *wordsGrouper) numSlots() int {
	if g.slots == nil {
		return 0
	}
	return g.mask + 1
}

// rehash places every group in a fresh table of size slots, from its
// tuple's hash (the hashes change with the stored words: widen).
func (g *wordsGrouper) rehash(size int) {
	k := g.k
	if size == len(g.slots) {
		clear(g.slots)
	} else {
		bigFree(&g.big, g.slots)
		g.setSlots(make([]uint64, size))
	}
	for gid := range g.numGroups() {
		placeSlot(g.slots, g.shift, g.mask, wordsSlot(g.tupleHash(g.tuples[gid*k:gid*k+k]), int32(gid)))
	}
}

func (g *wordsGrouper) numGroups() int { return len(g.tuples) / g.k }

// room is how many groups can be added before the table grows (a group
// is added to a table of s slots holding n only while 2*(n+1) <= s).
func (g *wordsGrouper) room() int { return max(g.numSlots()/2-g.numGroups(), 0) }
func (g *wordsGrouper) finish() []int64 {
	return growZero(g.rows, g.numGroups())
}

func (g *wordsGrouper) heapBytes() int64 {
	return sliceBytes(g.tuples) + sliceBytes(g.rows) + sliceBytes(g.slots) + sliceBytes(g.hashes) + int64(len(g.cols))*sliceBytes(g.hashes) + sliceBytes(g.nullw) +
		sliceBytes(g.full) + sliceBytes(g.ids) + sliceBytes(g.runStarts) + sliceBytes(g.runSplit) + sliceBytes(g.runGids)
}

func (g *wordsGrouper) keys(mem memory.Allocator, lo, hi int) ([]arrow.Array, error) {
	gids := make([]int32, hi-lo)
	for i := range gids {
		gids[i] = int32(lo + i)
	}
	return g.keysOf(mem, gids)
}

// keysOf rebuilds the key columns of the groups gids from their words.
// The null words of the groups are gathered once into a scratch slice;
// each leaf's values and each validity bitmap are then written by plain
// loops over it (no call per row: a streaming aggregation asks for the
// keys of every group it changes and of every group it evicts).
func (g *wordsGrouper) keysOf(mem memory.Allocator, gids []int32) (out []arrow.Array, err error) {
	n := len(gids)
	k := g.nw
	tuples, gids := g.fullTuples(gids)
	g.nullw = grow(g.nullw, n)
	nullw := g.nullw[:n]
	var anyNull uint64
	for r, gid := range gids {
		w := tuples[int(gid)*k+k-1]
		nullw[r] = w
		anyNull |= w
	}
	leafData := make([]arrow.ArrayData, len(g.leaves))
	defer func() {
		for _, d := range leafData {
			if d != nil {
				d.Release()
			}
		}
	}()
	for i, l := range g.leaves {
		leafData[i] = buildWords(mem, l, tuples, gids, k, i, nullw, anyNull)
	}
	out = make([]arrow.Array, 0, len(g.types))
	for c, dt := range g.types {
		var fields []arrow.ArrayData
		for i, l := range g.leaves {
			if l.col == c {
				fields = append(fields, leafData[i])
			}
		}
		st, ok := dt.(*arrow.StructType)
		if !ok {
			out = append(out, array.MakeFromData(fields[0]))
			continue
		}
		valid, nulls := wordsValidity(mem, nullw, anyNull, uint64(1)<<(structNullBit+c))
		d := array.NewData(st, n, []*memory.Buffer{valid}, fields, nulls, 0)
		if valid != nil {
			valid.Release()
		}
		out = append(out, array.MakeFromData(d))
		d.Release()
	}
	return out, nil
}

// wordsValidity builds the validity bitmap of the rows whose null word
// (nullw, by row; anyNull their union) has bit clear: nil when no row
// has it set.
func wordsValidity(mem memory.Allocator, nullw []uint64, anyNull, bit uint64) (*memory.Buffer, int) {
	if anyNull&bit == 0 {
		return nil, 0
	}
	n := len(nullw)
	buf := memory.NewResizableBuffer(mem)
	buf.Resize(int(bitutil.BytesForBits(int64(n))))
	bm := buf.Bytes()
	clear(bm)
	nulls := 0
	for r, w := range nullw {
		if w&bit == 0 {
			bitutil.SetBit(bm, r)
		} else {
			nulls++
		}
	}
	return buf, nulls
}

// buildWords makes the array of leaf l (word w of each tuple of k words)
// for the groups gids; nullw and anyNull are the groups' null words and
// their union (leaf w null sets bit w).
func buildWords(mem memory.Allocator, l wordLeaf, tuples []uint64, gids []int32, k, w int, nullw []uint64, anyNull uint64) arrow.ArrayData {
	n := len(gids)
	valid, nulls := wordsValidity(mem, nullw, anyNull, uint64(1)<<w)
	data := memory.NewResizableBuffer(mem)
	data.Resize(n * l.width)
	if n > 0 {
		b := data.Bytes()
		switch l.width {
		case 1:
			storeWords(unsafe.Slice((*uint8)(unsafe.Pointer(&b[0])), n), tuples, gids, k, w)
		case 2:
			storeWords(unsafe.Slice((*uint16)(unsafe.Pointer(&b[0])), n), tuples, gids, k, w)
		case 4:
			storeWords(unsafe.Slice((*uint32)(unsafe.Pointer(&b[0])), n), tuples, gids, k, w)
		default:
			storeWords(unsafe.Slice((*uint64)(unsafe.Pointer(&b[0])), n), tuples, gids, k, w)
		}
	}
	d := array.NewData(l.dt, n, []*memory.Buffer{valid, data}, nil, nulls, 0)
	if valid != nil {
		valid.Release()
	}
	data.Release()
	return d
}

// storeWords writes word w of the tuple of each group of gids, truncated
// to the value's width (the words of signed values are sign-extended, so
// truncation gives the value back).
func storeWords[T uint8 | uint16 | uint32 | uint64](dst []T, tuples []uint64, gids []int32, k, w int) {
	for r, gid := range gids[:len(dst)] {
		dst[r] = T(tuples[int(gid)*k+w])
	}
}

// leafWords writes the values of a fixed-width column as words (signed
// values sign-extended).
// ColumnWords writes the 64-bit word of each of the first len(out) rows of
// col, an integer, date, time, timestamp or duration column, to out: a
// signed value sign-extended, as the words grouper and the key encoder's
// fixed path hold it; a null row's word is whatever its slot holds.
func ColumnWords(col arrow.Array, out []uint64) error { return leafWords(col, out) }

func leafWords(col arrow.Array, out []uint64) error {
	switch a := col.(type) {
	case *array.Int8:
		toWords(a.Int8Values(), out)
	case *array.Int16:
		toWords(a.Int16Values(), out)
	case *array.Int32:
		toWords(a.Int32Values(), out)
	case *array.Int64:
		toWords(a.Int64Values(), out)
	case *array.Uint8:
		toWords(a.Uint8Values(), out)
	case *array.Uint16:
		toWords(a.Uint16Values(), out)
	case *array.Uint32:
		toWords(a.Uint32Values(), out)
	case *array.Uint64:
		toWords(a.Uint64Values(), out)
	case *array.Timestamp:
		toWords(a.TimestampValues(), out)
	case *array.Date32:
		toWords(a.Date32Values(), out)
	case *array.Date64:
		toWords(a.Date64Values(), out)
	case *array.Time32:
		toWords(a.Time32Values(), out)
	case *array.Time64:
		toWords(a.Time64Values(), out)
	case *array.Duration:
		toWords(a.DurationValues(), out)
	default:
		return fmt.Errorf("vector: key column of type %s is not fixed-width: %w", col.DataType(), ErrType)
	}
	return nil
}

type wordValue interface {
	~int8 | ~int16 | ~int32 | ~int64 | ~uint8 | ~uint16 | ~uint32 | ~uint64
}

func toWords[T wordValue](vals []T, out []uint64) {
	for i, v := range vals[:len(out)] {
		out[i] = uint64(v)
	}
}

// hashStored hashes the first n rows' stored key words (the derived ones
// follow from them) into g.hashes, reused across batches.
func (g *wordsGrouper) hashStored(n int) []uint64 {
	g.hashes = grow(g.hashes, n)[:n]
	hashes := g.hashes
	for i := range hashes {
		hashes[i] = tupleSeed
	}
	for _, w := range g.pcols {
		for i, v := range w[:n] {
			hi, lo := bits.Mul64(hashes[i]^v, tupleMul)
			hashes[i] = hi ^ lo
		}
	}
	if g.hashDrop != 0 {
		for i := range hashes {
			hashes[i] &^= g.hashDrop
		}
	}
	return hashes
}
