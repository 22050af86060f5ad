package vector

import (
	"context"
	"fmt"
	"math"

	"github.com/apache/arrow/go/v17/arrow"
	"github.com/apache/arrow/go/v17/arrow/array"
	"github.com/apache/arrow/go/v17/arrow/bitutil"
	"github.com/apache/arrow/go/v17/arrow/memory"
)

// CastExpr is CAST(X AS To); the SQL form x::type is the same expression.
//
// Semantics follow Spark 4 with these choices, documented because Spark's
// own behaviour depends on spark.sql.ansi.enabled:
//
//   - Strings are cast as Spark does without ANSI mode: surrounding
//     whitespace and ISO control characters are trimmed, and a string that
//     does not parse (or does not fit the target type) becomes NULL, never
//     an error. String to int/bigint follows Spark's legacy parser: an
//     optional sign, digits, and an optional fraction that is truncated
//     ('1.9' → 1, '.5' → 0); no exponent. String to double accepts Java's
//     syntax plus 'inf', 'infinity', 'nan' in any case. String to boolean
//     accepts t, true, y, yes, 1 and f, false, n, no, 0 in any case.
//     String to timestamp and date follow Spark's parsers (see
//     parseTimestamp and parseDate); a time without a date is NULL here
//     (Spark would use the current date).
//   - Numeric overflow follows ANSI: a value that does not fit the target
//     type (300000000000 to int, 1e20 to bigint, NaN or ±Inf to an integer
//     or timestamp, 123.45 to decimal(4,2)) is an *EvalError wrapping
//     ErrOverflow that names the expression and the value. Double to
//     integer truncates toward zero; to decimal rounds half up from the
//     shortest decimal form of the double, as Spark's Decimal(double).
//   - Timestamp to bigint/int is whole seconds (floor); bigint/int/double/
//     decimal to timestamp is seconds. Timestamps are UTC.
//   - Casts to string format as Spark: doubles as Java's Double.toString
//     (1.0, 1.0E20, 1.0E-5, NaN, Infinity), timestamps as
//     2026-01-01 10:00:00[.fraction without trailing zeros], dates as
//     2026-01-01, decimals in plain notation with their scale.
//
// Casts between other pairs of types (date to a number, boolean to a
// timestamp, numbers to binary, ...) are bind errors naming both types.
type CastExpr struct {
	X  Expr
	To arrow.DataType
}

// Cast returns CAST(x AS to).
func Cast(x Expr, to arrow.DataType) Expr { return &CastExpr{X: x, To: to} }

func (c *CastExpr) String() string {
	return "CAST(" + c.X.String() + " AS " + sqlTypeName(c.To) + ")"
}

// Bind implements Expr.
func (c *CastExpr) Bind(in *arrow.Schema, mem memory.Allocator) (Evaluator, error) {
	child, err := c.X.Bind(in, mem)
	if err != nil {
		return nil, err
	}
	if c.To == nil || !castTarget(c.To) {
		return nil, newBindError(c, in, fmt.Errorf("cannot cast to %s: %w", TypeName(c.To), ErrType))
	}
	from := child.DataType()
	if from.ID() == arrow.NULL {
		return &constEval{dt: c.To, mem: mem}, nil
	}
	if arrow.TypeEqual(Unwrap(from), c.To) {
		return Plain(child, mem), nil
	}
	k := castKernelFor(Unwrap(from), c.To)
	if k == nil {
		return nil, newBindError(c, in, fmt.Errorf("cannot cast %s to %s: %w", TypeName(from), TypeName(c.To), ErrType))
	}
	ev := &castEval{child: child, from: from, to: c.To, kern: k, mem: mem, expr: c.String(), operand: c.X.String()}
	return fnFoldConstant(c, in, mem, ev, child)
}

