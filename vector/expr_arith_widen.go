package vector

import (
	"context"
	"fmt"
	"math"

	"github.com/apache/arrow/go/v17/arrow"
	"github.com/apache/arrow/go/v17/arrow/array"
	"github.com/apache/arrow/go/v17/arrow/decimal128"
	"github.com/apache/arrow/go/v17/arrow/memory"
)

// Implicit numeric widening for the operands of arithmetic, comparisons,
// IN and CASE: int → bigint → decimal → double, int → decimal, decimal →
// wider decimal, date → timestamp, NULL → anything, dictionary string →
// string. It is deliberately minimal and internal; the CAST expression
// (expr_cast.go) is the user-facing conversion.

const microsPerDay = 86_400_000_000

// constValue reports whether ev is a constant, and its value.
func constValue(ev Evaluator) (any, bool) {
	c, ok := ev.(ConstantEvaluator)
	if !ok {
		return nil, false
	}
	return c.Value(), true
}

// isNullConst reports whether ev is the constant NULL.
func isNullConst(ev Evaluator) bool {
	v, ok := constValue(ev)
	return ok && v == nil
}

// newConst returns a constant evaluator of dt (v canonical, nil for NULL).
func newConst(dt arrow.DataType, v any, mem memory.Allocator) Evaluator {
	return &constEval{dt: dt, v: v, mem: mem}
}

// canWiden reports whether numericWiden converts from to to.
func canWiden(from, to arrow.DataType) bool {
	from, to = Unwrap(from), Unwrap(to)
	if arrow.TypeEqual(from, to) || from.ID() == arrow.NULL {
		return true
	}
	switch from.ID() {
	case arrow.INT8:
		// tinyint meets smallint in CASE, IF, IN and arithmetic: Spark's
		// common type is smallint.
		switch to.ID() {
		case arrow.INT16, arrow.INT32, arrow.INT64, arrow.FLOAT32, arrow.FLOAT64, arrow.DECIMAL128:
			return true
		}
	case arrow.INT16, arrow.INT32:
		switch to.ID() {
		case arrow.INT32, arrow.INT64, arrow.FLOAT32, arrow.FLOAT64, arrow.DECIMAL128:
			return true
		}
	case arrow.INT64:
		switch to.ID() {
		case arrow.INT64, arrow.FLOAT32, arrow.FLOAT64, arrow.DECIMAL128:
			return true
		}
	case arrow.FLOAT32:
		return to.ID() == arrow.FLOAT64
	case arrow.DECIMAL128:
		return to.ID() == arrow.DECIMAL128 || to.ID() == arrow.FLOAT64
	case arrow.DATE32:
		return to.ID() == arrow.TIMESTAMP
	}
	return false
}

// numericWiden returns ev converted to type to. Constants are converted
// once, here; columns are converted per batch. expr and operand name the
// expression and the operand for runtime errors (a decimal that does not
// fit the wider type).
func numericWiden(ev Evaluator, to arrow.DataType, mem memory.Allocator, expr, operand sqlText) (Evaluator, error) {
	from := ev.DataType()
	if arrow.TypeEqual(from, to) {
		return ev, nil
	}
	if d, ok := from.(*arrow.DictionaryType); ok {
		ev, from = Plain(ev, mem), d.ValueType
		if arrow.TypeEqual(from, to) {
			return ev, nil
		}
	}
	if !canWiden(from, to) {
		return nil, fmt.Errorf("cannot convert %s to %s: %w", TypeName(from), TypeName(to), ErrType)
	}
	if v, ok := constValue(ev); ok {
		w, err := widenValue(v, from, to)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", FormatValue(v, from), err)
		}
		return newConst(to, w, mem), nil
	}
	return &widenEval{in: ev, from: from, to: to, mem: mem, expr: expr, operand: operand}, nil
}

