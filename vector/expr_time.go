package vector

import (
	"fmt"
	"math"
	"strings"

	"github.com/apache/arrow/go/v17/arrow"
	"github.com/apache/arrow/go/v17/arrow/array"
	"github.com/apache/arrow/go/v17/arrow/memory"
)

// Time functions. Timestamps are microseconds in UTC; strings that do not
// parse give NULL (Spark without ANSI mode); overflow is an error.

// TimestampSeconds is timestamp_seconds(x): x seconds since the epoch
// (int, bigint, double or decimal; a double's fraction is kept to the
// microsecond, NaN and ±Inf give NULL as in Spark).
func TimestampSeconds(x Expr) Expr {
	return &FuncExpr{Name: "timestamp_seconds", Args: []Expr{x}, bind: bindEpoch(fnMicrosPerSecond)}
}

// TimestampMillis is timestamp_millis(x): x milliseconds (an integer) since
// the epoch.
func TimestampMillis(x Expr) Expr {
	return &FuncExpr{Name: "timestamp_millis", Args: []Expr{x}, bind: bindEpoch(1000)}
}

// TimestampMicros is timestamp_micros(x): x microseconds (an integer) since
// the epoch.
func TimestampMicros(x Expr) Expr {
	return &FuncExpr{Name: "timestamp_micros", Args: []Expr{x}, bind: bindEpoch(1)}
}

// UnixTimestamp is unix_timestamp(x[, fmt]) → bigint seconds since the
// epoch (floor). x is a timestamp, a date, or a string parsed with the
// Spark datetime pattern fmt (default yyyy-MM-dd HH:mm:ss; it must be a
// constant); a string that does not match gives NULL. fmt may be nil.
func UnixTimestamp(x, fmt Expr) Expr {
	return &FuncExpr{Name: "unix_timestamp", Args: withOptional([]Expr{x}, fmt), bind: bindParse(Int64, true)}
}

// ToTimestamp is to_timestamp(x[, fmt]): without fmt it is CAST(x AS
// TIMESTAMP); with fmt (a constant Spark datetime pattern) strings are
// parsed by it, NULL when they do not match. fmt may be nil.
func ToTimestamp(x, fmt Expr) Expr {
	return &FuncExpr{Name: "to_timestamp", Args: withOptional([]Expr{x}, fmt), bind: bindParse(Timestamp, false)}
}

// ToDate is to_date(x[, fmt]), the date counterpart of ToTimestamp.
func ToDate(x, fmt Expr) Expr {
	return &FuncExpr{Name: "to_date", Args: withOptional([]Expr{x}, fmt), bind: bindParse(Date, false)}
}

// DateTrunc is date_trunc(unit, ts): ts truncated to the unit, a constant
// among YEAR (YYYY, YY), QUARTER, MONTH (MM, MON), WEEK (to Monday), DAY
// (DD), HOUR, MINUTE, SECOND, MILLISECOND, MICROSECOND, in UTC. Dates and
// strings are cast to timestamps first. An unknown unit is a bind error
// (Spark returns NULL).
func DateTrunc(unit, ts Expr) Expr {
	return &FuncExpr{Name: "date_trunc", Args: []Expr{unit, ts}, bind: bindDateTrunc}
}

func withOptional(args []Expr, opt Expr) []Expr {
	if opt != nil {
		return append(args, opt)
	}
	return args
}

// unaryKernelEval runs a cast-style kernel over one argument; it reuses the
// cast evaluator for its error reporting.
func unaryKernelEval(f *FuncExpr, x Evaluator, to arrow.DataType, k castKernel, mem memory.Allocator) *castEval {
	return &castEval{child: x, from: x.DataType(), to: to, kern: k, mem: mem, mode: ModeLegacy, loc: f.Loc, expr: f.String(), operand: f.Args[0].String()}
}

