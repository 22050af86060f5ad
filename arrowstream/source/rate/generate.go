package rate

import (
	"context"
	"fmt"
	"io"
	"math"

	"github.com/apache/arrow/go/v17/arrow"
	"github.com/apache/arrow/go/v17/arrow/array"
	"github.com/apache/arrow/go/v17/arrow/memory"

	"github.com/arrowstream/arrowstream/vector"
)

// chunkRows bounds the rows of one generated record: an epoch of any size
// holds at most one chunk per consumer at a time, and ctx is checked
// between chunks.
const chunkRows = 64 * 1024

// generator is the operator both rate sources return from Read: it
// produces the values lo, lo+1, .. hi-1 lazily, partition by partition
// (values of partition p are lo+p, lo+p+parts, ..), one chunk per Next, so
// an epoch's memory is one chunk however many rows it has. A value v is
// stamped localStartMs + round((v-lo)*msPerValue) (msPerValue 0: every row
// carries localStartMs).
type generator struct {
	mem          memory.Allocator
	lo, hi       int64
	parts        int64
	localStartMs int64
	msPerValue   float64

	p   int64 // current partition
	v   int64 // next value of partition p
	err error // sticky: io.EOF at the end, or the cancellation
}

func newGenerator(mem memory.Allocator, lo, hi, parts, localStartMs int64, msPerValue float64) *generator {
	return &generator{mem: mem, lo: lo, hi: hi, parts: parts, localStartMs: localStartMs, msPerValue: msPerValue, v: lo}
}

// Schema implements vector.Operator.
func (g *generator) Schema() *arrow.Schema { return RateSchema }

// Next implements vector.Operator: the next chunk, or io.EOF at the end.
func (g *generator) Next(ctx context.Context) (arrow.Record, error) {
	if g.err != nil {
		return nil, g.err
	}
	if err := ctx.Err(); err != nil {
		g.err = fmt.Errorf("arrowstream: rate source: generating values from %d: %w", g.v, err)
		return nil, g.err
	}
	for g.p < g.parts && g.v >= g.hi {
		g.p++
		g.v = g.lo + g.p
	}
	if g.p >= g.parts {
		g.err = io.EOF
		return nil, g.err
	}
	n := min((g.hi-g.v+g.parts-1)/g.parts, chunkRows)
	ts := array.NewTimestampBuilder(g.mem, vector.Timestamp.(*arrow.TimestampType))
	vs := array.NewInt64Builder(g.mem)
	defer ts.Release()
	defer vs.Release()
	ts.Reserve(int(n))
	vs.Reserve(int(n))
	v := g.v
	if g.msPerValue == 0 {
		stamp := arrow.Timestamp(g.localStartMs * 1000)
		for i := int64(0); i < n; i++ {
			ts.UnsafeAppend(stamp)
			vs.UnsafeAppend(v)
			v += g.parts
		}
	} else {
		for i := int64(0); i < n; i++ {
			ms := g.localStartMs + int64(math.Round(float64(v-g.lo)*g.msPerValue))
			ts.UnsafeAppend(arrow.Timestamp(ms * 1000))
			vs.UnsafeAppend(v)
			v += g.parts
		}
	}
	g.v = v
	tsArr, vArr := ts.NewArray(), vs.NewArray()
	defer tsArr.Release()
	defer vArr.Release()
	return array.NewRecord(RateSchema, []arrow.Array{tsArr, vArr}, int64(vArr.Len())), nil
}

// Close implements vector.Operator (nothing is held between chunks).
func (g *generator) Close() error {
	if g.err == nil {
		g.err = io.EOF
	}
	return nil
}
