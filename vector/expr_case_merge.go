package vector

import (
	"math/bits"

	"github.com/apache/arrow/go/v17/arrow"
	"github.com/apache/arrow/go/v17/arrow/array"
	"github.com/apache/arrow/go/v17/arrow/decimal128"
	"github.com/apache/arrow/go/v17/arrow/memory"
)

// Merging the branches of CASE and coalesce: row i takes its value from
// the branch whose taken bitmap has bit i set (at most one does); rows no
// branch took are null. Fixed-width, boolean and string results are
// merged directly, constant branches included without expanding them;
// other types (structs, lists) go through a concatenation and a gather.

// caseSource is one evaluated branch.
type caseSource struct {
	arr   arrow.Array // the branch's values, or nil
	konst bool        // a constant branch, value v
	v     any         // canonical constant; nil for NULL
}

// mergeBranches builds the result of type dt from the branches.
func mergeBranches(mem memory.Allocator, dt arrow.DataType, n int, srcs []caseSource, taken [][]uint64) (arrow.Array, error) {
	// A branch that took every row is the result.
	for k, t := range taken {
		if t == nil || countSet(t, n) != n {
			continue
		}
		switch s := srcs[k]; {
		case s.konst:
			return MakeConstantArray(mem, dt, s.v, n)
		case s.arr != nil && arrow.TypeEqual(s.arr.DataType(), dt):
			s.arr.Retain()
			return s.arr, nil
		}
	}
	if dt.ID() == arrow.NULL {
		return array.MakeArrayOfNull(mem, dt, n), nil
	}
	if out, ok, err := mergeConst(mem, dt, n, srcs, taken); ok || err != nil {
		return out, err
	}
	choice := make([]int32, n)
	for i := range choice {
		choice[i] = -1
	}
	for k, t := range taken {
		if t == nil {
			continue
		}
		for w, word := range t {
			word &= wordMask(w, n)
			for word != 0 {
				choice[w*64+bits.TrailingZeros64(word)] = int32(k)
				word &= word - 1
			}
		}
	}
	switch dt.ID() {
	case arrow.BOOL:
		return mergeBool(mem, n, srcs, choice), nil
	case arrow.INT8, arrow.UINT8:
		return mergeFixed[uint8](mem, dt, n, srcs, choice)
	case arrow.INT16, arrow.UINT16:
		return mergeFixed[uint16](mem, dt, n, srcs, choice)
	case arrow.INT32, arrow.UINT32, arrow.FLOAT32, arrow.DATE32:
		return mergeFixed[uint32](mem, dt, n, srcs, choice)
	case arrow.INT64, arrow.UINT64, arrow.FLOAT64, arrow.TIMESTAMP:
		return mergeFixed[uint64](mem, dt, n, srcs, choice)
	case arrow.DECIMAL128:
		return mergeFixed[decimal128.Num](mem, dt, n, srcs, choice)
	case arrow.STRING, arrow.BINARY:
		return mergeBytes(mem, dt, n, srcs, choice), nil
	}
	return mergeGeneral(mem, dt, n, srcs, choice)
}

// countSet counts the set bits among the first n.
func countSet(words []uint64, n int) int {
	return n - countUnset(words, n)
}

// sourceValidity is a branch's validity as words (constants: all valid or
// all null).
func sourceValidity(s caseSource) wordSource {
	if s.arr != nil {
		return validityWords(s.arr)
	}
	return constWords(s.konst && s.v != nil)
}

// rawConst is the physical value of a constant of type dt (its bits as T).
func rawConst[T any](mem memory.Allocator, dt arrow.DataType, v any) (T, error) {
	var zero T
	arr, err := MakeConstantArray(mem, dt, v, 1)
	if err != nil {
		return zero, err
	}
	defer arr.Release()
	return fixedSlice[T](arr)[0], nil
}

func mergeFixed[T uint8 | uint16 | uint32 | uint64 | decimal128.Num](mem memory.Allocator, dt arrow.DataType, n int, srcs []caseSource, choice []int32) (arrow.Array, error) {
	views := make([]operand[T], len(srcs))
	valid := make([]wordSource, len(srcs))
	for k, s := range srcs {
		valid[k] = sourceValidity(s)
		switch {
		case s.arr != nil:
			views[k] = operand[T]{vals: fixedSlice[T](s.arr)}
		case s.konst && s.v != nil:
			c, err := rawConst[T](mem, dt, s.v)
			if err != nil {
				return nil, err
			}
			views[k] = operand[T]{c: c, konst: true}
		default:
			views[k] = operand[T]{konst: true}
		}
	}
	buf, out := newValues[T](mem, n)
	vbuf, vw := newBitmap(mem, n)
	clear(vw)
	var zero T
	for i, k := range choice {
		if k < 0 {
			out[i] = zero
			continue
		}
		out[i] = views[k].at(i)
		vw[i>>6] |= b2u(valid[k].bit(i)) << (uint(i) & 63)
	}
	validity, nulls := finishValidity(vbuf, vw, n)
	return newArrayOwning(dt, n, buf, validity, nulls), nil
}