func bindEpoch(unit int64) func(*FuncExpr, *arrow.Schema, memory.Allocator, []Evaluator) (Evaluator, error) {
	return func(f *FuncExpr, in *arrow.Schema, mem memory.Allocator, args []Evaluator) (Evaluator, error) {
		x := args[0]
		dt := x.DataType()
		var k castKernel
		switch dt.ID() {
		case arrow.NULL:
			return fnNullResult(Timestamp, mem), nil
		case arrow.INT8:
			k = epochInts[int8](unit)
		case arrow.INT16:
			k = epochInts[int16](unit)
		case arrow.INT32:
			k = epochInts[int32](unit)
		case arrow.INT64:
			k = epochInts[int64](unit)
		case arrow.FLOAT64:
			if unit == fnMicrosPerSecond {
				k = epochFloats[float64]
			}
		case arrow.FLOAT32:
			// Spark's SecondsToTimestamp widens a float to a double.
			if unit == fnMicrosPerSecond {
				k = epochFloats[float32]
			}
		case arrow.DECIMAL128:
			if unit == fnMicrosPerSecond {
				k = epochDecimals
			}
		}
		if k == nil {
			want := "an integer"
			if unit == fnMicrosPerSecond {
				want = "numeric"
			}
			return nil, fnErrArgType(f.Args[0].String(), dt, want)
		}
		return fnFoldConstant(f, in, mem, unaryKernelEval(f, x, Timestamp, k, mem), x)
	}
}

func epochInts[S int8 | int16 | int32 | int64](unit int64) castKernel {
	return func(c *castEval, arr arrow.Array) (arrow.Array, error) {
		src := fnRawValues[S](arr)
		return castFixedResult(c, arr, func(dst []int64, _ *validityOut) error {
			limit := int64(math.MaxInt64) / unit
			ok := true
			for i, v := range src {
				x := int64(v)
				dst[i] = x * unit
				ok = ok && x <= limit && x >= -limit
			}
			if ok {
				return nil
			}
			if i := castFirstBadRow(arr, func(i int) bool { x := int64(src[i]); return x > limit || x < -limit }); i >= 0 {
				return c.rowError(arr, i, errCastOverflow(Timestamp))
			}
			return nil
		})
	}
}

// epochFloats is timestamp_seconds(double or float): NaN and ±Inf are NULL,
// out-of-range values an error.
func epochFloats[F float32 | float64](c *castEval, arr arrow.Array) (arrow.Array, error) {
	src := fnRawValues[F](arr)
	n := len(src)
	buf, dst := fnFixedBuf[int64](c.mem, n)
	v := newValidityOut(c.mem, n, arr)
	for i, f := range src {
		x := float64(f)
		if !v.valid(i) {
			dst[i] = 0
			continue
		}
		if math.IsNaN(x) || math.IsInf(x, 0) {
			v.setNull(i)
			continue
		}
		m := x * fnMicrosPerSecond
		if !castInRange(m, minInt64Excl, 9223372036854775808.0) {
			buf.Release()
			v.release()
			return nil, c.rowError(arr, i, errCastOverflow(Timestamp))
		}
		dst[i] = int64(m)
	}
	bm, nulls := v.finish()
	return fnNewArray(Timestamp, n, []*memory.Buffer{bm, buf}, nil, nulls), nil
}

// epochDecimals needs an exact number of microseconds, as Spark's
// longValueExact.
func epochDecimals(c *castEval, arr arrow.Array) (arrow.Array, error) {
	scale := arr.DataType().(*arrow.Decimal128Type).Scale
	return rowKernel(func(c *castEval, arr arrow.Array, i int) (any, bool, error) {
		v := arr.(*array.Decimal128).Value(i).BigInt()
		m := rescaleBig(v, scale, 6, false)
		if rescaleBig(m, 6, scale, false).Cmp(v) != 0 {
			return nil, false, fmt.Errorf("%w: more precision than microseconds", ErrOverflow)
		}
		if !m.IsInt64() {
			return nil, false, errCastOverflow(Timestamp)
		}
		return arrow.Timestamp(m.Int64()), false, nil
	})(c, arr)
}

// bindParse binds unix_timestamp (seconds), to_timestamp and to_date.
func bindParse(to arrow.DataType, seconds bool) func(*FuncExpr, *arrow.Schema, memory.Allocator, []Evaluator) (Evaluator, error) {
	return parseBinder(to, seconds, false)
}