// widenValue converts one canonical value; ErrOverflow when a decimal does
// not fit.
func widenValue(v any, from, to arrow.DataType) (any, error) {
	if v == nil {
		return nil, nil
	}
	switch to.ID() {
	case arrow.INT16, arrow.INT32:
		// The canonical value of tinyint, smallint and int is an int32.
		i, _ := toInt64(v)
		return int32(i), nil
	case arrow.INT64:
		i, _ := toInt64(v)
		return i, nil
	case arrow.FLOAT32:
		// An integer becomes the nearest float32, as Java's (float) does;
		// the canonical value is that float32 as a float64.
		if x, ok := v.(float64); ok {
			return float64(float32(x)), nil
		}
		i, _ := toInt64(v)
		return float64(float32(i)), nil
	case arrow.FLOAT64:
		switch x := v.(type) {
		case float64:
			return x, nil
		case decimal128.Num:
			return decimalToFloat64(x, from.(*arrow.Decimal128Type).Scale), nil
		}
		i, _ := toInt64(v)
		return float64(i), nil
	case arrow.DECIMAL128:
		dt := to.(*arrow.Decimal128Type)
		var out decimal128.Num
		ok := false
		if x, isDec := v.(decimal128.Num); isDec {
			out, ok = decimalRescale(x, from.(*arrow.Decimal128Type).Scale, dt.Scale)
			ok = ok && out.FitsInPrecision(dt.Precision)
		} else {
			i, _ := toInt64(v)
			out, ok = decimalFromInt(i, dt)
		}
		if !ok {
			return nil, fmt.Errorf("does not fit %s: %w", TypeName(dt), ErrOverflow)
		}
		return out, nil
	case arrow.TIMESTAMP:
		if d, ok := v.(arrow.Date32); ok {
			if !dateFitsTimestamp(d) {
				return nil, fmt.Errorf("does not fit %s: %w", TypeName(to), ErrOverflow)
			}
			return arrow.Timestamp(int64(d) * microsPerDay), nil
		}
	}
	return v, nil
}

// maxTimestampDay bounds the dates whose midnight is a timestamp: the
// dates of a date32 reach about 5.8 million years, timestamps only 290
// thousand.
const maxTimestampDay = math.MaxInt64 / microsPerDay

// dateFitsTimestamp reports whether the midnight of d is a timestamp, as
// CAST(date AS TIMESTAMP) requires.
func dateFitsTimestamp(d arrow.Date32) bool {
	return int64(d) <= maxTimestampDay && int64(d) >= -maxTimestampDay
}

// widenEval converts the output of a column evaluator per batch.
type widenEval struct {
	in            Evaluator
	from, to      arrow.DataType
	mem           memory.Allocator
	expr, operand sqlText
}

func (w *widenEval) DataType() arrow.DataType { return w.to }

func (w *widenEval) Eval(ctx context.Context, rec arrow.Record) (arrow.Array, error) {
	arr, err := w.in.Eval(ctx, rec)
	if err != nil {
		return nil, err
	}
	defer arr.Release()
	return w.convert(arr)
}

func (w *widenEval) convert(arr arrow.Array) (arrow.Array, error) {
	n := arr.Len()
	if w.from.ID() == arrow.NULL {
		return array.MakeArrayOfNull(w.mem, w.to, n), nil
	}
	validity, nulls := copyValidity(w.mem, arr)
	var values *memory.Buffer
	bad := -1
	switch w.to.ID() {
	case arrow.INT16:
		values = widenInts[int16](w.mem, arr)
	case arrow.INT32:
		values = widenInts[int32](w.mem, arr)
	case arrow.INT64:
		values = widenInts[int64](w.mem, arr)
	case arrow.FLOAT32:
		values = widenInts[float32](w.mem, arr)
	case arrow.FLOAT64:
		if w.from.ID() == arrow.DECIMAL128 {
			buf, out := newValues[float64](w.mem, n)
			scale := w.from.(*arrow.Decimal128Type).Scale
			for i, x := range fixedSlice[decimal128.Num](arr) {
				out[i] = decimalToFloat64(x, scale)
			}
			values = buf
		} else {
			values = widenInts[float64](w.mem, arr)
		}
	case arrow.DECIMAL128:
		values, bad = w.toDecimal(arr)
	case arrow.TIMESTAMP:
		buf, out := newValues[int64](w.mem, n)
		src := fixedSlice[arrow.Date32](arr)
		fits := true
		for i, d := range src {
			out[i] = int64(d) * microsPerDay
			fits = fits && dateFitsTimestamp(d)
		}
		values = buf
		if !fits {
			// Only valid rows count: the values under nulls may be anything.
			for i, d := range src {
				if !dateFitsTimestamp(d) && rowValid(arr, i) {
					bad = i
					break
				}
			}
		}
	}
	if values == nil || bad >= 0 {
		if validity != nil {
			validity.Release()
		}
		if values != nil {
			values.Release()
			values := FormatValue(ValueAt(arr, bad), w.from)
			if !w.operand.empty() {
				values = w.operand.String() + "=" + values
			}
			return nil, &EvalError{Expr: w.expr.String(), Row: bad, Values: values,
				Err: fmt.Errorf("value does not fit %s: %w", TypeName(w.to), ErrOverflow)}
		}
		return nil, fmt.Errorf("vector: cannot widen %s to %s: %w", TypeName(w.from), TypeName(w.to), ErrType)
	}
	return newArrayOwning(w.to, n, values, validity, nulls), nil
}

