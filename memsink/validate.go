package memsink

import (
	"encoding/binary"
	"fmt"

	"github.com/apache/arrow/go/v17/arrow"
	"github.com/apache/arrow/go/v17/arrow/array"
	"github.com/apache/arrow/go/v17/arrow/bitutil"
)

// arrow/go v17 has no full validation of decoded arrays, and its IPC reader
// accepts buffers too short for their arrays and offsets past the data;
// reading such an array panics later, in a reader's goroutine. Persisted
// files are therefore checked structurally before their records join a
// table: buffer sizes, offsets, dictionary indices, child lengths.

// maxValidateLen bounds offsets and lengths so that byte counts (length
// times at most 8, plus one) cannot overflow; no buffer is that large.
const maxValidateLen = 1 << 40

// checkPersistable reports whether a column type can be validated after
// decoding (and so persisted).
func checkPersistable(f arrow.Field) error {
	if err := persistableType(f.Type); err != nil {
		return fmt.Errorf("column %s cannot be persisted: %w", f.Name, err)
	}
	return nil
}

func persistableType(dt arrow.DataType) error {
	switch t := dt.(type) {
	case *arrow.NullType, *arrow.BooleanType, *arrow.StringType, *arrow.BinaryType,
		*arrow.LargeStringType, *arrow.LargeBinaryType:
		return nil
	case *arrow.ListType:
		return persistableType(t.Elem())
	case *arrow.LargeListType:
		return persistableType(t.Elem())
	case *arrow.FixedSizeListType:
		return persistableType(t.Elem())
	case *arrow.MapType:
		return persistableType(t.Elem())
	case *arrow.StructType:
		for _, f := range t.Fields() {
			if err := persistableType(f.Type); err != nil {
				return err
			}
		}
		return nil
	case *arrow.DictionaryType:
		return persistableType(t.ValueType)
	case arrow.FixedWidthDataType:
		if t.BitWidth()%8 == 0 {
			return nil
		}
	}
	return fmt.Errorf("type %s is not supported", dt)
}

// validateRecord checks every column of a decoded record.
func validateRecord(rec arrow.Record) error {
	for i, c := range rec.Columns() {
		if int64(c.Len()) != rec.NumRows() {
			return fmt.Errorf("column %d has %d rows, record %d", i, c.Len(), rec.NumRows())
		}
		if err := validateData(c.Data()); err != nil {
			return fmt.Errorf("column %s: %w", rec.Schema().Field(i).Name, err)
		}
	}
	return nil
}

