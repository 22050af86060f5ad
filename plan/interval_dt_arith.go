package plan

import (
	"github.com/apache/arrow/go/v17/arrow"

	"github.com/arrowstream/arrowstream/vector"
)

// dtCallToVector builds the vector form of an operator over a day-time
// interval (vector.Interval) that the generic operators do not take:
// interval ± interval, -interval, abs, signum, interval × ÷ a number,
// div of two intervals and a timestamp ± an interval that is not a
// constant (a constant one stays vector.TimestampAddInterval, whose shift
// the watermark derivation reads). ok is false for other calls.
func dtCallToVector(call *Call, args []vector.Expr) (e vector.Expr, ok bool, err error) {
	orig := call.Args
	anyDT := false
	for _, a := range orig {
		anyDT = anyDT || isInterval(a)
	}
	if !anyDT || len(args) != len(orig) {
		return nil, false, nil
	}
	dtOrNull := func(i int) bool { return isInterval(orig[i]) || isNullType(orig[i].DataType()) }
	number := func(i int) bool {
		return !dtOrNull(i) && !isYMInterval(orig[i]) && orig[i].DataType().ID() != arrow.TIMESTAMP && !isDate(orig[i]) || isNullType(orig[i].DataType())
	}
	set := func(x vector.Expr) (vector.Expr, bool, error) {
		if f, isF := x.(*vector.FuncExpr); isF {
			f.Mode, f.Loc = call.Mode, call.Loc
		}
		return x, true, nil
	}
	switch call.Func {
	case "negative", "abs":
		if len(args) == 1 {
			return set(vector.DTNegate(args[0], call.Func == "abs"))
		}
	case "signum":
		if len(args) == 1 {
			x, err := vector.LookupFunction("signum", []vector.Expr{vector.DTMicros(args[0])})
			if err != nil {
				return nil, true, err
			}
			return set(x)
		}
	case "div":
		if len(args) == 2 && isInterval(orig[0]) && isInterval(orig[1]) {
			x, err := vector.LookupFunction("div", []vector.Expr{vector.DTMicros(args[0]), vector.DTMicros(args[1])})
			if err != nil {
				return nil, true, err
			}
			return set(x)
		}
	case "+", "-":
		if len(args) != 2 {
			break
		}
		sign := int64(1)
		if call.Func == "-" {
			sign = -1
		}
		if dtOrNull(0) && dtOrNull(1) {
			return set(vector.DTAdd(args[0], args[1], sign))
		}
		isTS := func(i int) bool { return arrow.TypeEqual(vector.Unwrap(orig[i].DataType()), vector.Timestamp) }
		if _, constant := intervalMicros(orig[1]); isTS(0) && isInterval(orig[1]) && !constant {
			return set(vector.TimestampAddDT(args[0], args[1], sign))
		}
		if _, constant := intervalMicros(orig[0]); sign > 0 && isTS(1) && isInterval(orig[0]) && !constant {
			return set(vector.TimestampAddDT(args[1], args[0], 1))
		}
	case "*":
		if len(args) != 2 {
			break
		}
		switch {
		case isInterval(orig[0]) && number(1):
			return set(vector.DTMultiply(args[0], args[1], false))
		case isInterval(orig[1]) && number(0):
			return set(vector.DTMultiply(args[1], args[0], false))
		}
	case "/":
		if len(args) == 2 && isInterval(orig[0]) && number(1) {
			return set(vector.DTMultiply(args[0], args[1], true))
		}
	}
	return nil, false, nil
}
