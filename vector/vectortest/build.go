package vectortest

import (
	"fmt"

	"github.com/apache/arrow/go/v17/arrow"
	"github.com/apache/arrow/go/v17/arrow/array"
	"github.com/apache/arrow/go/v17/arrow/bitutil"
	"github.com/apache/arrow/go/v17/arrow/memory"

	"github.com/arrowstream/arrowstream/vector"
)

// Row is one row of Go values, in the forms vector.AppendValue accepts.
type Row []any

// Shape selects how BuildRecords lays out the data.
type Shape struct {
	// BatchSize splits the rows into records of at most this many rows
	// (0: one record).
	BatchSize int
	// Sliced builds every array with extra rows around the data and slices
	// them away, so that arrays have a non-zero offset.
	Sliced bool
	// GarbageUnderNulls stores non-zero values in the value slots of null
	// entries, so that kernels that read values under nulls are caught.
	GarbageUnderNulls bool
	// BitmapWithoutNulls gives every array a validity bitmap even when it has
	// no nulls, so that the "has a bitmap" path is exercised with all rows
	// valid.
	BitmapWithoutNulls bool
	// EmptyBatches feeds operators through a Feed instead of a Scan, so that
	// a zero-row record without buffers (EmptyRecord) comes before, between
	// and after the data records. Operator harness only.
	EmptyBatches bool
}

func (s Shape) String() string {
	str := fmt.Sprintf("batch=%d/sliced=%v/garbage=%v/bitmap=%v", s.BatchSize, s.Sliced, s.GarbageUnderNulls, s.BitmapWithoutNulls)
	if s.EmptyBatches {
		str += "/empty-batches"
	}
	return str
}

// Shapes is the standard set of layouts every operator and expression test
// runs in.
var Shapes = []Shape{
	{BatchSize: 1024},
	{BatchSize: 1},
	{BatchSize: 3},
	{BatchSize: 3, Sliced: true},
	{BatchSize: 1024, Sliced: true, GarbageUnderNulls: true},
	{BatchSize: 3, GarbageUnderNulls: true, BitmapWithoutNulls: true},
}

// BuildRecord builds one record of rows with schema; it panics on values
// that do not fit (a bug in the test).
func BuildRecord(mem memory.Allocator, schema *arrow.Schema, rows []Row) arrow.Record {
	recs := BuildRecords(mem, schema, rows, Shape{})
	if len(recs) == 1 {
		return recs[0]
	}
	cols := emptyColumns(mem, schema)
	rec := array.NewRecord(schema, cols, 0)
	for _, c := range cols {
		c.Release() // NewRecord retained them
	}
	return rec
}

// BuildRecords builds rows as records laid out as shape says. With no rows
// it returns no records.
func BuildRecords(mem memory.Allocator, schema *arrow.Schema, rows []Row, shape Shape) []arrow.Record {
	size := shape.BatchSize
	if size <= 0 {
		size = len(rows)
	}
	var out []arrow.Record
	for start := 0; start < len(rows); start += size {
		end := min(start+size, len(rows))
		out = append(out, buildOne(mem, schema, rows[start:end], shape))
	}
	return out
}

func emptyColumns(mem memory.Allocator, schema *arrow.Schema) []arrow.Array {
	cols := make([]arrow.Array, schema.NumFields())
	for i, f := range schema.Fields() {
		b := array.NewBuilder(mem, f.Type)
		cols[i] = b.NewArray()
		b.Release()
	}
	return cols
}

const padBefore, padAfter = 2, 1

func buildOne(mem memory.Allocator, schema *arrow.Schema, rows []Row, shape Shape) arrow.Record {
	cols := make([]arrow.Array, schema.NumFields())
	for c, f := range schema.Fields() {
		cols[c] = buildColumn(mem, f.Type, rows, c, shape)
	}
	rec := array.NewRecord(schema, cols, int64(len(rows)))
	for _, c := range cols {
		c.Release()
	}
	return rec
}

func buildColumn(mem memory.Allocator, dt arrow.DataType, rows []Row, c int, shape Shape) arrow.Array {
	b := array.NewBuilder(mem, dt)
	defer b.Release()
	garbage := garbageValue(dt)
	appendOne := func(v any) {
		if err := vector.AppendValue(b, v); err != nil {
			panic(fmt.Sprintf("vectortest: column %d: %v", c, err))
		}
	}
	if shape.Sliced {
		for i := 0; i < padBefore; i++ {
			appendOne(garbage)
		}
	}
	var nullAt []int
	for r, row := range rows {
		if c >= len(row) {
			panic(fmt.Sprintf("vectortest: row %d has %d values, want at least %d", r, len(row), c+1))
		}
		v := row[c]
		if v == nil && shape.GarbageUnderNulls && garbage != nil {
			nullAt = append(nullAt, r)
			appendOne(garbage)
			continue
		}
		appendOne(v)
	}
	if shape.Sliced {
		for i := 0; i < padAfter; i++ {
			appendOne(garbage)
		}
	}
	arr := b.NewArray()
	off := 0
	if shape.Sliced {
		off = padBefore
	}
	if len(nullAt) > 0 || shape.BitmapWithoutNulls {
		arr = withNulls(mem, arr, nullAt, off)
	}
	if shape.Sliced {
		s := array.NewSlice(arr, int64(off), int64(off+len(rows)))
		arr.Release()
		arr = s
	}
	return arr
}

// withNulls replaces arr's validity bitmap by one that also clears the bits
// at off+nullAt (and always has a bitmap).
func withNulls(mem memory.Allocator, arr arrow.Array, nullAt []int, off int) arrow.Array {
	defer arr.Release()
	d := arr.Data().(*array.Data)
	n := d.Len()
	bm := memory.NewResizableBuffer(mem)
	bm.Resize(int(bitutil.BytesForBits(int64(n))))
	bits := bm.Bytes()
	for i := 0; i < n; i++ {
		bitutil.SetBitTo(bits, i, arr.IsValid(i))
	}
	for _, r := range nullAt {
		bitutil.ClearBit(bits, off+r)
	}
	nulls := n - bitutil.CountSetBits(bits, 0, n)
	bufs := append([]*memory.Buffer(nil), d.Buffers()...)
	bufs[0] = bm
	nd := array.NewData(d.DataType(), n, bufs, d.Children(), nulls, 0)
	if dict := d.Dictionary(); dict != nil {
		nd.SetDictionary(dict)
	}
	bm.Release()
	defer nd.Release()
	return array.MakeFromData(nd)
}

// garbageValue is a non-zero value of dt stored under nulls and in padding;
// nil where the type has no simple value (the slot then stays null).
func garbageValue(dt arrow.DataType) any {
	switch dt.ID() {
	case arrow.BOOL:
		return true
	case arrow.INT32:
		return int32(-777_777)
	case arrow.INT64:
		return int64(-7_777_777_777)
	case arrow.FLOAT64:
		return -7.777e77
	case arrow.STRING:
		return "<garbage>"
	case arrow.BINARY:
		return []byte("<garbage>")
	case arrow.TIMESTAMP:
		return arrow.Timestamp(-7_777_777_777)
	case arrow.DATE32:
		return arrow.Date32(-77_777)
	case arrow.DICTIONARY:
		if vector.IsStringLike(dt) {
			return "<garbage>"
		}
	}
	return nil
}
