package vector

import (
	"fmt"
	"math/big"
	"strings"
	"time"

	"github.com/apache/arrow/go/v17/arrow"
	"github.com/apache/arrow/go/v17/arrow/memory"
)

// The timestamp constructors and zone conversions of issue #20:
// make_timestamp, make_timestamp_ltz, make_timestamp_ntz, trunc,
// to_timestamp_ntz, to_timestamp_ltz, convert_timezone,
// from_utc_timestamp and to_utc_timestamp.

// zoneLocation resolves a zone id as Spark's getZoneId (a region, or a
// fixed offset such as +08:00 or UTC+8).
func zoneLocation(z []byte) (*time.Location, bool) {
	off, loc, ok := parseZone(z)
	switch {
	case !ok:
		return nil, false
	case loc != nil:
		return loc, true
	case off == 0:
		return time.UTC, true
	}
	return time.FixedZone("", off), true
}

// errInvalidZone is an unknown zone id.
func errInvalidZone(z []byte) error {
	return &SparkError{Class: "INVALID_TIMEZONE", Err: ErrInvalidInput, Msg: fmt.Sprintf("The timezone: %s is invalid. The timezone must be either a region-based zone ID or a zone offset.", z)}
}

// errFieldBounds is Spark's DATETIME_FIELD_OUT_OF_BOUNDS for a field of
// make_timestamp.
func errFieldBounds(field string, lo, hi, v int64) error {
	return &SparkError{Class: "DATETIME_FIELD_OUT_OF_BOUNDS", Err: ErrInvalidInput,
		Msg: fmt.Sprintf("Invalid value for %s (valid values %d - %d): %d. %s", field, lo, hi, v, ansiHint)}
}

// makeWall is the wall clock (microseconds since the epoch, read as UTC)
// of make_timestamp's fields; sec is a decimal text with up to 6
// fraction digits (more are rounded half up), 60 with no fraction is the
// next minute.
func makeWall(y, mo, d, h, mi int64, sec []byte) (int64, error) {
	check := func(field string, lo, hi, v int64) error {
		if v < lo || v > hi {
			return errFieldBounds(field, lo, hi, v)
		}
		return nil
	}
	if err := check("Year", -290000, 290000, y); err != nil {
		return 0, err
	}
	if err := check("MonthOfYear", 1, 12, mo); err != nil {
		return 0, err
	}
	if err := check("DayOfMonth", 1, int64(daysInMonth(y, int(mo))), d); err != nil {
		return 0, err
	}
	if err := check("HourOfDay", 0, 23, h); err != nil {
		return 0, err
	}
	if err := check("MinuteOfHour", 0, 59, mi); err != nil {
		return 0, err
	}
	r, ok := new(big.Rat).SetString(strings.TrimSpace(string(sec)))
	if !ok {
		return 0, errCastInvalid("'"+string(sec)+"'", String, Decimal(16, 6))
	}
	us := ratRoundHalfUp(r.Mul(r, big.NewRat(fnMicrosPerSecond, 1)))
	if !us.IsInt64() || us.Sign() < 0 || us.Int64() >= 61*fnMicrosPerSecond {
		v := int64(-1)
		if us.IsInt64() {
			v = us.Int64() / fnMicrosPerSecond
		}
		return 0, errFieldBounds("SecondOfMinute", 0, 59, v)
	}
	micros := us.Int64()
	if micros >= 60*fnMicrosPerSecond {
		if micros != 60*fnMicrosPerSecond {
			return 0, &SparkError{Class: "INVALID_FRACTION_OF_SECOND", Err: ErrInvalidInput, Msg: "The fraction of sec must be zero. Valid range is [0, 60]. " + ansiHint}
		}
	}
	return daysFromCivil(y, int(mo), int(d))*fnMicrosPerDayMore + h*3600*fnMicrosPerSecond + mi*60*fnMicrosPerSecond + micros, nil
}

