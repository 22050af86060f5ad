package vector

import (
	"fmt"
	"math"

	"github.com/apache/arrow/go/v17/arrow"
	"github.com/apache/arrow/go/v17/arrow/memory"
)

// monthsBetween is Spark's months_between(t1, t2[, roundOff]) on the wall
// clocks w1, w2 (microseconds): whole months when the days of month are
// equal or both are the last of their month, else the month difference
// plus the difference of day and time of day over a 31-day month, rounded
// to 8 digits when roundOff (Java's Math.round, halves up).
func monthsBetween(w1, w2 int64, roundOff bool) float64 {
	d1, d2 := fnFloorDiv(w1, fnMicrosPerDayMore), fnFloorDiv(w2, fnMicrosPerDayMore)
	y1, m1, day1 := civilFromDays(d1)
	y2, m2, day2 := civilFromDays(d2)
	monthDiff := (y1*12 + int64(m1)) - (y2*12 + int64(m2))
	if day1 == day2 || day1 == daysInMonth(y1, m1) && day2 == daysInMonth(y2, m2) {
		return float64(monthDiff)
	}
	s1 := (w1 - d1*fnMicrosPerDayMore) / fnMicrosPerSecond
	s2 := (w2 - d2*fnMicrosPerDayMore) / fnMicrosPerSecond
	secondsDiff := int64(day1-day2)*86400 + s1 - s2
	diff := float64(monthDiff) + float64(secondsDiff)/float64(31*86400)
	if roundOff {
		return math.Floor(diff*1e8+0.5) / 1e8
	}
	return diff
}

// bindMonthsBetween binds months_between(t1, t2[, roundOff]): timestamps
// (dates and strings cast), read in the session time zone; roundOff, a
// boolean, defaults to true.
func bindMonthsBetween(f *FuncExpr, in *arrow.Schema, mem memory.Allocator, args []Evaluator) (Evaluator, error) {
	kinds := []rowKind{rowMicros, rowMicros, rowBool}[:len(args)]
	if len(args) == 3 {
		if t := Unwrap(args[2].DataType()); t.ID() != arrow.BOOL && t.ID() != arrow.NULL {
			return nil, fmt.Errorf("the roundOff argument of months_between must be a boolean, not %s: %w", TypeName(t), ErrType)
		}
	}
	loc := f.Loc
	return bindRows(f, in, mem, args, kinds, Float64, rowKernels{flt: func(a []rowArg, i int) (float64, bool, error) {
		w1, w2 := a[0].int(i), a[1].int(i)
		if !isUTC(loc) {
			var z zoneCache
			w1, w2 = toWall(&z, loc, w1), toWall(&z, loc, w2)
		}
		round := len(a) < 3 || a[2].bool(i)
		return monthsBetween(w1, w2, round), true, nil
	}})
}

func init() {
	functions["months_between"] = funcSpec{2, 3, rowBinder("months_between", bindMonthsBetween)}
}
