package vector

import (
	"bytes"

	"github.com/apache/arrow/go/v17/arrow"
	"github.com/apache/arrow/go/v17/arrow/array"
	"github.com/apache/arrow/go/v17/arrow/memory"
)

// Dictionary specialisations: a predicate over a dictionary-encoded column
// is evaluated once per dictionary entry into a table, and the rows then
// look their index up in that table. This is the hot path of filters such
// as event_type = 'view' over a dictionary<int8, string> column.

// cmpDict compares a dictionary<int*, string> column with a constant: each
// dictionary entry is compared once, then the indices are mapped through
// the resulting table, 64 rows per stored word.
type cmpDict struct {
	op    CompareOp
	c     []byte
	table []uint8 // scratch, reused across batches
}

func (k *cmpDict) prepare(mem memory.Allocator, la arrow.Array) (arrow.Array, cmpKernel, error) {
	d := la.(*array.Dictionary)
	if d.Dictionary().NullN() == 0 {
		la.Retain()
		return la, k, nil
	}
	plain, err := DecodeDictionary(mem, la)
	if err != nil {
		return nil, nil, err
	}
	return plain, &cmpBytes{op: k.op, c: k.c}, nil
}

func (k *cmpDict) compare(la, _ arrow.Array, _ int, out []uint64) {
	d := la.(*array.Dictionary)
	offs, data := binaryValues(d.Dictionary())
	m := d.Dictionary().Len()
	k.table = dictTable(k.table, m, d.Indices())
	mask := cmpMask(k.op)
	for e := 0; e < m; e++ {
		k.table[e] = uint8(mask >> uint(bytes.Compare(data[offs[e]:offs[e+1]], k.c)+1) & 1)
	}
	dictLookup(d.Indices(), k.table, out)
}

// dictTable returns a cleared table for a dictionary of m entries, reusing
// buf. Tables for 8-bit indices have 256 entries so that any index byte,
// even garbage under a null, is in bounds without a check.
func dictTable(buf []uint8, m int, indices arrow.Array) []uint8 {
	size := max(m, 1)
	switch indices.DataType().ID() {
	case arrow.INT8, arrow.UINT8:
		size = 256
	}
	if cap(buf) < size {
		buf = make([]uint8, size)
	}
	buf = buf[:size]
	clear(buf)
	return buf
}

// dictLookup sets bit i of out to table[indices[i]] (0 or 1).
func dictLookup(indices arrow.Array, table []uint8, out []uint64) {
	switch ix := indices.(type) {
	case *array.Int8:
		lookup8(ix.Int8Values(), (*[256]uint8)(table), out)
	case *array.Uint8:
		lookup8(ix.Uint8Values(), (*[256]uint8)(table), out)
	case *array.Int16:
		lookupWords(ix.Int16Values(), table, out)
	case *array.Uint16:
		lookupWords(ix.Uint16Values(), table, out)
	case *array.Int32:
		lookupWords(ix.Int32Values(), table, out)
	case *array.Uint32:
		lookupWords(ix.Uint32Values(), table, out)
	case *array.Int64:
		lookupWords(ix.Int64Values(), table, out)
	case *array.Uint64:
		lookupWords(ix.Uint64Values(), table, out)
	default:
		clear(out)
	}
}

// lookup8 maps 8-bit indices through a 256-entry table: any index byte,
// garbage under a null included, is in bounds, so there is no check. The
// blocks of eight lookups use constant shifts (see the comparison
// kernels).
func lookup8[I int8 | uint8](idx []I, t *[256]uint8, out []uint64) {
	full := len(idx) / 64
	for w := range full {
		blk := idx[w*64 : w*64+64]
		var word uint64
		for j := 0; j < 64; j += 8 {
			x := (*[8]I)(blk[j:])
			word |= (uint64(t[uint8(x[0])]) | uint64(t[uint8(x[1])])<<1 | uint64(t[uint8(x[2])])<<2 | uint64(t[uint8(x[3])])<<3 |
				uint64(t[uint8(x[4])])<<4 | uint64(t[uint8(x[5])])<<5 | uint64(t[uint8(x[6])])<<6 | uint64(t[uint8(x[7])])<<7) << uint(j)
		}
		out[w] = word
	}
	if full < len(out) {
		var word uint64
		for j, ix := range idx[full*64:] {
			word |= uint64(t[uint8(ix)]) << uint(j)
		}
		out[full] = word
	}
}

// lookupWords clamps each index into the table (a branch-free min), so that
// garbage indices under nulls cannot read out of bounds.
func lookupWords[I int16 | uint16 | int32 | uint32 | int64 | uint64](idx []I, table []uint8, out []uint64) {
	last := uint64(len(table) - 1)
	at := func(ix I) uint64 { return uint64(table[min(uint64(ix), last)]) }
	full := len(idx) / 64
	for w := range full {
		blk := idx[w*64 : w*64+64]
		var word uint64
		for j := 0; j < 64; j += 8 {
			x := (*[8]I)(blk[j:])
			word |= (at(x[0]) | at(x[1])<<1 | at(x[2])<<2 | at(x[3])<<3 |
				at(x[4])<<4 | at(x[5])<<5 | at(x[6])<<6 | at(x[7])<<7) << uint(j)
		}
		out[w] = word
	}
	if full < len(out) {
		var word uint64
		for j, ix := range idx[full*64:] {
			word |= at(ix) << uint(j)
		}
		out[full] = word
	}
}
