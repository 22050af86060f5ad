package vector

import (
	"bytes"

	"github.com/apache/arrow/go/v17/arrow"
	"github.com/apache/arrow/go/v17/arrow/decimal128"
)

// Comparison kernels. Each writes one result bit per row into words of 64
// rows (offset 0): a block of 64 comparisons is folded into a register with
// branch-free shifts and stored once. Kernels see only the operators =, <,
// <=, > and >=; <> and <=> are derived from = by the evaluator, and a
// constant is always the right operand (the binder swaps it there).
//
// Doubles compare as Spark orders them: NaN equals NaN and is larger than
// every other value, and -0.0 equals 0.0.

// cmpKernel computes the comparison of la and ra (ra nil: the kernel's
// constant) for n rows into out.
type cmpKernel interface {
	compare(la, ra arrow.Array, n int, out []uint64)
}

type ordered interface {
	~int8 | ~int16 | ~int32 | ~int64 | ~uint8 | ~uint16 | ~uint32 | ~uint64 | ~float32 | ~float64
}

// fixedCmp compares integers (also dates and timestamps).
type fixedCmp[T int32 | int64] struct {
	op CompareOp
	c  T
}

func (k *fixedCmp[T]) compare(la, ra arrow.Array, _ int, out []uint64) {
	a := fixedValues[T](la)
	if ra == nil {
		cmpVS(k.op, a, k.c, out)
		return
	}
	cmpVV(k.op, a, fixedValues[T](ra), out)
}

// cmpVS compares a column with a constant.
func cmpVS[T ordered](op CompareOp, a []T, c T, out []uint64) {
	switch op {
	case CompareEq:
		eqVS(a, c, out)
	case CompareLt:
		ltVS(a, c, out)
	case CompareLe:
		leVS(a, c, out)
	case CompareGt:
		ltSV(c, a, out)
	case CompareGe:
		leSV(c, a, out)
	}
}

// cmpVV compares two columns; > and >= swap the operands.
func cmpVV[T ordered](op CompareOp, a, b []T, out []uint64) {
	switch op {
	case CompareEq:
		eqVV(a, b, out)
	case CompareLt:
		ltVV(a, b, out)
	case CompareLe:
		leVV(a, b, out)
	case CompareGt:
		ltVV(b, a, out)
	case CompareGe:
		leVV(b, a, out)
	}
}

func eqVS[T ordered](a []T, c T, out []uint64) {
	for w := range out {
		var word uint64
		for j, v := range a[w*64 : min(len(a), w*64+64)] {
			word |= b2u(v == c) << uint(j)
		}
		out[w] = word
	}
}

func ltVS[T ordered](a []T, c T, out []uint64) {
	for w := range out {
		var word uint64
		for j, v := range a[w*64 : min(len(a), w*64+64)] {
			word |= b2u(v < c) << uint(j)
		}
		out[w] = word
	}
}

func leVS[T ordered](a []T, c T, out []uint64) {
	for w := range out {
		var word uint64
		for j, v := range a[w*64 : min(len(a), w*64+64)] {
			word |= b2u(v <= c) << uint(j)
		}
		out[w] = word
	}
}

// ltSV is c < a[i], that is a[i] > c.
func ltSV[T ordered](c T, a []T, out []uint64) {
	for w := range out {
		var word uint64
		for j, v := range a[w*64 : min(len(a), w*64+64)] {
			word |= b2u(c < v) << uint(j)
		}
		out[w] = word
	}
}

func leSV[T ordered](c T, a []T, out []uint64) {
	for w := range out {
		var word uint64
		for j, v := range a[w*64 : min(len(a), w*64+64)] {
			word |= b2u(c <= v) << uint(j)
		}
		out[w] = word
	}
}

func eqVV[T ordered](a, b []T, out []uint64) {
	b = b[:len(a)]
	for w := range out {
		lo, hi := w*64, min(len(a), w*64+64)
		x, y := a[lo:hi], b[lo:hi]
		y = y[:len(x)]
		var word uint64
		for j, v := range x {
			word |= b2u(v == y[j]) << uint(j)
		}
		out[w] = word
	}
}

func ltVV[T ordered](a, b []T, out []uint64) {
	b = b[:len(a)]
	for w := range out {
		lo, hi := w*64, min(len(a), w*64+64)
		x, y := a[lo:hi], b[lo:hi]
		y = y[:len(x)]
		var word uint64
		for j, v := range x {
			word |= b2u(v < y[j]) << uint(j)
		}
		out[w] = word
	}
}