func validateData(d arrow.ArrayData) error {
	off, n := d.Offset(), d.Len()
	if off < 0 || n < 0 {
		return fmt.Errorf("negative offset %d or length %d", off, n)
	}
	// Damaged lengths near 2^62 would overflow the byte counts below (a
	// fuzzer found a dictionary of 2^62 strings passing as valid).
	if off > maxValidateLen || n > maxValidateLen {
		return fmt.Errorf("offset %d or length %d out of range", off, n)
	}
	end := off + n
	bufs := d.Buffers()
	buf := func(i int) []byte {
		if i < len(bufs) && bufs[i] != nil {
			return bufs[i].Bytes()
		}
		return nil
	}
	need := func(i, bytes int) error {
		if len(buf(i)) < bytes {
			return fmt.Errorf("%s buffer %d has %d bytes, %d needed", d.DataType(), i, len(buf(i)), bytes)
		}
		return nil
	}
	if d.DataType().ID() != arrow.NULL && len(bufs) > 0 && bufs[0] != nil {
		if err := need(0, int(bitutil.BytesForBits(int64(end)))); err != nil {
			return err
		}
	}
	switch t := d.DataType().(type) {
	case *arrow.NullType:
		return nil
	case *arrow.BooleanType:
		return need(1, int(bitutil.BytesForBits(int64(end))))
	case *arrow.StringType, *arrow.BinaryType:
		if n == 0 {
			return nil
		}
		if err := need(1, (end+1)*4); err != nil {
			return err
		}
		return checkOffsets(buf(1)[off*4:(end+1)*4], 4, int64(len(buf(2))))
	case *arrow.LargeStringType, *arrow.LargeBinaryType:
		if n == 0 {
			return nil
		}
		if err := need(1, (end+1)*8); err != nil {
			return err
		}
		return checkOffsets(buf(1)[off*8:(end+1)*8], 8, int64(len(buf(2))))
	case *arrow.ListType, *arrow.MapType, *arrow.LargeListType:
		width := 4
		if _, large := t.(*arrow.LargeListType); large {
			width = 8
		}
		if len(d.Children()) != 1 {
			return fmt.Errorf("%s with %d children", t, len(d.Children()))
		}
		child := d.Children()[0]
		if n > 0 {
			if err := need(1, (end+1)*width); err != nil {
				return err
			}
			if err := checkOffsets(buf(1)[off*width:(end+1)*width], width, int64(child.Len())); err != nil {
				return err
			}
		}
		return validateData(child)
	case *arrow.FixedSizeListType:
		if len(d.Children()) != 1 || int64(d.Children()[0].Len()) < int64(end)*int64(t.Len()) {
			return fmt.Errorf("%s child too short", t)
		}
		return validateData(d.Children()[0])
	case *arrow.StructType:
		if len(d.Children()) != t.NumFields() {
			return fmt.Errorf("%s with %d children", t, len(d.Children()))
		}
		for _, c := range d.Children() {
			if c.Len() < end {
				return fmt.Errorf("%s field has %d values, %d needed", t, c.Len(), end)
			}
			if err := validateData(c); err != nil {
				return err
			}
		}
		return nil
	case *arrow.DictionaryType:
		dict, ok := d.Dictionary().(*array.Data)
		if !ok || dict == nil {
			return fmt.Errorf("%s without a dictionary", t)
		}
		if err := validateData(dict); err != nil {
			return err
		}
		w := t.IndexType.(arrow.FixedWidthDataType).BitWidth() / 8
		if err := need(1, end*w); err != nil {
			return err
		}
		return checkIndices(buf(1)[off*w:end*w], w, buf(0), off, int64(dict.Len()))
	case arrow.FixedWidthDataType:
		return need(1, end*(t.BitWidth()/8))
	}
	return fmt.Errorf("type %s is not supported", d.DataType())
}

// checkOffsets checks that offsets (little-endian, width bytes each) start
// at 0 or more, never decrease and end within limit.
func checkOffsets(raw []byte, width int, limit int64) error {
	prev := int64(0)
	for i := 0; i+width <= len(raw); i += width {
		var v int64
		if width == 4 {
			v = int64(int32(binary.LittleEndian.Uint32(raw[i:])))
		} else {
			v = int64(binary.LittleEndian.Uint64(raw[i:]))
		}
		if v < prev || v > limit {
			return fmt.Errorf("offset %d out of order or past %d", v, limit)
		}
		prev = v
	}
	return nil
}

// checkIndices checks that every valid dictionary index is within size.
func checkIndices(raw []byte, width int, validity []byte, off int, size int64) error {
	for i := 0; i*width < len(raw); i++ {
		if validity != nil && !bitutil.BitIsSet(validity, off+i) {
			continue
		}
		var v int64
		switch width {
		case 1:
			v = int64(int8(raw[i]))
		case 2:
			v = int64(int16(binary.LittleEndian.Uint16(raw[2*i:])))
		case 4:
			v = int64(int32(binary.LittleEndian.Uint32(raw[4*i:])))
		default:
			v = int64(binary.LittleEndian.Uint64(raw[8*i:]))
		}
		if v < 0 || v >= size {
			return fmt.Errorf("dictionary index %d outside a dictionary of %d", v, size)
		}
	}
	return nil
}
