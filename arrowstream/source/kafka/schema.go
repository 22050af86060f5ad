package kafka

import (
	"github.com/apache/arrow/go/v17/arrow"
	"github.com/apache/arrow/go/v17/arrow/array"
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

// recordBuilder turns fetched Kafka records into Arrow records. Its
// builders are reused from batch to batch (NewRecord resets them and
// keeps their capacity hint), so steady-state reading allocates only the
// Arrow buffers themselves.
type recordBuilder struct {
	schema    *arrow.Schema
	key       *array.BinaryBuilder
	value     *array.BinaryBuilder
	topic     *array.StringBuilder
	partition *array.Int32Builder
	offset    *array.Int64Builder
	ts        *array.TimestampBuilder
	tsType    *array.Int32Builder
	headers   *array.ListBuilder
	hdrStruct *array.StructBuilder
	hdrKey    *array.StringBuilder
	hdrValue  *array.BinaryBuilder
	n         int
}

func newRecordBuilder(mem memory.Allocator, includeHeaders bool) *recordBuilder {
	b := &recordBuilder{
		schema:    Schema(includeHeaders),
		key:       array.NewBinaryBuilder(mem, arrow.BinaryTypes.Binary),
		value:     array.NewBinaryBuilder(mem, arrow.BinaryTypes.Binary),
		topic:     array.NewStringBuilder(mem),
		partition: array.NewInt32Builder(mem),
		offset:    array.NewInt64Builder(mem),
		ts:        array.NewTimestampBuilder(mem, vector.Timestamp.(*arrow.TimestampType)),
		tsType:    array.NewInt32Builder(mem),
	}
	if includeHeaders {
		b.headers = array.NewListBuilder(mem, HeaderType)
		b.hdrStruct = b.headers.ValueBuilder().(*array.StructBuilder)
		b.hdrKey = b.hdrStruct.FieldBuilder(0).(*array.StringBuilder)
		b.hdrValue = b.hdrStruct.FieldBuilder(1).(*array.BinaryBuilder)
	}
	return b
}

// reserve prepares room for n more records whose keys and values take
// about keyBytes and valueBytes.
func (b *recordBuilder) reserve(n, keyBytes, valueBytes int) {
	b.key.Reserve(n)
	b.key.ReserveData(keyBytes)
	b.value.Reserve(n)
	b.value.ReserveData(valueBytes)
	b.topic.Reserve(n)
	b.partition.Reserve(n)
	b.offset.Reserve(n)
	b.ts.Reserve(n)
	b.tsType.Reserve(n)
}

// add appends one Kafka record.
func (b *recordBuilder) add(r *kgo.Record) {
	if r.Key == nil {
		b.key.AppendNull()
	} else {
		b.key.Append(r.Key)
	}
	if r.Value == nil {
		b.value.AppendNull()
	} else {
		b.value.Append(r.Value)
	}
	b.topic.Append(r.Topic)
	b.partition.UnsafeAppend(r.Partition)
	b.offset.UnsafeAppend(r.Offset)
	b.ts.UnsafeAppend(arrow.Timestamp(r.Timestamp.UnixMicro()))
	b.tsType.UnsafeAppend(int32(r.Attrs.TimestampType()))
	if b.headers != nil {
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
	b.n++
}

// record returns the records added since the last call (owned by the
// caller) and resets the builders.
func (b *recordBuilder) record() arrow.Record {
	cols := []arrow.Array{
		b.key.NewArray(), b.value.NewArray(), b.topic.NewArray(), b.partition.NewArray(),
		b.offset.NewArray(), b.ts.NewArray(), b.tsType.NewArray(),
	}
	if b.headers != nil {
		cols = append(cols, b.headers.NewArray())
	}
	rec := array.NewRecord(b.schema, cols, int64(b.n))
	for _, c := range cols {
		c.Release()
	}
	b.n = 0
	return rec
}

func (b *recordBuilder) release() {
	for _, r := range []interface{ Release() }{b.key, b.value, b.topic, b.partition, b.offset, b.ts, b.tsType} {
		r.Release()
	}
	if b.headers != nil {
		b.headers.Release()
	}
}
