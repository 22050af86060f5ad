package vector

import (
	"fmt"

	"github.com/apache/arrow/go/v17/arrow"
	"github.com/apache/arrow/go/v17/arrow/array"
	"github.com/apache/arrow/go/v17/arrow/bitutil"
	"github.com/apache/arrow/go/v17/arrow/memory"
)

// GatherChunks builds one array whose row o is row rows[o] of
// chunks[src[o]]: a Take over several arrays of one type at once. A join
// whose matches read many stored batches (one per epoch and partition of
// a streaming join's state) so assembles its output with one gather per
// column instead of one Take per batch and column, which for a few rows a
// batch cost mostly allocations. Fixed-width, boolean, string and binary
// columns are gathered in one pass; other types go through a Take per
// chunk, a concatenation and a permutation. Every index must be a valid
// row of its chunk (the caller built them from the chunks).
func GatherChunks(mem memory.Allocator, chunks []arrow.Array, src, rows []int32) (arrow.Array, error) {
	if len(src) != len(rows) {
		return nil, fmt.Errorf("vector: gather of %d rows with %d chunk numbers", len(rows), len(src))
	}
	if len(chunks) == 0 {
		return nil, fmt.Errorf("vector: gather of %d rows from no chunks", len(rows))
	}
	dt := chunks[0].DataType()
	for _, c := range chunks[1:] {
		if !arrow.TypeEqual(c.DataType(), dt) {
			return nil, fmt.Errorf("vector: gather from chunks of %s and %s", TypeName(dt), TypeName(c.DataType()))
		}
	}
	if len(chunks) == 1 && dt.ID() != arrow.STRING && dt.ID() != arrow.BINARY {
		return Take(mem, chunks[0], rows)
	}
	// Strings from one chunk too go through gatherChunksBinary, which maps
	// a large output's fresh pages in at once (prefault): a join's output
	// gathered from one stored batch is kept by the sink as well; Take,
	// which serves every operator, does not.
	var data *array.Data
	switch dt.ID() {
	case arrow.INT8, arrow.UINT8:
		data = gatherChunksFixed[uint8](mem, chunks, src, rows)
	case arrow.INT16, arrow.UINT16:
		data = gatherChunksFixed[uint16](mem, chunks, src, rows)
	case arrow.INT32, arrow.UINT32, arrow.FLOAT32, arrow.DATE32:
		data = gatherChunksFixed[uint32](mem, chunks, src, rows)
	case arrow.INT64, arrow.UINT64, arrow.FLOAT64, arrow.TIMESTAMP, arrow.DATE64, arrow.DURATION:
		data = gatherChunksFixed[uint64](mem, chunks, src, rows)
	case arrow.DECIMAL128:
		data = gatherChunksFixed[[16]byte](mem, chunks, src, rows)
	case arrow.BOOL:
		data = gatherChunksBool(mem, chunks, src, rows)
	case arrow.STRING, arrow.BINARY:
		data = gatherChunksBinary(mem, chunks, src, rows)
	default:
		return gatherChunksByTake(mem, chunks, src, rows)
	}
	defer data.Release()
	return array.MakeFromData(data), nil
}

// GatherChunksSlabBytes is how many bytes a SlabAllocator needs to serve
// every buffer of a GatherChunks of n rows of type dt except string and
// binary data: a validity bitmap (counted whether or not a row is null),
// the values or offsets, each rounded up to 64 bytes as arrow's buffers
// request them. Types gathered otherwise count 0.
func GatherChunksSlabBytes(dt arrow.DataType, n int) int {
	bitmap := roundUp64(int(bitutil.BytesForBits(int64(n))))
	switch dt.ID() {
	case arrow.INT8, arrow.UINT8:
		return bitmap + roundUp64(n)
	case arrow.INT16, arrow.UINT16:
		return bitmap + roundUp64(2*n)
	case arrow.INT32, arrow.UINT32, arrow.FLOAT32, arrow.DATE32:
		return bitmap + roundUp64(4*n)
	case arrow.INT64, arrow.UINT64, arrow.FLOAT64, arrow.TIMESTAMP, arrow.DATE64, arrow.DURATION:
		return bitmap + roundUp64(8*n)
	case arrow.DECIMAL128:
		return bitmap + roundUp64(16*n)
	case arrow.BOOL:
		return 2 * bitmap
	case arrow.STRING, arrow.BINARY:
		return bitmap + roundUp64(4*(n+1))
	}
	return 0
}

// chunkBits are a chunk's validity bitmap (nil: no nulls) and offset.
type chunkBits struct {
	bits []byte
	off  int
}

// gatherChunksValidity returns the gathered validity bitmap, or nil when
// no gathered row is null.
func gatherChunksValidity(mem memory.Allocator, chunks []arrow.Array, src, rows []int32) (*memory.Buffer, int) {
	cb := make([]chunkBits, len(chunks))
	hasNulls := false
	for k, c := range chunks {
		if c.NullN() > 0 {
			cb[k] = chunkBits{c.NullBitmapBytes(), c.Data().Offset()}
			hasNulls = true
		}
	}
	if !hasNulls {
		return nil, 0
	}
	buf := memory.NewResizableBuffer(mem)
	buf.Resize(int(bitutil.BytesForBits(int64(len(rows)))))
	out := buf.Bytes()
	clear(out)
	nulls := 0
	for o, r := range rows {
		b := cb[src[o]]
		if b.bits == nil || bitutil.BitIsSet(b.bits, b.off+int(r)) {
			out[o>>3] |= 1 << (o & 7)
		} else {
			nulls++
		}
	}
	if nulls == 0 {
		buf.Release()
		return nil, 0
	}
	return buf, nulls
}

