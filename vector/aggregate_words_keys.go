package vector

import (
	"encoding/binary"
	"fmt"
	"math/bits"

	"github.com/apache/arrow/go/v17/arrow"
)

// Store keys straight from the words. A streaming aggregation keeps, for
// every group new in an epoch, its key as the state stores encode it (a
// KeyEncoder's bytes) and the partition its hash names. Rebuilding the
// group's key columns from the words grouper's tuples only to encode
// them again (and to hash them with Spark's hash) cost about a seventh of
// the windowed workload's engine: the words already hold every value, so
// the bytes, the encoder's hash and Spark's hash are written from them
// here. The result is byte for byte the KeyEncoder's
// (TestGroupKeysMatchEncoder).

// GroupKeys holds the encoded keys of some groups of a live aggregation
// (LiveAggregate.EncodeKeys), in the order asked for. Its slices are
// reused by the next EncodeKeys.
type GroupKeys struct {
	// NoHashes, set by the caller before EncodeKeys, leaves the
	// KeyEncoder hashes out (Hash must not be called then): a caller that
	// places keys by Spark's hash alone does not read them, and they were
	// a third of the encoding's work.
	NoHashes bool

	buf    []byte
	offs   []int32
	hashes []uint64
	spark  []int32
	// scratch: by key, its null word and its write position
	nullw []uint64
	pos   []int32
}

// Len is the number of keys of the last EncodeKeys.
func (k *GroupKeys) Len() int { return max(len(k.offs)-1, 0) }

// Key returns key i's bytes: a view, valid until the next EncodeKeys.
func (k *GroupKeys) Key(i int) []byte { return k.buf[k.offs[i]:k.offs[i+1]] }

// Hash returns key i's KeyEncoder hash.
func (k *GroupKeys) Hash(i int) uint64 { return k.hashes[i] }

// SparkHash returns Spark's hash of key i's columns asked for (0 when
// none was asked for).
func (k *GroupKeys) SparkHash(i int) int32 {
	if k.spark == nil {
		return 0
	}
	return k.spark[i]
}

// EncodedBytes is the size of every key of the last EncodeKeys.
func (k *GroupKeys) EncodedBytes() int { return len(k.buf) }

// HeapBytes is the Go-heap memory k holds (its buffers' capacity).
func (k *GroupKeys) HeapBytes() int64 {
	return int64(cap(k.buf)) + int64(cap(k.offs)+cap(k.pos)+cap(k.spark))*4 + int64(cap(k.hashes)+cap(k.nullw))*8
}

// EncodeKeys encodes the keys of the groups gids into out exactly as enc
// would encode the key columns Keys(gids) returns (bytes and hashes), and,
// when sparkCols is not nil, Spark's hash of the key columns it names
// (HashRows of those columns), without building the columns. It reports
// false, and leaves out alone, when it cannot: the groups are not kept as
// words, enc is a value encoder or not one of the key's types, or a
// column's type has no word encoding here (the caller then encodes the
// columns).
func (l *LiveAggregate) EncodeKeys(enc *KeyEncoder, gids []int32, sparkCols []int, out *GroupKeys) (bool, error) {
	g, ok := l.b.grouper.(*wordsGrouper)
	if !ok || enc == nil || enc.Exact() || enc.IsFixed() || !g.keysLike(enc.Types(), sparkCols) {
		return false, nil
	}
	groups := g.numGroups()
	for _, gid := range gids {
		if gid < 0 || int(gid) >= groups {
			return false, fmt.Errorf("vector: live aggregation: key of group %d of %d", gid, groups)
		}
	}
	g.encodeKeys(gids, sparkCols, out)
	return true, nil
}

// keysLike reports whether the grouper's key types are types, each of its
// leaves has a word encoding here and the columns sparkCols are ones
// Spark's hash takes.
func (g *wordsGrouper) keysLike(types []arrow.DataType, sparkCols []int) bool {
	if len(types) != len(g.types) {
		return false
	}
	for i, t := range types {
		if !TypesEqual(t, Unwrap(g.types[i])) {
			return false
		}
		if st, ok := t.(*arrow.StructType); ok && st.NumFields() == 0 {
			return false // no leaf would carry its flag byte
		}
	}
	for _, l := range g.leaves {
		if keyWordWidth(l.dt) == 0 {
			return false
		}
	}
	for _, c := range sparkCols {
		if c < 0 || c >= len(g.types) {
			return false
		}
		for _, l := range g.leaves {
			if l.col == c && !sparkWordLeaf(l.dt) {
				return false
			}
		}
	}
	return true
}