// parseBinder binds a parse as bindParse; wallOnly keeps the wall time
// the text names and drops a zone it gives (to_timestamp_ntz).
func parseBinder(to arrow.DataType, seconds, wallOnly bool) func(*FuncExpr, *arrow.Schema, memory.Allocator, []Evaluator) (Evaluator, error) {
	return func(f *FuncExpr, in *arrow.Schema, mem memory.Allocator, args []Evaluator) (Evaluator, error) {
		x := args[0]
		var pattern *datetimePattern
		switch {
		case len(args) == 2:
			v, ok := fnConstValue(args[1])
			if !ok || args[1].DataType().ID() != arrow.STRING && args[1].DataType().ID() != arrow.NULL {
				return nil, fmt.Errorf("the format %s must be a constant string: %w", f.Args[1], ErrType)
			}
			if v == nil {
				return fnNullResult(to, mem), nil
			}
			p, err := compileParsePattern(v.(string))
			if err != nil {
				return nil, err
			}
			pattern = p
		case seconds:
			pattern, _ = compileDatetimePattern(DefaultTimestampFormat)
		}
		dt := Unwrap(x.DataType())
		var k castKernel
		switch {
		case dt.ID() == arrow.NULL:
			return fnNullResult(to, mem), nil
		case dt.ID() == arrow.STRING && pattern != nil:
			k = patternKernel(pattern, to, seconds, wallOnly)
		case seconds && dt.ID() == arrow.TIMESTAMP:
			k = castKernelFor(dt, Int64)
		case seconds && dt.ID() == arrow.DATE32:
			k = dateToSeconds
		case !seconds && (dt.ID() == arrow.STRING || dt.ID() == arrow.TIMESTAMP || dt.ID() == arrow.DATE32):
			if arrow.TypeEqual(dt, to) {
				return Plain(x, mem), nil
			}
			k = castKernelFor(dt, to)
		}
		if k == nil {
			return nil, fnErrArgType(f.Args[0].String(), x.DataType(), "a string, date or timestamp")
		}
		ev := unaryKernelEval(f, x, to, k, mem)
		ev.mode = f.Mode
		return fnFoldConstant(f, in, mem, ev, args...)
	}
}

func dateToSeconds(c *castEval, arr arrow.Array) (arrow.Array, error) {
	src := fnRawValues[int32](arr)
	return castFixedResult(c, arr, func(dst []int64, _ *validityOut) error {
		for i, d := range src {
			dst[i] = int64(d) * 86400
		}
		return nil
	})
}

// errUnparsable is Spark's error under ANSI for text that does not match
// a datetime pattern or names no valid date (February 29 of a common
// year): CANNOT_PARSE_TIMESTAMP or DateTimeException.
func errUnparsable(p *datetimePattern) error {
	return fmt.Errorf("%w: the text does not match the datetime pattern '%s' or is not a valid date (try_to_timestamp returns NULL instead)", ErrInvalidInput, p.src)
}

// unparsable is the error for text p does not read, or nil where the
// value is NULL. Spark's fallback to its legacy parser comes first in
// both modes: where that parser may read the text (legacyMayParse) the
// error is the cross-version one, with or without ANSI; otherwise ANSI
// raises the parse error and the legacy mode gives NULL.
func unparsable(p *datetimePattern, mode EvalMode, s []byte) error {
	switch {
	case p.legacyMayParse(s):
		return errLegacyParses(p)
	case mode == ModeANSI:
		return errUnparsable(p)
	}
	return nil
}

