package server

import (
	"fmt"
	"unicode/utf8"
	"unsafe"

	"github.com/apache/arrow/go/v17/arrow"
	"github.com/apache/arrow/go/v17/arrow/array"
	"github.com/apache/arrow/go/v17/arrow/bitutil"
	"github.com/apache/arrow/go/v17/arrow/memory"
)

// validateRecord checks that a record received from a client is
// well-formed before the server keeps it (ingest, bound parameters).
// arrow-go's IPC reader checks little of what a batch claims: a buffer
// shorter than its length implies, offsets that decrease or point past
// the data, a null count that disagrees with the validity bitmap, invalid
// UTF-8 in a string column or a dictionary index out of range are all
// accepted, and then panic (or read garbage) in whatever touches the data
// later, far from the client that sent it. The error names the column
// and, where there is one, the row.
func validateRecord(rec arrow.Record) error {
	for i, col := range rec.Columns() {
		name := rec.ColumnName(i)
		if int64(col.Len()) != rec.NumRows() {
			return fmt.Errorf("column %q has %d rows, the batch %d", name, col.Len(), rec.NumRows())
		}
		if err := validateData(col.Data()); err != nil {
			return fmt.Errorf("column %q: %w", name, err)
		}
	}
	return nil
}

// validateData checks one array (and its children) against the layout
// of its type. It supports the types of the SQL dialect (vector/types.go)
// and the fixed-width, binary, list, struct and dictionary layouts they
// use; any other type is refused rather than trusted.
func validateData(d arrow.ArrayData) error {
	off, n := d.Offset(), d.Len()
	if off < 0 || n < 0 {
		return fmt.Errorf("negative offset %d or length %d", off, n)
	}
	end := off + n
	bufs := d.Buffers()
	if d.DataType().ID() == arrow.NULL {
		return nil
	}
	if len(bufs) == 0 {
		return fmt.Errorf("%s array without buffers", d.DataType())
	}
	if err := validateNulls(d, bufs[0], off, n); err != nil {
		return err
	}
	switch dt := d.DataType().(type) {
	case *arrow.BooleanType:
		return needBytes(bufs, 1, int64(bitutil.BytesForBits(int64(end))), "values")
	case *arrow.DictionaryType:
		return validateDictionary(d, dt)
	case *arrow.StringType:
		return validateBinary[int32](d, bufs, off, n, true)
	case *arrow.BinaryType:
		return validateBinary[int32](d, bufs, off, n, false)
	case *arrow.LargeStringType:
		return validateBinary[int64](d, bufs, off, n, true)
	case *arrow.LargeBinaryType:
		return validateBinary[int64](d, bufs, off, n, false)
	case *arrow.ListType:
		return validateList[int32](d, bufs, off, n)
	case *arrow.LargeListType:
		return validateList[int64](d, bufs, off, n)
	case *arrow.StructType:
		if len(d.Children()) != dt.NumFields() {
			return fmt.Errorf("struct array with %d children, its type has %d fields", len(d.Children()), dt.NumFields())
		}
		for i, c := range d.Children() {
			if c.Len() < end {
				return fmt.Errorf("field %q has %d rows, the struct %d", dt.Field(i).Name, c.Len(), end)
			}
			if err := validateData(c); err != nil {
				return fmt.Errorf("field %q: %w", dt.Field(i).Name, err)
			}
		}
		return nil
	case arrow.FixedWidthDataType:
		return needBytes(bufs, 1, int64(end)*int64(dt.BitWidth()/8), "values")
	}
	return fmt.Errorf("%s columns are not accepted from clients", d.DataType())
}

// validateNulls checks the validity bitmap's size and that the declared
// null count is the bitmap's.
func validateNulls(d arrow.ArrayData, bitmap *memory.Buffer, off, n int) error {
	declared := d.NullN()
	if bitmap == nil || bitmap.Len() == 0 {
		if declared > 0 && declared != array.UnknownNullCount {
			return fmt.Errorf("null count %d without a validity bitmap", declared)
		}
		return nil
	}
	if need := bitutil.BytesForBits(int64(off + n)); int64(bitmap.Len()) < need {
		return fmt.Errorf("validity bitmap of %d bytes, %d rows need %d", bitmap.Len(), off+n, need)
	}
	nulls := n - bitutil.CountSetBits(bitmap.Bytes(), off, n)
	if declared != array.UnknownNullCount && declared != nulls {
		return fmt.Errorf("null count %d, but the validity bitmap has %d nulls", declared, nulls)
	}
	return nil
}

// needBytes checks that buffer i exists and holds at least want bytes.
func needBytes(bufs []*memory.Buffer, i int, want int64, what string) error {
	if want == 0 {
		return nil
	}
	if i >= len(bufs) || bufs[i] == nil {
		return fmt.Errorf("no %s buffer (%d bytes needed)", what, want)
	}
	if got := int64(bufs[i].Len()); got < want {
		return fmt.Errorf("%s buffer of %d bytes, the array's length needs %d", what, got, want)
	}
	return nil
}

