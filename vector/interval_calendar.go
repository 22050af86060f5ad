package vector

import (
	"context"
	"fmt"
	"math"
	"strconv"
	"time"

	"github.com/apache/arrow/go/v17/arrow"
	"github.com/apache/arrow/go/v17/arrow/array"
	"github.com/apache/arrow/go/v17/arrow/decimal128"
	"github.com/apache/arrow/go/v17/arrow/memory"
)

// CalendarInterval is Spark's CalendarIntervalType (make_interval's
// result): months, days and microseconds kept apart, since a month and a
// day have no fixed length. It is Arrow's month-day-nano interval, whose
// nanoseconds are the microseconds times 1000 (so clients read it right);
// that bounds the microseconds to ±9.2e15 (about 292 years), and a value
// beyond is an error rather than a wrong one. Only make_interval makes
// it; CAST to STRING and timestamp ± it read it; other uses are refused.
var CalendarInterval arrow.DataType = arrow.FixedWidthTypes.MonthDayNanoInterval

// IsCalendarInterval reports whether dt is the calendar interval type.
func IsCalendarInterval(dt arrow.DataType) bool {
	return dt != nil && Unwrap(dt).ID() == arrow.INTERVAL_MONTH_DAY_NANO
}

// FormatCalendarInterval is Spark's CalendarInterval.toString: "1 years
// 2 months 25 days 5 hours 6 minutes 7.008009 seconds", zero parts left
// out, "0 seconds" for zero.
func FormatCalendarInterval(months, days int32, micros int64) string {
	return string(appendCalendarInterval(nil, months, days, micros))
}

func appendCalendarInterval(dst []byte, months, days int32, micros int64) []byte {
	if months == 0 && days == 0 && micros == 0 {
		return append(dst, "0 seconds"...)
	}
	start := len(dst)
	unit := func(v int64, name string) {
		if v != 0 {
			dst = strconv.AppendInt(dst, v, 10)
			dst = append(dst, ' ')
			dst = append(dst, name...)
			dst = append(dst, ' ')
		}
	}
	unit(int64(months/12), "years")
	unit(int64(months%12), "months")
	unit(int64(days), "days")
	if micros != 0 {
		rest := micros
		unit(rest/microsPerHour, "hours")
		rest %= microsPerHour
		unit(rest/microsPerMinute, "minutes")
		rest %= microsPerMinute
		if rest != 0 {
			// BigDecimal.valueOf(rest, 6).stripTrailingZeros.toPlainString
			if rest < 0 {
				dst = append(dst, '-')
				rest = -rest
			}
			dst = strconv.AppendInt(dst, rest/microsPerSecond, 10)
			dst = appendMicrosFraction(dst, rest%microsPerSecond)
			dst = append(dst, " seconds "...)
		}
	}
	if len(dst) > start {
		dst = dst[:len(dst)-1] // the last unit's trailing space
	}
	return dst
}

// calendarToNanos is the month-day-nano value of a calendar interval, or
// false when its microseconds do not fit nanoseconds.
func calendarToNanos(months, days int32, micros int64) (arrow.MonthDayNanoInterval, bool) {
	if micros > math.MaxInt64/1000 || micros < math.MinInt64/1000 {
		return arrow.MonthDayNanoInterval{}, false
	}
	return arrow.MonthDayNanoInterval{Months: months, Days: days, Nanoseconds: micros * 1000}, true
}

func errCalendarRange(micros int64) error {
	return fmt.Errorf("an interval of %d microseconds is beyond the engine's calendar interval (±%d microseconds, Arrow's month-day-nano interval): %w", micros, int64(math.MaxInt64/1000), ErrOverflow)
}

