package vector

import (
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/apache/arrow/go/v17/arrow"
	"github.com/apache/arrow/go/v17/arrow/memory"
)

// Date functions of Spark over days since the epoch (proleptic Gregorian
// calendar): fields, date arithmetic, next_day, last_day, make_date and
// the unit arithmetic of timestampadd/timestampdiff. A string argument is
// cast to a date (raising under ANSI when it does not parse) and a
// timestamp is read as its date in the session time zone.

// ErrDateTime is an invalid date or time value (Spark's DateTimeException
// under ANSI).
var ErrDateTime = errors.New("invalid date or time")

const fnMicrosPerDayMore = 86_400 * fnMicrosPerSecond

// dateField registers a field of a date: fn gets y, m, d and the days.
func dateField(name string, fn func(y int64, m, d int, days int64) int64) func(args []Expr) Expr {
	return rowsFunc(name, []rowKind{rowDate}, Int32, rowKernels{
		num: func(a []rowArg, i int) (int64, bool, error) {
			days := a[0].int(i)
			y, m, d := civilFromDays(days)
			return fn(y, m, d, days), true, nil
		},
	})
}

// isoDayOfWeek is 1 (Monday) to 7 (Sunday); 1970-01-01 was a Thursday.
func isoDayOfWeek(days int64) int64 { return fnFloorMod(days+3, 7) + 1 }

func dayOfYear(y int64, days int64) int64 { return days - daysFromCivil(y, 1, 1) + 1 }

// isoWeekOfYear is the ISO 8601 week number (weeks start on Monday, week
// 1 holds the year's first Thursday).
func isoWeekOfYear(days int64) int64 {
	thursday := days - isoDayOfWeek(days) + 4
	y, _, _ := civilFromDays(thursday)
	return (thursday-daysFromCivil(y, 1, 1))/7 + 1
}

func isLeap(y int64) bool { return y%4 == 0 && (y%100 != 0 || y%400 == 0) }

func daysInMonth(y int64, m int) int {
	switch m {
	case 2:
		if isLeap(y) {
			return 29
		}
		return 28
	case 4, 6, 9, 11:
		return 30
	}
	return 31
}

// addMonths adds n months to a date, clamping the day to the month's end
// (2020-01-31 + 1 month is 2020-02-29), as Java's plusMonths.
func addMonths(days, n int64) int64 {
	y, m, d := civilFromDays(days)
	total := y*12 + int64(m-1) + n
	ny, nm := fnFloorDiv(total, 12), int(fnFloorMod(total, 12))+1
	return daysFromCivil(ny, nm, min(d, daysInMonth(ny, nm)))
}

// dayAmountArg checks the day count of date_add/date_sub: int, smallint,
// tinyint or a string (cast to int), as Spark's inputs types.
func dayAmountArg(f *FuncExpr, args []Evaluator, mem memory.Allocator) ([]Evaluator, error) {
	dt := Unwrap(args[1].DataType())
	switch dt.ID() {
	case arrow.NULL, arrow.INT8, arrow.INT16, arrow.INT32:
		return args, nil
	}
	if !IsStringLike(dt) {
		return nil, fmt.Errorf("argument 2 of %s requires (int or smallint or tinyint) type, however, %s is of %s type: %w", f.Name, f.Args[1], TypeName(dt), ErrType)
	}
	if f.Mode != ModeANSI {
		// With ANSI off Spark takes only a string literal here, and only
		// one that Integer.parseInt reads (TypeCoercion's DateTimeOperations);
		// ANSI mode casts any string to INT.
		lit, ok := f.Args[1].(*Literal)
		if !ok {
			return nil, fmt.Errorf("argument 2 of %s requires (int or smallint or tinyint) type, however, %s is of %s type: %w", f.Name, f.Args[1], TypeName(dt), ErrType)
		}
		if s, ok := lit.Value.(string); ok {
			if _, err := strconv.ParseInt(s, 10, 32); err != nil {
				return nil, fmt.Errorf("[SECOND_FUNCTION_ARGUMENT_NOT_INTEGER] The second argument of '%s' function needs to be an integer (%s): %w", f.Name, f.Args[1], ErrType)
			}
		}
	}
	c := &castEval{child: args[1], from: args[1].DataType(), to: Int32, kern: castKernelFor(dt, Int32), mem: mem, mode: f.Mode,
		expr: "CAST(" + f.Args[1].String() + " AS INT)", operand: f.Args[1].String()}
	return []Evaluator{args[0], foldQuietly(c, mem, args[1])}, nil
}