func mergeBool(mem memory.Allocator, n int, srcs []caseSource, choice []int32) arrow.Array {
	vals := make([]wordSource, len(srcs))
	valid := make([]wordSource, len(srcs))
	for k, s := range srcs {
		valid[k] = sourceValidity(s)
		if s.arr != nil {
			vals[k] = boolValueWords(s.arr)
		} else {
			b, _ := s.v.(bool)
			vals[k] = constWords(b)
		}
	}
	xbuf, xw := newBitmap(mem, n)
	vbuf, vw := newBitmap(mem, n)
	clear(xw)
	clear(vw)
	for i, k := range choice {
		if k < 0 {
			continue
		}
		sh := uint(i) & 63
		xw[i>>6] |= b2u(vals[k].bit(i)) << sh
		vw[i>>6] |= b2u(valid[k].bit(i)) << sh
	}
	validity, nulls := finishValidity(vbuf, vw, n)
	return boolArrayOwning(n, xbuf, validity, nulls)
}

// mergeBytes merges string or binary branches in two passes: sizes, then
// copies.
func mergeBytes(mem memory.Allocator, dt arrow.DataType, n int, srcs []caseSource, choice []int32) arrow.Array {
	type view struct {
		offs []int32
		data []byte
		c    []byte
	}
	views := make([]view, len(srcs))
	valid := make([]wordSource, len(srcs))
	for k, s := range srcs {
		valid[k] = sourceValidity(s)
		switch {
		case s.arr != nil:
			views[k].offs, views[k].data = binaryValues(s.arr)
		case s.konst:
			switch x := s.v.(type) {
			case string:
				views[k].c = []byte(x)
			case []byte:
				views[k].c = x
			}
		}
	}
	value := func(k int32, i int) []byte {
		v := &views[k]
		if v.offs == nil {
			return v.c
		}
		return v.data[v.offs[i]:v.offs[i+1]]
	}
	total := 0
	for i, k := range choice {
		if k >= 0 && valid[k].bit(i) {
			total += len(value(k, i))
		}
	}
	offBuf, offs := newValues[int32](mem, n+1)
	dataBuf := memory.NewResizableBuffer(mem)
	dataBuf.Resize(total)
	data := dataBuf.Bytes()
	vbuf, vw := newBitmap(mem, n)
	clear(vw)
	pos := int32(0)
	for i, k := range choice {
		offs[i] = pos
		if k < 0 || !valid[k].bit(i) {
			continue
		}
		vw[i>>6] |= 1 << (uint(i) & 63)
		pos += int32(copy(data[pos:], value(k, i)))
	}
	offs[n] = pos
	validity, nulls := finishValidity(vbuf, vw, n)
	d := array.NewData(dt, n, []*memory.Buffer{validity, offBuf, dataBuf}, nil, nulls, 0)
	for _, b := range []*memory.Buffer{validity, offBuf, dataBuf} {
		if b != nil {
			b.Release()
		}
	}
	defer d.Release()
	return array.MakeFromData(d)
}

// mergeGeneral handles the other types: the branches (constants expanded)
// are concatenated and the rows gathered from the concatenation.
func mergeGeneral(mem memory.Allocator, dt arrow.DataType, n int, srcs []caseSource, choice []int32) (arrow.Array, error) {
	var parts []arrow.Array
	defer func() { releaseAll(parts...) }()
	base := make([]int32, len(srcs))
	for k, s := range srcs {
		var a arrow.Array
		switch {
		case s.arr != nil:
			s.arr.Retain()
			a = s.arr
		case s.konst:
			var err error
			if a, err = MakeConstantArray(mem, dt, s.v, n); err != nil {
				return nil, err
			}
		default:
			a = array.MakeArrayOfNull(mem, dt, n)
		}
		base[k] = int32(len(parts) * n)
		parts = append(parts, a)
	}
	all, err := Concatenate(parts, mem)
	if err != nil {
		return nil, err
	}
	defer all.Release()
	idx := make([]int32, n)
	for i, k := range choice {
		idx[i] = -1
		if k >= 0 {
			idx[i] = base[k] + int32(i)
		}
	}
	return Take(mem, all, idx)
}
