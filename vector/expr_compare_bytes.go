package vector

import (
	"bytes"
	"encoding/binary"
	"unsafe"

	"github.com/apache/arrow/go/v17/arrow"
	"github.com/apache/arrow/go/v17/arrow/decimal128"
)

// Comparison kernels that compare row by row through a three-way result
// (decimals, strings, binaries) or word-wise (booleans).

// cmpMask maps an operator to the set of three-way outcomes (bit 0: less,
// bit 1: equal, bit 2: greater) for which it holds, so that kernels built
// on a three-way comparison need no switch per row.
func cmpMask(op CompareOp) uint64 {
	switch op {
	case CompareEq:
		return 0b010
	case CompareLt:
		return 0b001
	case CompareLe:
		return 0b011
	case CompareGt:
		return 0b100
	case CompareGe:
		return 0b110
	}
	return 0
}

// cmpDecimal compares decimals of the same scale.
type cmpDecimal struct {
	op CompareOp
	c  decimal128.Num
}

func (k *cmpDecimal) compare(la, ra arrow.Array, n int, out []uint64) {
	mask := cmpMask(k.op)
	a := fixedSlice[decimal128.Num](la)
	var b []decimal128.Num
	if ra != nil {
		b = fixedSlice[decimal128.Num](ra)
	}
	for w := range out {
		var word uint64
		for j := range min(64, n-w*64) {
			i := w*64 + j
			y := k.c
			if b != nil {
				y = b[i]
			}
			word |= (mask >> uint(a[i].Cmp(y)+1) & 1) << uint(j)
		}
		out[w] = word
	}
}

// cmpBytes compares strings or binaries byte-wise (Spark's UTF8String
// order).
type cmpBytes struct {
	op CompareOp
	c  []byte
}

// binaryValues returns the offsets (offset applied, n+1 entries) and the
// data of a string or binary array.
func binaryValues(arr arrow.Array) ([]int32, []byte) {
	d := arr.Data()
	bufs := d.Buffers()
	var offs []int32
	if bufs[1] != nil {
		offs = castSlice[int32](bufs[1].Bytes())
	}
	if len(offs) == 0 {
		return []int32{0}, nil
	}
	offs = offs[d.Offset() : d.Offset()+d.Len()+1]
	var data []byte
	if bufs[2] != nil {
		data = bufs[2].Bytes()
	}
	return offs, data
}

func (k *cmpBytes) compare(la, ra arrow.Array, n int, out []uint64) {
	ao, ad := binaryValues(la)
	if ra == nil && k.op == CompareEq {
		if len(k.c) <= 8 {
			eqShortConst(ao, ad, k.c, n, out)
			return
		}
		c := k.c
		for w := range out {
			var word uint64
			for j := range min(64, n-w*64) {
				i := w*64 + j
				s, e := ao[i], ao[i+1]
				word |= b2u(int(e-s) == len(c) && bytes.Equal(ad[s:e], c)) << uint(j)
			}
			out[w] = word
		}
		return
	}
	mask := cmpMask(k.op)
	var bo []int32
	var bd []byte
	if ra != nil {
		bo, bd = binaryValues(ra)
	}
	for w := range out {
		var word uint64
		for j := range min(64, n-w*64) {
			i := w*64 + j
			y := k.c
			if ra != nil {
				y = bd[bo[i]:bo[i+1]]
			}
			word |= (mask >> uint(bytes.Compare(ad[ao[i]:ao[i+1]], y)+1) & 1) << uint(j)
		}
		out[w] = word
	}
}

// cmpBool compares booleans (false < true) a word at a time.
type cmpBool struct {
	op CompareOp
	c  bool
}

func (k *cmpBool) compare(la, ra arrow.Array, _ int, out []uint64) {
	a := boolValueWords(la)
	b := constWords(k.c)
	if ra != nil {
		b = boolValueWords(ra)
	}
	for w := range out {
		x, y := a.word(w), b.word(w)
		var r uint64
		switch k.op {
		case CompareEq:
			r = ^(x ^ y)
		case CompareLt:
			r = ^x & y
		case CompareLe:
			r = ^x | y
		case CompareGt:
			r = x &^ y
		case CompareGe:
			r = x | ^y
		}
		out[w] = r
	}
}

// eqShortConst is string = 'constant' for constants of up to 8 bytes, the
// common case (event_type = 'view'): the constant is held as a word, and
// each row compares its length and its first 8 bytes, masked, with no
// branch or call. The 8-byte load may read past the row's value, so it
// is an unchecked load, and only rows whose load stays inside the data
// buffer take it (offsets grow monotonically, as Arrow requires); the few
// rows at the end of the buffer copy their bytes first.
func eqShortConst(offs []int32, data []byte, c []byte, n int, out []uint64) {
	var cbuf [8]byte
	copy(cbuf[:], c)
	cw := binary.LittleEndian.Uint64(cbuf[:])
	mask := ^uint64(0)
	if len(c) < 8 {
		mask = 1<<(8*uint(len(c))) - 1
	}
	size := int32(len(c))
	safe := n
	for safe > 0 && int(offs[safe-1])+8 > len(data) {
		safe--
	}
	offs = offs[:n+1]
	base := unsafe.Pointer(unsafe.SliceData(data))
	for w := range out {
		lo, hi := w*64, min(n, w*64+64)
		o := offs[lo : hi+1]
		var word uint64
		if hi <= safe {
			word = eqShortWord(o, base, size, mask, cw)
		} else {
			for j := range hi - lo {
				s, e := o[j], o[j+1]
				var tmp [8]byte
				copy(tmp[:], data[s:])
				v := binary.LittleEndian.Uint64(tmp[:])
				word |= (b2u(e-s == size) & b2u(v&mask == cw)) << uint(j)
			}
		}
		out[w] = word
	}
}

// eqShortWord is the unchecked inner loop of eqShortConst for up to 64
// rows (o has one more offset than rows); a function of its own so that
// its few variables stay in registers.
func eqShortWord(o []int32, base unsafe.Pointer, size int32, mask, cw uint64) uint64 {
	var word uint64
	s := o[0]
	for j, e := range o[1:] {
		v := *(*uint64)(unsafe.Add(base, s))
		word |= (b2u(e-s == size) & b2u(v&mask == cw)) << uint(j)
		s = e
	}
	return word
}
