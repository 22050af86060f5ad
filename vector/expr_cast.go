package vector

import (
	"context"
	"fmt"
	"math"
	"time"

	"github.com/apache/arrow/go/v17/arrow"
	"github.com/apache/arrow/go/v17/arrow/array"
	"github.com/apache/arrow/go/v17/arrow/bitutil"
	"github.com/apache/arrow/go/v17/arrow/memory"
)

// CastExpr is CAST(X AS To); the SQL form x::type is the same expression.
//
// Semantics follow Spark 4; Mode chooses between spark.sql.ansi.enabled=true
// (ModeANSI, the default), false (ModeLegacy, Spark 3's results) and
// try_cast (ModeTry):
//
//   - Strings: surrounding whitespace and ISO control characters are
//     trimmed. A string that does not parse as the target type is
//     CAST_INVALID_INPUT under ANSI (naming the value and both types) and
//     NULL otherwise. String to tinyint/smallint/int/bigint takes an
//     optional sign and digits; without ANSI an optional fraction is
//     accepted and truncated ('1.9' → 1, '.5' → 0), under ANSI it is
//     malformed; a value out of the type's range is malformed too (as
//     Spark's parser reports it). String to double accepts Java's syntax
//     plus 'inf', 'infinity', 'nan' in any case. String to boolean accepts
//     t, true, y, yes, 1 and f, false, n, no, 0 in any case. String to
//     timestamp and date follow Spark's parsers (see parseTimestamp and
//     parseDate); a timestamp without an explicit zone is read in the
//     session time zone (Loc).
//   - Numeric overflow (300 to tinyint, 1e20 to bigint, NaN or ±Inf to an
//     integer): CAST_OVERFLOW under ANSI, NULL under try_cast, and without
//     ANSI Spark 3's results: integers wrap to the low bits, doubles
//     truncate toward zero and saturate at the type's bounds (NaN is 0).
//     Decimals that do not fit are NUMERIC_VALUE_OUT_OF_RANGE under ANSI
//     and NULL otherwise. Double to decimal rounds half up from the
//     shortest decimal form of the double, as Spark's Decimal(double).
//   - Timestamp to bigint/int is whole seconds (floor); bigint/int/double/
//     decimal to timestamp is seconds. Timestamp to date and date to
//     timestamp, and timestamps to and from strings, use the session time
//     zone Loc (UTC when nil).
//   - Casts to string format as Spark: doubles as Java's Double.toString
//     (1.0, 1.0E20, 1.0E-5, NaN, Infinity), timestamps as
//     2026-01-01 10:00:00[.fraction without trailing zeros] in Loc, dates
//     as 2026-01-01, decimals in plain notation with their scale.
//
// Casts between other pairs of types (date to a number, boolean to a
// timestamp, numbers to binary, ...) are bind errors naming both types.
type CastExpr struct {
	X    Expr
	To   arrow.DataType
	Mode EvalMode       // ANSI (the zero value), legacy or try_cast
	Loc  *time.Location // the session time zone; nil is UTC
	// YMFields are the fields of a year-month interval target (which
	// string forms a cast from a string accepts).
	YMFields YMFields
}

// Cast returns CAST(x AS to) with ANSI semantics in UTC.
func Cast(x Expr, to arrow.DataType) Expr { return &CastExpr{X: x, To: to} }

// TryCast returns TRY_CAST(x AS to): NULL where CAST would raise.
func TryCast(x Expr, to arrow.DataType) Expr { return &CastExpr{X: x, To: to, Mode: ModeTry} }

func (c *CastExpr) String() string {
	name := "CAST("
	if c.Mode == ModeTry {
		name = "TRY_CAST("
	}
	return name + c.X.String() + " AS " + sqlTypeName(c.To) + ")"
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
	if k == nil && IsYearMonthInterval(c.To) && Unwrap(from).ID() == arrow.STRING {
		k = stringToYMKernel(c.YMFields)
	}
	if k == nil {
		return nil, newBindError(c, in, fmt.Errorf("cannot cast %s to %s: %w", TypeName(from), TypeName(c.To), ErrType))
	}
	ev := &castEval{child: child, from: from, to: c.To, kern: k, mem: mem, mode: c.Mode, loc: c.Loc, expr: c.String(), operand: c.X.String()}
	return fnFoldConstant(c, in, mem, ev, child)
}