// castTarget reports whether dt is a type Cast can produce.
func castTarget(dt arrow.DataType) bool {
	switch dt.ID() {
	case arrow.BOOL, arrow.INT32, arrow.INT64, arrow.FLOAT64, arrow.STRING, arrow.BINARY, arrow.DATE32, arrow.DECIMAL128:
		return true
	case arrow.TIMESTAMP:
		return arrow.TypeEqual(dt, Timestamp)
	}
	return false
}

// castKernel converts a whole (non-dictionary) column.
type castKernel func(c *castEval, arr arrow.Array) (arrow.Array, error)

type castEval struct {
	child    Evaluator
	from, to arrow.DataType
	kern     castKernel
	mem      memory.Allocator
	expr     string // the cast as SQL, for errors
	operand  string // the operand as SQL, for errors
}

func (c *castEval) DataType() arrow.DataType { return c.to }

func (c *castEval) Eval(ctx context.Context, rec arrow.Record) (arrow.Array, error) {
	arr, err := c.child.Eval(ctx, rec)
	if err != nil {
		return nil, err
	}
	defer arr.Release()
	return c.apply(arr)
}

// apply casts an array of the evaluator's input type; dictionary strings
// are cast once per distinct value (string casts never fail).
func (c *castEval) apply(arr arrow.Array) (arrow.Array, error) {
	if _, ok := arr.(*array.Dictionary); ok {
		return mapStrings(c.mem, arr, func(a arrow.Array) (arrow.Array, error) { return c.kern(c, a) })
	}
	return c.kern(c, arr)
}

// rowError is the runtime error of row i.
func (c *castEval) rowError(arr arrow.Array, i int, err error) error {
	return &EvalError{Expr: c.expr, Row: i, Values: c.operand + "=" + FormatValue(ValueAt(arr, i), Unwrap(c.from)), Err: err}
}

// errCastOverflow explains an out-of-range cast; it wraps ErrOverflow.
func errCastOverflow(to arrow.DataType) error {
	return fmt.Errorf("%w: value out of range of %s", ErrOverflow, TypeName(to))
}

// castKernelFor picks the kernel for from → to, or nil when the cast is not
// supported. from is never a dictionary here.
func castKernelFor(from, to arrow.DataType) castKernel {
	f, t := from.ID(), to.ID()
	if ts, ok := from.(*arrow.TimestampType); ok && ts.Unit != arrow.Microsecond {
		return nil // kernels read microseconds
	}
	switch {
	case t == arrow.STRING:
		return toStringKernel(from)
	case f == arrow.STRING || f == arrow.LARGE_STRING:
		if f == arrow.LARGE_STRING {
			return nil
		}
		return fromStringKernel(to)
	case f == arrow.DECIMAL128 || t == arrow.DECIMAL128:
		return decimalKernel(from, to)
	case t == arrow.BINARY:
		return nil // only string → binary, handled above
	case castIsNumericID(f) && castIsNumericID(t):
		return numericKernel(f, t)
	case f == arrow.BOOL && castIsNumericID(t):
		return boolToNumberKernel(t)
	case castIsNumericID(f) && t == arrow.BOOL:
		return numberToBoolKernel(f)
	case f == arrow.TIMESTAMP && t == arrow.DATE32:
		return timestampToDate
	case f == arrow.DATE32 && t == arrow.TIMESTAMP:
		return dateToTimestamp
	case f == arrow.TIMESTAMP && (t == arrow.INT64 || t == arrow.INT32 || t == arrow.FLOAT64):
		return timestampToNumberKernel(t)
	case castIsNumericID(f) && t == arrow.TIMESTAMP:
		return numberToTimestampKernel(f)
	}
	return nil
}

func castIsNumericID(id arrow.Type) bool {
	switch id {
	case arrow.INT8, arrow.INT16, arrow.INT32, arrow.INT64, arrow.FLOAT32, arrow.FLOAT64:
		return true
	}
	return false
}

// fnRawValues is the offset-adjusted value slice of a fixed-width array.
func fnRawValues[T any](arr arrow.Array) []T {
	d := arr.Data()
	buf := d.Buffers()[1]
	if buf == nil || d.Len() == 0 {
		return nil
	}
	return castSlice[T](buf.Bytes())[d.Offset() : d.Offset()+d.Len()]
}

