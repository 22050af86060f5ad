package pgwire

import (
	"encoding/binary"
	"fmt"
	"math"
	"time"

	"github.com/apache/arrow/go/v17/arrow"
	"github.com/apache/arrow/go/v17/arrow/array"
)

// Result columns are encoded a record batch at a time, column by column:
// each column's values of the batch go into one buffer by a loop typed for
// the column (encode_text.go, encode_binary.go), and the rows are then
// assembled from views into those buffers (and, for strings sent as text
// or binary, into the Arrow buffers themselves) as pgproto3 DataRow
// messages. No value allocates.

// Format codes of the protocol.
const (
	formatText   int16 = 0
	formatBinary int16 = 1
)

// encodeOpts are the session settings encodings depend on.
type encodeOpts struct {
	// zone renders timestamptz in text format (the session's TimeZone).
	zone *time.Location
}

// empty is the value of an empty, non-null field: DataRow sends a nil
// slice as NULL.
var empty = []byte{}

// column encodes one result column of each batch.
type column struct {
	typ    pgType
	format int16
	// batch fills data/ends (or view) from a batch's column.
	batch func(c *column, a arrow.Array)
	// elem appends one value in the column's format; the fallback of
	// batch for the types without a typed loop, and the element encoder
	// of arrays.
	elem elemFunc
	opts *encodeOpts

	arr   arrow.Array // the batch's column (borrowed while encoding it)
	data  []byte
	width int     // > 0: every value is width bytes of data
	ends  []int32 // else: value i is data[ends[i-1]:ends[i]]
	// view, when set, is the values' bytes with offs (Arrow string and
	// binary columns sent as they are).
	view []byte
	offs []int32
}

// elemFunc appends value i of a in a format.
type elemFunc func(dst []byte, a arrow.Array, i int, o *encodeOpts) []byte

// newColumn prepares the encoder of a column of type dt in format.
func newColumn(dt arrow.DataType, format int16, opts *encodeOpts) (*column, error) {
	t, err := typeOf(dt)
	if err != nil {
		return nil, err
	}
	c := &column{typ: t, format: format, opts: opts, data: make([]byte, 0, 4096)}
	if format == formatBinary {
		c.elem, err = binaryElem(dt)
		if err == nil {
			c.batch = binaryBatch(dt)
		}
	} else {
		c.elem, err = textElem(dt)
		if err == nil {
			c.batch = textBatch(dt)
		}
	}
	if err != nil {
		return nil, err
	}
	if c.batch == nil {
		c.batch = (*column).byElem
	}
	return c, nil
}

// load encodes a batch's column.
func (c *column) load(a arrow.Array) {
	c.arr = a
	c.data = c.data[:0]
	c.ends = c.ends[:0]
	c.width = 0
	c.view, c.offs = nil, nil
	c.batch(c, a)
}

// value is the encoded value of row i (nil: NULL).
func (c *column) value(i int) []byte {
	if c.arr.IsNull(i) {
		return nil
	}
	switch {
	case c.width > 0:
		return c.data[i*c.width : (i+1)*c.width : (i+1)*c.width]
	case c.offs != nil:
		b := c.view[c.offs[i]-c.offs[0] : c.offs[i+1]-c.offs[0]]
		if b == nil {
			return empty
		}
		return b
	}
	start := int32(0)
	if i > 0 {
		start = c.ends[i-1]
	}
	b := c.data[start:c.ends[i]]
	if b == nil {
		return empty
	}
	return b
}

// byElem encodes every value with the column's element function.
func (c *column) byElem(a arrow.Array) {
	for i := 0; i < a.Len(); i++ {
		if !a.IsNull(i) {
			c.data = c.elem(c.data, a, i, c.opts)
		}
		c.ends = append(c.ends, int32(len(c.data)))
	}
}

// rowEncoder encodes a result's rows.
type rowEncoder struct {
	cols []*column
	vals [][]byte
}

// newRowEncoder prepares the encoders of schema's columns; formats are the
// Bind result formats (none: all text; one: for every column).
func newRowEncoder(schema *arrow.Schema, formats []int16, opts *encodeOpts) (*rowEncoder, error) {
	n := schema.NumFields()
	if len(formats) > 1 && len(formats) != n {
		return nil, &pgError{code: "08P01", msg: fmt.Sprintf("%d result format codes for %d columns", len(formats), n)}
	}
	e := &rowEncoder{cols: make([]*column, n), vals: make([][]byte, n)}
	for i, f := range schema.Fields() {
		format := formatText
		switch len(formats) {
		case 0:
		case 1:
			format = formats[0]
		default:
			format = formats[i]
		}
		if format != formatText && format != formatBinary {
			return nil, &pgError{code: "08P01", msg: fmt.Sprintf("result format code %d of column %q: want 0 (text) or 1 (binary)", format, f.Name)}
		}
		c, err := newColumn(f.Type, format, opts)
		if err != nil {
			return nil, &pgError{code: "0A000", msg: fmt.Sprintf("column %q: %v", f.Name, err)}
		}
		e.cols[i] = c
	}
	return e, nil
}

// load encodes rec's columns; rec must stay alive while its rows are
// appended.
func (e *rowEncoder) load(rec arrow.Record) {
	for i, c := range e.cols {
		c.load(rec.Column(i))
	}
}

// row returns the values of row i (valid until the next load).
func (e *rowEncoder) row(i int) [][]byte {
	for j, c := range e.cols {
		e.vals[j] = c.value(i)
	}
	return e.vals
}

// fixed encodes a fixed-width column with put, one loop per type.
func fixed[T any](c *column, vals []T, width int, put func([]byte, T)) {
	n := len(vals)
	if cap(c.data) < n*width {
		c.data = make([]byte, n*width)
	}
	c.data = c.data[:n*width]
	for i, v := range vals {
		put(c.data[i*width:], v)
	}
	c.width = width
}

// float16Values reads a float16 column as float32s.
func float16Values(a *array.Float16) []float32 {
	out := make([]float32, a.Len())
	for i, v := range a.Values() {
		out[i] = v.Float32()
	}
	return out
}

// toMicros converts a timestamp or duration of unit to microseconds.
func toMicros(v int64, unit arrow.TimeUnit) int64 {
	switch unit {
	case arrow.Second:
		return v * 1_000_000
	case arrow.Millisecond:
		return v * 1000
	case arrow.Nanosecond:
		return v / 1000
	}
	return v
}

// Epoch shifts between Unix and PostgreSQL (2000-01-01) time.
const (
	pgEpochDays   = 10957
	pgEpochMicros = pgEpochDays * 86400 * 1_000_000
)

func putU16(b []byte, v uint16) { binary.BigEndian.PutUint16(b, v) }
func putU32(b []byte, v uint32) { binary.BigEndian.PutUint32(b, v) }
func putU64(b []byte, v uint64) { binary.BigEndian.PutUint64(b, v) }

func putF32(b []byte, v float32) { putU32(b, math.Float32bits(v)) }
