package vector

import (
	"fmt"
	"math"
	"unicode/utf8"

	"github.com/apache/arrow/go/v17/arrow"
	"github.com/apache/arrow/go/v17/arrow/memory"
)

// isnan(x), getbit(x, pos) and chr(n): small scalar functions of Spark's
// (IsNaN, BitwiseGet, Chr).

// bindIsNaN binds isnan(x): whether the double (numbers and strings are
// read as doubles) is NaN; a NULL is false, not NULL, as Spark's IsNaN.
func bindIsNaN(f *FuncExpr, in *arrow.Schema, mem memory.Allocator, args []Evaluator) (Evaluator, error) {
	if dt := Unwrap(args[0].DataType()); !IsNumeric(dt) && !IsStringLike(dt) && dt.ID() != arrow.NULL {
		return nil, fmt.Errorf("isnan needs a double or a float, not %s: %w", TypeName(dt), ErrType)
	}
	return bindRowsLenient(f, in, mem, args, []rowKind{rowFloat}, Boolean, rowKernels{
		bool: func(a []rowArg, i int) (bool, bool, error) {
			return a[0].valid(i) && math.IsNaN(a[0].float(i)), true, nil
		},
	}, 1)
}

// bindGetBit binds getbit(x, pos) (bit_get): bit pos (0 is the lowest)
// of the integer x as a TINYINT 0 or 1. A position below zero or at or
// past the width of x's type is an error, as in Spark.
func bindGetBit(f *FuncExpr, in *arrow.Schema, mem memory.Allocator, args []Evaluator) (Evaluator, error) {
	dt := Unwrap(args[0].DataType())
	var width int64
	switch dt.ID() {
	case arrow.INT8:
		width = 8
	case arrow.INT16:
		width = 16
	case arrow.INT32:
		width = 32
	case arrow.INT64, arrow.NULL:
		width = 64
	default:
		return nil, fmt.Errorf("the first argument of %s must be an integer, not %s: %w", f.Name, TypeName(dt), ErrType)
	}
	if pt := Unwrap(args[1].DataType()); !IsIntegral(pt) && pt.ID() != arrow.NULL {
		return nil, fmt.Errorf("the bit position of %s must be an integer, not %s: %w", f.Name, TypeName(pt), ErrType)
	}
	return bindRows(f, in, mem, args, []rowKind{rowInt, rowInt}, Int8, rowKernels{
		num: func(a []rowArg, i int) (int64, bool, error) {
			pos := a[1].int(i)
			switch {
			case pos < 0:
				return 0, false, fmt.Errorf("Invalid bit position: %d is less than zero: %w", pos, ErrInvalidInput)
			case pos >= width:
				return 0, false, fmt.Errorf("Invalid bit position: %d exceeds the bit upper limit: %w", pos, ErrInvalidInput)
			}
			return int64(uint64(a[0].int(i)) >> uint(pos) & 1), true, nil
		},
	})
}

// chrKernel is chr(n) (char): the character whose code is n modulo 256
// (Latin-1), the empty string for a negative n and U+0000 for a multiple
// of 256, as Spark's Chr.
func chrKernel(a []rowArg, i int, dst []byte) ([]byte, bool, error) {
	n := a[0].int(i)
	if n < 0 {
		return dst, true, nil
	}
	return utf8.AppendRune(dst, rune(n&0xFF)), true, nil
}

// bindChr binds chr(n): n is an integer, or a number or string cast to
// BIGINT as Spark's implicit cast to its LongType input does.
func bindChr(f *FuncExpr, in *arrow.Schema, mem memory.Allocator, args []Evaluator) (Evaluator, error) {
	if dt := Unwrap(args[0].DataType()); !IsNumeric(dt) && !IsStringLike(dt) && dt.ID() != arrow.NULL {
		return nil, fmt.Errorf("%s needs a bigint, not %s: %w", f.Name, TypeName(dt), ErrType)
	}
	return bindRows(f, in, mem, args, []rowKind{rowInt}, String, rowKernels{str: chrKernel})
}

func init() {
	functions["isnan"] = funcSpec{1, 1, rowBinder("isnan", bindIsNaN)}
	functions["getbit"] = funcSpec{2, 2, rowBinder("getbit", bindGetBit)}
	functions["bit_get"] = funcSpec{2, 2, rowBinder("bit_get", bindGetBit)}
	functions["chr"] = funcSpec{1, 1, rowBinder("chr", bindChr)}
}
