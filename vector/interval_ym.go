package vector

import (
	"context"
	"errors"
	"fmt"
	"math"
	"math/big"
	"strconv"
	"strings"

	"github.com/apache/arrow/go/v17/arrow"
	"github.com/apache/arrow/go/v17/arrow/array"
	"github.com/apache/arrow/go/v17/arrow/memory"
)

// YearMonthInterval is Spark's year-month interval (INTERVAL YEAR,
// INTERVAL MONTH, INTERVAL YEAR TO MONTH): a signed number of months in
// an int32, as Arrow's month interval keeps it. One type stands for the
// three Spark types: they differ only in how a value is displayed.
var YearMonthInterval arrow.DataType = arrow.FixedWidthTypes.MonthInterval

// IsYearMonthInterval reports whether dt is the year-month interval type.
func IsYearMonthInterval(dt arrow.DataType) bool {
	return dt != nil && Unwrap(dt).ID() == arrow.INTERVAL_MONTHS
}

// YMFields are the start and end fields of a year-month interval type,
// which decide how a value is displayed: INTERVAL '14' MONTH,
// INTERVAL '1' YEAR, INTERVAL '1-2' YEAR TO MONTH.
type YMFields uint8

const (
	// YMYearToMonth is INTERVAL YEAR TO MONTH, the type of arithmetic
	// results and of literals with both fields.
	YMYearToMonth YMFields = iota
	// YMYear is INTERVAL YEAR.
	YMYear
	// YMMonth is INTERVAL MONTH.
	YMMonth
)

// FormatYearMonth renders months as Spark casts a year-month interval of
// fields f to a string: INTERVAL '1-2' YEAR TO MONTH, INTERVAL '-1' YEAR,
// INTERVAL '14' MONTH.
func FormatYearMonth(months int32, f YMFields) string {
	abs := int64(months)
	sign := ""
	if abs < 0 {
		sign, abs = "-", -abs
	}
	switch f {
	case YMYear:
		return "INTERVAL '" + sign + strconv.FormatInt(abs/12, 10) + "' YEAR"
	case YMMonth:
		return "INTERVAL '" + strconv.FormatInt(int64(months), 10) + "' MONTH"
	}
	return "INTERVAL '" + HiveYearMonth(months) + "' YEAR TO MONTH"
}

// HiveYearMonth renders months as y-m with a leading sign for a negative
// interval ("1-2", "-0-11"): Spark's result text of a year-month interval.
func HiveYearMonth(months int32) string {
	abs := int64(months)
	sign := ""
	if abs < 0 {
		sign, abs = "-", -abs
	}
	return sign + strconv.FormatInt(abs/12, 10) + "-" + strconv.FormatInt(abs%12, 10)
}

// errYMOverflow is the overflow of a year-month interval's int32 months.
func errYMOverflow() error {
	return &SparkError{Class: "ARITHMETIC_OVERFLOW", Err: ErrOverflow, Msg: "integer overflow"}
}

// ParseYearMonth reads the text of a year-month interval, as a cast from
// a string does: "[+|-]y-m", or the forms a cast to string writes
// (INTERVAL '[+|-]y-m' YEAR TO MONTH, INTERVAL '[+|-]n' YEAR,
// INTERVAL '[+|-]n' MONTH), case-insensitively. Months are 0 to 11 in
// the y-m form; a result beyond an int32 of months is an overflow.
func ParseYearMonth(s string) (int32, error) {
	bad := func() (int32, error) {
		return 0, fmt.Errorf("%w: %q is not a year-month interval ([+|-]y-m or INTERVAL '[+|-]y-m' YEAR TO MONTH)", ErrInterval, s)
	}
	t := strings.TrimSpace(s)
	unit := "YEAR TO MONTH"
	if len(t) > 8 && strings.EqualFold(t[:8], "INTERVAL") {
		rest := strings.TrimSpace(t[8:])
		neg := false
		if strings.HasPrefix(rest, "-") || strings.HasPrefix(rest, "+") {
			neg, rest = rest[0] == '-', strings.TrimSpace(rest[1:])
		}
		if !strings.HasPrefix(rest, "'") {
			return bad()
		}
		end := strings.IndexByte(rest[1:], '\'')
		if end < 0 {
			return bad()
		}
		body := rest[1 : end+1]
		unit = strings.Join(strings.Fields(strings.ToUpper(rest[end+2:])), " ")
		m, ok := parseYMBody(body, unit)
		if !ok {
			return bad()
		}
		if neg {
			if m == math.MinInt32 {
				return 0, errYMOverflow()
			}
			m = -m
		}
		return m, nil
	}
	m, ok := parseYMBody(t, unit)
	if !ok {
		if _, err := strconv.ParseInt(strings.TrimLeft(strings.ReplaceAll(t, "-", ""), "+"), 10, 64); err == nil && strings.Count(t, "-") <= 2 {
			return 0, errYMOverflow()
		}
		return bad()
	}
	return m, nil
}

