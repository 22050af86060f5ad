package plan

import (
	"strings"

	"github.com/apache/arrow/go/v17/arrow"

	"github.com/arrowstream/arrowstream/sql"
	"github.com/arrowstream/arrowstream/vector"
)

// The scalar functions and operators of issue #20 that the analyzer
// resolves itself, because they rewrite into other expressions or read an
// argument before it resolves: a unit keyword (dateadd(DAY, …)), the
// argument list of decode's CASE form, mod/pmod over the % operator, DIV,
// the bit operators and date ± days.

// timeUnits are the unit keywords of timestampadd/timestampdiff.
var timeUnits = map[string]bool{
	"MICROSECOND": true, "MILLISECOND": true, "SECOND": true, "MINUTE": true, "HOUR": true,
	"DAY": true, "DAYOFYEAR": true, "WEEK": true, "MONTH": true, "QUARTER": true, "YEAR": true,
}

// unitArg is the unit keyword written as the first argument of
// timestampadd(DAY, …), or "".
func unitArg(f *sql.FuncCall) string {
	if len(f.Args) == 0 {
		return ""
	}
	c, ok := f.Args[0].(*sql.ColumnRef)
	if !ok || len(c.Parts) != 1 || !timeUnits[strings.ToUpper(c.Parts[0].Name)] {
		return ""
	}
	return strings.ToUpper(c.Parts[0].Name)
}

