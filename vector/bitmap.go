package vector

import (
	"encoding/binary"
	"math/bits"

	"github.com/apache/arrow/go/v17/arrow"
	"github.com/apache/arrow/go/v17/arrow/array"
	"github.com/apache/arrow/go/v17/arrow/bitutil"
	"github.com/apache/arrow/go/v17/arrow/memory"
)

// Word-wise bitmap helpers shared by the expression kernels. Kernels build
// their output bitmaps 64 rows at a time at offset 0, and read input bitmaps
// (which may start at any bit offset) 64 bits at a time with loadWord, so no
// kernel touches bitmaps bit by bit on its hot path.

// words64 is the number of 64-bit words that cover n bits.
func words64(n int) int { return (n + 63) >> 6 }

// tailMask is the mask of the valid bits of the last word of an n-bit
// bitmap (all ones when n is a multiple of 64).
func tailMask(n int) uint64 {
	if r := n & 63; r != 0 {
		return 1<<uint(r) - 1
	}
	return ^uint64(0)
}

// newBitmap allocates a bitmap of n bits rounded up to whole words, so that
// kernels can store uint64 words, and returns it with its word view. The
// words are not cleared; kernels write every word.
func newBitmap(mem memory.Allocator, n int) (*memory.Buffer, []uint64) {
	buf := memory.NewResizableBuffer(mem)
	buf.Resize(words64(n) * 8)
	return buf, castSlice[uint64](buf.Bytes())[:words64(n)]
}

// loadWord returns the 64 bits of bm that start at bit position bit. Bits
// past the end of bm read as zero, so the caller masks the last word.
func loadWord(bm []byte, bit int) uint64 {
	i := bit >> 3
	sh := uint(bit & 7)
	if i+9 <= len(bm) {
		w := binary.LittleEndian.Uint64(bm[i:])
		if sh != 0 {
			w = w>>sh | uint64(bm[i+8])<<(64-sh)
		}
		return w
	}
	var lo, hi uint64
	for k := 0; k < 8 && i+k < len(bm); k++ {
		lo |= uint64(bm[i+k]) << (8 * uint(k))
	}
	if i+8 < len(bm) {
		hi = uint64(bm[i+8])
	}
	if sh == 0 {
		return lo
	}
	return lo>>sh | hi<<(64-sh)
}

// wordSource yields the 64-bit words of a bitmap: either a view of an Arrow
// bitmap at a bit offset, or a constant word (all rows equal).
type wordSource struct {
	bm   []byte
	off  int
	fill uint64 // the word when bm is nil
}

func (s *wordSource) word(w int) uint64 {
	if s.bm == nil {
		return s.fill
	}
	return loadWord(s.bm, s.off+w*64)
}

// bit reports bit i (per-row merge loops and error paths).
func (s *wordSource) bit(i int) bool {
	if s.bm == nil {
		return s.fill != 0
	}
	return bitutil.BitIsSet(s.bm, s.off+i)
}

// constWords is a wordSource of n equal bits.
func constWords(set bool) wordSource {
	if set {
		return wordSource{fill: ^uint64(0)}
	}
	return wordSource{}
}

// validityWords is the validity bitmap of arr as words: all ones when arr
// has no nulls, all zeros for the Null type.
func validityWords(arr arrow.Array) wordSource {
	if arr.DataType().ID() == arrow.NULL {
		return wordSource{}
	}
	if arr.NullN() == 0 {
		return constWords(true)
	}
	return wordSource{bm: arr.NullBitmapBytes(), off: arr.Data().Offset()}
}

// boolValueWords is the value bitmap of a boolean array as words.
func boolValueWords(arr arrow.Array) wordSource {
	if arr.DataType().ID() != arrow.BOOL {
		return wordSource{}
	}
	d := arr.Data()
	if b := d.Buffers()[1]; b != nil {
		return wordSource{bm: b.Bytes(), off: d.Offset()}
	}
	return wordSource{}
}

// mayHaveNulls reports whether arr (nil for a constant operand) has nulls.
func mayHaveNulls(arr arrow.Array) bool { return arr != nil && arr.NullN() != 0 }

// countUnset counts the zero bits among the first n bits of words.
func countUnset(words []uint64, n int) int {
	if n == 0 {
		return 0
	}
	set := 0
	last := len(words) - 1
	for _, w := range words[:last] {
		set += bits.OnesCount64(w)
	}
	set += bits.OnesCount64(words[last] & tailMask(n))
	return n - set
}

// finishValidity counts the nulls of a freshly built validity bitmap and
// drops it (returning nil) when there are none.
func finishValidity(buf *memory.Buffer, words []uint64, n int) (*memory.Buffer, int) {
	nulls := countUnset(words, n)
	if nulls == 0 {
		buf.Release()
		return nil, 0
	}
	return buf, nulls
}

