package vector

import (
	"fmt"
	"strconv"

	"github.com/apache/arrow/go/v17/arrow"
	"github.com/apache/arrow/go/v17/arrow/memory"
)

// DTField is a field of a day-time interval type (Spark's
// DayTimeIntervalType start and end fields), in Spark's order.
type DTField uint8

// The day-time interval fields.
const (
	DTDay DTField = iota
	DTHour
	DTMinute
	DTSecond
)

// DTFields packs a day-time interval type's start and end fields into one
// int32 constant (start*4 + end), the second argument of DTToString.
func DTFields(start, end DTField) int32 { return int32(start)*4 + int32(end) }

func (f DTField) String() string {
	switch f {
	case DTDay:
		return "DAY"
	case DTHour:
		return "HOUR"
	case DTMinute:
		return "MINUTE"
	}
	return "SECOND"
}

const (
	microsPerSecond = int64(1_000_000)
	microsPerMinute = 60 * microsPerSecond
	microsPerHour   = 60 * microsPerMinute
)

// FormatDayTime is Spark's text of a day-time interval of us microseconds
// whose type has fields start TO end (IntervalUtils.toDayTimeIntervalString,
// ANSI style): INTERVAL '1 02:03:04.5' DAY TO SECOND, INTERVAL '26' HOUR.
// The start field is unbounded, the ones after it two digits, seconds
// with their fraction without trailing zeros; fields past end are dropped.
func FormatDayTime(us int64, start, end DTField) string {
	return string(appendDayTime(nil, us, start, end))
}

func appendDayTime(dst []byte, us int64, start, end DTField) []byte {
	dst = append(dst, "INTERVAL '"...)
	if us == -1<<63 {
		// -us overflows: Spark spells the minimum out.
		const base = "-106751991 04:00:54.775808000"
		switch start {
		case DTDay:
			dst = append(dst, "-106751991"...)
		case DTHour:
			dst = append(dst, "-2562047788"...)
		case DTMinute:
			dst = append(dst, "-153722867280"...)
		default:
			dst = append(dst, "-9223372036854.775808"...)
		}
		if start != end {
			from := map[DTField]int{DTDay: 10, DTHour: 13, DTMinute: 16}[start]
			to := map[DTField]int{DTHour: 13, DTMinute: 16, DTSecond: 26}[end]
			dst = append(dst, base[from:to]...)
		}
		return appendDTSuffix(dst, start, end)
	}
	rest := us
	if rest < 0 {
		dst = append(dst, '-')
		rest = -rest
	}
	two := func(v int64) {
		if v < 10 {
			dst = append(dst, '0')
		}
		dst = strconv.AppendInt(dst, v, 10)
	}
	switch start {
	case DTDay:
		dst = strconv.AppendInt(dst, rest/microsPerDay, 10)
		rest %= microsPerDay
	case DTHour:
		two(rest / microsPerHour)
		rest %= microsPerHour
	case DTMinute:
		two(rest / microsPerMinute)
		rest %= microsPerMinute
	default:
		dst = appendSeconds(dst, rest)
	}
	if start < DTHour && DTHour <= end {
		dst = append(dst, ' ')
		two(rest / microsPerHour)
		rest %= microsPerHour
	}
	if start < DTMinute && DTMinute <= end {
		dst = append(dst, ':')
		two(rest / microsPerMinute)
		rest %= microsPerMinute
	}
	if start < DTSecond && DTSecond <= end {
		dst = append(dst, ':')
		dst = appendSeconds(dst, rest)
	}
	return appendDTSuffix(dst, start, end)
}

// appendSeconds writes us microseconds as seconds, a leading zero below
// ten, the fraction without trailing zeros (Java's
// BigDecimal.valueOf(us, 6).stripTrailingZeros.toPlainString).
func appendSeconds(dst []byte, us int64) []byte {
	if us < 10*microsPerSecond {
		dst = append(dst, '0')
	}
	dst = strconv.AppendInt(dst, us/microsPerSecond, 10)
	return appendMicrosFraction(dst, us%microsPerSecond)
}

// appendMicrosFraction appends a second's fraction of frac microseconds
// (0 ≤ frac < 1e6) as '.' and its digits without trailing zeros (".5",
// ".000001"), and nothing when frac is 0.
func appendMicrosFraction(dst []byte, frac int64) []byte {
	if frac == 0 {
		return dst
	}
	digits := 6
	for frac%10 == 0 {
		frac /= 10
		digits--
	}
	dst = append(dst, '.')
	s := strconv.FormatInt(frac, 10)
	for i := len(s); i < digits; i++ {
		dst = append(dst, '0')
	}
	return append(dst, s...)
}

func appendDTSuffix(dst []byte, start, end DTField) []byte {
	dst = append(dst, "' "...)
	dst = append(dst, start.String()...)
	if start != end {
		dst = append(dst, " TO "...)
		dst = append(dst, end.String()...)
	}
	return dst
}

// DTToString is CAST(x AS STRING) of a day-time interval whose type has
// the fields given by the constant int fields (DTFields(start, end)).
func DTToString(x, fields Expr) Expr {
	return &FuncExpr{Name: "string", Args: []Expr{x, fields}, bind: func(f *FuncExpr, in *arrow.Schema, mem memory.Allocator, args []Evaluator) (Evaluator, error) {
		a := args[0]
		switch dt := Unwrap(a.DataType()); dt.ID() {
		case arrow.NULL:
		case arrow.DURATION:
			a = retype(a, Int64, mem)
		default:
			return nil, fmt.Errorf("argument 1 of %s must be a day-time interval, not %s: %w", f.Name, TypeName(dt), ErrType)
		}
		fv, ok := fnConstValue(args[1])
		fi, isInt := fv.(int32)
		if !ok || !isInt || fi < 0 || fi/4 > int32(DTSecond) || fi%4 < fi/4 {
			return nil, fmt.Errorf("the fields of %s must be a constant DTFields: %w", f, ErrType)
		}
		start, end := DTField(fi/4), DTField(fi%4)
		return bindRows(f, in, mem, []Evaluator{a}, []rowKind{rowInt}, String, rowKernels{str: func(x []rowArg, i int, dst []byte) ([]byte, bool, error) {
			return appendDayTime(dst, x[0].int(i), start, end), true, nil
		}})
	}}
}