// callScalar resolves the functions of this file; ok is false for others.
func (r *resolver) callScalar(f *sql.FuncCall, name string) (e Expr, ok bool, err error) {
	switch name {
	case "dateadd", "timestampadd", "date_add", "datediff", "date_diff", "timestampdiff":
		unit := unitArg(f)
		if unit == "" {
			if name == "dateadd" {
				name = "date_add"
			}
			if name == "date_diff" {
				name = "datediff"
			}
			if name == "timestampadd" || name == "timestampdiff" {
				return nil, true, errorAt(f.Pos, ErrType, "%s() needs a unit keyword (DAY, HOUR, ...) as its first argument.", name)
			}
			if name != "datediff" && name != "date_add" {
				return nil, false, nil
			}
			args, err := r.exprs(f.Args)
			if err != nil {
				return nil, true, err
			}
			e, err := newCall(f.Pos, name, args...)
			return e, true, err
		}
		if len(f.Args) != 3 {
			return nil, true, errorAt(f.Pos, ErrType, "%s() with a unit needs 3 arguments, got %d.", name, len(f.Args))
		}
		args, err := r.exprs(f.Args[1:])
		if err != nil {
			return nil, true, err
		}
		fn := "timestampadd"
		if strings.Contains(name, "diff") {
			fn = "timestampdiff"
		}
		e, err := newCall(f.Pos, fn, append([]Expr{&Literal{Value: unit, Type: vector.String}}, args...)...)
		return e, true, err
	case "date_part", "datepart", "extract":
		return r.datePart(f, name)
	case "mod", "pmod", "positive", "negative", "nvl2", "nullif", "equal_null", "decode", "div", "uuid", "make_interval", "from_unixtime":
	default:
		return nil, false, nil
	}
	args, err := r.exprs(f.Args)
	if err != nil {
		return nil, true, err
	}
	want := func(n int) error {
		if len(args) != n {
			return errorAt(f.Pos, ErrType, "%s() needs %d arguments, got %d.", name, n, len(args))
		}
		return nil
	}
	switch name {
	case "from_unixtime":
		// Spark's input types are (bigint, string): a string or a
		// fractional number of seconds is cast to bigint under the
		// session's ANSI mode ('aa' is NULL with ANSI off).
		if len(args) > 0 {
			if dt := vector.Unwrap(args[0].DataType()); isString(dt) || vector.IsNumeric(dt) && !vector.IsIntegral(dt) {
				args[0] = castTo(args[0], vector.Int64)
			}
		}
		e, err := newCall(f.Pos, name, args...)
		return e, true, err
	case "mod", "pmod":
		if err := want(2); err != nil {
			return nil, true, err
		}
		l, rr := args[0], args[1]
		if isNullType(l.DataType()) && isNullType(rr.DataType()) {
			l, rr = castTo(l, vector.Float64), castTo(rr, vector.Float64)
		}
		l, rr = coerceArithmetic(l, rr, r.legacy())
		m, err := newCall(f.Pos, "%", l, rr)
		if err != nil || name == "mod" {
			return m, true, err
		}
		// pmod(a, n) = r < 0 ? (r + n) % n : r with r = a % n (Spark's).
		zero := castTo(&Literal{Value: int32(0), Type: vector.Int32}, m.DataType())
		neg, err := newCall(f.Pos, "<", m, zero)
		if err != nil {
			return nil, true, err
		}
		sum, err := newCall(f.Pos, "+", m, rr)
		if err != nil {
			return nil, true, err
		}
		fix, err := newCall(f.Pos, "%", castTo(sum, m.DataType()), rr)
		if err != nil {
			return nil, true, err
		}
		e, err := newCase(f.Pos, []Expr{neg}, []Expr{castTo(fix, m.DataType()), m}, true)
		return e, true, err
	case "positive", "negative":
		if err := want(1); err != nil {
			return nil, true, err
		}
		v := args[0]
		switch dt := v.DataType(); {
		case isString(dt):
			v = castTo(v, vector.Float64)
		case vector.IsNumeric(dt) || isInterval(v) || isNullType(dt):
		default:
			return nil, true, errorAt(f.Pos, ErrType, "Cannot resolve %s(%s) due to data type mismatch: argument 1 requires (numeric or interval) type, however, it is of %s type.", name, v, vector.TypeName(dt))
		}
		if name == "positive" {
			return v, true, nil
		}
		e, err := newCall(f.Pos, "negative", v)
		return e, true, err
	case "nvl2":
		if err := want(3); err != nil {
			return nil, true, err
		}
		c, err := newCall(f.Pos, "isnotnull", args[0])
		if err != nil {
			return nil, true, err
		}
		if r.legacy() {
			if err := legacyCommonCheck(f.Pos, "nvl2()", args[1:]); err != nil {
				return nil, true, err
			}
		}
		e, err := newCase(f.Pos, []Expr{c}, args[1:], true)
		return e, true, err
	case "make_interval":
		e, err := makeIntervalCall(f.Pos, args)
		return e, true, err
	case "nullif":
		if err := want(2); err != nil {
			return nil, true, err
		}
		e, err := nullIf(f.Pos, args[0], args[1])
		return e, true, err
	case "equal_null":
		if err := want(2); err != nil {
			return nil, true, err
		}
		l, rr := coerceComparison(args[0], args[1])
		e, err := newCall(f.Pos, "<=>", l, rr)
		return e, true, err
	case "decode":
		if len(args) == 2 {
			e, err := newCall(f.Pos, "decode", args...)
			return e, true, err
		}
		if len(args) < 3 {
			return nil, true, errorAt(f.Pos, ErrType, "Invalid number of arguments for function decode. Expected: 2; Found: %d", len(args))
		}
		// decode(x, s1, r1, s2, r2, ..., [default]): the first ri whose si
		// is x (NULL matching NULL), as Spark's CASE rewrite.
		var conds, results []Expr
		for k := 1; k+1 < len(args); k += 2 {
			l, rr := coerceComparison(args[0], args[k])
			c, err := newCall(f.Pos, "<=>", l, rr)
			if err != nil {
				return nil, true, err
			}
			conds = append(conds, c)
			results = append(results, args[k+1])
		}
		hasElse := len(args)%2 == 0
		if hasElse {
			results = append(results, args[len(args)-1])
		}
		if r.legacy() {
			if err := legacyCommonCheck(f.Pos, name+"()", results); err != nil {
				return nil, true, err
			}
		}
		e, err := newCase(f.Pos, conds, results, hasElse)
		return e, true, err
	case "div":
		if err := want(2); err != nil {
			return nil, true, err
		}
		e, err := intDiv(f.Pos, args[0], args[1])
		return e, true, err
	case "uuid":
		if err := want(0); err != nil {
			return nil, true, err
		}
		e, err := newCall(f.Pos, "uuid")
		return e, true, err
	}
	return nil, false, nil
}