type castNumber interface {
	~int8 | ~int16 | ~int32 | ~int64 | ~float32 | ~float64
}

// castFixedResult builds a fixed-width result that keeps the input's nulls.
func castFixedResult[D any](c *castEval, arr arrow.Array, fill func(dst []D) error) (arrow.Array, error) {
	n := arr.Len()
	buf, dst := fnFixedBuf[D](c.mem, n)
	if err := fill(dst); err != nil {
		buf.Release()
		return nil, err
	}
	v := newValidityOut(c.mem, n, arr)
	bm, nulls := v.finish()
	return fnNewArray(c.to, n, []*memory.Buffer{bm, buf}, nil, nulls), nil
}

// castFirstBadRow finds the first valid row for which bad holds; the fast loops
// flag overflow over all slots (garbage under nulls included) and only then
// look for a real offender.
func castFirstBadRow(arr arrow.Array, bad func(i int) bool) int {
	for i := 0; i < arr.Len(); i++ {
		if arr.IsValid(i) && bad(i) {
			return i
		}
	}
	return -1
}

func numericKernel(f, t arrow.Type) castKernel {
	switch f {
	case arrow.INT8:
		return numericFrom[int8](t)
	case arrow.INT16:
		return numericFrom[int16](t)
	case arrow.INT32:
		return numericFrom[int32](t)
	case arrow.INT64:
		return numericFrom[int64](t)
	case arrow.FLOAT32:
		return numericFrom[float32](t)
	case arrow.FLOAT64:
		return numericFrom[float64](t)
	}
	return nil
}

func numericFrom[S castNumber](t arrow.Type) castKernel {
	switch t {
	case arrow.INT32:
		return castNumeric[S, int32]
	case arrow.INT64:
		return castNumeric[S, int64]
	case arrow.FLOAT64:
		return castNumeric[S, float64]
	}
	return nil
}

// castNumeric converts S to D over the whole column. Widening casts are a
// plain conversion loop; narrowing casts convert and flag out-of-range
// values in the same pass, then report the first valid offender.
func castNumeric[S, D castNumber](c *castEval, arr arrow.Array) (arrow.Array, error) {
	src := fnRawValues[S](arr)
	return castFixedResult(c, arr, func(dst []D) error {
		lo, hi, checked := numberRange[S, D]()
		if !checked {
			convertNumbers(src, dst)
			return nil
		}
		if convertChecked(src, dst, lo, hi) {
			return nil
		}
		if i := castFirstBadRow(arr, func(i int) bool { return !castInRange(float64(src[i]), lo, hi) }); i >= 0 {
			return c.rowError(arr, i, errCastOverflow(c.to))
		}
		return nil
	})
}

// numberRange gives the open interval (lo, hi) of S values that convert to
// D without overflow (after truncation toward zero), and whether any S
// value can fall outside it.
func numberRange[S, D castNumber]() (lo, hi float64, checked bool) {
	var s S
	var d D
	srcFloat := castIsFloat(s)
	switch any(d).(type) {
	case int32:
		if srcFloat || sizeOf(s) > 4 {
			return -2147483649, 2147483648, true
		}
	case int64:
		if srcFloat {
			return minInt64Excl, 9223372036854775808, true
		}
	}
	return 0, 0, false
}

func castIsFloat[T castNumber](v T) bool {
	switch any(v).(type) {
	case float32, float64:
		return true
	}
	return false
}

// minInt64Excl is the largest double below -2^63, so that f > minInt64Excl
// admits -2^63 itself.
const minInt64Excl = -9223372036854777856.0

func castInRange(f, lo, hi float64) bool { return f > lo && f < hi }

func convertNumbers[S, D castNumber](src []S, dst []D) {
	dst = dst[:len(src)]
	for i, v := range src {
		dst[i] = D(v)
	}
}