// parseYMBody reads "[+|-]y-m" (unit YEAR TO MONTH) or "[+|-]n" (unit
// YEAR or MONTH).
func parseYMBody(body, unit string) (int32, bool) {
	neg := false
	if body != "" && (body[0] == '-' || body[0] == '+') {
		neg, body = body[0] == '-', body[1:]
	}
	digits := func(s string) (int64, bool) {
		if s == "" || len(s) > 10 {
			return 0, false
		}
		for i := 0; i < len(s); i++ {
			if s[i] < '0' || s[i] > '9' {
				return 0, false
			}
		}
		v, err := strconv.ParseInt(s, 10, 64)
		return v, err == nil
	}
	var total int64
	switch unit {
	case "YEAR TO MONTH":
		ys, ms, ok := strings.Cut(body, "-")
		if !ok {
			return 0, false
		}
		y, ok1 := digits(ys)
		m, ok2 := digits(ms)
		if !ok1 || !ok2 || m > 11 {
			return 0, false
		}
		total = y*12 + m
	case "YEAR":
		y, ok := digits(body)
		if !ok {
			return 0, false
		}
		total = y * 12
	case "MONTH":
		m, ok := digits(body)
		if !ok {
			return 0, false
		}
		total = m
	default:
		return 0, false
	}
	if neg {
		total = -total
	}
	if total < math.MinInt32 || total > math.MaxInt32 {
		return 0, false
	}
	return int32(total), true
}

// retypeEval presents its child's values under another type of the same
// layout (a year-month interval as int, and back), sharing the buffers.
type retypeEval struct {
	child Evaluator
	dt    arrow.DataType
}

// retype returns ev viewed as dt: a constant stays a constant.
func retype(ev Evaluator, dt arrow.DataType, mem memory.Allocator) Evaluator {
	if v, ok := fnConstValue(ev); ok {
		switch x := v.(type) {
		case arrow.MonthInterval:
			v = int32(x)
		case int32:
			if dt.ID() == arrow.INTERVAL_MONTHS {
				v = arrow.MonthInterval(x)
			}
		case arrow.Duration:
			v = int64(x)
		case int64:
			if dt.ID() == arrow.DURATION {
				v = arrow.Duration(x)
			}
		}
		return newConst(dt, v, mem)
	}
	return &retypeEval{child: ev, dt: dt}
}

func (r *retypeEval) DataType() arrow.DataType { return r.dt }

func (r *retypeEval) Eval(ctx context.Context, rec arrow.Record) (arrow.Array, error) {
	arr, err := r.child.Eval(ctx, rec)
	if err != nil {
		return nil, err
	}
	defer arr.Release()
	d := arr.Data()
	nd := array.NewData(r.dt, d.Len(), d.Buffers(), nil, d.NullN(), d.Offset())
	defer nd.Release()
	return array.MakeFromData(nd), nil
}

// ymOperand checks that args[k] is a year-month interval (or NULL) and
// returns it as an int.
func ymOperand(f *FuncExpr, args []Evaluator, k int, mem memory.Allocator) (Evaluator, error) {
	dt := Unwrap(args[k].DataType())
	switch {
	case dt.ID() == arrow.NULL:
		return args[k], nil
	case IsYearMonthInterval(dt):
		return retype(args[k], Int32, mem), nil
	}
	return nil, fmt.Errorf("argument %d of %s must be a year-month interval, not %s: %w", k+1, f.Name, TypeName(dt), ErrType)
}

