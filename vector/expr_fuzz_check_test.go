package vector_test

import (
	"fmt"

	"github.com/apache/arrow/go/v17/arrow"
	"github.com/apache/arrow/go/v17/arrow/array"
	"github.com/apache/arrow/go/v17/arrow/bitutil"
)

// validateArray checks the layout of an evaluator's result: buffers large
// enough for offset+length, a null count that matches the bitmap, offsets
// that stay inside their data, children and dictionaries valid in turn.
// ValueAt would read most of these without noticing.
func validateArray(arr arrow.Array) error {
	return validateData(arr.Data(), arr.DataType())
}

func validateData(d arrow.ArrayData, dt arrow.DataType) error {
	if !arrow.TypeEqual(d.DataType(), dt) {
		return fmt.Errorf("data type %s, array type %s", d.DataType(), dt)
	}
	n, off := d.Len(), d.Offset()
	if n < 0 || off < 0 {
		return fmt.Errorf("length %d, offset %d", n, off)
	}
	bufs := d.Buffers()
	if dt.ID() == arrow.NULL {
		if d.NullN() != n {
			return fmt.Errorf("null array of %d rows has %d nulls", n, d.NullN())
		}
		return nil
	}
	if len(bufs) == 0 {
		return fmt.Errorf("%s data without buffers", dt)
	}
	nulls := 0
	if bm := bufs[0]; bm != nil && bm.Len() > 0 {
		if bm.Len()*8 < off+n {
			return fmt.Errorf("validity bitmap of %d bytes for offset %d + %d rows", bm.Len(), off, n)
		}
		nulls = n - bitutil.CountSetBits(bm.Bytes(), off, n)
	}
	if got := d.NullN(); got != array.UnknownNullCount && got != nulls {
		return fmt.Errorf("null count %d, bitmap has %d nulls", got, nulls)
	}
	need := func(i, bytes int) error {
		if bytes == 0 {
			return nil
		}
		if len(bufs) <= i || bufs[i] == nil || bufs[i].Len() < bytes {
			have := -1
			if len(bufs) > i && bufs[i] != nil {
				have = bufs[i].Len()
			}
			return fmt.Errorf("%s buffer %d has %d bytes, needs %d", dt, i, have, bytes)
		}
		return nil
	}
	offsets := func(childLen int) error {
		if n == 0 && (len(bufs) < 2 || bufs[1] == nil || bufs[1].Len() == 0) {
			return nil
		}
		if err := need(1, (off+n+1)*4); err != nil {
			return err
		}
		offs := arrow.Int32Traits.CastFromBytes(bufs[1].Bytes())[off : off+n+1]
		if offs[0] < 0 {
			return fmt.Errorf("%s first offset %d", dt, offs[0])
		}
		for i := 0; i < n; i++ {
			if offs[i+1] < offs[i] {
				return fmt.Errorf("%s offsets decrease at row %d: %d > %d", dt, i, offs[i], offs[i+1])
			}
		}
		if int(offs[n]) > childLen {
			return fmt.Errorf("%s last offset %d beyond %d bytes or elements", dt, offs[n], childLen)
		}
		return nil
	}
	switch t := dt.(type) {
	case *arrow.DictionaryType:
		dict := d.Dictionary()
		if dict == nil {
			return fmt.Errorf("dictionary array without a dictionary")
		}
		if err := validateData(dict, t.ValueType); err != nil {
			return fmt.Errorf("dictionary: %w", err)
		}
		idxData := array.NewData(t.IndexType, n, bufs, nil, d.NullN(), off)
		defer idxData.Release()
		idx := array.MakeFromData(idxData)
		defer idx.Release()
		if err := validateData(idx.Data(), t.IndexType); err != nil {
			return fmt.Errorf("dictionary indices: %w", err)
		}
		for i := 0; i < n; i++ {
			if idx.IsNull(i) {
				continue
			}
			var k int64
			switch ix := idx.(type) {
			case *array.Int8:
				k = int64(ix.Value(i))
			case *array.Int16:
				k = int64(ix.Value(i))
			case *array.Int32:
				k = int64(ix.Value(i))
			case *array.Int64:
				k = ix.Value(i)
			default:
				return fmt.Errorf("dictionary index type %s", t.IndexType)
			}
			if k < 0 || k >= int64(dict.Len()) {
				return fmt.Errorf("dictionary index %d at row %d outside %d entries", k, i, dict.Len())
			}
		}
	case *arrow.BooleanType:
		return need(1, int(bitutil.BytesForBits(int64(off+n))))
	case arrow.FixedWidthDataType:
		return need(1, (off+n)*t.BitWidth()/8)
	case *arrow.StringType, *arrow.BinaryType:
		size := 0
		if len(bufs) > 2 && bufs[2] != nil {
			size = bufs[2].Len()
		}
		return offsets(size)
	case *arrow.ListType:
		if len(d.Children()) != 1 {
			return fmt.Errorf("list with %d children", len(d.Children()))
		}
		child := d.Children()[0]
		if err := offsets(child.Len()); err != nil {
			return err
		}
		if err := validateData(child, t.Elem()); err != nil {
			return fmt.Errorf("list elements: %w", err)
		}
	case *arrow.StructType:
		if len(d.Children()) != t.NumFields() {
			return fmt.Errorf("struct of %d fields with %d children", t.NumFields(), len(d.Children()))
		}
		for i, c := range d.Children() {
			if c.Len() < off+n {
				return fmt.Errorf("struct field %d has %d rows, needs %d", i, c.Len(), off+n)
			}
			if err := validateData(c, t.Field(i).Type); err != nil {
				return fmt.Errorf("struct field %d: %w", i, err)
			}
		}
	}
	return nil
}