// castTarget reports whether dt is a type Cast can produce.
func castTarget(dt arrow.DataType) bool {
	switch dt.ID() {
	case arrow.BOOL, arrow.INT8, arrow.INT16, arrow.INT32, arrow.INT64, arrow.FLOAT32, arrow.FLOAT64, arrow.STRING, arrow.BINARY, arrow.DATE32, arrow.DECIMAL128,
		arrow.INTERVAL_MONTHS:
		return true
	case arrow.TIMESTAMP:
		return arrow.TypeEqual(dt, Timestamp) || arrow.TypeEqual(dt, TimestampNTZ)
	case arrow.LIST, arrow.MAP, arrow.STRUCT:
		return castNestedTarget(dt)
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
	mode     EvalMode
	loc      *time.Location // nil: UTC
	expr     string         // the cast as SQL, for errors
	operand  string         // the operand as SQL, for errors
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
// are cast once per distinct value (mapStrings: an entry that fails the
// cast fails it only when a valid row refers to it).
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

// overflowError is the CAST_OVERFLOW error of row i (a valid row).
func (c *castEval) overflowError(arr arrow.Array, i int) error {
	from := Unwrap(c.from)
	err := errCastOverflowValue(sparkLiteral(ValueAt(arr, i), from), from, c.to)
	if c.to.ID() == arrow.DECIMAL128 {
		err = errDecimalOutOfRange(FormatValue(ValueAt(arr, i), from), c.to)
	}
	return c.rowError(arr, i, err)
}

// invalidError is the CAST_INVALID_INPUT error of row i (a valid row).
func (c *castEval) invalidError(arr arrow.Array, i int) error {
	from := Unwrap(c.from)
	return c.rowError(arr, i, errCastInvalid(sparkLiteral(ValueAt(arr, i), from), from, c.to))
}

// settle handles the valid rows for which bad holds, after a fast loop
// flagged that some exist: the first one is CAST_OVERFLOW under ANSI, each
// one is NULL under try_cast, and without ANSI legacy(i) stores Spark 3's
// value (or the row is NULL when legacy is nil).
func (c *castEval) settle(arr arrow.Array, v *validityOut, bad func(i int) bool, legacy func(i int)) error {
	for i := 0; i < arr.Len(); i++ {
		if !arr.IsValid(i) || !bad(i) {
			continue
		}
		switch {
		case c.mode == ModeANSI:
			return c.overflowError(arr, i)
		case c.mode == ModeLegacy && legacy != nil:
			legacy(i)
		default:
			v.setNull(i)
		}
	}
	return nil
}

// sparkLiteral formats v as Spark's error messages quote values: strings
// in single quotes, bigint with L, tinyint with Y, smallint with S, double
// with D.
func sparkLiteral(v any, dt arrow.DataType) string {
	if f, ok := v.(float64); ok {
		if math.IsNaN(f) || math.IsInf(f, 0) {
			return string(appendJavaDouble(nil, f, 64))
		}
		return string(appendJavaDouble(nil, f, 64)) + "D"
	}
	s := FormatValue(v, dt)
	switch dt.ID() {
	case arrow.INT8:
		return s + "Y"
	case arrow.INT16:
		return s + "S"
	case arrow.INT64:
		return s + "L"
	}
	return s
}

// castKernelFor picks the kernel for from → to, or nil when the cast is not
// supported. from is never a dictionary here.
func castKernelFor(from, to arrow.DataType) castKernel {
	f, t := from.ID(), to.ID()
	if isNestedID(f) || isNestedID(t) {
		return nestedCastKernel(from, to)
	}
	if IsTimestampNTZ(from) || IsTimestampNTZ(to) {
		return ntzCastKernel(from, to)
	}
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
		return intToBinaryKernel(f) // string → binary is handled above
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

// castFixedResult builds a fixed-width result that keeps the input's nulls;
// fill may add nulls (try_cast) through v.
func castFixedResult[D any](c *castEval, arr arrow.Array, fill func(dst []D, v *validityOut) error) (arrow.Array, error) {
	n := arr.Len()
	buf, dst := fnFixedBuf[D](c.mem, n)
	v := newValidityOut(c.mem, n, arr)
	if err := fill(dst, v); err != nil {
		buf.Release()
		v.release()
		return nil, err
	}
	bm, nulls := v.finish()
	return fnNewArray(c.to, n, []*memory.Buffer{bm, buf}, nil, nulls), nil
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
	case arrow.INT8:
		return castNumeric[S, int8]
	case arrow.INT16:
		return castNumeric[S, int16]
	case arrow.INT32:
		return castNumeric[S, int32]
	case arrow.INT64:
		return castNumeric[S, int64]
	case arrow.FLOAT32:
		// Java's (float) conversion: rounded, out of range is infinite,
		// never an error (also under ANSI).
		return castNumeric[S, float32]
	case arrow.FLOAT64:
		return castNumeric[S, float64]
	}
	return nil
}

// castNumeric converts S to D over the whole column. Widening casts are a
// plain conversion loop; narrowing casts convert and flag out-of-range
// values in the same pass (one branch-free check per value, so the
// overflow check is per batch), and only a batch with an offender goes
// through settle.
func castNumeric[S, D castNumber](c *castEval, arr arrow.Array) (arrow.Array, error) {
	src := fnRawValues[S](arr)
	return castFixedResult(c, arr, func(dst []D, v *validityOut) error {
		lo, hi, checked := numberRange[S, D]()
		if !checked {
			convertNumbers(src, dst)
			return nil
		}
		if convertChecked(src, dst, lo, hi) {
			return nil
		}
		bad := func(i int) bool { return !castInRange(float64(src[i]), lo, hi) }
		if hi == twoTo63 {
			// Spark's check of a float cast to bigint is floor(x) <=
			// Long.MaxValue compared as doubles, which 2^63 itself passes
			// (Long.MaxValue is 2^63 as a double): it becomes
			// Long.MaxValue in every mode, where the open range refuses it.
			out := bad
			bad = func(i int) bool {
				if float64(src[i]) == twoTo63 {
					dst[i] = legacyNarrow[S, D](src[i])
					return false
				}
				return out(i)
			}
		}
		return c.settle(arr, v, bad, func(i int) { dst[i] = legacyNarrow[S, D](src[i]) })
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
	case int8:
		if srcFloat || sizeOf(s) > 1 {
			return -129, 128, true
		}
	case int16:
		if srcFloat || sizeOf(s) > 2 {
			return -32769, 32768, true
		}
	case int32:
		if srcFloat || sizeOf(s) > 4 {
			return -2147483649, 2147483648, true
		}
	case int64:
		if srcFloat {
			return minInt64Excl, twoTo63, true
		}
	}
	return 0, 0, false
}

// legacyNarrow is Spark 3's narrowing without ANSI: integers keep their
// low bits; a double saturates at the bounds of bigint (to bigint) or int
// (to the smaller types, then keeps the low bits, as Scala's toByte), and
// NaN is 0.
func legacyNarrow[S, D castNumber](v S) D {
	if !castIsFloat(v) {
		return D(v)
	}
	f := float64(v)
	var d D
	if _, ok := any(d).(int64); ok {
		return D(saturateInt64(f))
	}
	return D(int32(saturateInt64(max(min(f, math.MaxInt32), math.MinInt32))))
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

// twoTo63 is 2^63, the exclusive upper bound of bigint as a double.
const twoTo63 = 9223372036854775808.0

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
	case arrow.INT8:
		return boolToNumber[int8]
	case arrow.INT16:
		return boolToNumber[int16]
	case arrow.INT32:
		return boolToNumber[int32]
	case arrow.INT64:
		return boolToNumber[int64]
	case arrow.FLOAT32:
		return boolToNumber[float32]
	case arrow.FLOAT64:
		return boolToNumber[float64]
	}
	return nil
}

func boolToNumber[D castNumber](c *castEval, arr arrow.Array) (arrow.Array, error) {
	bits, off := bufferBytes(arr.Data(), 1), arr.Data().Offset()
	return castFixedResult(c, arr, func(dst []D, _ *validityOut) error {
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

// timestampToDate is the date of each instant in the session time zone.
func timestampToDate(c *castEval, arr arrow.Array) (arrow.Array, error) {
	src := fnRawValues[int64](arr)
	return castFixedResult(c, arr, func(dst []int32, _ *validityOut) error {
		if c.loc == nil || c.loc == time.UTC {
			for i, v := range src {
				dst[i] = int32(fnFloorDiv(v, fnMicrosPerDay))
			}
			return nil
		}
		var z zoneCache
		for i, v := range src {
			dst[i] = int32(fnFloorDiv(v+z.offsetMicros(c.loc, v), fnMicrosPerDay))
		}
		return nil
	})
}

// dateToTimestamp is the start of each day in the session time zone.
func dateToTimestamp(c *castEval, arr arrow.Array) (arrow.Array, error) {
	src := fnRawValues[int32](arr)
	return castFixedResult(c, arr, func(dst []int64, v *validityOut) error {
		// |days| < 2^31 times micros per day can exceed int64: check the
		// rare extreme dates.
		const limit = math.MaxInt64/fnMicrosPerDay - 1
		local := c.loc != nil && c.loc != time.UTC
		ok := true
		for i, d := range src {
			dst[i] = int64(d) * fnMicrosPerDay
			ok = ok && int64(d) <= limit && int64(d) >= -limit
		}
		if local {
			for i, d := range src {
				if int64(d) <= limit && int64(d) >= -limit {
					dst[i] = localMidnight(c.loc, int64(d))
				}
			}
		}
		if ok {
			return nil
		}
		return c.settle(arr, v, func(i int) bool { return int64(src[i]) > limit || int64(src[i]) < -limit }, nil)
	})
}

func timestampToNumberKernel(t arrow.Type) castKernel {
	switch t {
	case arrow.INT64:
		return func(c *castEval, arr arrow.Array) (arrow.Array, error) {
			src := fnRawValues[int64](arr)
			return castFixedResult(c, arr, func(dst []int64, _ *validityOut) error {
				for i, v := range src {
					dst[i] = fnFloorDiv(v, fnMicrosPerSecond)
				}
				return nil
			})
		}
	case arrow.INT32:
		return func(c *castEval, arr arrow.Array) (arrow.Array, error) {
			src := fnRawValues[int64](arr)
			return castFixedResult(c, arr, func(dst []int32, v *validityOut) error {
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
				// Without ANSI the wrapped value the loop stored stays.
				return c.settle(arr, v, bad, func(int) {})
			})
		}
	case arrow.FLOAT64:
		return func(c *castEval, arr arrow.Array) (arrow.Array, error) {
			src := fnRawValues[int64](arr)
			return castFixedResult(c, arr, func(dst []float64, _ *validityOut) error {
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

// intToTimestamp reads seconds; overflow of the microseconds is
// CAST_OVERFLOW (ANSI) or saturates (Spark 3's SECONDS.toMicros).
func intToTimestamp[S int8 | int16 | int32 | int64](c *castEval, arr arrow.Array) (arrow.Array, error) {
	src := fnRawValues[S](arr)
	return castFixedResult(c, arr, func(dst []int64, v *validityOut) error {
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
		bad := func(i int) bool { s := int64(src[i]); return s > limit || s < -limit }
		return c.settle(arr, v, bad, func(i int) {
			dst[i] = math.MaxInt64
			if src[i] < 0 {
				dst[i] = math.MinInt64
			}
		})
	})
}

// floatToTimestamp reads seconds with a fraction, truncated to
// microseconds. Under ANSI NaN and infinities are CAST_INVALID_INPUT (as
// Spark reports them) and finite values out of range CAST_OVERFLOW;
// without ANSI NaN and infinities are NULL and the rest saturates.
func floatToTimestamp[S float32 | float64](c *castEval, arr arrow.Array) (arrow.Array, error) {
	src := fnRawValues[S](arr)
	return castFixedResult(c, arr, func(dst []int64, v *validityOut) error {
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
		if c.mode == ModeANSI {
			if i := castFirstBadRow(arr, bad); i >= 0 {
				if f := float64(src[i]); math.IsNaN(f) || math.IsInf(f, 0) {
					return c.invalidError(arr, i)
				}
				return c.overflowError(arr, i)
			}
			return nil
		}
		return c.settle(arr, v, bad, func(i int) {
			f := float64(src[i])
			if math.IsNaN(f) || math.IsInf(f, 0) {
				v.setNull(i)
				return
			}
			dst[i] = saturateInt64(f * fnMicrosPerSecond)
		})
	})
}

// shareBuffers re-types a string array as binary or back without copying.
func shareBuffers(c *castEval, arr arrow.Array) (arrow.Array, error) {
	d := arr.Data()
	data := array.NewData(c.to, d.Len(), d.Buffers(), nil, arr.NullN(), d.Offset())
	defer data.Release()
	return array.MakeFromData(data), nil
}

// castFirstBadRow finds the first valid row for which bad holds; the fast
// loops flag overflow over all slots (garbage under nulls included) and only
// then look for a real offender.
func castFirstBadRow(arr arrow.Array, bad func(i int) bool) int {
	for i := 0; i < arr.Len(); i++ {
		if arr.IsValid(i) && bad(i) {
			return i
		}
	}
	return -1
}
