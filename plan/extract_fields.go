package plan

import (
	"strings"

	"github.com/arrowstream/arrowstream/sql"
	"github.com/arrowstream/arrowstream/vector"
)

// The fields of EXTRACT / date_part that no Spark function computes by
// itself: SECOND with its fraction (decimal(8,6)), YEAROFWEEK, and the
// parts of a day-time interval. They are planner names, not callable
// functions.
const (
	secondFractionFunc = "second_with_fraction"
	yearOfWeekFunc     = "yearofweek"
	dtPartFunc         = "dt_interval_part" // (x, field as a constant int)
)

// dtExtract resolves EXTRACT(field FROM x) of a day-time interval (Spark's
// ExtractANSIIntervalDays/Hours/Minutes/Seconds). The field must lie
// within x's type (an INTERVAL HOUR TO SECOND has no DAY, an INTERVAL DAY
// no HOUR), which only the type says, so where the planner cannot tell
// the type's fields (a column of a table) the extract is refused rather
// than answered where Spark raises.
func dtExtract(pos sql.Pos, field string, x Expr) (Expr, error) {
	name := strings.ToUpper(field)
	var f vector.DTField
	switch name {
	case "DAY", "D", "DAYS":
		f = vector.DTDay
	case "HOUR", "H", "HOURS", "HR", "HRS":
		f = vector.DTHour
	case "MINUTE", "M", "MIN", "MINS", "MINUTES":
		f = vector.DTMinute
	case "SECOND", "S", "SEC", "SECONDS", "SECS":
		f = vector.DTSecond
	default:
		return nil, errorAt(pos, ErrType, "[INVALID_EXTRACT_FIELD] Cannot extract %s from %s.", name, x)
	}
	fs := dtFieldsOf(x)
	if fs == 0 {
		return nil, errorAt(pos, ErrUnsupported, "EXTRACT(%s FROM %s) of a day-time interval whose type's fields (DAY TO SECOND, HOUR, ...) are not known here is not supported.", name, x)
	}
	if start, end := fs.fields(); f < start || f > end {
		return nil, errorAt(pos, ErrType, "[INVALID_EXTRACT_FIELD] Cannot extract %s from %s (an interval %s).", name, x, dtTypeName(start, end))
	}
	return newCall(pos, dtPartFunc, x, &Literal{Value: int32(f), Type: vector.Int32})
}

// dtTypeName is the fields of a day-time interval type as Spark writes
// them: DAY, HOUR TO SECOND.
func dtTypeName(start, end vector.DTField) string {
	if start == end {
		return start.String()
	}
	return start.String() + " TO " + end.String()
}

// extractCallToVector builds the vector form of the planner's extract
// fields; ok is false for other calls.
func extractCallToVector(call *Call, args []vector.Expr) (vector.Expr, bool) {
	var e vector.Expr
	switch {
	case call.Func == secondFractionFunc && len(args) == 1:
		e = vector.SecondWithFraction(args[0])
	case call.Func == yearOfWeekFunc && len(args) == 1:
		e = vector.YearOfWeek(args[0])
	case call.Func == dtPartFunc && len(args) == 2:
		l, isLit := call.Args[1].(*Literal)
		if !isLit {
			return nil, false
		}
		v, isInt := l.Value.(int32)
		if !isInt {
			return nil, false
		}
		e = vector.DTPart(args[0], vector.DTField(v))
	default:
		return nil, false
	}
	if f, isF := e.(*vector.FuncExpr); isF {
		f.Mode, f.Loc = call.Mode, call.Loc
	}
	return e, true
}