// bindMakeTimestamp binds make_timestamp(y, mo, d, h, mi, sec[, tz]) (ntz
// false: the wall clock in tz or the session time zone, a timestamp) and
// make_timestamp_ntz (ntz true: a timestamp_ntz). Invalid fields raise
// under ANSI and are NULL without it.
func bindMakeTimestamp(ntz bool) func(*FuncExpr, *arrow.Schema, memory.Allocator, []Evaluator) (Evaluator, error) {
	return func(f *FuncExpr, in *arrow.Schema, mem memory.Allocator, args []Evaluator) (Evaluator, error) {
		kinds := []rowKind{rowInt, rowInt, rowInt, rowInt, rowInt, rowStr, rowStr}[:len(args)]
		for k := 0; k < len(args) && k < 5; k++ {
			if t := Unwrap(args[k].DataType()); t.ID() != arrow.NULL && !IsIntegral(t) && !IsStringLike(t) {
				return nil, fmt.Errorf("argument %d of %s must be an int, not %s: %w", k+1, f.Name, TypeName(t), ErrType)
			}
		}
		if t := Unwrap(args[5].DataType()); t.ID() != arrow.NULL && !IsNumeric(t) && !IsStringLike(t) {
			return nil, fmt.Errorf("the seconds of %s must be a number, not %s: %w", f.Name, TypeName(t), ErrType)
		}
		dt, loc, strict := Timestamp, f.Loc, f.Mode == ModeANSI
		if ntz {
			dt = TimestampNTZ
		}
		return bindRows(f, in, mem, args, kinds, dt, rowKernels{num: func(a []rowArg, i int) (int64, bool, error) {
			wall, err := makeWall(a[0].int(i), a[1].int(i), a[2].int(i), a[3].int(i), a[4].int(i), a[5].str(i))
			if err != nil {
				if strict {
					return 0, false, err
				}
				return 0, false, nil
			}
			if ntz {
				return wall, true, nil
			}
			z := loc
			if len(a) > 6 {
				var ok bool
				if z, ok = zoneLocation(a[6].str(i)); !ok {
					return 0, false, errInvalidZone(a[6].str(i))
				}
			}
			return localToInstant(z, wall), true, nil
		}})
	}
}

// sessionWall reads argument k as a wall clock: a timestamp_ntz as it is,
// a timestamp (and a date or string cast to one) in the session time zone.
func sessionWall(f *FuncExpr, args []Evaluator, k int) func(a []rowArg, i int) int64 {
	if IsTimestampNTZ(Unwrap(args[k].DataType())) {
		return func(a []rowArg, i int) int64 { return a[k].int(i) }
	}
	loc := f.Loc
	return func(a []rowArg, i int) int64 {
		if isUTC(loc) {
			return a[k].int(i)
		}
		var z zoneCache
		return toWall(&z, loc, a[k].int(i))
	}
}

// bindToTimestampNTZ binds to_timestamp_ntz(x[, fmt]): text (with fmt
// as to_timestamp) read as a wall clock, a date at midnight, a timestamp
// as its wall clock in the session time zone.
func bindToTimestampNTZ(f *FuncExpr, in *arrow.Schema, mem memory.Allocator, args []Evaluator) (Evaluator, error) {
	t := Unwrap(args[0].DataType())
	if t.ID() == arrow.TIMESTAMP && len(args) == 1 {
		wall := sessionWall(f, args, 0)
		return bindRows(f, in, mem, args, []rowKind{rowMicros}, TimestampNTZ, rowKernels{num: func(a []rowArg, i int) (int64, bool, error) {
			return wall(a, i), true, nil
		}})
	}
	g := *f
	g.Loc = nil
	ev, err := parseBinder(Timestamp, false, true)(&g, in, mem, args)
	if err != nil {
		return nil, err
	}
	return retype(ev, TimestampNTZ, mem), nil
}