// keyWordWidth is the width KeyEncoder writes a value of leaf type dt
// with, when that is the word's low bytes; 0 for the types it does not
// take or writes otherwise.
func keyWordWidth(dt arrow.DataType) int {
	switch dt.ID() {
	case arrow.INT8:
		return 1
	case arrow.INT16:
		return 2
	case arrow.INT32, arrow.DATE32:
		return 4
	case arrow.INT64, arrow.TIMESTAMP, arrow.DURATION:
		return 8
	}
	return 0
}

// sparkWordLeaf reports whether Spark's hash (hashColumn) takes a leaf of
// type dt from its word: as an int (INT8, INT16, INT32, DATE32) or a long
// (INT64, TIMESTAMP).
func sparkWordLeaf(dt arrow.DataType) bool {
	switch dt.ID() {
	case arrow.INT8, arrow.INT16, arrow.INT32, arrow.DATE32, arrow.INT64, arrow.TIMESTAMP:
		return true
	}
	return false
}

// encodeKeys writes the keys of gids (checked by EncodeKeys) into out:
// per key column, a struct's flag byte (1 valid, 0 null) and then its
// fields, each leaf a flag byte and, when valid, its value's low bytes
// little-endian, as KeyEncoder.encodeBytes does; the hash mixes each
// leaf's as writeKeys does (a null struct's fields count as null leaves).
// It goes leaf by leaf over all the keys, as the encoder goes column by
// column, so that each loop is short and the same for every key.
func (g *wordsGrouper) encodeKeys(gids []int32, sparkCols []int, out *GroupKeys) {
	n := len(gids)
	tuples, ids := g.fullTuples(gids)
	nw := g.nw
	var widths [maxWordLeaves]int
	full := 0 // the bytes of a key with no null
	for _, dt := range g.types {
		if _, ok := dt.(*arrow.StructType); ok {
			full++ // its flag byte
		}
	}
	for i, l := range g.leaves {
		widths[i] = keyWordWidth(l.dt)
		full += 1 + widths[i]
	}
	out.nullw = grow(out.nullw, n)[:n]
	nullw := out.nullw
	var anyNull uint64
	for r, id := range ids {
		w := tuples[int(id)*nw+nw-1]
		nullw[r] = w
		anyNull |= w
	}
	out.offs = grow(out.offs, n+1)[:n+1]
	offs := out.offs
	total := 0
	for r := range nullw {
		offs[r] = int32(total)
		total += full
		if nullw[r] != 0 {
			total -= g.nullBytes(nullw[r], widths[:len(g.leaves)])
		}
	}
	offs[n] = int32(total)
	out.buf = grow(out.buf, total)[:total]
	hashed := !out.NoHashes
	out.hashes = out.hashes[:0]
	if hashed {
		out.hashes = grow(out.hashes, n)[:n]
	}
	out.pos = grow(out.pos, n)[:n]
	buf, h, pos := out.buf, out.hashes, out.pos
	copy(pos, offs[:n])
	clear(h)
	col := -1
	for i, l := range g.leaves {
		hide := uint64(1) << i // the bits that make the leaf null
		if l.field >= 0 {
			hide |= 1 << (structNullBit + l.col)
			if l.col != col { // a struct column starts: its flag
				bit := uint64(1) << (structNullBit + l.col)
				for r, p := range pos {
					buf[p] = 1
					if nullw[r]&bit != 0 {
						buf[p] = 0
					}
					pos[r] = p + 1
				}
			}
		}
		col = l.col
		if anyNull&hide == 0 && widths[i] == 8 {
			if hashed {
				writeWords8(buf, pos, h, tuples, ids, nw, i)
			} else {
				writeWords8Bytes(buf, pos, tuples, ids, nw, i)
			}
			continue
		}
		w := widths[i]
		for r, id := range ids {
			p := pos[r]
			if nullw[r]&hide != 0 {
				buf[p], pos[r] = 0, p+1
				if hashed {
					h[r] = mixIn(h[r], nullHash)
				}
				continue
			}
			v := tuples[int(id)*nw+i]
			buf[p] = 1
			putWord(buf[p+1:p+1+int32(w)], v)
			pos[r] = p + 1 + int32(w)
			if hashed {
				h[r] = mixIn(h[r], hashWord(v, w))
			}
		}
	}
	for r := range h {
		h[r] = fmix64(h[r])
	}
	if sparkCols == nil {
		out.spark = nil
		return
	}
	out.spark = grow(out.spark, n)[:n]
	g.sparkHashes(tuples, ids, nullw, sparkCols, out.spark)
}

