package vector

import (
	"fmt"
	"strings"

	"github.com/apache/arrow/go/v17/arrow"
	"github.com/apache/arrow/go/v17/arrow/decimal128"
	"github.com/apache/arrow/go/v17/arrow/memory"
)

// The fields of EXTRACT / date_part that no function of their own names:
// SECOND with its fraction, YEAROFWEEK, and the DAY, HOUR, MINUTE and
// SECOND of a day-time interval (Spark's SecondWithFraction, YearOfWeek
// and ExtractANSIInterval*). The planner builds them from the field's
// name; they are not callable by name.

// SecondsFraction is the type of EXTRACT(SECOND FROM …): the seconds of
// the minute with their microseconds, decimal(8,6).
var SecondsFraction = Decimal(8, 6)

// SecondWithFraction is EXTRACT(SECOND FROM ts): the seconds of the
// wall-clock minute of ts with the microseconds, 0 to 59.999999, a
// decimal(8,6); see Hour for the argument types.
func SecondWithFraction(ts Expr) Expr {
	return &FuncExpr{Name: "second", Args: []Expr{ts}, bind: bindWallField(SecondsFraction, func(v int64) decimal128.Num {
		return decimal128.FromI64(fnFloorMod(v, microsPerMinute))
	})}
}

// YearOfWeek is EXTRACT(YEAROFWEEK FROM x): the ISO 8601 week-numbering
// year of the date (the year of its week's Thursday), an int. A timestamp
// or string is cast to a date as year() does.
func YearOfWeek(x Expr) Expr {
	return dateField("yearofweek", func(_ int64, _, _ int, days int64) int64 {
		y, _, _ := civilFromDays(days - isoDayOfWeek(days) + 4)
		return y
	})([]Expr{x})
}

// DTPart is EXTRACT(field FROM x) of a day-time interval x, each with the
// interval's sign: DAY, the whole days (int); HOUR, the hours beyond them
// (tinyint); MINUTE, the minutes beyond the hours (tinyint); SECOND, the
// seconds beyond the minutes with their microseconds (decimal(8,6)).
// Whether the field is within x's type (an interval HOUR has no DAY) is
// the planner's check.
func DTPart(x Expr, field DTField) Expr {
	return &FuncExpr{Name: "extract_" + strings.ToLower(field.String()), Args: []Expr{x}, bind: func(f *FuncExpr, in *arrow.Schema, mem memory.Allocator, args []Evaluator) (Evaluator, error) {
		a := args[0]
		dt := Unwrap(a.DataType())
		if dt.ID() != arrow.NULL && !arrow.TypeEqual(dt, Interval) {
			return nil, fnErrArgType(f.Args[0].String(), a.DataType(), "a day-time interval")
		}
		var to arrow.DataType
		var k castKernel
		switch field {
		case DTDay:
			to, k = Int32, dtPartKernel(func(us int64) int32 { return int32(us / fnMicrosPerDayMore) })
		case DTHour:
			to, k = Int8, dtPartKernel(func(us int64) int8 { return int8(us % fnMicrosPerDayMore / (3600 * fnMicrosPerSecond)) })
		case DTMinute:
			to, k = Int8, dtPartKernel(func(us int64) int8 { return int8(us % (3600 * fnMicrosPerSecond) / microsPerMinute) })
		case DTSecond:
			to, k = SecondsFraction, dtPartKernel(func(us int64) decimal128.Num { return decimal128.FromI64(us % microsPerMinute) })
		default:
			return nil, fmt.Errorf("extract: no day-time interval field %d: %w", field, ErrType)
		}
		if dt.ID() == arrow.NULL {
			return fnNullResult(to, mem), nil
		}
		ev := &castEval{child: a, from: a.DataType(), to: to, kern: k, mem: mem, expr: f.String(), operand: f.Args[0].String()}
		return fnFoldConstant(f, in, mem, ev, a)
	}}
}

// dtPartKernel applies part to every microsecond count of a day-time
// interval column (Go's / and % truncate toward zero, keeping the
// interval's sign in every part as Spark's do).
func dtPartKernel[D any](part func(us int64) D) castKernel {
	return func(c *castEval, arr arrow.Array) (arrow.Array, error) {
		src := fnRawValues[int64](arr)
		return castFixedResult(c, arr, func(dst []D, _ *validityOut) error {
			for i, v := range src {
				dst[i] = part(v)
			}
			return nil
		})
	}
}