// makeInterval is make_interval([years [, months [, weeks [, days [,
// hours [, mins [, secs]]]]]]]), Spark's MakeInterval: int arguments
// (0 when left out), secs a DECIMAL(18, 6) (the planner casts it); months
// = years*12 + months and days = weeks*7 + days in ints, microseconds =
// secs + hours and minutes in a long, each overflow an
// [ARITHMETIC_OVERFLOW] error under ANSI and NULL without it; a NULL
// argument makes NULL.
func makeInterval(args []Expr) Expr {
	return &FuncExpr{Name: "make_interval", Args: args, bind: func(f *FuncExpr, in *arrow.Schema, mem memory.Allocator, ev []Evaluator) (Evaluator, error) {
		for k, a := range ev {
			t := Unwrap(a.DataType())
			ok := t.ID() == arrow.NULL
			if k < 6 {
				ok = ok || IsIntegral(t) && t.ID() != arrow.INT64
			} else if d, isDec := t.(*arrow.Decimal128Type); isDec {
				ok = d.Scale == 6 && d.Precision <= 18
			}
			if !ok {
				want := "an int"
				if k == 6 {
					want = "a DECIMAL(18, 6)"
				}
				return nil, fmt.Errorf("argument %d of make_interval must be %s, not %s: %w", k+1, want, TypeName(t), ErrType)
			}
		}
		for _, a := range ev {
			if a.DataType().ID() == arrow.NULL || isNullConst(a) {
				return fnNullResult(CalendarInterval, mem), nil
			}
		}
		return &makeIntervalEval{args: ev, ansi: f.Mode == ModeANSI, mem: mem}, nil
	}}
}

type makeIntervalEval struct {
	args []Evaluator
	ansi bool
	mem  memory.Allocator
}

func (m *makeIntervalEval) DataType() arrow.DataType { return CalendarInterval }

func (m *makeIntervalEval) Eval(ctx context.Context, rec arrow.Record) (arrow.Array, error) {
	n := int(rec.NumRows())
	arrs, err := fnEvalArgs(ctx, rec, m.args)
	if err != nil {
		return nil, err
	}
	defer releaseArrays(arrs)
	// Each argument as a row reader: a constant or a column of ints, or
	// of DECIMAL(18, 6) unscaled values for secs.
	type reader struct {
		c     int64
		col   []int64
		decs  []decimal128.Num
		valid func(i int) bool
	}
	rd := make([]reader, len(m.args))
	for k, ev := range m.args {
		if v, ok := fnConstValue(ev); ok {
			switch x := v.(type) {
			case decimal128.Num:
				rd[k].c = int64(x.LowBits())
			default:
				rd[k].c, _ = fnConstInt64(v)
			}
			continue
		}
		arr := arrs[k]
		rd[k].valid = arr.IsValid
		if d, ok := arr.(*array.Decimal128); ok {
			rd[k].decs = d.Values()
		} else {
			rd[k].col = fnInt64sOf(arr)
		}
	}
	b := array.NewMonthDayNanoIntervalBuilder(m.mem)
	defer b.Release()
	b.Reserve(n)
	for i := 0; i < n; i++ {
		var v [7]int64
		null := false
		for k := range rd {
			r := &rd[k]
			switch {
			case r.valid == nil:
				v[k] = r.c
			case !r.valid(i):
				null = true
			case r.decs != nil:
				v[k] = int64(r.decs[i].LowBits())
			default:
				v[k] = r.col[i]
			}
		}
		if null {
			b.AppendNull()
			continue
		}
		months, days, micros, ok := makeIntervalParts(v)
		if !ok {
			if m.ansi {
				return nil, &SparkError{Class: "ARITHMETIC_OVERFLOW", Err: ErrOverflow, Msg: "integer overflow in make_interval"}
			}
			b.AppendNull()
			continue
		}
		iv, fits := calendarToNanos(months, days, micros)
		if !fits {
			return nil, errCalendarRange(micros)
		}
		b.Append(iv)
	}
	return b.NewArray(), nil
}

