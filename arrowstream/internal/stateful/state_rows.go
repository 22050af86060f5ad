package stateful

import (
	"encoding/binary"
	"fmt"

	"github.com/apache/arrow/go/v17/arrow"
	"github.com/apache/arrow/go/v17/arrow/array"
	"github.com/apache/arrow/go/v17/arrow/memory"

	"github.com/arrowstream/arrowstream/vector"
)

// rowCodec encodes rows of a fixed set of columns to bytes and back, for
// state store keys and values. It reuses vector.KeyEncoder's encoding,
// which is unambiguous and decodable for every key type. A key codec
// (newRowCodec) normalizes floats as grouping does (-0.0 is 0.0, every NaN
// one NaN), so equal keys have equal bytes; a value codec (newValueCodec)
// has the same layout but keeps every float's bits, because a value read
// back from state must be the input's (a join's stored row, a kept
// max/first, a session's partial). Both decode the other's bytes, so
// checkpoints written before value codecs existed still load (their
// values come back normalized, as they were stored).
type rowCodec struct {
	schema *arrow.Schema
	enc    *vector.KeyEncoder
	cols   []int // columns of the input record that form the row

	scratch [9]byte

	// sparkHashable: Spark's hash takes every column (partitionMurmur3).
	// last holds the columns of the last encode (borrowed from its
	// record) and spark their Spark hashes, computed on first use.
	sparkHashable bool
	last          []arrow.Array
	spark         []int32
	sparkDone     bool
	// hashKeys, when set, are the positions among cols that the Spark
	// hash takes (hashOnly); the others only encode.
	hashKeys []int
}

// newRowCodec returns a key codec over columns cols of in: equal keys
// under Spark's grouping equality encode to equal bytes.
func newRowCodec(mem memory.Allocator, in *arrow.Schema, cols []int) (*rowCodec, error) {
	return newCodec(mem, in, cols, vector.NewKeyEncoder)
}

// newValueCodec returns a value codec over columns cols of in: the bytes
// keep every float's bits (-0.0, NaN payloads), so decoding gives back the
// input's values exactly. Its bytes must not be compared as keys.
func newValueCodec(mem memory.Allocator, in *arrow.Schema, cols []int) (*rowCodec, error) {
	return newCodec(mem, in, cols, vector.NewValueEncoder)
}

func newCodec(mem memory.Allocator, in *arrow.Schema, cols []int,
	newEncoder func(memory.Allocator, []arrow.DataType) (*vector.KeyEncoder, error)) (*rowCodec, error) {
	types := make([]arrow.DataType, len(cols))
	fields := make([]arrow.Field, len(cols))
	for i, c := range cols {
		f := in.Field(c)
		types[i] = f.Type
		fields[i] = arrow.Field{Name: f.Name, Type: vector.Unwrap(f.Type), Nullable: true}
	}
	enc, err := newEncoder(mem, types)
	if err != nil {
		return nil, err
	}
	hashable := true
	for _, t := range types {
		hashable = hashable && vector.HashRowsSupported(t)
	}
	return &rowCodec{schema: arrow.NewSchema(fields, nil), enc: enc, cols: cols, sparkHashable: hashable}, nil
}

// encode encodes the rows of rec; row i's bytes are at(i) until the next
// encode. With no columns every row encodes to the empty key.
func (c *rowCodec) encode(rec arrow.Record) error {
	cols := make([]arrow.Array, len(c.cols))
	for i, ci := range c.cols {
		cols[i] = rec.Column(ci)
	}
	return c.encodeCols(cols)
}

// encodeCols is encode over the row's columns themselves (borrowed: the
// caller holds them while it reads the rows' bytes and hashes).
func (c *rowCodec) encodeCols(cols []arrow.Array) error {
	c.last, c.sparkDone = cols, false
	if len(cols) == 0 {
		return nil
	}
	return c.enc.Encode(cols)
}

