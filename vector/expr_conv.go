package vector

import (
	"github.com/apache/arrow/go/v17/arrow"
	"github.com/apache/arrow/go/v17/arrow/memory"
)

// conv(num, fromBase, toBase) converts the number text num from base
// fromBase to base toBase, as Spark's NumberConverter: bases 2 to 36 in
// absolute value (else NULL), the digits read up to the first that is not
// one of fromBase (none gives 0), a leading '-' negates in two's
// complement over 64 bits unless toBase is negative, which makes the
// result signed. A value beyond 64 bits raises [ARITHMETIC_OVERFLOW]
// under ANSI and is 2^64-1 without it.

// digitOf is the value of c as a digit of base radix, or -1.
func digitOf(c byte, radix int) int {
	var d int
	switch {
	case c >= '0' && c <= '9':
		d = int(c - '0')
	case c >= 'a' && c <= 'z':
		d = int(c-'a') + 10
	case c >= 'A' && c <= 'Z':
		d = int(c-'A') + 10
	default:
		return -1
	}
	if d >= radix {
		return -1
	}
	return d
}

// convKernel is the row kernel of conv; strict raises on overflow.
func convKernel(strict bool) func(a []rowArg, i int, dst []byte) ([]byte, bool, error) {
	return func(a []rowArg, i int, dst []byte) ([]byte, bool, error) {
		n, from, to := a[0].str(i), a[1].int(i), a[2].int(i)
		absTo := to
		if absTo < 0 {
			absTo = -absTo
		}
		if from < 2 || from > 36 || absTo < 2 || absTo > 36 || len(n) == 0 {
			return nil, false, nil
		}
		negative := n[0] == '-'
		if negative {
			n = n[1:]
		}
		radix := uint64(from)
		var v uint64
		bound := (^uint64(0) - radix) / radix
		for _, c := range n {
			d := digitOf(c, int(from))
			if d < 0 {
				break
			}
			if v >= bound && (^uint64(0)-uint64(d))/radix < v {
				if strict {
					return nil, false, &SparkError{Class: "ARITHMETIC_OVERFLOW", Err: ErrOverflow, Msg: "Overflow in function conv(). " + ansiHint}
				}
				v = ^uint64(0)
				break
			}
			v = v*radix + uint64(d)
		}
		if negative && to > 0 {
			if int64(v) < 0 {
				v = ^uint64(0)
			} else {
				v = -v
			}
		}
		if to < 0 && int64(v) < 0 {
			v = -v
			negative = true
		}
		var buf [65]byte
		k := len(buf)
		out := uint64(absTo)
		for {
			k--
			d := byte(v % out)
			if d < 10 {
				buf[k] = '0' + d
			} else {
				buf[k] = 'A' + d - 10
			}
			v /= out
			if v == 0 {
				break
			}
		}
		if negative && to < 0 {
			k--
			buf[k] = '-'
		}
		return append(dst, buf[k:]...), true, nil
	}
}

func bindConv(f *FuncExpr, in *arrow.Schema, mem memory.Allocator, args []Evaluator) (Evaluator, error) {
	return bindRows(f, in, mem, args, []rowKind{rowStr, rowInt, rowInt}, String, rowKernels{str: convKernel(f.Mode == ModeANSI)})
}

func init() {
	functions["conv"] = funcSpec{3, 3, rowBinder("conv", bindConv)}
}
