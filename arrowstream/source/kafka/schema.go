package kafka

import (
	"github.com/apache/arrow/go/v17/arrow"
	"github.com/apache/arrow/go/v17/arrow/array"
	"github.com/apache/arrow/go/v17/arrow/bitutil"
	"github.com/apache/arrow/go/v17/arrow/memory"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/arrowstream/arrowstream/vector"
)

// HeaderType is the element type of the headers column: Spark's
// array<struct<key: string, value: binary>>.
var HeaderType = arrow.StructOf(
	arrow.Field{Name: "key", Type: vector.String, Nullable: true},
	arrow.Field{Name: "value", Type: vector.Binary, Nullable: true},
)

// Schema returns Spark's Kafka record schema, with the headers column
// when includeHeaders is set.
func Schema(includeHeaders bool) *arrow.Schema {
	fields := []arrow.Field{
		{Name: "key", Type: vector.Binary, Nullable: true},
		{Name: "value", Type: vector.Binary, Nullable: true},
		{Name: "topic", Type: vector.String, Nullable: true},
		{Name: "partition", Type: vector.Int32, Nullable: true},
		{Name: "offset", Type: vector.Int64, Nullable: true},
		{Name: "timestamp", Type: vector.Timestamp, Nullable: true},
		{Name: "timestampType", Type: vector.Int32, Nullable: true},
	}
	if includeHeaders {
		fields = append(fields, arrow.Field{Name: "headers", Type: vector.ListOf(HeaderType), Nullable: true})
	}
	return arrow.NewSchema(fields, nil)
}

// recordBuilder turns fetched Kafka records into Arrow records. It sizes
// every buffer from the chunk first and then fills the raw buffers in one
// pass per column (no builder calls per record); only the rare headers
// column goes through an Arrow builder, which is reused from batch to
// batch.
type recordBuilder struct {
	mem       memory.Allocator
	schema    *arrow.Schema
	headers   *array.ListBuilder
	hdrStruct *array.StructBuilder
	hdrKey    *array.StringBuilder
	hdrValue  *array.BinaryBuilder
}

func newRecordBuilder(mem memory.Allocator, includeHeaders bool) *recordBuilder {
	b := &recordBuilder{mem: mem, schema: Schema(includeHeaders)}
	if includeHeaders {
		b.headers = array.NewListBuilder(mem, HeaderType)
		b.hdrStruct = b.headers.ValueBuilder().(*array.StructBuilder)
		b.hdrKey = b.hdrStruct.FieldBuilder(0).(*array.StringBuilder)
		b.hdrValue = b.hdrStruct.FieldBuilder(1).(*array.BinaryBuilder)
	}
	return b
}

// build returns the chunk's records as one Arrow record (owned by the
// caller).
func (b *recordBuilder) build(chunk []*kgo.Record) arrow.Record {
	n := len(chunk)
	cols := []arrow.Array{
		b.bytesColumn(chunk, false),
		b.bytesColumn(chunk, true),
		b.topicColumn(chunk),
	}
	part, off, ts, tsType := b.fixed(4*n), b.fixed(8*n), b.fixed(8*n), b.fixed(4*n)
	pv, ov := arrow.Int32Traits.CastFromBytes(part.Bytes()), arrow.Int64Traits.CastFromBytes(off.Bytes())
	tv, kv := arrow.Int64Traits.CastFromBytes(ts.Bytes()), arrow.Int32Traits.CastFromBytes(tsType.Bytes())
	for i, r := range chunk {
		pv[i] = r.Partition
		ov[i] = r.Offset
		tv[i] = r.Timestamp.UnixMicro()
		kv[i] = int32(r.Attrs.TimestampType())
	}
	for _, c := range []struct {
		buf *memory.Buffer
		dt  arrow.DataType
	}{{part, vector.Int32}, {off, vector.Int64}, {ts, vector.Timestamp}, {tsType, vector.Int32}} {
		d := array.NewData(c.dt, n, []*memory.Buffer{nil, c.buf}, nil, 0, 0)
		cols = append(cols, array.MakeFromData(d))
		d.Release()
		c.buf.Release()
	}
	if b.headers != nil {
		cols = append(cols, b.headerColumn(chunk))
	}
	rec := array.NewRecord(b.schema, cols, int64(n))
	for _, c := range cols {
		c.Release()
	}
	return rec
}

func (b *recordBuilder) fixed(size int) *memory.Buffer {
	buf := memory.NewResizableBuffer(b.mem)
	buf.Resize(size)
	return buf
}

// bytesColumn copies the records' keys (or values) into a binary column;
// a nil key or value is null.
func (b *recordBuilder) bytesColumn(chunk []*kgo.Record, values bool) arrow.Array {
	get := func(r *kgo.Record) []byte { // inlined
		if values {
			return r.Value
		}
		return r.Key
	}
	n := len(chunk)
	size, nulls := 0, 0
	for _, r := range chunk {
		v := get(r)
		size += len(v)
		if v == nil {
			nulls++
		}
	}
	offsBuf, data := b.fixed(4*(n+1)), b.fixed(size)
	offs, bytes := arrow.Int32Traits.CastFromBytes(offsBuf.Bytes()), data.Bytes()
	var valid *memory.Buffer
	var bits []byte
	if nulls > 0 {
		valid = b.fixed(int(bitutil.BytesForBits(int64(n))))
		bits = valid.Bytes()
		clear(bits)
	}
	pos := 0
	for i, r := range chunk {
		offs[i] = int32(pos)
		v := get(r)
		pos += copy(bytes[pos:], v)
		if v != nil && bits != nil {
			bitutil.SetBit(bits, i)
		}
	}
	offs[n] = int32(pos)
	d := array.NewData(vector.Binary, n, []*memory.Buffer{valid, offsBuf, data}, nil, nulls, 0)
	arr := array.MakeFromData(d)
	d.Release()
	offsBuf.Release()
	data.Release()
	if valid != nil {
		valid.Release()
	}
	return arr
}

// topicColumn is bytesColumn for the topic names.
func (b *recordBuilder) topicColumn(chunk []*kgo.Record) arrow.Array {
	n := len(chunk)
	size := 0
	for _, r := range chunk {
		size += len(r.Topic)
	}
	offsBuf, data := b.fixed(4*(n+1)), b.fixed(size)
	offs, bytes := arrow.Int32Traits.CastFromBytes(offsBuf.Bytes()), data.Bytes()
	pos := 0
	for i, r := range chunk {
		offs[i] = int32(pos)
		pos += copy(bytes[pos:], r.Topic)
	}
	offs[n] = int32(pos)
	d := array.NewData(vector.String, n, []*memory.Buffer{nil, offsBuf, data}, nil, 0, 0)
	arr := array.MakeFromData(d)
	d.Release()
	offsBuf.Release()
	data.Release()
	return arr
}

func (b *recordBuilder) headerColumn(chunk []*kgo.Record) arrow.Array {
	for _, r := range chunk {
		b.headers.Append(true)
		for _, h := range r.Headers {
			b.hdrStruct.Append(true)
			b.hdrKey.Append(h.Key)
			if h.Value == nil {
				b.hdrValue.AppendNull()
			} else {
				b.hdrValue.Append(h.Value)
			}
		}
	}
	return b.headers.NewArray()
}

func (b *recordBuilder) release() {
	if b.headers != nil {
		b.headers.Release()
	}
}