// bindDateAdd binds date_add(d, n) (sign 1) and date_sub(d, n) (sign -1).
func bindDateAdd(sign int64) func(*FuncExpr, *arrow.Schema, memory.Allocator, []Evaluator) (Evaluator, error) {
	return func(f *FuncExpr, in *arrow.Schema, mem memory.Allocator, args []Evaluator) (Evaluator, error) {
		args, err := dayAmountArg(f, args, mem)
		if err != nil {
			return nil, err
		}
		return bindRows(f, in, mem, args, []rowKind{rowDate, rowInt}, Date, rowKernels{
			num: func(a []rowArg, i int) (int64, bool, error) {
				v := a[0].int(i) + sign*a[1].int(i)
				if v != int64(int32(v)) {
					return 0, false, fmt.Errorf("date out of range: %w", ErrOverflow)
				}
				return v, true, nil
			},
		})
	}
}

// dayOfWeekNames maps Spark's accepted day names to ISO numbers.
var dayOfWeekNames = map[string]int64{
	"MO": 1, "MON": 1, "MONDAY": 1, "TU": 2, "TUE": 2, "TUESDAY": 2, "WE": 3, "WED": 3, "WEDNESDAY": 3,
	"TH": 4, "THU": 4, "THURSDAY": 4, "FR": 5, "FRI": 5, "FRIDAY": 5, "SA": 6, "SAT": 6, "SATURDAY": 6,
	"SU": 7, "SUN": 7, "SUNDAY": 7,
}

// bindNextDay binds next_day(d, dayOfWeek): the first date after d that
// falls on that day; an unknown day name raises under ANSI and is NULL
// otherwise.
func bindNextDay(f *FuncExpr, in *arrow.Schema, mem memory.Allocator, args []Evaluator) (Evaluator, error) {
	mode := f.Mode
	return bindRows(f, in, mem, args, []rowKind{rowDate, rowStr}, Date, rowKernels{
		num: func(a []rowArg, i int) (int64, bool, error) {
			name := a[1].str(i)
			want, ok := dayOfWeekNames[strings.ToUpper(strings.TrimSpace(string(name)))]
			if !ok {
				if mode == ModeANSI {
					return 0, false, fmt.Errorf("illegal input for day of week: %s: %w", name, ErrDateTime)
				}
				return 0, false, nil
			}
			days := a[0].int(i)
			step := fnFloorMod(want-isoDayOfWeek(days), 7)
			if step == 0 {
				step = 7
			}
			return days + step, true, nil
		},
	})
}

// bindMakeDate binds make_date(year, month, day): an invalid date raises
// under ANSI and is NULL otherwise.
func bindMakeDate(f *FuncExpr, in *arrow.Schema, mem memory.Allocator, args []Evaluator) (Evaluator, error) {
	mode := f.Mode
	return bindRows(f, in, mem, args, []rowKind{rowInt, rowInt, rowInt}, Date, rowKernels{
		num: func(a []rowArg, i int) (int64, bool, error) {
			y, m, d := a[0].int(i), a[1].int(i), a[2].int(i)
			var err error
			switch {
			case y < -999_999_999 || y > 999_999_999:
				// Java's LocalDate range, as Spark's make_date checks it.
				err = fmt.Errorf("invalid value for Year (valid values -999999999 - 999999999): %d: %w", y, ErrDateTime)
			case m < 1 || m > 12:
				err = fmt.Errorf("invalid value for MonthOfYear (valid values 1 - 12): %d: %w", m, ErrDateTime)
			case d < 1 || d > 31:
				err = fmt.Errorf("invalid value for DayOfMonth (valid values 1 - 28/31): %d: %w", d, ErrDateTime)
			case d > int64(daysInMonth(y, int(m))):
				err = fmt.Errorf("invalid date '%04d-%02d-%02d': %w", y, m, d, ErrDateTime)
			}
			if err != nil {
				if mode == ModeANSI {
					return 0, false, err
				}
				return 0, false, nil
			}
			days := daysFromCivil(y, int(m), int(d))
			if days != int64(int32(days)) {
				// Spark's localDateToDays (Math.toIntExact) overflows.
				err = fmt.Errorf("make_date(%d, %d, %d) is out of the DATE range: %w", y, m, d, ErrOverflow)
				if mode == ModeANSI {
					return 0, false, err
				}
				return 0, false, nil
			}
			return days, true, nil
		},
	})
}

// timeUnit is a unit of timestampadd/timestampdiff.
type timeUnit uint8

const (
	unitMicrosecond timeUnit = iota
	unitMillisecond
	unitSecond
	unitMinute
	unitHour
	unitDay
	unitWeek
	unitMonth
	unitQuarter
	unitYear
)

