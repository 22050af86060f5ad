package plan

import (
	"github.com/arrowstream/arrowstream/sql"
	"github.com/arrowstream/arrowstream/vector"
)

// Calendar intervals (Spark's CalendarIntervalType, months, days and
// microseconds apart) come only from make_interval; the planner lets them
// be cast to a string and added to or subtracted from a timestamp, and
// vector refuses every other use.

func isCalendarInterval(e Expr) bool { return vector.IsCalendarInterval(e.DataType()) }

// makeIntervalCall resolves make_interval(years, months, weeks, days,
// hours, mins, secs): secs is cast to DECIMAL(18, 6) as Spark's implicit
// cast does (ANSI: an overflow is CANNOT_CHANGE_DECIMAL_PRECISION; without
// ANSI, NULL); the int arguments are checked by vector.
func makeIntervalCall(pos sql.Pos, args []Expr) (Expr, error) {
	if len(args) > 7 {
		return nil, errorAt(pos, ErrType, "[WRONG_NUM_ARGS.WITHOUT_SUGGESTION] The `make_interval` requires [0, 1, 2, 3, 4, 5, 6, 7] parameters but the actual number is %d.", len(args))
	}
	if len(args) == 7 {
		if t := args[6].DataType(); !isNullType(t) && vector.IsNumeric(t) {
			args[6] = castTo(args[6], vector.Decimal(18, 6))
		}
	}
	return newCall(pos, "make_interval", args...)
}

// calToStringFunc is the planner's name of a calendar interval's cast to a
// string.
const calToStringFunc = "calendar_interval_string"

// calendarCallToVector builds the vector form of a cast to string or a
// timestamp ± a calendar interval; ok is false for other calls.
func calendarCallToVector(call *Call, args []vector.Expr) (vector.Expr, bool) {
	switch {
	case call.Func == calToStringFunc && len(args) == 1:
		return vector.CalendarToString(args[0]), true
	case (call.Func == "+" || call.Func == "-") && len(args) == 2 && isCalendarInterval(call.Args[1]):
		sign := int64(1)
		if call.Func == "-" {
			sign = -1
		}
		return vector.TimestampAddCalendar(args[0], args[1], sign), true
	case call.Func == "+" && len(args) == 2 && isCalendarInterval(call.Args[0]):
		return vector.TimestampAddCalendar(args[1], args[0], 1), true
	}
	return nil, false
}