// andValidity returns the validity bitmap (offset 0) that is the AND of the
// validity of arrs, and its null count; (nil, 0) when no row is null. Nil
// entries (constant operands) are skipped. The result is owned by the
// caller.
func andValidity(mem memory.Allocator, n int, arrs ...arrow.Array) (*memory.Buffer, int) {
	var with []arrow.Array
	for _, a := range arrs {
		if mayHaveNulls(a) {
			with = append(with, a)
		}
	}
	switch len(with) {
	case 0:
		return nil, 0
	case 1:
		return copyValidity(mem, with[0])
	}
	buf, out := newBitmap(mem, n)
	srcs := make([]wordSource, len(with))
	for i, a := range with {
		srcs[i] = validityWords(a)
	}
	for w := range out {
		v := srcs[0].word(w)
		for k := 1; k < len(srcs); k++ {
			v &= srcs[k].word(w)
		}
		out[w] = v
	}
	return finishValidity(buf, out, n)
}

// copyValidity returns arr's validity as an offset-0 bitmap owned by the
// caller, sharing arr's buffer when it already starts at offset 0; (nil, 0)
// when arr has no nulls.
func copyValidity(mem memory.Allocator, arr arrow.Array) (*memory.Buffer, int) {
	nulls := arr.NullN()
	if nulls == 0 {
		return nil, 0
	}
	if arr.DataType().ID() == arrow.NULL {
		buf, out := newBitmap(mem, arr.Len())
		clear(out)
		return buf, nulls
	}
	d := arr.Data()
	if d.Offset() == 0 {
		if b := d.Buffers()[0]; b != nil {
			b.Retain()
			return b, nulls
		}
	}
	buf, out := newBitmap(mem, arr.Len())
	src := validityWords(arr)
	for w := range out {
		out[w] = src.word(w)
	}
	return buf, nulls
}

// boolArrayOwning wraps value and validity bitmaps (offset 0) as a Boolean
// array of n rows, taking over the caller's references to the buffers.
func boolArrayOwning(n int, values, validity *memory.Buffer, nulls int) arrow.Array {
	return newArrayOwning(Boolean, n, values, validity, nulls)
}

// newArrayOwning wraps a fixed-width values buffer and a validity bitmap
// (offset 0) as an array of type dt, taking over the caller's references.
func newArrayOwning(dt arrow.DataType, n int, values, validity *memory.Buffer, nulls int) arrow.Array {
	data := array.NewData(dt, n, []*memory.Buffer{validity, values}, nil, nulls, 0)
	if validity != nil {
		validity.Release()
	}
	values.Release()
	defer data.Release()
	return array.MakeFromData(data)
}

// wordBit reports bit i of a word bitmap (error paths and per-row
// fallbacks only).
func wordBit(words []uint64, i int) bool { return words[i>>6]>>(uint(i)&63)&1 != 0 }

// rowValid reports whether row i of arr is valid (true for a nil arr, a
// constant operand).
func rowValid(arr arrow.Array, i int) bool {
	if arr == nil || arr.NullN() == 0 {
		return true
	}
	if arr.DataType().ID() == arrow.NULL {
		return false
	}
	return bitutil.BitIsSet(arr.NullBitmapBytes(), arr.Data().Offset()+i)
}

// b2u converts a bool to 0 or 1; the compiler turns it into a SETcc, so
// kernels use it to build result words without branches.
func b2u(b bool) uint64 {
	var x uint64
	if b {
		x = 1
	}
	return x
}

// fixedSlice returns the values of a fixed-width array as a []T, offset
// applied.
func fixedSlice[T any](arr arrow.Array) []T {
	d := arr.Data()
	bufs := d.Buffers()
	if len(bufs) < 2 || bufs[1] == nil || d.Len() == 0 {
		return nil
	}
	return castSlice[T](bufs[1].Bytes())[d.Offset() : d.Offset()+d.Len()]
}

// newValues allocates an uninitialised values buffer of n elements of T.
func newValues[T any](mem memory.Allocator, n int) (*memory.Buffer, []T) {
	var zero T
	buf := memory.NewResizableBuffer(mem)
	buf.Resize(n * int(sizeOf(zero)))
	return buf, castSlice[T](buf.Bytes())[:n:n]
}

// bufferBytes is the content of buffer i of d, or nil when d has no such
// buffer: Arrow lets arrays of length 0 (an empty batch, an empty
// dictionary) leave their buffers out.
func bufferBytes(d arrow.ArrayData, i int) []byte {
	bufs := d.Buffers()
	if i >= len(bufs) || bufs[i] == nil {
		return nil
	}
	return bufs[i].Bytes()
}
