package vector

import (
	"fmt"
	"math"

	"github.com/apache/arrow/go/v17/arrow"
	"github.com/apache/arrow/go/v17/arrow/memory"
)

// bindOverlay binds overlay(input, replace, pos [, len]), the function
// behind SQL's OVERLAY(input PLACING replace FROM pos [FOR len]): input's
// characters (bytes for BINARY) before pos, then replace, then input's
// from pos+len on. A len below zero, or none, is replace's length.
//
// input and replace are both STRING or both BINARY, as in Spark (other
// atomic types are read as strings); pos and len are Spark's INT, so
// pos+len wraps as a Java int does.
func bindOverlay(f *FuncExpr, in *arrow.Schema, mem memory.Allocator, args []Evaluator) (Evaluator, error) {
	bin0 := Unwrap(args[0].DataType()).ID() == arrow.BINARY
	bin1 := Unwrap(args[1].DataType()).ID() == arrow.BINARY
	if bin0 != bin1 && args[0].DataType().ID() != arrow.NULL && args[1].DataType().ID() != arrow.NULL {
		return nil, fmt.Errorf("the input and the replacement of overlay must have the same type, not %s and %s: %w",
			TypeName(args[0].DataType()), TypeName(args[1].DataType()), ErrType)
	}
	dt := resultBytesType(args[:2])
	bin := dt.ID() == arrow.BINARY
	if len(args) == 3 {
		ev, err := Lit(int32(-1)).Bind(in, mem)
		if err != nil {
			return nil, err
		}
		args = append(args, ev)
		f = &FuncExpr{Name: f.Name, Args: append(append([]Expr(nil), f.Args...), Lit(int32(-1))), Loc: f.Loc, Mode: f.Mode, bind: f.bind}
	}
	kind := bytesKind(dt)
	return bindRows(f, in, mem, args, []rowKind{kind, kind, rowInt, rowInt}, dt, rowKernels{
		size: func(a []rowArg, i int) int64 { return int64(len(a[0].str(i)) + len(a[1].str(i))) },
		str: func(a []rowArg, i int, dst []byte) ([]byte, bool, error) {
			s, rep := a[0].str(i), a[1].str(i)
			pos, n := int32(a[2].int(i)), int32(a[3].int(i))
			if n < 0 {
				n = int32(charCount(rep, bin))
			}
			dst = append(dst, substringOf(s, 1, int64(pos-1), bin || fnIsASCII(s))...)
			dst = append(dst, rep...)
			// Spark adds the two INTs in Java's wrapping arithmetic.
			return append(dst, substringOf(s, int64(pos+n), math.MaxInt32, bin || fnIsASCII(s))...), true, nil
		},
	})
}
