package vector

import (
	"context"

	"github.com/apache/arrow/go/v17/arrow"
	"github.com/apache/arrow/go/v17/arrow/memory"
)

// Float is Spark's FLOAT, a 32-bit IEEE float. Kernels over floats run in
// double and round the result once to float (float32Eval): for + - * and
// % of float operands, and for the functions that keep their argument's
// type (abs, negation, min/max), that is exactly Java's float result.
var Float32 arrow.DataType = arrow.PrimitiveTypes.Float32

// float32Eval rounds the double column of in to float, keeping its nulls.
type float32Eval struct {
	in  Evaluator
	mem memory.Allocator
}

func (e *float32Eval) DataType() arrow.DataType { return Float32 }

func (e *float32Eval) Eval(ctx context.Context, rec arrow.Record) (arrow.Array, error) {
	wide, err := e.in.Eval(ctx, rec)
	if err != nil {
		return nil, err
	}
	defer wide.Release()
	return roundToFloat32(e.mem, wide), nil
}

// roundToFloat32 converts a double array to a float array of the same
// nulls (a new array; arr stays the caller's).
func roundToFloat32(mem memory.Allocator, arr arrow.Array) arrow.Array {
	n := arr.Len()
	buf, out := newValues[float32](mem, n)
	for i, v := range fixedSlice[float64](arr) {
		out[i] = float32(v)
	}
	validity, nulls := copyValidity(mem, arr)
	return newArrayOwning(Float32, n, buf, validity, nulls)
}
