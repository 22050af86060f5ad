package vector

import (
	"github.com/apache/arrow/go/v17/arrow"
)

// Comparison kernels over fixed-width numbers. Each writes one result bit
// per row into words of 64 rows (offset 0). A word is built from eight
// blocks of eight comparisons with constant shifts, which the compiler
// turns into branch-free SETcc sequences: about four times faster here
// than a loop with a variable shift (and than a loop with a branch per
// row on unpredictable data). Go does not inline a helper for the eight
// comparisons, so each operator spells its block out.
//
// Kernels see only the operators =, <, <=, > and >=; <> and <=> are
// derived from = by the evaluator, and a constant is always the right
// operand (the binder swaps it there).
//
// Doubles compare as Spark orders them: NaN equals NaN and is larger than
// every other value, and -0.0 equals 0.0. The kernels compare with the
// machine's operators first and patch the rows holding NaN afterwards,
// only when a batch has any.

// cmpKernel computes the comparison of la and ra (ra nil: the kernel's
// constant) for n rows into out.
type cmpKernel interface {
	compare(la, ra arrow.Array, n int, out []uint64)
}

type ordered interface {
	~int8 | ~int16 | ~int32 | ~int64 | ~uint8 | ~uint16 | ~uint32 | ~uint64 | ~float32 | ~float64
}

// cmpFixed compares integers (also dates and timestamps).
type cmpFixed[T int32 | int64] struct {
	op CompareOp
	c  T
}

