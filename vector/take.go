package vector

import (
	"fmt"

	"github.com/apache/arrow/go/v17/arrow"
	"github.com/apache/arrow/go/v17/arrow/array"
	"github.com/apache/arrow/go/v17/arrow/bitutil"
	"github.com/apache/arrow/go/v17/arrow/memory"
)

// Take gathers arr[idx[0]], arr[idx[1]], ... into a new array owned by the
// caller. A negative index yields a null (outer joins use this). Indices must
// be < arr.Len(). It is the one gather kernel behind filter, sort, join and
// dictionary decoding.
func Take(mem memory.Allocator, arr arrow.Array, idx []int32) (arrow.Array, error) {
	if !hasNegative(idx) {
		// No null rows to produce: the gathers specialised for selections
		// are faster.
		return gather(mem, arr, idx)
	}
	return takeArray(mem, arr, idx)
}

// takeArray is Take for any indices, negative ones included.
func takeArray(mem memory.Allocator, arr arrow.Array, idx []int32) (arrow.Array, error) {
	data, err := takeData(mem, arr.Data().(*array.Data), idx)
	if err != nil {
		return nil, err
	}
	defer data.Release()
	return array.MakeFromData(data), nil
}

// TakeRecord gathers the rows idx of every column of rec.
func TakeRecord(mem memory.Allocator, rec arrow.Record, idx []int32) (arrow.Record, error) {
	return mapColumns(rec, len(idx), func(c arrow.Array) (arrow.Array, error) { return Take(mem, c, idx) })
}

// mapColumns builds a record of n rows with rec's schema from f applied to
// each column of rec.
func mapColumns(rec arrow.Record, n int, f func(arrow.Array) (arrow.Array, error)) (arrow.Record, error) {
	cols := make([]arrow.Array, rec.NumCols())
	for i, c := range rec.Columns() {
		a, err := f(c)
		if err != nil {
			releaseArrays(cols[:i])
			return nil, err
		}
		cols[i] = a
	}
	out := array.NewRecord(rec.Schema(), cols, int64(n))
	releaseArrays(cols)
	return out, nil
}

func hasNegative(idx []int32) bool {
	for _, i := range idx {
		if i < 0 {
			return true
		}
	}
	return false
}

// takeValidity builds the output bitmap, or nil when every output is valid.
// Note that Data.NullN is -1 (unknown) for sliced data; only arrow.Array.NullN
// computes it.
func takeValidity(mem memory.Allocator, d *array.Data, idx []int32) (*memory.Buffer, int) {
	inNulls := d.NullN() != 0 && len(d.Buffers()) > 0 && d.Buffers()[0] != nil
	anyNeg := false
	for _, i := range idx {
		if i < 0 {
			anyNeg = true
			break
		}
	}
	if !inNulls && !anyNeg && d.DataType().ID() != arrow.NULL {
		return nil, 0
	}
	buf := memory.NewResizableBuffer(mem)
	buf.Resize(int(bitutil.BytesForBits(int64(len(idx)))))
	out := buf.Bytes()
	nulls := 0
	if d.DataType().ID() == arrow.NULL {
		clear(out)
		return buf, len(idx)
	}
	var in []byte
	if inNulls {
		in = d.Buffers()[0].Bytes()
	}
	off := d.Offset()
	for o, i := range idx {
		valid := i >= 0 && (in == nil || bitutil.BitIsSet(in, off+int(i)))
		bitutil.SetBitTo(out, o, valid)
		if !valid {
			nulls++
		}
	}
	if nulls == 0 {
		buf.Release()
		return nil, 0
	}
	return buf, nulls
}

func takeData(mem memory.Allocator, d *array.Data, idx []int32) (*array.Data, error) {
	n := len(idx)
	dt := d.DataType()
	validity, nulls := takeValidity(mem, d, idx)
	release := func(bufs ...*memory.Buffer) {
		for _, b := range bufs {
			if b != nil {
				b.Release()
			}
		}
	}
	switch dt.ID() {
	case arrow.NULL:
		release(validity)
		return array.NewData(dt, n, []*memory.Buffer{nil}, nil, n, 0), nil
	case arrow.BOOL:
		vals := memory.NewResizableBuffer(mem)
		vals.Resize(int(bitutil.BytesForBits(int64(n))))
		out := vals.Bytes()
		var in []byte
		if b := d.Buffers()[1]; b != nil {
			in = b.Bytes()
		}
		off := d.Offset()
		for o, i := range idx {
			bitutil.SetBitTo(out, o, i >= 0 && bitutil.BitIsSet(in, off+int(i)))
		}
		data := array.NewData(dt, n, []*memory.Buffer{validity, vals}, nil, nulls, 0)
		release(validity, vals)
		return data, nil
	case arrow.INT8, arrow.UINT8:
		return takeFixed[uint8](mem, d, idx, validity, nulls), nil
	case arrow.INT16, arrow.UINT16:
		return takeFixed[uint16](mem, d, idx, validity, nulls), nil
	case arrow.INT32, arrow.UINT32, arrow.FLOAT32, arrow.DATE32, arrow.INTERVAL_MONTHS:
		return takeFixed[uint32](mem, d, idx, validity, nulls), nil
	case arrow.INT64, arrow.UINT64, arrow.FLOAT64, arrow.TIMESTAMP, arrow.DATE64, arrow.DURATION:
		return takeFixed[uint64](mem, d, idx, validity, nulls), nil
	case arrow.DECIMAL128:
		return takeFixed[[16]byte](mem, d, idx, validity, nulls), nil
	case arrow.STRING, arrow.BINARY:
		return takeBinary(mem, d, idx, validity, nulls), nil
	case arrow.DICTIONARY:
		// Gather the indices; the dictionary is shared.
		ixType := dt.(*arrow.DictionaryType).IndexType
		ixData := array.NewData(ixType, d.Len(), d.Buffers(), nil, d.NullN(), d.Offset())
		defer ixData.Release()
		taken, err := takeData(mem, ixData, idx)
		if err != nil {
			release(validity)
			return nil, err
		}
		defer taken.Release()
		release(validity)
		return array.NewDataWithDictionary(dt, n, taken.Buffers(), taken.NullN(), 0, d.Dictionary().(*array.Data)), nil
	case arrow.STRUCT:
		children := make([]arrow.ArrayData, len(d.Children()))
		for c, child := range d.Children() {
			sliced := array.NewSliceData(child, int64(d.Offset()), int64(d.Offset()+d.Len()))
			cd, err := takeData(mem, sliced.(*array.Data), idx)
			sliced.Release()
			if err != nil {
				for _, x := range children[:c] {
					x.Release()
				}
				release(validity)
				return nil, err
			}
			children[c] = cd
		}
		data := array.NewData(dt, n, []*memory.Buffer{validity}, children, nulls, 0)
		release(validity)
		for _, x := range children {
			x.Release()
		}
		return data, nil
	case arrow.LIST, arrow.MAP:
		return takeList(mem, d, idx, validity, nulls)
	}
	release(validity)
	return nil, fmt.Errorf("vector: take of %s: %w", TypeName(dt), ErrType)
}