// sparkHash returns Spark's hash(key columns) of row i of the last encode
// (the caller holds the encoded record).
func (c *rowCodec) sparkHash(i int) int32 {
	if !c.sparkDone {
		n := 0
		if len(c.last) > 0 {
			n = c.last[0].Len()
		}
		if cap(c.spark) < n {
			c.spark = make([]int32, n)
		}
		c.spark = c.spark[:n]
		// The types were checked in newRowCodec (hashOnly): HashRows
		// cannot fail.
		if c.hashKeys != nil && len(c.hashKeys) == 0 {
			clear(c.spark) // no hashed key: partition 0, as the hop's
		} else {
			_ = vector.HashRows(c.hashed(), c.spark)
		}
		c.sparkDone = true
	}
	return c.spark[i]
}

// at returns the encoded bytes of row i of the last encode: a view, valid
// until the next call.
func (c *rowCodec) at(i int) []byte {
	if len(c.cols) == 0 {
		return []byte{}
	}
	if c.enc.IsFixed() {
		// One scratch buffer: callers (the state store) copy what they keep.
		w := c.enc.Fixed()[i]
		b := c.scratch[:]
		if c.enc.HasNull(i) {
			b[0] = 0
			return b[:1]
		}
		b[0] = 1
		for j := 0; j < 8; j++ {
			b[1+j] = byte(w >> (8 * j))
		}
		return b
	}
	return c.enc.Key(i)
}

// encodedBytes is the size of the last encode's rows (at(i) of every i).
func (c *rowCodec) encodedBytes() int {
	if len(c.cols) == 0 {
		return 0
	}
	if c.enc.IsFixed() {
		return len(c.scratch) * c.enc.Len()
	}
	return c.enc.EncodedBytes()
}

// hash returns row i's stable hash (0 for the empty key).
func (c *rowCodec) hash(i int) uint64 {
	if len(c.cols) == 0 {
		return 0
	}
	return c.enc.Hashes()[i]
}

// decode turns encoded rows back into columns of the codec's schema.
func (c *rowCodec) decode(mem memory.Allocator, rows [][]byte) ([]arrow.Array, error) {
	if len(c.cols) == 0 {
		return nil, nil
	}
	if c.enc.IsFixed() {
		words := make([]uint64, len(rows))
		nulls := make([]bool, len(rows))
		for i, r := range rows {
			switch len(r) {
			case 1:
				nulls[i] = true
			case 9:
				for j := 0; j < 8; j++ {
					words[i] |= uint64(r[1+j]) << (8 * j)
				}
			case 5:
				// A 32-bit value framed at its own width: the changelogs
				// of a min/max of an int32 or date column written before
				// the live aggregation framed them as the store does.
				if !narrow32(c.enc.Types()[0]) {
					return nil, fmt.Errorf("arrowstream: state row %d has %d bytes, want a fixed-width key of %s", i, len(r), c.enc.Types()[0])
				}
				words[i] = uint64(int64(int32(binary.LittleEndian.Uint32(r[1:]))))
			default:
				return nil, fmt.Errorf("arrowstream: state row %d has %d bytes, want a fixed-width key", i, len(r))
			}
		}
		a, err := c.enc.DecodeFixed(mem, words, nulls)
		if err != nil {
			return nil, err
		}
		return []arrow.Array{a}, nil
	}
	return c.enc.DecodeKeys(mem, rows)
}

// narrow32 reports whether t is a 32-bit type whose fixed-path word is
// its sign-extended value.
func narrow32(t arrow.DataType) bool {
	return t.ID() == arrow.INT32 || t.ID() == arrow.DATE32
}

// assemble builds a record of schema from key columns followed by value
// columns (both owned; released here).
func assemble(schema *arrow.Schema, keys, values []arrow.Array, n int) arrow.Record {
	cols := append(append([]arrow.Array(nil), keys...), values...)
	rec := array.NewRecord(schema, cols, int64(n))
	for _, c := range cols {
		c.Release()
	}
	return rec
}