// parseTimeUnit reads a unit keyword of timestampadd/timestampdiff (any
// case).
func parseTimeUnit(s string) (timeUnit, bool) {
	switch strings.ToUpper(s) {
	case "MICROSECOND":
		return unitMicrosecond, true
	case "MILLISECOND":
		return unitMillisecond, true
	case "SECOND":
		return unitSecond, true
	case "MINUTE":
		return unitMinute, true
	case "HOUR":
		return unitHour, true
	case "DAY", "DAYOFYEAR":
		return unitDay, true
	case "WEEK":
		return unitWeek, true
	case "MONTH":
		return unitMonth, true
	case "QUARTER":
		return unitQuarter, true
	case "YEAR":
		return unitYear, true
	}
	return 0, false
}

// constUnit reads the constant unit argument of timestampadd/diff.
func constUnit(f *FuncExpr, ev Evaluator) (timeUnit, error) {
	v, ok := fnConstValue(ev)
	s, isStr := v.(string)
	if !ok || !isStr {
		return 0, fmt.Errorf("the unit %s of %s must be a constant such as DAY or HOUR: %w", f.Args[0], f.Name, ErrType)
	}
	u, ok := parseTimeUnit(s)
	if !ok {
		return 0, fmt.Errorf("invalid unit %q of %s: %w", s, f.Name, ErrType)
	}
	return u, nil
}

var unitMicros = [...]int64{1, 1000, fnMicrosPerSecond, 60 * fnMicrosPerSecond, 3600 * fnMicrosPerSecond}

// TimestampAdd is timestampadd(unit, n, ts) (dateadd): ts moved by n
// units; days, weeks, months, quarters and years move the wall clock in
// the session time zone (a month keeps the day of month, clamped to the
// month's end). The result is a timestamp (timestamp_ntz for one).
// The unit is a constant string, the first argument.
func TimestampAdd(unit, n, ts Expr) Expr {
	return &FuncExpr{Name: "timestampadd", Args: []Expr{unit, n, ts}, bind: func(f *FuncExpr, in *arrow.Schema, mem memory.Allocator, args []Evaluator) (Evaluator, error) {
		u, err := constUnit(f, args[0])
		if err != nil {
			return nil, err
		}
		f = &FuncExpr{Name: f.Name, Args: f.Args[1:], Loc: f.Loc, Mode: f.Mode, bind: f.bind}
		args = args[1:]
		dt := Timestamp
		loc := f.Loc
		if IsTimestampNTZ(Unwrap(args[1].DataType())) {
			dt, loc = TimestampNTZ, nil
		}
		if d := Unwrap(args[0].DataType()); d.ID() != arrow.NULL && !IsIntegral(d) {
			return nil, fmt.Errorf("the amount %s of timestampadd must be an integer, not %s: %w", f.Args[0], TypeName(d), ErrType)
		}
		return bindRows(f, in, mem, args, []rowKind{rowInt, rowMicros}, dt, rowKernels{
			num: func(a []rowArg, i int) (int64, bool, error) {
				k, ts := a[0].int(i), a[1].int(i)
				if u <= unitHour {
					return ts + k*unitMicros[u], true, nil
				}
				var z zoneCache
				wall := ts
				if !isUTC(loc) {
					wall = toWall(&z, loc, ts)
				}
				days, tod := fnFloorDiv(wall, fnMicrosPerDayMore), fnFloorMod(wall, fnMicrosPerDayMore)
				switch u {
				case unitDay:
					days += k
				case unitWeek:
					days += 7 * k
				case unitMonth:
					days = addMonths(days, k)
				case unitQuarter:
					days = addMonths(days, 3*k)
				case unitYear:
					days = addMonths(days, 12*k)
				}
				wall = days*fnMicrosPerDayMore + tod
				if isUTC(loc) {
					return wall, true, nil
				}
				return localToInstant(loc, wall), true, nil
			},
		})
	}}
}