// makeIntervalParts computes Spark's IntervalUtils.makeInterval with its
// exact int and long arithmetic; ok is false on an overflow. v holds
// years, months, weeks, days, hours, mins and secs (in microseconds).
func makeIntervalParts(v [7]int64) (months, days int32, micros int64, ok bool) {
	fitsInt := func(x int64) bool { return x >= math.MinInt32 && x <= math.MaxInt32 }
	ym := v[0] * 12
	if !fitsInt(ym) || !fitsInt(ym+v[1]) {
		return 0, 0, 0, false
	}
	wd := v[2] * 7
	if !fitsInt(wd) || !fitsInt(wd+v[3]) {
		return 0, 0, 0, false
	}
	us := v[6]
	for _, p := range [][2]int64{{v[4], microsPerHour}, {v[5], microsPerMinute}} {
		prod := p[0] * p[1]
		if p[0] != 0 && prod/p[0] != p[1] {
			return 0, 0, 0, false
		}
		sum := us + prod
		if (prod > 0 && sum < us) || (prod < 0 && sum > us) {
			return 0, 0, 0, false
		}
		us = sum
	}
	return int32(ym + v[1]), int32(wd + v[3]), us, true
}

// CalendarToString is CAST(x AS STRING) of a calendar interval.
func CalendarToString(x Expr) Expr {
	return &FuncExpr{Name: "string", Args: []Expr{x}, bind: func(f *FuncExpr, in *arrow.Schema, mem memory.Allocator, args []Evaluator) (Evaluator, error) {
		t := Unwrap(args[0].DataType())
		switch {
		case t.ID() == arrow.NULL:
			return fnNullResult(String, mem), nil
		case !IsCalendarInterval(t):
			return nil, fmt.Errorf("argument 1 of %s must be a calendar interval, not %s: %w", f.Name, TypeName(t), ErrType)
		}
		return &calendarMapEval{arg: args[0], dt: String, mem: mem, str: func(dst []byte, v arrow.MonthDayNanoInterval) []byte {
			return appendCalendarInterval(dst, v.Months, v.Days, v.Nanoseconds/1000)
		}}, nil
	}}
}

// calendarMapEval maps each calendar interval of its argument to a string.
type calendarMapEval struct {
	arg Evaluator
	dt  arrow.DataType
	mem memory.Allocator
	str func(dst []byte, v arrow.MonthDayNanoInterval) []byte
}

func (c *calendarMapEval) DataType() arrow.DataType { return c.dt }

func (c *calendarMapEval) Eval(ctx context.Context, rec arrow.Record) (arrow.Array, error) {
	arr, err := c.arg.Eval(ctx, rec)
	if err != nil {
		return nil, err
	}
	defer arr.Release()
	iv, ok := arr.(*array.MonthDayNanoInterval)
	if !ok {
		return nil, fmt.Errorf("vector: calendar interval to string of %s: %w", TypeName(arr.DataType()), ErrType)
	}
	b := array.NewStringBuilder(c.mem)
	defer b.Release()
	b.Reserve(iv.Len())
	var buf []byte
	for i := 0; i < iv.Len(); i++ {
		if iv.IsNull(i) {
			b.AppendNull()
			continue
		}
		buf = c.str(buf[:0], iv.Value(i))
		b.BinaryBuilder.Append(buf)
	}
	return b.NewArray(), nil
}

// TimestampAddCalendar is ts + x (sign 1) or ts - x (sign -1) of a
// timestamp and a calendar interval, Spark's timestampAddInterval: in the
// session time zone (none for a TIMESTAMP_NTZ) the months move the wall
// clock (the day clamped to the month's end), then the days move it, then
// the microseconds are added to the instant. An overflow is an error.
func TimestampAddCalendar(ts, x Expr, sign int64) Expr {
	return &FuncExpr{Name: map[bool]string{true: "+", false: "-"}[sign > 0], Args: []Expr{ts, x}, bind: func(f *FuncExpr, in *arrow.Schema, mem memory.Allocator, args []Evaluator) (Evaluator, error) {
		t := Unwrap(args[0].DataType())
		dt, loc := Timestamp, f.Loc
		switch {
		case IsTimestampNTZ(t):
			dt, loc = TimestampNTZ, nil
		case t.ID() == arrow.TIMESTAMP, t.ID() == arrow.NULL:
		default:
			return nil, fmt.Errorf("argument 1 of %s must be a timestamp, not %s: %w", f.Name, TypeName(t), ErrType)
		}
		if it := Unwrap(args[1].DataType()); !IsCalendarInterval(it) && it.ID() != arrow.NULL {
			return nil, fmt.Errorf("argument 2 of %s must be a calendar interval, not %s: %w", f.Name, TypeName(it), ErrType)
		}
		if args[0].DataType().ID() == arrow.NULL || args[1].DataType().ID() == arrow.NULL {
			return fnNullResult(dt, mem), nil
		}
		return &tsAddCalendarEval{ts: args[0], iv: args[1], dt: dt, loc: loc, sign: sign, mem: mem}, nil
	}}
}