// convertChecked converts and reports whether every value was in range.
// For int64 sources the float comparison is exact at the int32 bounds.
func convertChecked[S, D castNumber](src []S, dst []D, lo, hi float64) bool {
	dst = dst[:len(src)]
	ok := true
	for i, v := range src {
		f := float64(v)
		if !(f > lo && f < hi) {
			ok = false
			continue
		}
		dst[i] = D(v)
	}
	return ok
}

func boolToNumberKernel(t arrow.Type) castKernel {
	switch t {
	case arrow.INT32:
		return boolToNumber[int32]
	case arrow.INT64:
		return boolToNumber[int64]
	case arrow.FLOAT64:
		return boolToNumber[float64]
	}
	return nil
}

func boolToNumber[D castNumber](c *castEval, arr arrow.Array) (arrow.Array, error) {
	bits, off := bufferBytes(arr.Data(), 1), arr.Data().Offset()
	return castFixedResult(c, arr, func(dst []D) error {
		for i := range dst {
			if bitutil.BitIsSet(bits, off+i) {
				dst[i] = 1
			} else {
				dst[i] = 0
			}
		}
		return nil
	})
}

func numberToBoolKernel(f arrow.Type) castKernel {
	switch f {
	case arrow.INT8:
		return numberToBool[int8]
	case arrow.INT16:
		return numberToBool[int16]
	case arrow.INT32:
		return numberToBool[int32]
	case arrow.INT64:
		return numberToBool[int64]
	case arrow.FLOAT32:
		return numberToBool[float32]
	case arrow.FLOAT64:
		return numberToBool[float64]
	}
	return nil
}

// numberToBool is v != 0 (NaN is true, as in Spark).
func numberToBool[S castNumber](c *castEval, arr arrow.Array) (arrow.Array, error) {
	src := fnRawValues[S](arr)
	n := len(src)
	buf := memory.NewResizableBuffer(c.mem)
	buf.Resize(int(bitutil.BytesForBits(int64(n))))
	out := buf.Bytes()
	clear(out)
	for i, v := range src {
		if v != 0 {
			bitutil.SetBit(out, i)
		}
	}
	v := newValidityOut(c.mem, n, arr)
	bm, nulls := v.finish()
	return fnNewArray(c.to, n, []*memory.Buffer{bm, buf}, nil, nulls), nil
}

const (
	fnMicrosPerSecond = 1_000_000
	fnMicrosPerDay    = 86_400 * fnMicrosPerSecond
)

func fnFloorDiv(a, b int64) int64 {
	q := a / b
	if (a%b != 0) && ((a < 0) != (b < 0)) {
		q--
	}
	return q
}

func timestampToDate(c *castEval, arr arrow.Array) (arrow.Array, error) {
	src := fnRawValues[int64](arr)
	return castFixedResult(c, arr, func(dst []int32) error {
		for i, v := range src {
			dst[i] = int32(fnFloorDiv(v, fnMicrosPerDay))
		}
		return nil
	})
}

func dateToTimestamp(c *castEval, arr arrow.Array) (arrow.Array, error) {
	src := fnRawValues[int32](arr)
	return castFixedResult(c, arr, func(dst []int64) error {
		// |days| < 2^31 times micros per day can exceed int64: check the
		// rare extreme dates.
		const limit = math.MaxInt64 / fnMicrosPerDay
		for i, v := range src {
			dst[i] = int64(v) * fnMicrosPerDay
		}
		if i := castFirstBadRow(arr, func(i int) bool { return int64(src[i]) > limit || int64(src[i]) < -limit }); i >= 0 {
			return c.rowError(arr, i, errCastOverflow(c.to))
		}
		return nil
	})
}