// intDiv resolves a DIV b: strings are read as bigints.
func intDiv(pos sql.Pos, l, rr Expr) (Expr, error) {
	if isString(l.DataType()) {
		l = castTo(l, vector.Int64)
	}
	if isString(rr.DataType()) {
		rr = castTo(rr, vector.Int64)
	}
	return newCall(pos, "div", l, rr)
}

// isDate reports whether e is a DATE.
func isDate(e Expr) bool { return e.DataType() != nil && e.DataType().ID() == arrow.DATE32 }

// scalarOperator resolves the binary operators of this file: DIV, & | ^,
// and date + days, days + date, date - days (Spark's date_add/date_sub);
// ok is false for others.
func scalarOperator(x *sql.BinaryExpr, l, rr Expr) (e Expr, ok bool, err error) {
	switch x.Op {
	case sql.OpIntDiv:
		e, err := intDiv(x.Pos, l, rr)
		return e, true, err
	case sql.OpBitAnd, sql.OpBitOr, sql.OpBitXor:
		e, err := newCall(x.Pos, x.Op.String(), l, rr)
		return e, true, err
	case sql.OpShiftLeft, sql.OpShiftRight, sql.OpShiftRightUnsigned:
		e, err := newCall(x.Pos, shiftFuncs[x.Op], l, rr)
		return e, true, err
	case sql.OpAdd:
		dayCount := func(e Expr) bool { return !isDate(e) && !isInterval(e) && !isYMInterval(e) && !isString(e.DataType()) }
		switch {
		case isDate(l) && dayCount(rr):
			e, err := newCall(x.Pos, "date_add", l, rr)
			return e, true, err
		case isDate(rr) && dayCount(l):
			e, err := newCall(x.Pos, "date_add", rr, l)
			return e, true, err
		}
	case sql.OpSub:
		// date - date (a string operand read as a date) is a day interval.
		dateLike := func(e Expr) bool { return isDate(e) || isString(e.DataType()) || isNullType(e.DataType()) }
		if (isDate(l) && dateLike(rr) && !isNullType(rr.DataType())) || (isDate(rr) && dateLike(l)) {
			e, err := newCall(x.Pos, "date_subtract", l, rr)
			return e, true, err
		}
		if isDate(l) && !isDate(rr) && !isInterval(rr) && !isYMInterval(rr) && !isString(rr.DataType()) {
			e, err := newCall(x.Pos, "date_sub", l, rr)
			return e, true, err
		}
	}
	return nil, false, nil
}

// shiftFuncs names the functions the shift operators stand for (Spark 4
// parses a << b as shiftleft(a, b)).
var shiftFuncs = map[sql.BinaryOp]string{
	sql.OpShiftLeft: "shiftleft", sql.OpShiftRight: "shiftright", sql.OpShiftRightUnsigned: "shiftrightunsigned",
}

// datePartFields maps the fields of date_part and EXTRACT of a date or
// timestamp to the functions that compute them; SECOND, YEAROFWEEK and
// DAYOFWEEK_ISO are built by datePartOther.
var datePartFields = map[string]string{
	"YEAR": "year", "Y": "year", "YEARS": "year", "YR": "year", "YRS": "year",
	"QUARTER": "quarter", "QTR": "quarter",
	"MONTH": "month", "MON": "month", "MONS": "month", "MONTHS": "month",
	"WEEK": "weekofyear", "W": "weekofyear", "WEEKS": "weekofyear",
	"DAY": "day", "D": "day", "DAYS": "day",
	"DAYOFWEEK": "dayofweek", "DOW": "dayofweek", "DOY": "dayofyear",
	"HOUR": "hour", "H": "hour", "HOURS": "hour", "HR": "hour", "HRS": "hour",
	"MINUTE": "minute", "M": "minute", "MIN": "minute", "MINS": "minute", "MINUTES": "minute",
	"SECOND": secondFractionFunc, "S": secondFractionFunc, "SEC": secondFractionFunc, "SECONDS": secondFractionFunc, "SECS": secondFractionFunc,
	"YEAROFWEEK":    yearOfWeekFunc,
	"DAYOFWEEK_ISO": "weekday", "DOW_ISO": "weekday",
}