// TimestampDiff is timestampdiff(unit, start, end) (datediff with a unit):
// the whole units from start to end, as a bigint (Java's
// ChronoUnit.between on the wall clocks in the session time zone).
// The unit is a constant string, the first argument.
func TimestampDiff(unit, start, end Expr) Expr {
	return &FuncExpr{Name: "timestampdiff", Args: []Expr{unit, start, end}, bind: func(f *FuncExpr, in *arrow.Schema, mem memory.Allocator, args []Evaluator) (Evaluator, error) {
		u, err := constUnit(f, args[0])
		if err != nil {
			return nil, err
		}
		f = &FuncExpr{Name: f.Name, Args: f.Args[1:], Loc: f.Loc, Mode: f.Mode, bind: f.bind}
		args = args[1:]
		loc := f.Loc
		ntz0, ntz1 := IsTimestampNTZ(Unwrap(args[0].DataType())), IsTimestampNTZ(Unwrap(args[1].DataType()))
		if ntz0 && ntz1 {
			loc = nil
		}
		// One TIMESTAMP_NTZ beside a TIMESTAMP (or a date, cast to one):
		// Spark casts the wall time to an instant in the session zone.
		mixed := ntz0 != ntz1 && !isUTC(loc)
		return bindRows(f, in, mem, args, []rowKind{rowMicros, rowMicros}, Int64, rowKernels{
			num: func(a []rowArg, i int) (int64, bool, error) {
				s, e := a[0].int(i), a[1].int(i)
				if mixed {
					if ntz0 {
						s = localToInstant(loc, s)
					} else {
						e = localToInstant(loc, e)
					}
				}
				if u <= unitHour {
					return (e - s) / unitMicros[u], true, nil
				}
				if !isUTC(loc) {
					var z zoneCache
					s, e = toWall(&z, loc, s), toWall(&z, loc, e)
				}
				switch u {
				case unitDay:
					return (e - s) / fnMicrosPerDayMore, true, nil
				case unitWeek:
					return (e - s) / (7 * fnMicrosPerDayMore), true, nil
				}
				months := wallMonthsBetween(s, e)
				switch u {
				case unitQuarter:
					return months / 3, true, nil
				case unitYear:
					return months / 12, true, nil
				}
				return months, true, nil
			},
		})
	}}
}

// wallMonthsBetween is the whole months from wall time s to e, truncated
// toward zero (Java's LocalDateTime.until in MONTHS).
func wallMonthsBetween(s, e int64) int64 {
	sd, st := fnFloorDiv(s, fnMicrosPerDayMore), fnFloorMod(s, fnMicrosPerDayMore)
	ed, et := fnFloorDiv(e, fnMicrosPerDayMore), fnFloorMod(e, fnMicrosPerDayMore)
	sy, sm, sdd := civilFromDays(sd)
	ey, em, edd := civilFromDays(ed)
	months := (ey*12 + int64(em)) - (sy*12 + int64(sm))
	// Compare the rest (day of month, then time of day).
	rest := func(d int, t int64) int64 { return int64(d)*fnMicrosPerDayMore + t }
	switch {
	case months > 0 && rest(edd, et) < rest(sdd, st):
		months--
	case months < 0 && rest(edd, et) > rest(sdd, st):
		months++
	}
	return months
}

// bindDateFormat binds date_format(ts, fmt) (and to_char of a date or
// timestamp): the wall-clock time of ts in the session time zone
// (a TIMESTAMP_NTZ is its own wall clock) printed with Spark's datetime
// pattern fmt, a constant. A date or string is cast to a timestamp.
func bindDateFormat(f *FuncExpr, in *arrow.Schema, mem memory.Allocator, args []Evaluator) (Evaluator, error) {
	v, ok := fnConstValue(args[1])
	if !ok || !IsStringLike(args[1].DataType()) && args[1].DataType().ID() != arrow.NULL {
		return nil, fmt.Errorf("the format %s of %s must be a constant string: %w", f.Args[1], f.Name, ErrType)
	}
	if dt := Unwrap(args[0].DataType()); IsNumeric(dt) && f.Name != "date_format" {
		return bindToCharNumber(f, mem, args, v)
	}
	if v == nil {
		return fnNullResult(String, mem), nil
	}
	p, err := compileDatetimePattern(v.(string))
	if err != nil {
		return nil, err
	}
	// A timestamp's offset in the session time zone is known (the offset
	// letters print it); a TIMESTAMP_NTZ has none.
	ntz := IsTimestampNTZ(Unwrap(args[0].DataType()))
	if ntz {
		err = p.checkFormattable()
	} else {
		err = p.checkFormattableOffsets()
	}
	if err != nil {
		return nil, err
	}
	if dt := Unwrap(args[0].DataType()); IsNumeric(dt) {
		return nil, fmt.Errorf("%s of a number is not supported (only dates and timestamps): %w", f.Name, ErrType)
	}
	loc := f.Loc
	if ntz {
		loc = nil
	}
	return bindRows(f, in, mem, args[:1], []rowKind{rowMicros}, String, rowKernels{
		str: func(a []rowArg, i int, dst []byte) ([]byte, bool, error) {
			instant := a[0].int(i)
			wall := instant
			if !isUTC(loc) {
				var z zoneCache
				wall = toWall(&z, loc, instant)
			}
			out, ok := p.formatZoned(dst, wall, int((wall-instant)/fnMicrosPerSecond), !ntz)
			if !ok {
				return nil, false, fmt.Errorf("%w: the year is outside 1-9999, which the pattern '%s' does not print here", ErrOverflow, p.src)
			}
			return out, true, nil
		},
	})
}
