package vector

import (
	"math"
	"math/bits"

	"github.com/apache/arrow/go/v17/arrow"
	"github.com/apache/arrow/go/v17/arrow/decimal128"
	"github.com/apache/arrow/go/v17/arrow/memory"
)

// Integer and double arithmetic kernels. Integer + - * add without checks
// in the loop and fold an overflow indicator into one accumulator with
// branch-free bit tricks; only when the accumulator says some row
// overflowed does the evaluator look for the row (firstIntOverflow), and
// rows that are null do not count (their values may be garbage).

// operand is one side of a kernel: a column's values or a constant.
type operand[T any] struct {
	vals  []T
	c     T
	konst bool
}

// operandOf views arr (nil for a constant operand whose value is v).
func operandOf[T any](arr arrow.Array, v any) operand[T] {
	if arr != nil {
		return operand[T]{vals: fixedSlice[T](arr)}
	}
	c, _ := v.(T)
	return operand[T]{c: c, konst: true}
}

func (o *operand[T]) at(i int) T {
	if o.konst {
		return o.c
	}
	return o.vals[i]
}

// intArith computes x op y into out; false when some row (perhaps a null
// one) overflowed. % assumes zero divisors were ruled out for valid rows.
func intArith[T int32 | int64](op ArithOp, x, y operand[T], out []T) bool {
	switch op {
	case ArithAdd:
		switch {
		case !x.konst && !y.konst:
			return addVV(x.vals, y.vals, out) >= 0
		case y.konst:
			return addVS(x.vals, y.c, out) >= 0
		default:
			return addVS(y.vals, x.c, out) >= 0
		}
	case ArithSub:
		switch {
		case !x.konst && !y.konst:
			return subVV(x.vals, y.vals, out) >= 0
		case y.konst:
			return subVS(x.vals, y.c, out) >= 0
		default:
			return subSV(x.c, y.vals, out) >= 0
		}
	case ArithMul:
		if y.konst {
			x, y = y, x
		}
		switch o := any(out).(type) {
		case []int32:
			a, b := any(x).(operand[int32]), any(y).(operand[int32])
			if a.konst {
				return mulVS32(b.vals, a.c, o) == 0
			}
			return mulVV32(a.vals, b.vals, o) == 0
		case []int64:
			a, b := any(x).(operand[int64]), any(y).(operand[int64])
			if a.konst {
				return mulVS64(b.vals, a.c, o) == 0
			}
			return mulVV64(a.vals, b.vals, o) == 0
		}
	case ArithMod:
		switch {
		case !x.konst && !y.konst:
			modVV(x.vals, y.vals, out)
		case y.konst:
			modVS(x.vals, y.c, out)
		default:
			modSV(x.c, y.vals, out)
		}
	}
	return true
}

// addVV stores a+b (wrapping) and returns the OR over rows of
// (a^s)&(b^s), which is negative iff some sum overflowed: an overflow is
// exactly a sum whose sign differs from both operands' signs.
func addVV[T int32 | int64](a, b, out []T) T {
	b, out = b[:len(a)], out[:len(a)]
	var acc T
	for i, x := range a {
		y := b[i]
		s := x + y
		out[i] = s
		acc |= (x ^ s) & (y ^ s)
	}
	return acc
}

func addVS[T int32 | int64](a []T, c T, out []T) T {
	out = out[:len(a)]
	var acc T
	for i, x := range a {
		s := x + c
		out[i] = s
		acc |= (x ^ s) & (c ^ s)
	}
	return acc
}

// subVV: x-y overflows iff x and y differ in sign and the result's sign
// differs from x's.
func subVV[T int32 | int64](a, b, out []T) T {
	b, out = b[:len(a)], out[:len(a)]
	var acc T
	for i, x := range a {
		y := b[i]
		s := x - y
		out[i] = s
		acc |= (x ^ y) & (x ^ s)
	}
	return acc
}

func subVS[T int32 | int64](a []T, c T, out []T) T {
	out = out[:len(a)]
	var acc T
	for i, x := range a {
		s := x - c
		out[i] = s
		acc |= (x ^ c) & (x ^ s)
	}
	return acc
}