// bindYMResult binds a row kernel over args (already converted) whose
// int32 result is a year-month interval.
func bindYMResult(f *FuncExpr, in *arrow.Schema, mem memory.Allocator, args []Evaluator, kinds []rowKind, num func(a []rowArg, i int) (int64, bool, error)) (Evaluator, error) {
	if f.Mode == ModeTry {
		// try_add and its siblings: overflow and division by zero are
		// NULL, as Spark's TryEval.
		strict := num
		num = func(a []rowArg, i int) (int64, bool, error) {
			v, ok, err := strict(a, i)
			if err != nil && (errors.Is(err, ErrOverflow) || errors.Is(err, ErrDivideByZero)) {
				return 0, false, nil
			}
			return v, ok, err
		}
	}
	ev, err := bindRows(f, in, mem, args, kinds, Int32, rowKernels{num: num})
	if err != nil {
		return nil, err
	}
	return retype(ev, YearMonthInterval, mem), nil
}

// fitMonths checks that v fits a year-month interval.
func fitMonths(v int64) (int64, bool, error) {
	if v < math.MinInt32 || v > math.MaxInt32 {
		return 0, false, errYMOverflow()
	}
	return v, true, nil
}

// YMAdd is l + r (sign 1) or l - r (sign -1) of two year-month
// intervals; overflow of the months is ARITHMETIC_OVERFLOW.
func YMAdd(l, r Expr, sign int64) Expr {
	name := "+"
	if sign < 0 {
		name = "-"
	}
	return &FuncExpr{Name: name, Args: []Expr{l, r}, bind: func(f *FuncExpr, in *arrow.Schema, mem memory.Allocator, args []Evaluator) (Evaluator, error) {
		a, err := ymOperand(f, args, 0, mem)
		if err != nil {
			return nil, err
		}
		b, err := ymOperand(f, args, 1, mem)
		if err != nil {
			return nil, err
		}
		return bindYMResult(f, in, mem, []Evaluator{a, b}, []rowKind{rowInt, rowInt}, func(x []rowArg, i int) (int64, bool, error) {
			return fitMonths(x[0].int(i) + sign*x[1].int(i))
		})
	}}
}

// YMNegate is -x of a year-month interval (-INTERVAL '-178956970-8' YEAR
// TO MONTH overflows).
func YMNegate(x Expr) Expr {
	return &FuncExpr{Name: "negative", Args: []Expr{x}, bind: func(f *FuncExpr, in *arrow.Schema, mem memory.Allocator, args []Evaluator) (Evaluator, error) {
		a, err := ymOperand(f, args, 0, mem)
		if err != nil {
			return nil, err
		}
		return bindYMResult(f, in, mem, []Evaluator{a}, []rowKind{rowInt}, func(x []rowArg, i int) (int64, bool, error) {
			return fitMonths(-x[0].int(i))
		})
	}}
}

// YMMonths is the number of months of a year-month interval, as an int
// (for comparisons, which order intervals by their months).
func YMMonths(x Expr) Expr {
	return &FuncExpr{Name: "months", Args: []Expr{x}, bind: func(f *FuncExpr, in *arrow.Schema, mem memory.Allocator, args []Evaluator) (Evaluator, error) {
		return ymOperand(f, args, 0, mem)
	}}
}

// ratRoundHalfUp rounds r to the nearest integer, halves away from zero
// (Java's RoundingMode.HALF_UP).
func ratRoundHalfUp(r *big.Rat) *big.Int {
	num, den := new(big.Int).Set(r.Num()), r.Denom()
	neg := num.Sign() < 0
	num.Abs(num)
	q, m := new(big.Int).QuoRem(num, den, new(big.Int))
	if m.Lsh(m, 1).Cmp(den) >= 0 {
		q.Add(q, big.NewInt(1))
	}
	if neg {
		q.Neg(q)
	}
	return q
}

// ratMonths is a big.Rat result rounded HALF_UP into months.
func ratMonths(r *big.Rat) (int64, bool, error) {
	q := ratRoundHalfUp(r)
	if !q.IsInt64() {
		return 0, false, errYMOverflow()
	}
	return fitMonths(q.Int64())
}

