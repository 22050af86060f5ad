package plan

import (
	"context"
	"fmt"
	"io"

	"github.com/apache/arrow/go/v17/arrow"
	"github.com/apache/arrow/go/v17/arrow/array"
	"github.com/apache/arrow/go/v17/arrow/memory"

	"github.com/arrowstream/arrowstream/vector"
)

// Range is range(start, end, step): N rows of a bigint column id, from
// Start by Step. Its rows are made as they are read, rangeBatchRows at a
// time, on the query's allocator and under its context. (They were a
// Values node: up to 10M boxed rows built while planning, ~1 GB of heap
// outside every memory account and 30–40 s of CPU, then one 80 MB batch
// that a 64 MiB query limit refused anyway.)
type Range struct {
	Start, Step int64
	N           int
	schema      *arrow.Schema
}

// rangeBatchRows is the size of the batches Range makes (512 KiB).
const rangeBatchRows = 64 << 10

func newRange(start, step int64, n int) *Range {
	return &Range{Start: start, Step: step, N: n,
		schema: arrow.NewSchema([]arrow.Field{{Name: "id", Type: vector.Int64}}, nil)}
}

func (n *Range) Schema() *arrow.Schema { return n.schema }

func (*Range) Children() []Node { return nil }

func (*Range) IsStreaming() bool { return false }

func (n *Range) String() string {
	return fmt.Sprintf("Range (%d, %d, step=%d) %s", n.Start, n.Start+int64(n.N)*n.Step, n.Step, fieldNames(n.schema))
}

// rangeOp makes a Range's rows.
type rangeOp struct {
	mem    memory.Allocator
	schema *arrow.Schema
	next   int64 // the next row's value
	step   int64
	left   int
}

func newRangeOp(mem memory.Allocator, n *Range) *rangeOp {
	return &rangeOp{mem: mem, schema: n.schema, next: n.Start, step: n.Step, left: n.N}
}

func (o *rangeOp) Schema() *arrow.Schema { return o.schema }

func (o *rangeOp) Next(ctx context.Context) (arrow.Record, error) {
	if o.left <= 0 {
		return nil, io.EOF
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	k := min(o.left, rangeBatchRows)
	buf := memory.NewResizableBuffer(o.mem)
	buf.Resize(k * 8)
	vals := arrow.Int64Traits.CastFromBytes(buf.Bytes())
	v := o.next
	for i := range vals {
		vals[i] = v
		v += o.step // past the last value it may wrap; it is not used
	}
	o.next, o.left = v, o.left-k
	data := array.NewData(o.schema.Field(0).Type, k, []*memory.Buffer{nil, buf}, nil, 0, 0)
	buf.Release()
	col := array.MakeFromData(data)
	data.Release()
	rec := array.NewRecord(o.schema, []arrow.Array{col}, int64(k))
	col.Release()
	return rec, nil
}

func (o *rangeOp) Close() error {
	o.left = 0
	return nil
}
