package nexmark

import (
	"github.com/apache/arrow/go/v17/arrow"
	"github.com/apache/arrow/go/v17/arrow/array"
	"github.com/apache/arrow/go/v17/arrow/memory"
)

// intCol and strCol are the generator's column buffers: plain Go slices
// reused from batch to batch (no allocation per event once they have
// grown), copied once per batch into Arrow buffers of the caller's
// allocator.
type intCol struct{ v []int64 }

func (c *intCol) reset() { c.v = c.v[:0] }

func (c *intCol) array(mem memory.Allocator, dt arrow.DataType) arrow.Array {
	buf := memory.NewResizableBuffer(mem)
	buf.Resize(len(c.v) * 8)
	copy(arrow.Int64Traits.CastFromBytes(buf.Bytes()), c.v)
	data := array.NewData(dt, len(c.v), []*memory.Buffer{nil, buf}, nil, 0, 0)
	buf.Release()
	defer data.Release()
	return array.MakeFromData(data)
}

type strCol struct {
	offsets []int32
	data    []byte
}

func (c *strCol) reset() {
	c.offsets = append(c.offsets[:0], 0)
	c.data = c.data[:0]
}

// end closes the value written since the last end.
func (c *strCol) end() { c.offsets = append(c.offsets, int32(len(c.data))) }

func (c *strCol) appendString(s string) {
	c.data = append(c.data, s...)
	c.end()
}

func (c *strCol) array(mem memory.Allocator) arrow.Array {
	n := len(c.offsets) - 1
	offs := memory.NewResizableBuffer(mem)
	offs.Resize(len(c.offsets) * 4)
	copy(arrow.Int32Traits.CastFromBytes(offs.Bytes()), c.offsets)
	vals := memory.NewResizableBuffer(mem)
	vals.Resize(len(c.data))
	copy(vals.Bytes(), c.data)
	data := array.NewData(arrow.BinaryTypes.String, n, []*memory.Buffer{nil, offs, vals}, nil, 0, 0)
	offs.Release()
	vals.Release()
	defer data.Release()
	return array.MakeFromData(data)
}

// char draws one character of a generated string: a lower-case letter,
// or with probability 1/13 the special character (a space in names and
// descriptions, '_' in urls). One draw serves both choices (the two 32-bit
// halves, scaled by multiplication; the bias is below 2^-32), which keeps
// the padding of every event cheap.
func (r *rng) char(special byte) byte {
	x := r.next()
	if (x>>32)*13>>32 == 0 {
		return special
	}
	return byte('a' + (x&0xffffffff)*26>>32)
}

// appendString appends a random string of 3 to maxLen-1 characters
// (the reference nextString) to dst.
func (r *rng) appendString(dst []byte, maxLen int64, special byte) []byte {
	n := 3 + r.intn(maxLen-3)
	for range n {
		dst = append(dst, r.char(special))
	}
	return dst
}

// appendExtra appends the padding that brings an event of size cur to an
// average of avg bytes: empty when the event is already larger, otherwise
// a uniform size within ±20% of the difference (the reference nextExtra).
func (r *rng) appendExtra(dst []byte, cur, avg int) []byte {
	if cur > avg {
		return dst
	}
	want := int64(avg - cur)
	delta := int64(float64(want)*0.2 + 0.5)
	size := want - delta
	if delta > 0 {
		size += r.intn(2 * delta)
	}
	for range size {
		dst = append(dst, r.char(' '))
	}
	return dst
}
