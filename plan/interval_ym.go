package plan

import (
	"fmt"
	"strings"

	"github.com/apache/arrow/go/v17/arrow"

	"github.com/arrowstream/arrowstream/sql"
	"github.com/arrowstream/arrowstream/vector"
)

// Year-month intervals (INTERVAL '1-2' YEAR TO MONTH, INTERVAL 3 MONTHS):
// vector.YearMonthInterval, months in an int32. The operators keep their
// names (+ - * / negative and the comparisons) so that they print as
// Spark's; the conversion to vector expressions looks at the argument
// types and picks the year-month kernels.

func isYMInterval(e Expr) bool { return vector.IsYearMonthInterval(e.DataType()) }

// ymIntervalOf is the constant of a year-month interval literal.
func ymIntervalOf(x *sql.IntervalLit, fields string) (Expr, error) {
	iv, err := x.Value()
	if err != nil {
		return nil, errorAt(x.Pos, ErrType, "%v.", err)
	}
	l := &Literal{Value: arrow.MonthInterval(iv.Months), Type: vector.YearMonthInterval}
	switch fields {
	case "YEAR":
		l.ymFields = vector.YMYear
	case "MONTH":
		l.ymFields = vector.YMMonth
	}
	return l, nil
}

// ymFieldsOf is the field range of a year-month interval expression's
// Spark type, where the planner can tell it: literals keep theirs, a sum
// or difference spans both operands', products and quotients are YEAR
// TO MONTH.
func ymFieldsOf(e Expr) (vector.YMFields, bool) {
	switch x := e.(type) {
	case *Literal:
		return x.ymFields, isYMInterval(x)
	case *Call:
		switch x.Func {
		case "*", "/", "make_ym_interval":
			return vector.YMYearToMonth, true
		case "negative", "abs":
			if len(x.Args) == 1 {
				return ymFieldsOf(x.Args[0])
			}
		case "+", "-":
			var out []vector.YMFields
			for _, a := range x.Args {
				if !isYMInterval(a) {
					continue
				}
				f, ok := ymFieldsOf(a)
				if !ok {
					return 0, false
				}
				out = append(out, f)
			}
			if len(out) == 2 && out[0] != out[1] {
				return vector.YMYearToMonth, true
			}
			if len(out) > 0 {
				return out[0], true
			}
		}
	case *Cast:
		return x.ymFields, isYMInterval(x)
	}
	return 0, false
}

// ymCastToString is CAST(x AS STRING) of a year-month interval: Spark's
// INTERVAL '1-2' YEAR TO MONTH text, which depends on the fields of x's
// type; where the planner cannot tell them the cast is refused rather than
// guessed.
func ymCastToString(pos sql.Pos, x Expr) (Expr, error) {
	f, ok := ymFieldsOf(x)
	if !ok {
		return nil, errorAt(pos, ErrUnsupported, "CAST(%s AS STRING) of a year-month interval whose type (YEAR, MONTH or YEAR TO MONTH) is not known here is not supported.", x)
	}
	return newCall(pos, ymToStringFunc, x, &Literal{Value: int32(f), Type: vector.Int32})
}

// ymToStringFunc is the planner's name of a year-month interval's cast to
// a string.
const ymToStringFunc = "ym_interval_string"

// ymExtract resolves EXTRACT(YEAR|MONTH FROM x) of a year-month interval:
// the whole years (int), and the months beyond them (tinyint), both with
// the interval's sign.
func ymExtract(pos sql.Pos, field string, x Expr) (Expr, error) {
	switch strings.ToUpper(field) {
	case "YEAR", "Y", "YEARS", "YR", "YRS":
		return newCall(pos, "ym_years", x)
	case "MONTH", "MON", "MONS", "MONTHS":
		return newCall(pos, "ym_months", x)
	}
	return nil, errorAt(pos, ErrType, "[INVALID_EXTRACT_FIELD] Cannot extract %s from %s.", strings.ToUpper(field), x)
}