func leVV[T ordered](a, b []T, out []uint64) {
	b = b[:len(a)]
	for w := range out {
		lo, hi := w*64, min(len(a), w*64+64)
		x, y := a[lo:hi], b[lo:hi]
		y = y[:len(x)]
		var word uint64
		for j, v := range x {
			word |= b2u(v <= y[j]) << uint(j)
		}
		out[w] = word
	}
}

// floatCmp compares doubles with Spark's NaN ordering.
type floatCmp struct {
	op CompareOp
	c  float64
}

func (k *floatCmp) compare(la, ra arrow.Array, _ int, out []uint64) {
	a := fixedValues[float64](la)
	if ra != nil {
		b := fixedValues[float64](ra)
		switch k.op {
		case CompareEq:
			floatEqVV(a, b, out)
		case CompareLt:
			floatLtVV(a, b, out)
		case CompareLe:
			floatLeVV(a, b, out)
		case CompareGt:
			floatLtVV(b, a, out)
		case CompareGe:
			floatLeVV(b, a, out)
		}
		return
	}
	c := k.c
	if c != c {
		// Against NaN: only NaN is equal, everything else is smaller.
		switch k.op {
		case CompareEq, CompareGe:
			nanWords(a, out, false)
		case CompareLt:
			nanWords(a, out, true)
		case CompareLe:
			fillWords(out, true)
		case CompareGt:
			fillWords(out, false)
		}
		return
	}
	switch k.op {
	case CompareEq, CompareLt, CompareLe:
		cmpVS(k.op, a, c, out)
	case CompareGt:
		ltSV(c, a, out)
		orNaN(a, out)
	case CompareGe:
		leSV(c, a, out)
		orNaN(a, out)
	}
}

// nanWords sets the bits of the rows that are NaN (or, with negate, not
// NaN).
func nanWords(a []float64, out []uint64, negate bool) {
	flip := uint64(0)
	if negate {
		flip = ^flip
	}
	for w := range out {
		var word uint64
		for j, v := range a[w*64 : min(len(a), w*64+64)] {
			word |= b2u(v != v) << uint(j)
		}
		out[w] = word ^ flip
	}
}

// orNaN adds the NaN rows: NaN is greater than any number.
func orNaN(a []float64, out []uint64) {
	for w := range out {
		var word uint64
		for j, v := range a[w*64 : min(len(a), w*64+64)] {
			word |= b2u(v != v) << uint(j)
		}
		out[w] |= word
	}
}

func fillWords(out []uint64, set bool) {
	v := uint64(0)
	if set {
		v = ^v
	}
	for w := range out {
		out[w] = v
	}
}

func floatEqVV(a, b []float64, out []uint64) {
	b = b[:len(a)]
	for w := range out {
		lo, hi := w*64, min(len(a), w*64+64)
		x, y := a[lo:hi], b[lo:hi]
		y = y[:len(x)]
		var word uint64
		for j, v := range x {
			u := y[j]
			word |= b2u(v == u || v != v && u != u) << uint(j)
		}
		out[w] = word
	}
}

func floatLtVV(a, b []float64, out []uint64) {
	b = b[:len(a)]
	for w := range out {
		lo, hi := w*64, min(len(a), w*64+64)
		x, y := a[lo:hi], b[lo:hi]
		y = y[:len(x)]
		var word uint64
		for j, v := range x {
			u := y[j]
			word |= b2u(v < u || v == v && u != u) << uint(j)
		}
		out[w] = word
	}
}

func floatLeVV(a, b []float64, out []uint64) {
	b = b[:len(a)]
	for w := range out {
		lo, hi := w*64, min(len(a), w*64+64)
		x, y := a[lo:hi], b[lo:hi]
		y = y[:len(x)]
		var word uint64
		for j, v := range x {
			u := y[j]
			word |= b2u(v <= u || u != u) << uint(j)
		}
		out[w] = word
	}
}

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

// decimalCmp compares decimals of the same scale.
type decimalCmp struct {
	op CompareOp
	c  decimal128.Num
}

func (k *decimalCmp) compare(la, ra arrow.Array, n int, out []uint64) {
	mask := cmpMask(k.op)
	a := fixedValues[decimal128.Num](la)
	var b []decimal128.Num
	if ra != nil {
		b = fixedValues[decimal128.Num](ra)
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

// bytesCmp compares strings or binaries byte-wise (Spark's UTF8String
// order).
type bytesCmp struct {
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

func (k *bytesCmp) compare(la, ra arrow.Array, n int, out []uint64) {
	ao, ad := binaryValues(la)
	if ra == nil && k.op == CompareEq {
		// The hot path of string = 'constant': lengths first.
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

// boolCmp compares booleans (false < true) a word at a time.
type boolCmp struct {
	op CompareOp
	c  bool
}

func (k *boolCmp) compare(la, ra arrow.Array, _ int, out []uint64) {
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
