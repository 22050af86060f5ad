package vectortest

import (
	"context"
	"io"

	"github.com/apache/arrow/go/v17/arrow"
	"github.com/apache/arrow/go/v17/arrow/array"
	"github.com/apache/arrow/go/v17/arrow/memory"
)

// EmptyData returns zero-length data of dt whose buffers are all nil, as
// Arrow allows for arrays of length 0 (and as IPC readers produce for empty
// batches): only the buffer slots the layout requires exist, children are
// themselves bufferless, and a dictionary type gets an empty bufferless
// dictionary. Kernels that read value buffers without a length check panic
// on it. The caller releases the result.
func EmptyData(dt arrow.DataType) *array.Data {
	bufs := make([]*memory.Buffer, len(dt.Layout().Buffers))
	var children []arrow.ArrayData
	switch t := dt.(type) {
	case arrow.NestedType:
		for _, f := range t.Fields() {
			children = append(children, EmptyData(f.Type))
		}
	}
	d := array.NewData(dt, 0, bufs, children, 0, 0)
	for _, c := range children {
		c.Release() // NewData retained them
	}
	if dict, ok := dt.(*arrow.DictionaryType); ok {
		vd := EmptyData(dict.ValueType)
		d.SetDictionary(vd)
		vd.Release()
	}
	return d
}

// EmptyArray is EmptyData as an array.
func EmptyArray(dt arrow.DataType) arrow.Array {
	d := EmptyData(dt)
	defer d.Release()
	return array.MakeFromData(d)
}

// EmptyRecord returns a zero-row record of schema whose columns have no
// buffers (see EmptyData). It allocates no Arrow memory.
func EmptyRecord(schema *arrow.Schema) arrow.Record {
	cols := make([]arrow.Array, schema.NumFields())
	for i, f := range schema.Fields() {
		cols[i] = EmptyArray(f.Type)
	}
	rec := array.NewRecord(schema, cols, 0)
	for _, c := range cols {
		c.Release() // NewRecord retained them
	}
	return rec
}

// Feed is a source operator that, unlike vector.Scan, passes zero-row
// records on: it yields an empty bufferless record (EmptyRecord) before,
// between and after the given records, so that an operator sees
// "empty, data, empty, data, empty" as it may from an IPC stream.
type Feed struct {
	schema  *arrow.Schema
	records []arrow.Record
	pos     int
	closed  bool
}

// NewFeed returns a Feed over records (it retains them) with empty records
// interleaved. With no records it yields two empty records.
func NewFeed(schema *arrow.Schema, records ...arrow.Record) *Feed {
	out := []arrow.Record{EmptyRecord(schema)}
	for _, r := range records {
		r.Retain()
		out = append(out, r, EmptyRecord(schema))
	}
	if len(records) == 0 {
		out = append(out, EmptyRecord(schema))
	}
	return &Feed{schema: schema, records: out}
}

// Schema returns the feed's schema.
func (f *Feed) Schema() *arrow.Schema { return f.schema }

// Next returns the next record, empty or not, then (nil, io.EOF).
func (f *Feed) Next(ctx context.Context) (arrow.Record, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if f.pos >= len(f.records) {
		return nil, io.EOF
	}
	r := f.records[f.pos]
	f.records[f.pos] = nil
	f.pos++
	return r, nil
}

// Close releases the records not yet returned; it is idempotent.
func (f *Feed) Close() error {
	if f.closed {
		return nil
	}
	f.closed = true
	for i, r := range f.records[f.pos:] {
		if r != nil {
			r.Release()
		}
		f.records[f.pos+i] = nil
	}
	return nil
}