// toDecimal converts an integer or decimal column to the target decimal
// type; it returns the first valid row that does not fit, or -1.
func (w *widenEval) toDecimal(arr arrow.Array) (*memory.Buffer, int) {
	dt := w.to.(*arrow.Decimal128Type)
	n := arr.Len()
	buf, out := newValues[decimal128.Num](w.mem, n)
	var convert func(i int) (decimal128.Num, bool)
	if from, ok := w.from.(*arrow.Decimal128Type); ok {
		src := fixedSlice[decimal128.Num](arr)
		convert = func(i int) (decimal128.Num, bool) {
			y, ok := decimalRescale(src[i], from.Scale, dt.Scale)
			return y, ok && y.FitsInPrecision(dt.Precision)
		}
	} else {
		convert = func(i int) (decimal128.Num, bool) { return decimalFromInt(intAt(arr, i), dt) }
	}
	fits := true
	for i := range out {
		y, ok := convert(i)
		out[i] = y
		fits = fits && ok
	}
	if fits {
		return buf, -1
	}
	// Only valid rows count: the values under nulls may be anything.
	for i := range out {
		if _, ok := convert(i); !ok && rowValid(arr, i) {
			return buf, i
		}
	}
	return buf, -1
}

// intAt reads row i of an integer array as int64 (error and conversion
// paths that are not per-type specialised).
func intAt(arr arrow.Array, i int) int64 {
	switch a := arr.(type) {
	case *array.Int8:
		return int64(a.Value(i))
	case *array.Int16:
		return int64(a.Value(i))
	case *array.Int32:
		return int64(a.Value(i))
	case *array.Int64:
		return a.Value(i)
	}
	return 0
}

// widenInts converts an integer or float32 column to D.
func widenInts[D int16 | int32 | int64 | float32 | float64](mem memory.Allocator, arr arrow.Array) *memory.Buffer {
	n := arr.Len()
	buf, out := newValues[D](mem, n)
	switch arr.DataType().ID() {
	case arrow.INT8:
		convertSlice(fixedSlice[int8](arr), out)
	case arrow.INT16:
		convertSlice(fixedSlice[int16](arr), out)
	case arrow.INT32:
		convertSlice(fixedSlice[int32](arr), out)
	case arrow.INT64:
		convertSlice(fixedSlice[int64](arr), out)
	case arrow.FLOAT32:
		convertSlice(fixedSlice[float32](arr), out)
	default:
		buf.Release()
		return nil
	}
	return buf
}

func convertSlice[S int8 | int16 | int32 | int64 | float32, D int16 | int32 | int64 | float32 | float64](src []S, dst []D) {
	dst = dst[:len(src)]
	for i, v := range src {
		dst[i] = D(v)
	}
}

// foldConstant evaluates an evaluator whose operands are all constants once
// and returns the result as a constant, so that parents bind constant
// kernels. When the evaluation fails (1/0), ev is returned unchanged: the
// error then surfaces per batch, and only for batches that have rows, as
// it would in Spark.
func foldConstant(ev Evaluator, mem memory.Allocator) Evaluator {
	schema := arrow.NewSchema(nil, nil)
	rec := array.NewRecord(schema, nil, 1)
	defer rec.Release()
	arr, err := ev.Eval(context.Background(), rec)
	if err != nil {
		return ev
	}
	defer arr.Release()
	return newConst(ev.DataType(), ValueAt(arr, 0), mem)
}