func subSV[T int32 | int64](c T, b []T, out []T) T {
	out = out[:len(b)]
	var acc T
	for i, y := range b {
		s := c - y
		out[i] = s
		acc |= (c ^ y) & (c ^ s)
	}
	return acc
}

// mulVV32 multiplies in 64 bits; the accumulator is non-zero iff some
// product does not survive the round trip through int32.
func mulVV32(a, b, out []int32) int64 {
	b, out = b[:len(a)], out[:len(a)]
	var acc int64
	for i, x := range a {
		p := int64(x) * int64(b[i])
		out[i] = int32(p)
		acc |= p ^ int64(int32(p))
	}
	return acc
}

func mulVS32(a []int32, c int32, out []int32) int64 {
	out = out[:len(a)]
	var acc int64
	cc := int64(c)
	for i, x := range a {
		p := int64(x) * cc
		out[i] = int32(p)
		acc |= p ^ int64(int32(p))
	}
	return acc
}

// mul64 returns the low 64 bits of x*y and a word that is non-zero iff the
// 128-bit signed product does not fit 64 bits: the signed high word
// (unsigned high word corrected for negative operands) must equal the sign
// extension of the low word.
func mul64(x, y int64) (int64, int64) {
	hi, lo := bits.Mul64(uint64(x), uint64(y))
	h := int64(hi) - (x>>63)&y - (y>>63)&x
	return int64(lo), h ^ (int64(lo) >> 63)
}

// mulVV64 multiplies in one unchecked pass that also ORs the operands'
// magnitudes (x ^ x>>63 is |x| for x >= 0 and |x|-1 below): when their bit
// lengths add up to at most 62, no product can overflow, since |x*y| <=
// 2^(Lx+Ly). That is the common case and costs what an unchecked loop
// costs; otherwise a second pass checks every product exactly.
func mulVV64(a, b, out []int64) int64 {
	b, out = b[:len(a)], out[:len(a)]
	var ma, mb uint64
	for i, x := range a {
		y := b[i]
		out[i] = x * y
		ma |= uint64(x ^ x>>63)
		mb |= uint64(y ^ y>>63)
	}
	if bits.Len64(ma)+bits.Len64(mb) <= 62 {
		return 0
	}
	var acc int64
	for i, x := range a {
		_, o := mul64(x, b[i])
		acc |= o
	}
	return acc
}

func mulVS64(a []int64, c int64, out []int64) int64 {
	out = out[:len(a)]
	var ma uint64
	for i, x := range a {
		out[i] = x * c
		ma |= uint64(x ^ x>>63)
	}
	if bits.Len64(ma)+bits.Len64(uint64(c^c>>63)) <= 62 {
		return 0
	}
	var acc int64
	for _, x := range a {
		_, o := mul64(x, c)
		acc |= o
	}
	return acc
}

// The % kernels skip zero divisors (only null rows can have them by now);
// Go defines MinInt % -1 as 0, as Java does.
func modVV[T int32 | int64](a, b, out []T) {
	b, out = b[:len(a)], out[:len(a)]
	for i, x := range a {
		if y := b[i]; y != 0 {
			out[i] = x % y
		} else {
			out[i] = 0
		}
	}
}

func modVS[T int32 | int64](a []T, c T, out []T) {
	out = out[:len(a)]
	if c == 0 {
		clear(out)
		return
	}
	for i, x := range a {
		out[i] = x % c
	}
}

func modSV[T int32 | int64](c T, b []T, out []T) {
	out = out[:len(b)]
	for i, y := range b {
		if y != 0 {
			out[i] = c % y
		} else {
			out[i] = 0
		}
	}
}

// intOverflows reports whether x op y overflows T (error path only).
func intOverflows[T int32 | int64](op ArithOp, x, y T) bool {
	switch op {
	case ArithAdd:
		s := x + y
		return (x^s)&(y^s) < 0
	case ArithSub:
		s := x - y
		return (x^y)&(x^s) < 0
	case ArithMul:
		if a, ok := any(x).(int32); ok {
			p := int64(a) * int64(any(y).(int32))
			return p != int64(int32(p))
		}
		_, o := mul64(int64(x), int64(y))
		return o != 0
	}
	return false
}

