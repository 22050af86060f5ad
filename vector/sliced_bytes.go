package vector

import "github.com/apache/arrow/go/v17/arrow"

// SlicedRecordBytes is the bytes of rec's rows in its buffers, for a
// record that may be a zero-copy slice of larger buffers: exact for
// fixed-width and string/binary columns (validity bitmaps and offsets
// included), the rows' share of the buffers for other types. Callers that
// size messages or state by it add their own per-buffer overhead.
func SlicedRecordBytes(rec arrow.Record) int64 {
	var n int64
	for _, c := range rec.Columns() {
		n += SlicedDataBytes(c.Data())
	}
	return n
}

// SlicedDataBytes is SlicedRecordBytes for one column's data.
func SlicedDataBytes(d arrow.ArrayData) int64 {
	length, offset := int64(d.Len()), int64(d.Offset())
	bufs := d.Buffers()
	var n int64
	if len(bufs) > 0 && bufs[0] != nil {
		n += (length + 7) / 8
	}
	switch dt := d.DataType().(type) {
	case *arrow.BooleanType:
		return n + (length+7)/8
	case arrow.FixedWidthDataType:
		return n + length*int64(dt.BitWidth())/8
	case *arrow.StringType, *arrow.BinaryType:
		if len(bufs) < 3 || bufs[1] == nil || length == 0 {
			return n
		}
		offs := arrow.Int32Traits.CastFromBytes(bufs[1].Bytes())
		if int64(len(offs)) > offset+length {
			n += int64(offs[offset+length] - offs[offset])
		}
		return n + 4*(length+1)
	case *arrow.LargeStringType, *arrow.LargeBinaryType:
		if len(bufs) < 3 || bufs[1] == nil || length == 0 {
			return n
		}
		offs := arrow.Int64Traits.CastFromBytes(bufs[1].Bytes())
		if int64(len(offs)) > offset+length {
			n += offs[offset+length] - offs[offset]
		}
		return n + 8*(length+1)
	}
	// Nested and other types: the buffers' share of the rows (a struct's
	// children are sliced with it, so they are counted whole).
	var total int64
	for _, b := range bufs {
		if b != nil {
			total += int64(b.Len())
		}
	}
	for _, c := range d.Children() {
		total += SlicedDataBytes(c)
	}
	if all := offset + length; all > 0 && d.DataType().ID() != arrow.STRUCT {
		total = total * length / all
	}
	return n + total
}