func (k *cmpFixed[T]) compare(la, ra arrow.Array, _ int, out []uint64) {
	a := fixedSlice[T](la)
	if ra == nil {
		cmpVS(k.op, a, k.c, out)
		return
	}
	cmpVV(k.op, a, fixedSlice[T](ra), out)
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

// eqVS: a[i] == c.
func eqVS[T ordered](a []T, c T, out []uint64) {
	full := len(a) / 64
	for w := range full {
		blk := a[w*64 : w*64+64]
		var word uint64
		for j := 0; j < 64; j += 8 {
			x := (*[8]T)(blk[j:])
			word |= (b2u(x[0] == c) | b2u(x[1] == c)<<1 | b2u(x[2] == c)<<2 | b2u(x[3] == c)<<3 |
				b2u(x[4] == c)<<4 | b2u(x[5] == c)<<5 | b2u(x[6] == c)<<6 | b2u(x[7] == c)<<7) << uint(j)
		}
		out[w] = word
	}
	if full < len(out) {
		var word uint64
		for j, v := range a[full*64:] {
			word |= b2u(v == c) << uint(j)
		}
		out[full] = word
	}
}

// ltVS: a[i] < c.
func ltVS[T ordered](a []T, c T, out []uint64) {
	full := len(a) / 64
	for w := range full {
		blk := a[w*64 : w*64+64]
		var word uint64
		for j := 0; j < 64; j += 8 {
			x := (*[8]T)(blk[j:])
			word |= (b2u(x[0] < c) | b2u(x[1] < c)<<1 | b2u(x[2] < c)<<2 | b2u(x[3] < c)<<3 |
				b2u(x[4] < c)<<4 | b2u(x[5] < c)<<5 | b2u(x[6] < c)<<6 | b2u(x[7] < c)<<7) << uint(j)
		}
		out[w] = word
	}
	if full < len(out) {
		var word uint64
		for j, v := range a[full*64:] {
			word |= b2u(v < c) << uint(j)
		}
		out[full] = word
	}
}

// leVS: a[i] <= c.
func leVS[T ordered](a []T, c T, out []uint64) {
	full := len(a) / 64
	for w := range full {
		blk := a[w*64 : w*64+64]
		var word uint64
		for j := 0; j < 64; j += 8 {
			x := (*[8]T)(blk[j:])
			word |= (b2u(x[0] <= c) | b2u(x[1] <= c)<<1 | b2u(x[2] <= c)<<2 | b2u(x[3] <= c)<<3 |
				b2u(x[4] <= c)<<4 | b2u(x[5] <= c)<<5 | b2u(x[6] <= c)<<6 | b2u(x[7] <= c)<<7) << uint(j)
		}
		out[w] = word
	}
	if full < len(out) {
		var word uint64
		for j, v := range a[full*64:] {
			word |= b2u(v <= c) << uint(j)
		}
		out[full] = word
	}
}

// ltSV: c < a[i], that is a[i] > c.
func ltSV[T ordered](c T, a []T, out []uint64) {
	full := len(a) / 64
	for w := range full {
		blk := a[w*64 : w*64+64]
		var word uint64
		for j := 0; j < 64; j += 8 {
			x := (*[8]T)(blk[j:])
			word |= (b2u(c < x[0]) | b2u(c < x[1])<<1 | b2u(c < x[2])<<2 | b2u(c < x[3])<<3 |
				b2u(c < x[4])<<4 | b2u(c < x[5])<<5 | b2u(c < x[6])<<6 | b2u(c < x[7])<<7) << uint(j)
		}
		out[w] = word
	}
	if full < len(out) {
		var word uint64
		for j, v := range a[full*64:] {
			word |= b2u(c < v) << uint(j)
		}
		out[full] = word
	}
}

// leSV: c <= a[i].
func leSV[T ordered](c T, a []T, out []uint64) {
	full := len(a) / 64
	for w := range full {
		blk := a[w*64 : w*64+64]
		var word uint64
		for j := 0; j < 64; j += 8 {
			x := (*[8]T)(blk[j:])
			word |= (b2u(c <= x[0]) | b2u(c <= x[1])<<1 | b2u(c <= x[2])<<2 | b2u(c <= x[3])<<3 |
				b2u(c <= x[4])<<4 | b2u(c <= x[5])<<5 | b2u(c <= x[6])<<6 | b2u(c <= x[7])<<7) << uint(j)
		}
		out[w] = word
	}
	if full < len(out) {
		var word uint64
		for j, v := range a[full*64:] {
			word |= b2u(c <= v) << uint(j)
		}
		out[full] = word
	}
}

// eqVV: a[i] == b[i].
func eqVV[T ordered](a, b []T, out []uint64) {
	b = b[:len(a)]
	full := len(a) / 64
	for w := range full {
		p, q := a[w*64:w*64+64], b[w*64:w*64+64]
		var word uint64
		for j := 0; j < 64; j += 8 {
			x, y := (*[8]T)(p[j:]), (*[8]T)(q[j:])
			word |= (b2u(x[0] == y[0]) | b2u(x[1] == y[1])<<1 | b2u(x[2] == y[2])<<2 | b2u(x[3] == y[3])<<3 |
				b2u(x[4] == y[4])<<4 | b2u(x[5] == y[5])<<5 | b2u(x[6] == y[6])<<6 | b2u(x[7] == y[7])<<7) << uint(j)
		}
		out[w] = word
	}
	if full < len(out) {
		q := b[full*64:]
		var word uint64
		for j, v := range a[full*64:] {
			word |= b2u(v == q[j]) << uint(j)
		}
		out[full] = word
	}
}

// ltVV: a[i] < b[i].
func ltVV[T ordered](a, b []T, out []uint64) {
	b = b[:len(a)]
	full := len(a) / 64
	for w := range full {
		p, q := a[w*64:w*64+64], b[w*64:w*64+64]
		var word uint64
		for j := 0; j < 64; j += 8 {
			x, y := (*[8]T)(p[j:]), (*[8]T)(q[j:])
			word |= (b2u(x[0] < y[0]) | b2u(x[1] < y[1])<<1 | b2u(x[2] < y[2])<<2 | b2u(x[3] < y[3])<<3 |
				b2u(x[4] < y[4])<<4 | b2u(x[5] < y[5])<<5 | b2u(x[6] < y[6])<<6 | b2u(x[7] < y[7])<<7) << uint(j)
		}
		out[w] = word
	}
	if full < len(out) {
		q := b[full*64:]
		var word uint64
		for j, v := range a[full*64:] {
			word |= b2u(v < q[j]) << uint(j)
		}
		out[full] = word
	}
}

// leVV: a[i] <= b[i].
func leVV[T ordered](a, b []T, out []uint64) {
	b = b[:len(a)]
	full := len(a) / 64
	for w := range full {
		p, q := a[w*64:w*64+64], b[w*64:w*64+64]
		var word uint64
		for j := 0; j < 64; j += 8 {
			x, y := (*[8]T)(p[j:]), (*[8]T)(q[j:])
			word |= (b2u(x[0] <= y[0]) | b2u(x[1] <= y[1])<<1 | b2u(x[2] <= y[2])<<2 | b2u(x[3] <= y[3])<<3 |
				b2u(x[4] <= y[4])<<4 | b2u(x[5] <= y[5])<<5 | b2u(x[6] <= y[6])<<6 | b2u(x[7] <= y[7])<<7) << uint(j)
		}
		out[w] = word
	}
	if full < len(out) {
		q := b[full*64:]
		var word uint64
		for j, v := range a[full*64:] {
			word |= b2u(v <= q[j]) << uint(j)
		}
		out[full] = word
	}
}

// cmpFloat compares doubles with Spark's NaN ordering.
type cmpFloat struct {
	op CompareOp
	c  float64
}

func (k *cmpFloat) compare(la, ra arrow.Array, _ int, out []uint64) {
	a := fixedSlice[float64](la)
	if ra != nil {
		b := fixedSlice[float64](ra)
		cmpVV(k.op, a, b, out)
		if hasNaN(a) || hasNaN(b) {
			patchNaNVV(k.op, a, b, out)
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
	cmpVS(k.op, a, c, out)
	if (k.op == CompareGt || k.op == CompareGe) && hasNaN(a) {
		// NaN is greater than any number.
		nan := make([]uint64, len(out))
		nanWords(a, nan, false)
		for w := range out {
			out[w] |= nan[w]
		}
	}
}

// hasNaN reports whether any value is NaN.
func hasNaN(a []float64) bool {
	var acc uint64
	for _, v := range a {
		acc |= b2u(v != v)
	}
	return acc != 0
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

// patchNaNVV corrects a column-column comparison computed with IEEE
// semantics for Spark's: NaN = NaN, and NaN above every number.
func patchNaNVV(op CompareOp, a, b []float64, out []uint64) {
	na, nb := make([]uint64, len(out)), make([]uint64, len(out))
	nanWords(a, na, false)
	nanWords(b, nb, false)
	for w := range out {
		x, y := na[w], nb[w]
		switch op {
		case CompareEq:
			out[w] |= x & y
		case CompareLt: // a < NaN for every non-NaN a
			out[w] |= ^x & y
		case CompareLe:
			out[w] |= y
		case CompareGt:
			out[w] |= x &^ y
		case CompareGe:
			out[w] |= x
		}
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
