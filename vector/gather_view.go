package vector

import (
	"encoding/binary"
	"fmt"

	"github.com/apache/arrow/go/v17/arrow"
	"github.com/apache/arrow/go/v17/arrow/array"
	"github.com/apache/arrow/go/v17/arrow/memory"
)

// viewInline is the longest value a view header holds itself (Arrow's
// Utf8View / BinaryView layout: 4 bytes of length, then 12 bytes of value,
// or 4 bytes of prefix, a buffer index and an offset).
const viewInline = 12

// GatherChunksView gathers rows of string (or binary) chunks like
// GatherChunks, into a string_view (binary_view) array that references
// the chunks' data buffers instead of copying their bytes: each output row
// is a 16-byte header, values of up to 12 bytes held in it, longer ones
// pointing into the data buffer of their chunk, which the array retains.
// Only the chunks a long value comes from are retained. The array keeps
// those buffers alive for as long as it lives; a caller keeping it long
// decides when to compact it into owned bytes (MaterializeViews).
func GatherChunksView(mem memory.Allocator, chunks []arrow.Array, src, rows []int32) (arrow.Array, error) {
	if len(src) != len(rows) {
		return nil, fmt.Errorf("vector: view gather of %d rows with %d chunk numbers", len(rows), len(src))
	}
	if len(chunks) == 0 {
		return nil, fmt.Errorf("vector: view gather of %d rows from no chunks", len(rows))
	}
	dt := chunks[0].DataType()
	var out arrow.DataType
	switch dt.ID() {
	case arrow.STRING:
		out = arrow.BinaryTypes.StringView
	case arrow.BINARY:
		out = arrow.BinaryTypes.BinaryView
	default:
		return nil, fmt.Errorf("vector: view gather of %s", TypeName(dt))
	}
	for _, c := range chunks[1:] {
		if !arrow.TypeEqual(c.DataType(), dt) {
			return nil, fmt.Errorf("vector: view gather from chunks of %s and %s", TypeName(dt), TypeName(c.DataType()))
		}
	}
	validity, nulls := gatherChunksValidity(mem, chunks, src, rows)
	ins := binaryChunks(chunks)
	viewBuf := memory.NewResizableBuffer(mem)
	viewBuf.Resize(len(rows) * arrow.ViewHeaderSizeBytes)
	views := viewBuf.Bytes()[:len(rows)*arrow.ViewHeaderSizeBytes]
	clear(views)
	// index[k] is chunk k's data buffer's place among the output's data
	// buffers, -1 until a long value of it is gathered.
	index := make([]int32, len(chunks))
	for k := range index {
		index[k] = -1
	}
	bufs := []*memory.Buffer{validity, viewBuf}
	for o, r := range rows {
		k := src[o]
		in := ins[k]
		if in.offs == nil {
			continue
		}
		lo, hi := in.offs[r], in.offs[r+1]
		h := views[o*arrow.ViewHeaderSizeBytes : (o+1)*arrow.ViewHeaderSizeBytes]
		binary.LittleEndian.PutUint32(h, uint32(hi-lo))
		if hi-lo <= viewInline {
			// A null row's length is 0 in a valid source: the header stays zero.
			copy(h[4:], in.data[lo:hi])
			continue
		}
		copy(h[4:8], in.data[lo:lo+4])
		if index[k] < 0 {
			index[k] = int32(len(bufs) - 2)
			b := chunks[k].Data().Buffers()[2]
			b.Retain()
			bufs = append(bufs, b)
		}
		binary.LittleEndian.PutUint32(h[8:], uint32(index[k]))
		binary.LittleEndian.PutUint32(h[12:], uint32(lo))
	}
	data := array.NewData(out, len(rows), bufs, nil, nulls, 0)
	for _, b := range bufs {
		if b != nil {
			b.Release()
		}
	}
	defer data.Release()
	return array.MakeFromData(data), nil
}

// MaterializeViews returns a string_view (binary_view) array's values as a
// string (binary) array of owned bytes: one pass for the size, one
// allocation per buffer. Other arrays are returned retained, unchanged.
func MaterializeViews(mem memory.Allocator, a arrow.Array) (arrow.Array, error) {
	var out arrow.DataType
	switch a.DataType().ID() {
	case arrow.STRING_VIEW:
		out = arrow.BinaryTypes.String
	case arrow.BINARY_VIEW:
		out = arrow.BinaryTypes.Binary
	default:
		a.Retain()
		return a, nil
	}
	d := a.Data()
	n := d.Len()
	views := castSlice[arrow.ViewHeader](bufferBytes(d, 1))[d.Offset() : d.Offset()+n]
	dataBufs := d.Buffers()[2:]
	total := 0
	for i := range views {
		total += views[i].Len()
	}
	if total > 1<<31-1 {
		return nil, fmt.Errorf("vector: %d bytes of views exceed a %s array", total, TypeName(out))
	}
	offBuf := memory.NewResizableBuffer(mem)
	offBuf.Resize((n + 1) * 4)
	offs := castSlice[int32](offBuf.Bytes())[:n+1]
	valBuf := memory.NewResizableBuffer(mem)
	valBuf.Resize(total)
	vals := valBuf.Bytes()[:total]
	pos := int32(0)
	for i := range views {
		offs[i] = pos
		h := &views[i]
		var b []byte
		if h.IsInline() {
			b = h.InlineBytes()
		} else {
			off := int(h.BufferOffset())
			b = dataBufs[h.BufferIndex()].Bytes()[off : off+h.Len()]
		}
		pos += int32(copy(vals[pos:], b))
	}
	offs[n] = pos
	validity, nulls := copyValidity(mem, a)
	res := array.NewData(out, n, []*memory.Buffer{validity, offBuf, valBuf}, nil, nulls, 0)
	if validity != nil {
		validity.Release()
	}
	offBuf.Release()
	valBuf.Release()
	defer res.Release()
	return array.MakeFromData(res), nil
}