// offsetsOf returns the n+1 offsets of rows [off, off+n) from an offsets
// buffer already checked to be long enough.
func offsetsOf[T int32 | int64](buf *memory.Buffer, off, n int) []T {
	var zero T
	size := int(unsafe.Sizeof(zero))
	b := buf.Bytes()[off*size : (off+n+1)*size]
	return unsafe.Slice((*T)(unsafe.Pointer(unsafe.SliceData(b))), n+1)
}

// checkOffsets checks that offsets start at 0 or more, never decrease and
// end within limit (the data bytes or the child's length).
func checkOffsets[T int32 | int64](offs []T, limit int64, what string) error {
	if offs[0] < 0 {
		return fmt.Errorf("row 0: negative offset %d", offs[0])
	}
	for i := 1; i < len(offs); i++ {
		if offs[i] < offs[i-1] {
			return fmt.Errorf("row %d: offsets decrease (%d, then %d)", i-1, offs[i-1], offs[i])
		}
	}
	if last := int64(offs[len(offs)-1]); last > limit {
		return fmt.Errorf("offset %d is beyond the %s's %d", last, what, limit)
	}
	return nil
}

// validateList checks a list array's offsets against its child, and the
// child.
func validateList[T int32 | int64](d arrow.ArrayData, bufs []*memory.Buffer, off, n int) error {
	if len(d.Children()) != 1 {
		return fmt.Errorf("list array with %d children", len(d.Children()))
	}
	var zero T
	if n > 0 {
		if err := needBytes(bufs, 1, int64(off+n+1)*int64(unsafe.Sizeof(zero)), "offsets"); err != nil {
			return err
		}
		if err := checkOffsets(offsetsOf[T](bufs[1], off, n), int64(d.Children()[0].Len()), "child"); err != nil {
			return err
		}
	}
	if err := validateData(d.Children()[0]); err != nil {
		return fmt.Errorf("list element: %w", err)
	}
	return nil
}

// validateBinary checks the offsets of a string or binary array and, for
// strings, that every non-null value is UTF-8.
func validateBinary[T int32 | int64](d arrow.ArrayData, bufs []*memory.Buffer, off, n int, utf bool) error {
	if n == 0 {
		return nil
	}
	var zero T
	if err := needBytes(bufs, 1, int64(off+n+1)*int64(unsafe.Sizeof(zero)), "offsets"); err != nil {
		return err
	}
	var data []byte
	if len(bufs) > 2 && bufs[2] != nil {
		data = bufs[2].Bytes()
	}
	offs := offsetsOf[T](bufs[1], off, n)
	if err := checkOffsets(offs, int64(len(data)), "data buffer"); err != nil {
		return err
	}
	if !utf {
		return nil
	}
	var bitmap []byte
	if bufs[0] != nil && bufs[0].Len() > 0 && d.NullN() != 0 {
		bitmap = bufs[0].Bytes() // validateNulls checked its size
	}
	for i := range n {
		if bitmap != nil && !bitutil.BitIsSet(bitmap, off+i) {
			continue
		}
		if v := data[offs[i]:offs[i+1]]; !utf8.Valid(v) {
			return fmt.Errorf("row %d: invalid UTF-8 in a string value (%s)", i, excerpt(v))
		}
	}
	return nil
}

// validateDictionary checks the indices and the dictionary, and that
// every non-null index is within the dictionary.
func validateDictionary(d arrow.ArrayData, dt *arrow.DictionaryType) error {
	iw, ok := dt.IndexType.(arrow.FixedWidthDataType)
	if !ok {
		return fmt.Errorf("dictionary index type %s", dt.IndexType)
	}
	off, n := d.Offset(), d.Len()
	bufs := d.Buffers()
	if err := needBytes(bufs, 1, int64(off+n)*int64(iw.BitWidth()/8), "indices"); err != nil {
		return err
	}
	dict := d.Dictionary()
	if dict == nil {
		return fmt.Errorf("dictionary array without a dictionary")
	}
	if err := validateData(dict); err != nil {
		return fmt.Errorf("dictionary: %w", err)
	}
	idx := array.MakeFromData(d)
	defer idx.Release()
	indices := idx.(*array.Dictionary).Indices()
	size := dict.Len()
	for i := range n {
		if indices.IsNull(i) {
			continue
		}
		var k int64
		switch a := indices.(type) {
		case *array.Int8:
			k = int64(a.Value(i))
		case *array.Int16:
			k = int64(a.Value(i))
		case *array.Int32:
			k = int64(a.Value(i))
		case *array.Int64:
			k = a.Value(i)
		case *array.Uint8:
			k = int64(a.Value(i))
		case *array.Uint16:
			k = int64(a.Value(i))
		case *array.Uint32:
			k = int64(a.Value(i))
		default:
			return fmt.Errorf("dictionary index type %s", dt.IndexType)
		}
		if k < 0 || k >= int64(size) {
			return fmt.Errorf("row %d: dictionary index %d outside the dictionary's %d values", i, k, size)
		}
	}
	return nil
}