// patternKernel parses strings with a datetime pattern into timestamps,
// seconds or dates; no match is NULL.
//
// Text with a zone or offset names an instant (Spark's GetTimestamp), which
// a date takes in the session time zone (to_date casts that timestamp);
// text without one is a wall time, read in the session time zone for a
// timestamp. wallOnly keeps the wall time whatever the text says.
func patternKernel(p *datetimePattern, to arrow.DataType, seconds, wallOnly bool) castKernel {
	div := int64(1)
	switch {
	case seconds:
		div = fnMicrosPerSecond
	case to.ID() == arrow.DATE32:
		div = fnMicrosPerDay
	}
	return func(c *castEval, arr arrow.Array) (arrow.Array, error) {
		n := arr.Len()
		offs, data := fnBinaryView(arr)
		if to.ID() == arrow.DATE32 {
			buf, dst := fnFixedBuf[int32](c.mem, n)
			v := newValidityOut(c.mem, n, arr)
			for i := 0; i < n; i++ {
				dst[i] = 0
				if !v.valid(i) {
					continue
				}
				t, ok := p.parse(data[offs[i]:offs[i+1]])
				m := t.wall
				if ok && t.zoned && !wallOnly {
					var z zoneCache
					if m, ok = t.instant(c.loc); ok {
						m = toWall(&z, c.loc, m)
					}
				}
				if days := fnFloorDiv(m, div); ok && days == int64(int32(days)) {
					dst[i] = int32(days)
				} else {
					if err := unparsable(p, c.mode, data[offs[i]:offs[i+1]]); err != nil {
						buf.Release()
						v.release()
						return nil, c.rowError(arr, i, err)
					}
					v.setNull(i)
				}
			}
			bm, nulls := v.finish()
			return fnNewArray(to, n, []*memory.Buffer{bm, buf}, nil, nulls), nil
		}
		buf, dst := fnFixedBuf[int64](c.mem, n)
		v := newValidityOut(c.mem, n, arr)
		for i := 0; i < n; i++ {
			dst[i] = 0
			if !v.valid(i) {
				continue
			}
			t, ok := p.parse(data[offs[i]:offs[i+1]])
			m := t.wall
			if ok && !wallOnly {
				m, ok = t.instant(c.loc)
			}
			if ok {
				dst[i] = fnFloorDiv(m, div)
			} else {
				if err := unparsable(p, c.mode, data[offs[i]:offs[i+1]]); err != nil {
					buf.Release()
					v.release()
					return nil, c.rowError(arr, i, err)
				}
				v.setNull(i)
			}
		}
		bm, nulls := v.finish()
		return fnNewArray(to, n, []*memory.Buffer{bm, buf}, nil, nulls), nil
	}
}

// truncUnit is a date_trunc unit.
type truncUnit uint8

const (
	truncYear truncUnit = iota
	truncQuarter
	truncMonth
	truncWeek
	truncFixed // day and smaller: floor to a multiple of a fixed length
)

var truncUnits = map[string]struct {
	unit   truncUnit
	micros int64
}{
	"YEAR": {truncYear, 0}, "YYYY": {truncYear, 0}, "YY": {truncYear, 0},
	"QUARTER": {truncQuarter, 0},
	"MONTH":   {truncMonth, 0}, "MM": {truncMonth, 0}, "MON": {truncMonth, 0},
	"WEEK": {truncWeek, 0},
	"DAY":  {truncFixed, fnMicrosPerDay}, "DD": {truncFixed, fnMicrosPerDay},
	"HOUR":        {truncFixed, 3600 * fnMicrosPerSecond},
	"MINUTE":      {truncFixed, 60 * fnMicrosPerSecond},
	"SECOND":      {truncFixed, fnMicrosPerSecond},
	"MILLISECOND": {truncFixed, 1000},
	"MICROSECOND": {truncFixed, 1},
}