func timestampToNumberKernel(t arrow.Type) castKernel {
	switch t {
	case arrow.INT64:
		return func(c *castEval, arr arrow.Array) (arrow.Array, error) {
			src := fnRawValues[int64](arr)
			return castFixedResult(c, arr, func(dst []int64) error {
				for i, v := range src {
					dst[i] = fnFloorDiv(v, fnMicrosPerSecond)
				}
				return nil
			})
		}
	case arrow.INT32:
		return func(c *castEval, arr arrow.Array) (arrow.Array, error) {
			src := fnRawValues[int64](arr)
			return castFixedResult(c, arr, func(dst []int32) error {
				ok := true
				for i, v := range src {
					s := fnFloorDiv(v, fnMicrosPerSecond)
					dst[i] = int32(s)
					ok = ok && int64(int32(s)) == s
				}
				if ok {
					return nil
				}
				bad := func(i int) bool { s := fnFloorDiv(src[i], fnMicrosPerSecond); return int64(int32(s)) != s }
				if i := castFirstBadRow(arr, bad); i >= 0 {
					return c.rowError(arr, i, errCastOverflow(c.to))
				}
				return nil
			})
		}
	case arrow.FLOAT64:
		return func(c *castEval, arr arrow.Array) (arrow.Array, error) {
			src := fnRawValues[int64](arr)
			return castFixedResult(c, arr, func(dst []float64) error {
				for i, v := range src {
					dst[i] = float64(v) / fnMicrosPerSecond
				}
				return nil
			})
		}
	}
	return nil
}

func numberToTimestampKernel(f arrow.Type) castKernel {
	switch f {
	case arrow.INT8:
		return intToTimestamp[int8]
	case arrow.INT16:
		return intToTimestamp[int16]
	case arrow.INT32:
		return intToTimestamp[int32]
	case arrow.INT64:
		return intToTimestamp[int64]
	case arrow.FLOAT32:
		return floatToTimestamp[float32]
	case arrow.FLOAT64:
		return floatToTimestamp[float64]
	}
	return nil
}

// intToTimestamp reads seconds; overflow of the microseconds is an error.
func intToTimestamp[S int8 | int16 | int32 | int64](c *castEval, arr arrow.Array) (arrow.Array, error) {
	src := fnRawValues[S](arr)
	return castFixedResult(c, arr, func(dst []int64) error {
		const limit = math.MaxInt64 / fnMicrosPerSecond
		ok := true
		for i, v := range src {
			s := int64(v)
			dst[i] = s * fnMicrosPerSecond
			ok = ok && s <= limit && s >= -limit
		}
		if ok {
			return nil
		}
		if i := castFirstBadRow(arr, func(i int) bool { s := int64(src[i]); return s > limit || s < -limit }); i >= 0 {
			return c.rowError(arr, i, errCastOverflow(c.to))
		}
		return nil
	})
}

// floatToTimestamp reads seconds with a fraction, truncated to microseconds;
// NaN, infinities and out-of-range values are errors (ANSI).
func floatToTimestamp[S float32 | float64](c *castEval, arr arrow.Array) (arrow.Array, error) {
	src := fnRawValues[S](arr)
	return castFixedResult(c, arr, func(dst []int64) error {
		const lo, hi = minInt64Excl, 9223372036854775808.0
		ok := true
		for i, v := range src {
			m := float64(v) * fnMicrosPerSecond
			if !(m > lo && m < hi) {
				ok = false
				continue
			}
			dst[i] = int64(m)
		}
		if ok {
			return nil
		}
		bad := func(i int) bool { return !castInRange(float64(src[i])*fnMicrosPerSecond, lo, hi) }
		if i := castFirstBadRow(arr, bad); i >= 0 {
			return c.rowError(arr, i, errCastOverflow(c.to))
		}
		return nil
	})
}

// shareBuffers re-types a string array as binary or back without copying.
func shareBuffers(c *castEval, arr arrow.Array) (arrow.Array, error) {
	d := arr.Data()
	data := array.NewData(c.to, d.Len(), d.Buffers(), nil, arr.NullN(), d.Offset())
	defer data.Release()
	return array.MakeFromData(data), nil
}