// ymCallToVector builds the vector form of an operator with a year-month
// interval operand; ok is false when the call has none.
func ymCallToVector(call *Call, args []vector.Expr) (e vector.Expr, ok bool, err error) {
	switch call.Func {
	case "+", "-", "*", "/", "negative", "abs", "ym_years", "ym_months", ymToStringFunc,
		"=", "<>", "<", "<=", ">", ">=", "<=>", "div", "signum":
	default:
		return nil, false, nil
	}
	orig := call.Args
	anyYM := false
	for _, a := range orig {
		anyYM = anyYM || isYMInterval(a)
	}
	if !anyYM {
		return nil, false, nil
	}
	mismatch := func() (vector.Expr, bool, error) {
		types := make([]string, len(orig))
		for i, a := range orig {
			types[i] = vector.TypeName(a.DataType())
		}
		return nil, true, fmt.Errorf("%s does not apply to (%s): %w", call.Func, strings.Join(types, ", "), ErrType)
	}
	set := func(x vector.Expr) (vector.Expr, bool, error) {
		if f, isF := x.(*vector.FuncExpr); isF {
			f.Mode, f.Loc = call.Mode, call.Loc
		}
		return x, true, nil
	}
	ymOrNull := func(i int) bool { return isYMInterval(orig[i]) || isNullType(orig[i].DataType()) }
	isTS := func(i int) bool { return orig[i].DataType().ID() == arrow.TIMESTAMP }
	switch call.Func {
	case "negative", "ym_years", "ym_months", "abs", "signum":
		if len(args) != 1 {
			return mismatch()
		}
		switch call.Func {
		case "negative":
			return set(vector.YMNegate(args[0]))
		case "abs":
			return set(vector.YMAbs(args[0]))
		case "signum":
			e, err := vector.LookupFunction("signum", []vector.Expr{vector.YMMonths(args[0])})
			return e, true, err
		}
		return set(vector.YMPart(args[0], call.Func == "ym_years"))
	case ymToStringFunc:
		return set(vector.YMToString(args[0], args[1]))
	}
	if len(args) != 2 {
		return mismatch()
	}
	switch call.Func {
	case "+", "-":
		sign := int64(1)
		if call.Func == "-" {
			sign = -1
		}
		switch {
		case ymOrNull(0) && ymOrNull(1):
			return set(vector.YMAdd(args[0], args[1], sign))
		case isDate(orig[0]) && isYMInterval(orig[1]):
			return set(vector.DateAddYM(args[0], args[1], sign))
		case isDate(orig[1]) && isYMInterval(orig[0]) && sign > 0:
			return set(vector.DateAddYM(args[1], args[0], 1))
		case isTS(0) && isYMInterval(orig[1]):
			return set(vector.TimestampAddYM(args[0], args[1], sign))
		case isTS(1) && isYMInterval(orig[0]) && sign > 0:
			return set(vector.TimestampAddYM(args[1], args[0], 1))
		}
	case "*":
		switch {
		case isYMInterval(orig[0]) && !isYMInterval(orig[1]):
			return set(vector.YMMultiply(args[0], args[1], false))
		case isYMInterval(orig[1]) && !isYMInterval(orig[0]):
			return set(vector.YMMultiply(args[1], args[0], false))
		}
	case "/":
		if isYMInterval(orig[0]) && !isYMInterval(orig[1]) {
			return set(vector.YMMultiply(args[0], args[1], true))
		}
	case "div":
		// Whole times the second interval fits in the first, a bigint.
		if isYMInterval(orig[0]) && isYMInterval(orig[1]) {
			e, err := vector.LookupFunction("div", []vector.Expr{vector.YMMonths(args[0]), vector.YMMonths(args[1])})
			if f, isF := e.(*vector.FuncExpr); isF {
				f.Mode = call.Mode
			}
			return e, true, err
		}
	case "=", "<>", "<", "<=", ">", ">=", "<=>":
		if ymOrNull(0) && ymOrNull(1) {
			l, r := vector.YMMonths(args[0]), vector.YMMonths(args[1])
			var cmp func(l, r vector.Expr) vector.Expr
			switch call.Func {
			case "=":
				cmp = vector.Eq
			case "<>":
				cmp = vector.NotEq
			case "<":
				cmp = vector.Lt
			case "<=":
				cmp = vector.Le
			case ">":
				cmp = vector.Gt
			case ">=":
				cmp = vector.Ge
			default:
				cmp = vector.EqualNullSafe
			}
			return set(cmp(l, r))
		}
	}
	return mismatch()
}

// dayFieldsOnly reports whether a day-time interval literal has DAY or
// WEEK fields only (INTERVAL '2' DAY, INTERVAL 3 DAYS).
func dayFieldsOnly(x *sql.IntervalLit) bool {
	if x.Parts == nil {
		return false
	}
	for _, p := range x.Parts {
		if p.Unit != "DAY" && p.Unit != "WEEK" {
			return false
		}
	}
	return true
}

// dateAddDays resolves date ± INTERVAL n DAY and INTERVAL n DAY + date
// as Spark does for an interval of the DAY field: date_add/date_sub of
// the days, a date (any other day-time interval makes a timestamp).
func dateAddDays(pos sql.Pos, op string, l, r Expr) (Expr, bool, error) {
	if op != "+" && op != "-" {
		return nil, false, nil
	}
	dayLit := func(e Expr) (*Literal, bool) {
		lit, ok := e.(*Literal)
		return lit, ok && lit.dayField && lit.Value != nil
	}
	d := l
	lit, ok := dayLit(r)
	if !ok && op == "+" {
		d = r
		lit, ok = dayLit(l)
	}
	if !ok || !isDate(d) {
		return nil, false, nil
	}
	days := int64(lit.Value.(arrow.Duration)) / sql.MicrosPerDay
	if days < -1<<31 || days >= 1<<31 {
		return nil, true, errorAt(pos, ErrType, "[ARITHMETIC_OVERFLOW] The interval %s has too many days to add to a date.", lit)
	}
	fn := "date_add"
	if op == "-" {
		fn = "date_sub"
	}
	e, err := newCall(pos, fn, d, &Literal{Value: int32(days), Type: vector.Int32})
	return e, true, err
}