type tsAddCalendarEval struct {
	ts, iv Evaluator
	dt     arrow.DataType
	loc    *time.Location
	sign   int64
	mem    memory.Allocator
}

func (e *tsAddCalendarEval) DataType() arrow.DataType { return e.dt }

func (e *tsAddCalendarEval) Eval(ctx context.Context, rec arrow.Record) (arrow.Array, error) {
	tsArr, err := e.ts.Eval(ctx, rec)
	if err != nil {
		return nil, err
	}
	defer tsArr.Release()
	ivArr, err := e.iv.Eval(ctx, rec)
	if err != nil {
		return nil, err
	}
	defer ivArr.Release()
	ivs, ok := ivArr.(*array.MonthDayNanoInterval)
	if !ok {
		return nil, fmt.Errorf("vector: timestamp %s calendar interval of %s: %w", map[bool]string{true: "+", false: "-"}[e.sign > 0], TypeName(ivArr.DataType()), ErrType)
	}
	tss := fnRawValues[int64](tsArr)
	n := tsArr.Len()
	out := make([]int64, n)
	valid := make([]bool, n)
	var z zoneCache
	for i := 0; i < n; i++ {
		if tsArr.IsNull(i) || ivs.IsNull(i) {
			continue
		}
		v := ivs.Value(i)
		r, err := addCalendar(&z, e.loc, tss[i], v, e.sign)
		if err != nil {
			return nil, err
		}
		out[i], valid[i] = r, true
	}
	return newFixedArray(e.mem, e.dt, out, valid), nil
}

func calendarOverflow() error {
	return &SparkError{Class: "ARITHMETIC_OVERFLOW", Err: ErrOverflow, Msg: "long overflow in timestamp + interval"}
}

// addCalendar is Spark's timestampAddInterval of ts and sign*v:
// ZonedDateTime.plusMonths, then plusDays, then plus the microseconds.
func addCalendar(z *zoneCache, loc *time.Location, ts int64, v arrow.MonthDayNanoInterval, sign int64) (int64, error) {
	months, days, micros := int64(v.Months), int64(v.Days), v.Nanoseconds/1000
	if sign < 0 {
		if v.Months == math.MinInt32 || v.Days == math.MinInt32 {
			return 0, calendarOverflow()
		}
		months, days, micros = -months, -days, -micros
	}
	const day = fnMicrosPerDayMore
	wallOf := func(t int64) int64 {
		if isUTC(loc) {
			return t
		}
		return toWall(z, loc, t)
	}
	instantOf := func(w int64) int64 {
		if isUTC(loc) {
			return w
		}
		return localToInstant(loc, w)
	}
	// Within ±290,000 years of micros no step below overflows int64.
	const bound = 290_000 * 366 * day
	if months != 0 {
		w := wallOf(ts)
		d, tod := fnFloorDiv(w, day), fnFloorMod(w, day)
		nd := addMonths(d, months)
		if nd > bound/day || nd < -bound/day {
			return 0, calendarOverflow()
		}
		ts = instantOf(nd*day + tod)
	}
	if days != 0 {
		w := wallOf(ts)
		if w > bound || w < -bound || days > bound/day || days < -bound/day {
			return 0, calendarOverflow()
		}
		ts = instantOf(w + days*day)
	}
	r := ts + micros
	if (micros > 0 && r < ts) || (micros < 0 && r > ts) {
		return 0, calendarOverflow()
	}
	return r, nil
}