func bindDateTrunc(f *FuncExpr, in *arrow.Schema, mem memory.Allocator, args []Evaluator) (Evaluator, error) {
	v, ok := fnConstValue(args[0])
	if !ok || args[0].DataType().ID() != arrow.STRING && args[0].DataType().ID() != arrow.NULL {
		return nil, fmt.Errorf("the unit %s must be a constant string: %w", f.Args[0], ErrType)
	}
	if v == nil {
		return fnNullResult(Timestamp, mem), nil
	}
	u, ok := truncUnits[strings.ToUpper(strings.TrimSpace(v.(string)))]
	if !ok {
		return nil, fmt.Errorf("unknown date_trunc unit '%s' (want YEAR, QUARTER, MONTH, WEEK, DAY, HOUR, MINUTE, SECOND, MILLISECOND or MICROSECOND)", v)
	}
	ts := args[1]
	dt := Unwrap(ts.DataType())
	switch dt.ID() {
	case arrow.NULL:
		return fnNullResult(Timestamp, mem), nil
	case arrow.TIMESTAMP:
	case arrow.DATE32, arrow.STRING:
		ts = foldQuietly(&castEval{child: ts, from: ts.DataType(), to: Timestamp, kern: castKernelFor(dt, Timestamp), mem: mem, mode: ModeLegacy, loc: f.Loc,
			expr: "CAST(" + f.Args[1].String() + " AS TIMESTAMP)", operand: f.Args[1].String()}, mem, ts)
	default:
		return nil, fnErrArgType(f.Args[1].String(), ts.DataType(), "a timestamp")
	}
	k := func(c *castEval, arr arrow.Array) (arrow.Array, error) {
		src := fnRawValues[int64](arr)
		if !isUTC(c.loc) && (u.unit != truncFixed || u.micros > 60*fnMicrosPerSecond) {
			// Units of an hour and more truncate the wall time in the
			// session time zone (hours too: zones with half-hour offsets).
			return castFixedResult(c, arr, func(dst []int64, _ *validityOut) error {
				var z zoneCache
				in, one := make([]int64, 1), make([]int64, 1)
				for i, v := range src {
					if !arr.IsValid(i) {
						dst[i] = 0
						continue
					}
					in[0] = toWall(&z, c.loc, v)
					if !truncTimestamps(in, one, u.unit, u.micros) {
						return c.rowError(arr, i, errCastOverflow(Timestamp))
					}
					dst[i] = localToInstant(c.loc, one[0])
				}
				return nil
			})
		}
		return castFixedResult(c, arr, func(dst []int64, _ *validityOut) error {
			if truncTimestamps(src, dst, u.unit, u.micros) {
				return nil
			}
			bad := func(i int) bool { return !truncTimestamps(src[i:i+1], dst[i:i+1], u.unit, u.micros) }
			if i := castFirstBadRow(arr, bad); i >= 0 {
				return c.rowError(arr, i, errCastOverflow(Timestamp))
			}
			return nil
		})
	}
	ev := &castEval{child: ts, from: Timestamp, to: Timestamp, kern: k, mem: mem, loc: f.Loc, expr: f.String(), operand: f.Args[1].String()}
	return fnFoldConstant(f, in, mem, ev, ts)
}

// truncTimestamps truncates every value (garbage under nulls included) and
// reports whether every result fits: truncating a timestamp within a unit
// of the smallest one goes below it, which is an overflow, not a wrap to
// the far future.
func truncTimestamps(src, dst []int64, unit truncUnit, micros int64) bool {
	// A result of q units of micros fits when q >= math.MinInt64/micros (Go
	// truncates that quotient towards zero, so it rounds up here).
	ok := true
	switch unit {
	case truncFixed:
		minQ := int64(math.MinInt64) / micros
		for i, v := range src {
			q := fnFloorDiv(v, micros)
			dst[i] = q * micros
			ok = ok && q >= minQ
		}
	case truncWeek:
		// 1970-01-01 was a Thursday: Mondays are days ≡ 4 (mod 7).
		for i, v := range src {
			days := fnFloorDiv(v, fnMicrosPerDay)
			monday := days - fnFloorMod(days-4, 7)
			dst[i] = monday * fnMicrosPerDay
			ok = ok && monday >= minTimestampDay
		}
	default:
		for i, v := range src {
			y, m, _ := civilFromDays(fnFloorDiv(v, fnMicrosPerDay))
			switch unit {
			case truncYear:
				m = 1
			case truncQuarter:
				m = (m-1)/3*3 + 1
			}
			first := daysFromCivil(y, m, 1)
			dst[i] = first * fnMicrosPerDay
			ok = ok && first >= minTimestampDay
		}
	}
	return ok
}

// minTimestampDay is the first day whose midnight is a timestamp.
const minTimestampDay = math.MinInt64 / fnMicrosPerDay

func fnFloorMod(a, b int64) int64 { return a - fnFloorDiv(a, b)*b }