// floatMonths is a double result rounded HALF_UP into months (Guava's
// DoubleMath.roundToInt); NaN and values beyond an int are errors.
func floatMonths(v float64) (int64, bool, error) {
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return 0, false, errYMOverflow()
	}
	return fitMonths(int64(math.Max(math.Min(math.Round(v), 1<<40), -(1 << 40))))
}

// YMMultiply is x * num of a year-month interval (div false) or x / num
// (div true): integers multiply exactly and divide rounding HALF_UP,
// doubles compute in double and decimals exactly, both rounded HALF_UP to
// whole months, as Spark's MultiplyYMInterval and DivideYMInterval.
// Division by zero is DIVIDE_BY_ZERO, a result beyond an int of months
// ARITHMETIC_OVERFLOW. A string number is read as a double.
func YMMultiply(x, num Expr, div bool) Expr {
	name := "*"
	if div {
		name = "/"
	}
	return &FuncExpr{Name: name, Args: []Expr{x, num}, bind: func(f *FuncExpr, in *arrow.Schema, mem memory.Allocator, args []Evaluator) (Evaluator, error) {
		a, err := ymOperand(f, args, 0, mem)
		if err != nil {
			return nil, err
		}
		nt := Unwrap(args[1].DataType())
		conv := []Evaluator{a, args[1]}
		switch {
		case nt.ID() == arrow.NULL || IsIntegral(nt):
			return bindYMResult(f, in, mem, conv, []rowKind{rowInt, rowInt}, func(x []rowArg, i int) (int64, bool, error) {
				m, n := x[0].int(i), x[1].int(i)
				if !div {
					p := new(big.Int).Mul(big.NewInt(m), big.NewInt(n))
					if !p.IsInt64() {
						return 0, false, errYMOverflow()
					}
					return fitMonths(p.Int64())
				}
				if n == 0 {
					return 0, false, errDivideByZero
				}
				return ratMonths(new(big.Rat).SetFrac64(m, n))
			})
		case nt.ID() == arrow.DECIMAL128:
			return bindYMResult(f, in, mem, conv, []rowKind{rowInt, rowStr}, scaleByDecimal(div, ratMonths))
		case IsNumeric(nt) || IsStringLike(nt):
			return bindYMResult(f, in, mem, conv, []rowKind{rowInt, rowFloat}, scaleByFloat(div, floatMonths))
		}
		return nil, fmt.Errorf("cannot %s a year-month interval by %s: %w", map[bool]string{false: "multiply", true: "divide"}[div], TypeName(nt), ErrType)
	}}
}

// DateAddYM is d + x (sign 1) or d - x (sign -1) of a date and a
// year-month interval: the months are added to the date, the day clamped
// to the month's end (2020-01-31 + INTERVAL '1' MONTH is 2020-02-29).
func DateAddYM(d, x Expr, sign int64) Expr {
	return &FuncExpr{Name: map[bool]string{true: "+", false: "-"}[sign > 0], Args: []Expr{d, x}, bind: func(f *FuncExpr, in *arrow.Schema, mem memory.Allocator, args []Evaluator) (Evaluator, error) {
		b, err := ymOperand(f, args, 1, mem)
		if err != nil {
			return nil, err
		}
		if t := Unwrap(args[0].DataType()); t.ID() != arrow.DATE32 && t.ID() != arrow.NULL {
			return nil, fmt.Errorf("argument 1 of %s must be a date, not %s: %w", f.Name, TypeName(t), ErrType)
		}
		return bindRows(f, in, mem, []Evaluator{args[0], b}, []rowKind{rowDate, rowInt}, Date, rowKernels{
			num: func(x []rowArg, i int) (int64, bool, error) {
				days := addMonths(x[0].int(i), sign*x[1].int(i))
				if days < math.MinInt32 || days > math.MaxInt32 {
					return 0, false, errYMOverflow()
				}
				return days, true, nil
			},
		})
	}}
}