// writeWords8 writes leaf i (eight bytes, never null here) of every key,
// as encodeKeys' general loop does.
func writeWords8(buf []byte, pos []int32, h []uint64, tuples []uint64, ids []int32, nw, i int) {
	h = h[:len(pos)]
	for r, id := range ids[:len(pos)] {
		p := pos[r]
		v := tuples[int(id)*nw+i]
		buf[p] = 1
		binary.LittleEndian.PutUint64(buf[p+1:p+9], v)
		pos[r], h[r] = p+9, mixIn(h[r], hashWord(v, 8))
	}
}

// writeWords8Bytes is writeWords8 without the hashes (GroupKeys.NoHashes).
func writeWords8Bytes(buf []byte, pos []int32, tuples []uint64, ids []int32, nw, i int) {
	for r, id := range ids[:len(pos)] {
		p := pos[r]
		buf[p] = 1
		binary.LittleEndian.PutUint64(buf[p+1:p+9], tuples[int(id)*nw+i])
		pos[r] = p + 9
	}
}

// hashWord is hashBytes of the low width bytes of v little-endian (the
// bytes writeKeys hashes), without the bytes.
func hashWord(v uint64, width int) uint64 {
	h := uint64(width) * 0x87c37b91114253d5
	if width == 8 {
		h = bits.RotateLeft64(h^(v*0x4cf5ad432745937f), 31) * 0x9e3779b97f4a7c15
		return fmix64(h)
	}
	v &= 1<<(8*width) - 1
	h ^= v * 0x52dce729da3ed5b9
	return fmix64(h)
}

// nullBytes is how many value bytes the null leaves of a key with null
// word nullw leave out (widths by leaf).
func (g *wordsGrouper) nullBytes(nullw uint64, widths []int) int {
	less := 0
	for i, l := range g.leaves {
		if nullw&(1<<i) != 0 || l.field >= 0 && nullw&(1<<(structNullBit+l.col)) != 0 {
			less += widths[i]
		}
	}
	return less
}

// putWord writes the low len(v) bytes of w little-endian.
func putWord(v []byte, w uint64) {
	switch len(v) {
	case 1:
		v[0] = byte(w)
	case 2:
		binary.LittleEndian.PutUint16(v, uint16(w))
	case 4:
		binary.LittleEndian.PutUint32(v, uint32(w))
	default:
		binary.LittleEndian.PutUint64(v, w)
	}
}

// sparkHashes writes Spark's hash of the columns cols of each key (the
// tuples of nw words read by ids, nullw their null words), as HashRows of
// those columns: seed 42, each valid leaf mixed in column order, null
// leaves and null structs left out. It goes leaf by leaf, as HashRows.
func (g *wordsGrouper) sparkHashes(tuples []uint64, ids []int32, nullw []uint64, cols []int, out []int32) {
	nw := g.nw
	for r := range out {
		out[r] = hashSeed
	}
	for _, c := range cols {
		for i, l := range g.leaves {
			if l.col != c {
				continue
			}
			hide := uint64(1)<<i | uint64(1)<<(structNullBit+c)
			long := keyWordWidth(l.dt) == 8
			for r, id := range ids[:len(out)] {
				if nullw[r]&hide != 0 {
					continue
				}
				v := tuples[int(id)*nw+i]
				if long {
					out[r] = murmurLong(int64(v), out[r])
				} else {
					out[r] = murmurInt(int32(v), out[r])
				}
			}
		}
	}
}