func gatherChunksFixed[T uint8 | uint16 | uint32 | uint64 | [16]byte](mem memory.Allocator, chunks []arrow.Array, src, rows []int32) *array.Data {
	validity, nulls := gatherChunksValidity(mem, chunks, src, rows)
	ins := make([][]T, len(chunks))
	for k, c := range chunks {
		d := c.Data()
		if d.Len() > 0 {
			ins[k] = castSlice[T](bufferBytes(d, 1))[d.Offset() : d.Offset()+d.Len()]
		}
	}
	var zero T
	vals := memory.NewResizableBuffer(mem)
	vals.Resize(len(rows) * int(sizeOf(zero)))
	out := castSlice[T](vals.Bytes())[:len(rows)]
	for o, r := range rows {
		out[o] = ins[src[o]][r]
	}
	data := array.NewData(chunks[0].DataType(), len(rows), []*memory.Buffer{validity, vals}, nil, nulls, 0)
	if validity != nil {
		validity.Release()
	}
	vals.Release()
	return data
}

func gatherChunksBool(mem memory.Allocator, chunks []arrow.Array, src, rows []int32) *array.Data {
	validity, nulls := gatherChunksValidity(mem, chunks, src, rows)
	ins := make([]chunkBits, len(chunks))
	for k, c := range chunks {
		d := c.Data()
		if d.Len() > 0 {
			ins[k] = chunkBits{bufferBytes(d, 1), d.Offset()}
		}
	}
	vals := memory.NewResizableBuffer(mem)
	vals.Resize(int(bitutil.BytesForBits(int64(len(rows)))))
	out := vals.Bytes()
	clear(out)
	for o, r := range rows {
		if in := ins[src[o]]; bitutil.BitIsSet(in.bits, in.off+int(r)) {
			out[o>>3] |= 1 << (o & 7)
		}
	}
	data := array.NewData(chunks[0].DataType(), len(rows), []*memory.Buffer{validity, vals}, nil, nulls, 0)
	if validity != nil {
		validity.Release()
	}
	vals.Release()
	return data
}

// binaryChunk is a chunk's offsets (from its first row) and values.
type binaryChunk struct {
	offs []int32
	data []byte
}

// binaryChunks reads each string/binary chunk's offsets and values (empty
// for an empty chunk), for the copying and the view gathers alike.
func binaryChunks(chunks []arrow.Array) []binaryChunk {
	ins := make([]binaryChunk, len(chunks))
	for k, c := range chunks {
		d := c.Data()
		if d.Len() == 0 {
			continue
		}
		ins[k].offs = castSlice[int32](bufferBytes(d, 1))[d.Offset() : d.Offset()+d.Len()+1]
		if b := d.Buffers()[2]; b != nil {
			ins[k].data = b.Bytes()
		}
	}
	return ins
}

func gatherChunksBinary(mem memory.Allocator, chunks []arrow.Array, src, rows []int32) *array.Data {
	validity, nulls := gatherChunksValidity(mem, chunks, src, rows)
	ins := binaryChunks(chunks)
	total := 0
	for o, r := range rows {
		in := ins[src[o]]
		total += int(in.offs[r+1] - in.offs[r])
	}
	offBuf := memory.NewResizableBuffer(mem)
	offBuf.Resize((len(rows) + 1) * 4)
	offs := castSlice[int32](offBuf.Bytes())[:len(rows)+1]
	// Strings' data stay out of a slab (sized without them): prefaulted
	// on their own below.
	dataMem := mem
	if s, ok := mem.(*SlabAllocator); ok {
		dataMem = s.under
	}
	dataBuf := memory.NewResizableBuffer(dataMem)
	dataBuf.Resize(total)
	out := dataBuf.Bytes()
	// A join's gathered strings are most of its output and are kept (a
	// memory sink holds them): usually fresh pages, mapped in at once.
	prefault(out)
	pos := int32(0)
	for o, r := range rows {
		in := ins[src[o]]
		offs[o] = pos
		lo, hi := in.offs[r], in.offs[r+1]
		copy(out[pos:], in.data[lo:hi])
		pos += hi - lo
	}
	offs[len(rows)] = pos
	data := array.NewData(chunks[0].DataType(), len(rows), []*memory.Buffer{validity, offBuf, dataBuf}, nil, nulls, 0)
	if validity != nil {
		validity.Release()
	}
	offBuf.Release()
	dataBuf.Release()
	return data
}

// gatherChunksByTake is GatherChunks for any type: each chunk's rows
// taken in output order, concatenated, and put in place by one more Take.
func gatherChunksByTake(mem memory.Allocator, chunks []arrow.Array, src, rows []int32) (arrow.Array, error) {
	count := make([]int32, len(chunks)+1)
	for _, k := range src {
		count[k+1]++
	}
	for k := 1; k <= len(chunks); k++ {
		count[k] += count[k-1]
	}
	// perm[o]: where output row o lands in the concatenation.
	perm := make([]int32, len(rows))
	sel := make([][]int32, len(chunks))
	for o, k := range src {
		perm[o] = count[k] + int32(len(sel[k]))
		sel[k] = append(sel[k], rows[o])
	}
	var parts []arrow.Array
	defer func() { releaseArrays(parts) }()
	for k, c := range chunks {
		if len(sel[k]) == 0 {
			continue
		}
		p, err := Take(mem, c, sel[k])
		if err != nil {
			return nil, err
		}
		parts = append(parts, p)
	}
	if len(parts) == 0 {
		return Take(mem, chunks[0], nil)
	}
	cat, err := Concatenate(parts, mem)
	if err != nil {
		return nil, err
	}
	defer cat.Release()
	return Take(mem, cat, perm)
}