// firstIntOverflow finds the first valid row whose operation overflows, or
// -1 when only null rows did.
func firstIntOverflow[T int32 | int64](op ArithOp, x, y operand[T], la, ra arrow.Array, n int) int {
	for i := 0; i < n; i++ {
		if intOverflows(op, x.at(i), y.at(i)) && rowValid(la, i) && rowValid(ra, i) {
			return i
		}
	}
	return -1
}

// firstZeroDivisor finds the first row whose divisor is zero while both
// operands are valid, or -1. A null operand makes the row null first, as
// in Spark.
func firstZeroDivisor[T int32 | int64 | float64](y operand[T], la, ra arrow.Array, n int) int {
	if y.konst {
		if y.c != 0 {
			return -1
		}
		for i := 0; i < n; i++ {
			if rowValid(la, i) {
				return i
			}
		}
		return -1
	}
	var z uint64
	for _, v := range y.vals {
		z |= b2u(v == 0)
	}
	if z == 0 {
		return -1
	}
	for i, v := range y.vals {
		if v == 0 && rowValid(la, i) && rowValid(ra, i) {
			return i
		}
	}
	return -1
}

// floatArith computes x op y over doubles. Division by zero was ruled out
// for valid rows; null rows may produce Inf or NaN, which nobody reads.
func floatArith(op ArithOp, x, y operand[float64], out []float64) {
	switch {
	case !x.konst && !y.konst:
		a, b := x.vals[:len(out)], y.vals[:len(out)]
		switch op {
		case ArithAdd:
			for i := range out {
				out[i] = a[i] + b[i]
			}
		case ArithSub:
			for i := range out {
				out[i] = a[i] - b[i]
			}
		case ArithMul:
			for i := range out {
				out[i] = a[i] * b[i]
			}
		case ArithDiv:
			for i := range out {
				out[i] = a[i] / b[i]
			}
		case ArithMod:
			for i := range out {
				out[i] = math.Mod(a[i], b[i])
			}
		}
	case y.konst:
		a, c := x.vals[:len(out)], y.c
		switch op {
		case ArithAdd:
			for i := range out {
				out[i] = a[i] + c
			}
		case ArithSub:
			for i := range out {
				out[i] = a[i] - c
			}
		case ArithMul:
			for i := range out {
				out[i] = a[i] * c
			}
		case ArithDiv:
			for i := range out {
				out[i] = a[i] / c
			}
		case ArithMod:
			for i := range out {
				out[i] = math.Mod(a[i], c)
			}
		}
	default:
		c, b := x.c, y.vals[:len(out)]
		switch op {
		case ArithAdd:
			for i := range out {
				out[i] = c + b[i]
			}
		case ArithSub:
			for i := range out {
				out[i] = c - b[i]
			}
		case ArithMul:
			for i := range out {
				out[i] = c * b[i]
			}
		case ArithDiv:
			for i := range out {
				out[i] = c / b[i]
			}
		case ArithMod:
			for i := range out {
				out[i] = math.Mod(c, b[i])
			}
		}
	}
}

// negateInts negates a column; it returns the first valid row holding the
// smallest value (whose negation overflows), or -1. v & -v is negative
// only for the smallest value.
func negateInts[T int32 | int64](mem memory.Allocator, arr arrow.Array) (*memory.Buffer, int) {
	vals := fixedSlice[T](arr)
	buf, out := newValues[T](mem, arr.Len())
	var acc T
	for i, v := range vals {
		s := -v
		out[i] = s
		acc |= v & s
	}
	if acc < 0 {
		for i, v := range vals {
			if v&-v < 0 && rowValid(arr, i) {
				return buf, i
			}
		}
	}
	return buf, -1
}

func negateFloats(mem memory.Allocator, arr arrow.Array) *memory.Buffer {
	buf, out := newValues[float64](mem, arr.Len())
	for i, v := range fixedSlice[float64](arr) {
		out[i] = -v
	}
	return buf
}

func negateDecimals(mem memory.Allocator, arr arrow.Array) *memory.Buffer {
	buf, out := newValues[decimal128.Num](mem, arr.Len())
	for i, v := range fixedSlice[decimal128.Num](arr) {
		out[i] = v.Negate()
	}
	return buf
}