// TimestampAddYM is ts + x (sign 1) or ts - x (sign -1) of a timestamp
// and a year-month interval: the months move the wall clock in the
// session time zone (UTC for a timestamp_ntz), the day clamped to the
// month's end, as timestampadd(MONTH, ...).
func TimestampAddYM(ts, x Expr, sign int64) Expr {
	return &FuncExpr{ntzSafe: true, Name: map[bool]string{true: "+", false: "-"}[sign > 0], Args: []Expr{ts, x}, bind: func(f *FuncExpr, in *arrow.Schema, mem memory.Allocator, args []Evaluator) (Evaluator, error) {
		b, err := ymOperand(f, args, 1, mem)
		if err != nil {
			return nil, err
		}
		t := Unwrap(args[0].DataType())
		dt, loc := Timestamp, f.Loc
		switch {
		case IsTimestampNTZ(t):
			dt, loc = TimestampNTZ, nil
		case t.ID() == arrow.TIMESTAMP, t.ID() == arrow.NULL:
		default:
			return nil, fmt.Errorf("argument 1 of %s must be a timestamp, not %s: %w", f.Name, TypeName(t), ErrType)
		}
		return bindRows(f, in, mem, []Evaluator{args[0], b}, []rowKind{rowMicros, rowInt}, dt, rowKernels{
			num: func(x []rowArg, i int) (int64, bool, error) {
				ts, k := x[0].int(i), sign*x[1].int(i)
				var z zoneCache
				wall := ts
				if !isUTC(loc) {
					wall = toWall(&z, loc, ts)
				}
				days, tod := fnFloorDiv(wall, fnMicrosPerDayMore), fnFloorMod(wall, fnMicrosPerDayMore)
				wall = addMonths(days, k)*fnMicrosPerDayMore + tod
				if isUTC(loc) {
					return wall, true, nil
				}
				return localToInstant(loc, wall), true, nil
			},
		})
	}}
}

// makeYMInterval is make_ym_interval([years[, months]]): years*12 +
// months, both ints (0 when left out); overflow is an error.
func makeYMInterval(args []Expr) Expr {
	return &FuncExpr{Name: "make_ym_interval", Args: args, bind: func(f *FuncExpr, in *arrow.Schema, mem memory.Allocator, ev []Evaluator) (Evaluator, error) {
		for k, a := range ev {
			if t := Unwrap(a.DataType()); t.ID() != arrow.NULL && (!IsIntegral(t) || t.ID() == arrow.INT64) && !IsStringLike(t) {
				return nil, fmt.Errorf("argument %d of make_ym_interval must be an int, not %s: %w", k+1, TypeName(t), ErrType)
			}
		}
		if len(ev) == 0 {
			return newConst(YearMonthInterval, arrow.MonthInterval(0), mem), nil
		}
		kinds := make([]rowKind, len(ev))
		for k := range kinds {
			kinds[k] = rowInt
		}
		return bindYMResult(f, in, mem, ev, kinds, func(x []rowArg, i int) (int64, bool, error) {
			m := x[0].int(i) * 12
			if len(x) > 1 {
				m += x[1].int(i)
			}
			return fitMonths(m)
		})
	}}
}

// makeDTInterval is make_dt_interval([days[, hours[, mins[, secs]]]]): a
// day-time interval (0 for a left-out field), secs with a fraction down
// to the microsecond (rounded half up beyond it, as Spark's
// DECIMAL(18,6) argument); overflow of the microseconds is an error.
func makeDTInterval(args []Expr) Expr {
	return &FuncExpr{Name: "make_dt_interval", Args: args, bind: func(f *FuncExpr, in *arrow.Schema, mem memory.Allocator, ev []Evaluator) (Evaluator, error) {
		for k, a := range ev {
			t := Unwrap(a.DataType())
			ok := t.ID() == arrow.NULL || IsIntegral(t) && t.ID() != arrow.INT64 || IsStringLike(t) || k == 3 && IsNumeric(t)
			if !ok {
				return nil, fmt.Errorf("argument %d of make_dt_interval must be %s, not %s: %w", k+1, map[bool]string{true: "a number", false: "an int"}[k == 3], TypeName(t), ErrType)
			}
		}
		if len(ev) == 0 {
			return newConst(Interval, arrow.Duration(0), mem), nil
		}
		kinds := []rowKind{rowInt, rowInt, rowInt, rowStr}[:len(ev)]
		return bindRows(f, in, mem, ev, kinds, Interval, rowKernels{num: func(x []rowArg, i int) (int64, bool, error) {
			total := new(big.Int)
			per := []int64{fnMicrosPerDay, 3600 * fnMicrosPerSecond, 60 * fnMicrosPerSecond}
			for k := 0; k < len(x) && k < 3; k++ {
				total.Add(total, new(big.Int).Mul(big.NewInt(x[k].int(i)), big.NewInt(per[k])))
			}
			if len(x) == 4 {
				secs, ok := new(big.Rat).SetString(strings.TrimSpace(string(x[3].str(i))))
				if !ok {
					return 0, false, fmt.Errorf("%q is not a number of seconds: %w", x[3].str(i), ErrInvalidInput)
				}
				total.Add(total, ratRoundHalfUp(secs.Mul(secs, big.NewRat(fnMicrosPerSecond, 1))))
			}
			if !total.IsInt64() {
				return 0, false, &SparkError{Class: "ARITHMETIC_OVERFLOW", Err: ErrOverflow, Msg: "long overflow"}
			}
			return total.Int64(), true, nil
		}})
	}}
}