func takeFixed[T uint8 | uint16 | uint32 | uint64 | [16]byte](mem memory.Allocator, d *array.Data, idx []int32, validity *memory.Buffer, nulls int) *array.Data {
	var zero T
	width := int(sizeOf(zero))
	vals := memory.NewResizableBuffer(mem)
	vals.Resize(len(idx) * width)
	out := castSlice[T](vals.Bytes())
	var in []T
	if b := d.Buffers()[1]; b != nil {
		// An empty array may have no value buffer; then every index is -1.
		in = castSlice[T](b.Bytes())[d.Offset():]
	}
	for o, i := range idx {
		if i >= 0 {
			out[o] = in[i]
		} else {
			out[o] = zero
		}
	}
	data := array.NewData(d.DataType(), len(idx), []*memory.Buffer{validity, vals}, nil, nulls, 0)
	if validity != nil {
		validity.Release()
	}
	vals.Release()
	return data
}

func takeBinary(mem memory.Allocator, d *array.Data, idx []int32, validity *memory.Buffer, nulls int) *array.Data {
	var inOff []int32
	if b := d.Buffers()[1]; b != nil {
		inOff = arrow.Int32Traits.CastFromBytes(b.Bytes())[d.Offset():]
	}
	var inData []byte
	if b := d.Buffers()[2]; b != nil {
		inData = b.Bytes()
	}
	total := 0
	for _, i := range idx {
		if i >= 0 {
			total += int(inOff[i+1] - inOff[i])
		}
	}
	offBuf := memory.NewResizableBuffer(mem)
	offBuf.Resize((len(idx) + 1) * 4)
	offs := arrow.Int32Traits.CastFromBytes(offBuf.Bytes())
	dataBuf := memory.NewResizableBuffer(mem)
	dataBuf.Resize(total)
	out := dataBuf.Bytes()
	pos := int32(0)
	for o, i := range idx {
		offs[o] = pos
		if i >= 0 {
			pos += int32(copy(out[pos:], inData[inOff[i]:inOff[i+1]]))
		}
	}
	offs[len(idx)] = pos
	data := array.NewData(d.DataType(), len(idx), []*memory.Buffer{validity, offBuf, dataBuf}, nil, nulls, 0)
	if validity != nil {
		validity.Release()
	}
	offBuf.Release()
	dataBuf.Release()
	return data
}

func takeList(mem memory.Allocator, d *array.Data, idx []int32, validity *memory.Buffer, nulls int) (*array.Data, error) {
	var inOff []int32
	if b := d.Buffers()[1]; b != nil {
		inOff = arrow.Int32Traits.CastFromBytes(b.Bytes())[d.Offset():]
	}
	var childIdx []int32
	offBuf := memory.NewResizableBuffer(mem)
	offBuf.Resize((len(idx) + 1) * 4)
	offs := arrow.Int32Traits.CastFromBytes(offBuf.Bytes())
	for o, i := range idx {
		offs[o] = int32(len(childIdx))
		if i >= 0 {
			for j := inOff[i]; j < inOff[i+1]; j++ {
				childIdx = append(childIdx, j)
			}
		}
	}
	offs[len(idx)] = int32(len(childIdx))
	child, err := takeData(mem, d.Children()[0].(*array.Data), childIdx)
	if err != nil {
		offBuf.Release()
		if validity != nil {
			validity.Release()
		}
		return nil, err
	}
	data := array.NewData(d.DataType(), len(idx), []*memory.Buffer{validity, offBuf}, []arrow.ArrayData{child}, nulls, 0)
	child.Release()
	offBuf.Release()
	if validity != nil {
		validity.Release()
	}
	return data, nil
}