// datePart resolves date_part('field', source), extract('field', source)
// and EXTRACT(field FROM source) as the field's function. A NULL field is
// a NULL double, as Spark's DatePart of a null field.
func (r *resolver) datePart(f *sql.FuncCall, name string) (Expr, bool, error) {
	if len(f.Args) != 2 {
		return nil, true, errorAt(f.Pos, ErrType, "%s() needs 2 arguments, got %d.", name, len(f.Args))
	}
	lit, ok := f.Args[0].(*sql.Literal)
	if ok && lit.Kind == sql.LitNull {
		if _, err := r.expr(f.Args[1]); err != nil {
			return nil, true, err
		}
		return &Literal{Type: vector.Float64}, true, nil
	}
	if !ok || lit.Kind != sql.LitString {
		return nil, true, errorAt(f.Args[0].Position(), ErrType, "The field of %s() must be a string literal such as 'YEAR'.", name)
	}
	src, err := r.expr(f.Args[1])
	if err != nil {
		return nil, true, err
	}
	if isYMInterval(src) {
		e, err := ymExtract(f.Pos, lit.Value, src)
		return e, true, err
	}
	if isInterval(src) {
		e, err := dtExtract(f.Pos, lit.Value, src)
		return e, true, err
	}
	fn, ok := datePartFields[strings.ToUpper(lit.Value)]
	if !ok {
		return nil, true, errorAt(f.Args[0].Position(), ErrType, "[INVALID_EXTRACT_FIELD] Cannot extract %s from %s.", strings.ToUpper(lit.Value), src)
	}
	if fn == "weekday" {
		// Spark's DAYOFWEEK_ISO is WeekDay(source) + 1: Monday is 1.
		wd, err := newCall(f.Pos, "weekday", src)
		if err != nil {
			return nil, true, err
		}
		e, err := newCall(f.Pos, "+", wd, &Literal{Value: int32(1), Type: vector.Int32})
		return e, true, err
	}
	e, err := newCall(f.Pos, fn, src)
	return e, true, err
}

// nullIf is nullif(a, b): NULL when a = b, else a, with a's type (Spark's
// NullIf, If(EqualTo(a, b), NULL, a)). The rewrite evaluates a twice, so a
// nondeterministic a (uuid()) is refused rather than compared with one
// value and answered with another.
func nullIf(pos sql.Pos, a, b Expr) (Expr, error) {
	if hasNondeterministic(a) {
		return nil, errorAt(pos, ErrUnsupported, "nullif(%s, %s): a nondeterministic first argument is not supported (it would be evaluated twice).", a, b)
	}
	l, r := coerceComparison(a, b)
	eq, err := newCall(pos, "=", l, r)
	if err != nil {
		return nil, err
	}
	dt := a.DataType()
	if isNullType(dt) {
		return &Literal{Type: arrow.Null}, nil
	}
	return newCase(pos, []Expr{eq}, []Expr{&Literal{Type: dt}, a}, true)
}

// hasNondeterministic reports whether e calls a nondeterministic function.
func hasNondeterministic(e Expr) bool {
	if c, ok := e.(*Call); ok && (nondeterministic[c.Func] || c.UDF != nil && !c.UDF.Deterministic) {
		return true
	}
	for _, k := range e.Children() {
		if hasNondeterministic(k) {
			return true
		}
	}
	return false
}