// ymFunctions are the interval functions of the registry.
var ymFunctions = map[string]funcSpec{
	"make_ym_interval": {0, 2, makeYMInterval},
	"make_dt_interval": {0, 4, makeDTInterval},
	"make_interval":    {0, 7, makeInterval},
}

func init() {
	for name, spec := range ymFunctions {
		functions[name] = spec
	}
}

// YMAbs is abs(x) of a year-month interval (abs of the smallest one
// overflows).
func YMAbs(x Expr) Expr {
	return &FuncExpr{Name: "abs", Args: []Expr{x}, bind: func(f *FuncExpr, in *arrow.Schema, mem memory.Allocator, args []Evaluator) (Evaluator, error) {
		a, err := ymOperand(f, args, 0, mem)
		if err != nil {
			return nil, err
		}
		return bindYMResult(f, in, mem, []Evaluator{a}, []rowKind{rowInt}, func(x []rowArg, i int) (int64, bool, error) {
			v := x[0].int(i)
			if v < 0 {
				v = -v
			}
			return fitMonths(v)
		})
	}}
}

// YMPart is EXTRACT(YEAR FROM x) (years true: the whole years, an int) or
// EXTRACT(MONTH FROM x) (the months beyond them, a tinyint) of a
// year-month interval; both keep the interval's sign.
func YMPart(x Expr, years bool) Expr {
	name, dt := "extract_month", Int8
	if years {
		name, dt = "extract_year", Int32
	}
	return &FuncExpr{Name: name, Args: []Expr{x}, bind: func(f *FuncExpr, in *arrow.Schema, mem memory.Allocator, args []Evaluator) (Evaluator, error) {
		a, err := ymOperand(f, args, 0, mem)
		if err != nil {
			return nil, err
		}
		return bindRows(f, in, mem, []Evaluator{a}, []rowKind{rowInt}, dt, rowKernels{num: func(x []rowArg, i int) (int64, bool, error) {
			if years {
				return x[0].int(i) / 12, true, nil
			}
			return x[0].int(i) % 12, true, nil
		}})
	}}
}

// YMToString is CAST(x AS STRING) of a year-month interval whose type has
// the fields given by the constant int fields (a YMFields): INTERVAL '1-2'
// YEAR TO MONTH, INTERVAL '1' YEAR, INTERVAL '14' MONTH.
func YMToString(x, fields Expr) Expr {
	return &FuncExpr{Name: "string", Args: []Expr{x, fields}, bind: func(f *FuncExpr, in *arrow.Schema, mem memory.Allocator, args []Evaluator) (Evaluator, error) {
		a, err := ymOperand(f, args, 0, mem)
		if err != nil {
			return nil, err
		}
		fv, ok := fnConstValue(args[1])
		fi, isInt := fv.(int32)
		if !ok || !isInt {
			return nil, fmt.Errorf("the fields of %s must be a constant int: %w", f, ErrType)
		}
		return bindRows(f, in, mem, []Evaluator{a}, []rowKind{rowInt}, String, rowKernels{str: func(x []rowArg, i int, dst []byte) ([]byte, bool, error) {
			return append(dst, FormatYearMonth(int32(x[0].int(i)), YMFields(fi))...), true, nil
		}})
	}}
}