// bindConvertTimezone binds convert_timezone([from,] to, ts): the wall
// clock ts (a timestamp_ntz; a timestamp is read in the session time
// zone) in zone from (default the session time zone) as the wall clock
// of the same instant in zone to, a timestamp_ntz.
func bindConvertTimezone(f *FuncExpr, in *arrow.Schema, mem memory.Allocator, args []Evaluator) (Evaluator, error) {
	n := len(args)
	kinds := []rowKind{rowStr, rowStr, rowMicros}[3-n:]
	wall := sessionWall(f, args, n-1)
	session := f.Loc
	return bindRows(f, in, mem, args, kinds, TimestampNTZ, rowKernels{num: func(a []rowArg, i int) (int64, bool, error) {
		from := session
		if n == 3 {
			var ok bool
			if from, ok = zoneLocation(a[0].str(i)); !ok {
				return 0, false, errInvalidZone(a[0].str(i))
			}
		}
		to, ok := zoneLocation(a[n-2].str(i))
		if !ok {
			return 0, false, errInvalidZone(a[n-2].str(i))
		}
		instant := localToInstant(from, wall(a, i))
		if isUTC(to) {
			return instant, true, nil
		}
		var z zoneCache
		return toWall(&z, to, instant), true, nil
	}})
}

// bindUTCShift binds from_utc_timestamp(ts, tz) (toUTC false: ts read as
// a UTC wall clock, shown as tz's) and to_utc_timestamp(ts, tz) (ts read
// as tz's wall clock, shown as UTC's).
func bindUTCShift(toUTC bool) func(*FuncExpr, *arrow.Schema, memory.Allocator, []Evaluator) (Evaluator, error) {
	return func(f *FuncExpr, in *arrow.Schema, mem memory.Allocator, args []Evaluator) (Evaluator, error) {
		return bindRows(f, in, mem, args, []rowKind{rowMicros, rowStr}, Timestamp, rowKernels{num: func(a []rowArg, i int) (int64, bool, error) {
			loc, ok := zoneLocation(a[1].str(i))
			if !ok {
				return 0, false, errInvalidZone(a[1].str(i))
			}
			if toUTC {
				return localToInstant(loc, a[0].int(i)), true, nil
			}
			var z zoneCache
			return toWall(&z, loc, a[0].int(i)), true, nil
		}})
	}
}

// truncDate is trunc(d, fmt): the first day of d's year (YEAR, YYYY,
// YY), quarter (QUARTER), month (MONTH, MM, MON) or ISO week (WEEK, its
// Monday); NULL for another format.
func truncDate(a []rowArg, i int) (int64, bool, error) {
	days := a[0].int(i)
	y, m, _ := civilFromDays(days)
	switch strings.ToUpper(strings.TrimSpace(string(a[1].str(i)))) {
	case "YEAR", "YYYY", "YY":
		return daysFromCivil(y, 1, 1), true, nil
	case "QUARTER":
		return daysFromCivil(y, (m-1)/3*3+1, 1), true, nil
	case "MONTH", "MM", "MON":
		return daysFromCivil(y, m, 1), true, nil
	case "WEEK":
		// 1970-01-01 was a Thursday: Monday is 3 days before it.
		return days - fnFloorMod(days+3, 7), true, nil
	}
	return 0, false, nil
}

// timeMakeFunctions are the functions of this file in the registry.
var timeMakeFunctions = map[string]funcSpec{
	"make_timestamp":     {6, 7, rowBinder("make_timestamp", bindMakeTimestamp(false))},
	"make_timestamp_ltz": {6, 7, rowBinder("make_timestamp_ltz", bindMakeTimestamp(false))},
	"make_timestamp_ntz": {6, 6, rowBinder("make_timestamp_ntz", bindMakeTimestamp(true))},
	"to_timestamp_ntz":   {1, 2, rowBinder("to_timestamp_ntz", bindToTimestampNTZ)},
	"to_timestamp_ltz":   {1, 2, func(a []Expr) Expr { return ToTimestamp(a[0], arg(a, 1)) }},
	"convert_timezone":   {2, 3, rowBinder("convert_timezone", bindConvertTimezone)},
	"from_utc_timestamp": {2, 2, rowBinder("from_utc_timestamp", bindUTCShift(false))},
	"to_utc_timestamp":   {2, 2, rowBinder("to_utc_timestamp", bindUTCShift(true))},
	"trunc":              {2, 2, rowsFunc("trunc", []rowKind{rowDate, rowStr}, Date, rowKernels{num: truncDate})},
}

func init() {
	for name, spec := range timeMakeFunctions {
		functions[name] = spec
	}
	ntzFunctions["convert_timezone"] = true
	ntzFunctions["to_timestamp_ntz"] = true
}
