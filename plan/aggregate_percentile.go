package plan

import (
	"strings"

	"github.com/apache/arrow/go/v17/arrow"

	"github.com/arrowstream/arrowstream/sql"
	"github.com/arrowstream/arrowstream/vector"
)

// The exact percentiles: percentile(x, p [, frequency]), median(x),
// percentile_cont(p) WITHIN GROUP (ORDER BY x [DESC]) and
// percentile_disc(p) WITHIN GROUP (...), bound by vector as Spark's
// Percentile and PercentileDisc.

func init() {
	aggFuncs["percentile"] = vector.AggPercentile
	aggFuncs["median"] = vector.AggPercentile
	aggFuncs["percentile_cont"] = vector.AggPercentile
	aggFuncs["percentile_disc"] = vector.AggPercentileDisc
	aggFuncs["percentile_approx"] = vector.AggApproxPercentile
	aggFuncs["approx_percentile"] = vector.AggApproxPercentile
}

// isPercentileName reports whether name is one of the exact percentiles.
func isPercentileName(name string) bool {
	switch name {
	case "percentile", "median", "percentile_cont", "percentile_disc", "percentile_approx", "approx_percentile":
		return true
	}
	return false
}

// withinGroupCheck refuses WITHIN GROUP on a function other than
// percentile_cont and percentile_disc (Spark's grammar has it for those
// only), and those without it.
func withinGroupCheck(f *sql.FuncCall, name string) error {
	if name == "mode" {
		return nil // modeArgs checks its forms
	}
	ordered := name == "percentile_cont" || name == "percentile_disc"
	switch {
	case f.Within != nil && !ordered:
		return errorAt(f.Within.Pos, ErrUnsupported, "[PARSE_SYNTAX_ERROR] Syntax error at or near 'WITHIN': WITHIN GROUP is only allowed with percentile_cont and percentile_disc, not with %s.", name)
	case f.Within == nil && ordered:
		return errorAt(f.Name.Pos, ErrUnresolved, "[UNRESOLVED_ROUTINE] Cannot resolve function `%s`: %s needs WITHIN GROUP (ORDER BY ...).", name, name)
	case f.Within != nil && f.Distinct:
		return errorAt(f.Pos, ErrUnsupported, "[PARSE_SYNTAX_ERROR] Syntax error at or near 'DISTINCT': %s takes no DISTINCT.", name)
	}
	return nil
}

// percentileFunc is the vector function of a percentile call: the DESC
// variants for WITHIN GROUP (ORDER BY x DESC).
func percentileFunc(f *sql.FuncCall, fn vector.AggFunc) vector.AggFunc {
	if f.Within == nil || !f.Within.Desc {
		return fn
	}
	switch fn {
	case vector.AggPercentile:
		return vector.AggPercentileDesc
	case vector.AggPercentileDisc:
		return vector.AggPercentileDiscDesc
	}
	return fn
}

// percentileArgs checks and converts the arguments of an exact
// percentile: the value (numeric or ANSI interval), the percentage folded
// to a double or array of doubles in [0, 1], and percentile's optional
// integral frequency.
func percentileArgs(f *sql.FuncCall, name string, args []Expr) ([]Expr, error) {
	if err := withinGroupCheck(f, name); err != nil {
		return nil, err
	}
	if name == "percentile_approx" || name == "approx_percentile" {
		return approxPercentileArgs(f, name, args)
	}
	lo, hi := 2, 2
	switch name {
	case "median":
		lo, hi = 1, 1
	case "percentile":
		hi = 3
	}
	if len(args) < lo || len(args) > hi {
		n := len(args)
		if f.Within != nil {
			n-- // the ordering is not a parameter
		}
		want := "2 or 3"
		switch name {
		case "median":
			want = "1"
		case "percentile_cont", "percentile_disc":
			want = "1"
		}
		return nil, errorAt(f.Pos, ErrType, "[WRONG_NUM_ARGS.WITHOUT_SUGGESTION] The `%s` requires %s parameters but the actual number is %d.", name, want, n)
	}
	if name == "median" {
		args = append(args, &Literal{Value: 0.5, Type: vector.Float64})
	}
	x := args[0]
	t := vector.Unwrap(x.DataType())
	switch {
	case isNullType(t):
		args[0] = castTo(x, vector.Float64)
	case vector.IsNumeric(t) || t.ID() == arrow.INTERVAL_MONTHS || t.ID() == arrow.DURATION:
	default:
		return nil, errorAt(f.Pos, ErrType, "[DATATYPE_MISMATCH.UNEXPECTED_INPUT_TYPE] Cannot resolve \"%s\" due to data type mismatch: Parameter 1 requires the (\"NUMERIC\" or \"INTERVAL YEAR TO MONTH\" or \"INTERVAL DAY TO SECOND\") type, however %q has the type %q.", sql.Format(f), exprText(f, 0), vector.TypeName(t))
	}
	pct, err := percentageLiteral(f, args[1])
	if err != nil {
		return nil, err
	}
	args[1] = pct
	if len(args) == 3 {
		ft := vector.Unwrap(args[2].DataType())
		switch {
		case isNullType(ft):
			args[2] = castTo(args[2], vector.Int64)
		case !vector.IsIntegral(ft):
			return nil, errorAt(f.Pos, ErrType, "[DATATYPE_MISMATCH.UNEXPECTED_INPUT_TYPE] Cannot resolve \"%s\" due to data type mismatch: Parameter 3 requires the \"INTEGRAL\" type, however %q has the type %q.", sql.Format(f), exprText(f, 2), vector.TypeName(ft))
		}
	}
	return args, nil
}

// exprText is the SQL of argument i of f (of the value's ORDER BY for
// WITHIN GROUP).
func exprText(f *sql.FuncCall, i int) string {
	if i < len(f.Args) {
		return sql.Format(f.Args[i])
	}
	return ""
}

// percentageLiteral folds a percentage argument to a double or an array of
// doubles, each in [0, 1], as Spark's checkInputDataTypes requires.
func percentageLiteral(f *sql.FuncCall, p Expr) (*Literal, error) {
	t := vector.Unwrap(p.DataType())
	to := vector.Float64
	if l, ok := t.(*arrow.ListType); ok {
		if !vector.IsNumeric(vector.Unwrap(l.Elem())) && !isNullType(l.Elem()) {
			return nil, errorAt(f.Pos, ErrType, "[DATATYPE_MISMATCH.UNEXPECTED_INPUT_TYPE] Cannot resolve \"%s\" due to data type mismatch: Parameter 2 requires the \"ARRAY<DOUBLE>\" type, however %q has the type %q.", sql.Format(f), p.String(), vector.TypeName(t))
		}
		to = vector.ListOf(vector.Float64)
	} else if !vector.IsNumeric(t) && !isNullType(t) {
		return nil, errorAt(f.Pos, ErrType, "[DATATYPE_MISMATCH.UNEXPECTED_INPUT_TYPE] Cannot resolve \"%s\" due to data type mismatch: Parameter 2 requires the \"DOUBLE\" type, however %q has the type %q.", sql.Format(f), p.String(), vector.TypeName(t))
	}
	if !isConstant(p) {
		return nil, errorAt(f.Pos, ErrType, "[DATATYPE_MISMATCH.NON_FOLDABLE_INPUT] Cannot resolve \"%s\" due to data type mismatch: the input percentage should be a foldable \"DOUBLE\" expression; however, got %q.", sql.Format(f), p.String())
	}
	l, err := foldConstant(castTo(p, to))
	if err != nil {
		return nil, errorAt(f.Pos, ErrType, "Cannot evaluate the percentage of %s: %v.", sql.Format(f), err)
	}
	var vals []any
	switch v := l.Value.(type) {
	case nil:
		return nil, errorAt(f.Pos, ErrType, "[DATATYPE_MISMATCH.UNEXPECTED_NULL] Cannot resolve \"%s\" due to data type mismatch: the percentage must not be null.", sql.Format(f))
	case float64:
		vals = []any{v}
	case []any:
		vals = v
	}
	for _, e := range vals {
		d, ok := e.(float64)
		if !ok {
			return nil, errorAt(f.Pos, ErrType, "[DATATYPE_MISMATCH.UNEXPECTED_NULL] Cannot resolve \"%s\" due to data type mismatch: the percentages must not be null.", sql.Format(f))
		}
		if !(d >= 0 && d <= 1) {
			return nil, errorAt(f.Pos, ErrType, "[DATATYPE_MISMATCH.VALUE_OUT_OF_RANGE] Cannot resolve \"%s\" due to data type mismatch: the percentage(s) must be between 0.0 and 1.0, but got %s.", sql.Format(f), sql.Format(f.Args[1]))
		}
	}
	return l, nil
}

// percentileName is Spark's column name of a percentile call:
// percentile(v, 0.5, 1) with its default frequency, median(v), and
// percentile_cont(0.5) WITHIN GROUP (ORDER BY v [DESC]).
func percentileName(f *sql.FuncCall, name string, a *AggregateExpr) string {
	p := &exprPrinter{pretty: true}
	var b strings.Builder
	switch name {
	case "percentile_approx", "approx_percentile":
		n := strings.Replace(renderAgg(a, true), "percentile_approx(", name+"(", 1)
		if len(a.Args) == 2 {
			n = strings.TrimSuffix(n, ")") + ", 10000)"
		}
		return n
	case "median":
		p.expr(a.Args[0])
		return "median(" + p.b.String() + ")"
	case "percentile":
		b.WriteString(renderAgg(a, true))
		if len(a.Args) == 2 {
			return strings.TrimSuffix(b.String(), ")") + ", 1)"
		}
		return b.String()
	}
	p.expr(a.Args[1])
	pct := p.b.String()
	p.b.Reset()
	p.expr(a.Args[0])
	desc := ""
	if f.Within != nil && f.Within.Desc {
		desc = " DESC"
	}
	if len(f.Args) > 1 {
		// The percentage as written (0.25, not CAST(0.25 AS DOUBLE)).
		pct = sql.Format(f.Args[1])
	}
	return name + "(" + pct + ") WITHIN GROUP (ORDER BY " + p.b.String() + desc + ")"
}

// percentileWindowCheck refuses an ORDER BY or a frame other than the
// whole partition for percentile_cont, percentile_disc and median OVER
// (...), as Spark's CheckAnalysis does.
func percentileWindowCheck(f *sql.FuncCall, name string, spec *sql.WindowSpec) error {
	switch name {
	case "percentile_cont", "percentile_disc", "median":
	default:
		return nil
	}
	fr := spec.Frame
	whole := fr == nil || fr.Unit == sql.FrameRows && fr.Start != nil && fr.Start.Kind == sql.UnboundedPreceding && fr.End != nil && fr.End.Kind == sql.UnboundedFollowing
	if len(spec.OrderBy) > 0 || !whole {
		return errorAt(f.Pos, ErrAggregate, "Cannot specify order by or frame for '%s'.", name)
	}
	return nil
}

// approxPercentileArgs checks percentile_approx(x, p [, accuracy]): x a
// number, date, timestamp or ANSI interval; p as percentile's; accuracy
// an integral constant in (0, 2147483647].
func approxPercentileArgs(f *sql.FuncCall, name string, args []Expr) ([]Expr, error) {
	if len(args) != 2 && len(args) != 3 {
		return nil, errorAt(f.Pos, ErrType, "[WRONG_NUM_ARGS.WITHOUT_SUGGESTION] The `%s` requires [2, 3] parameters but the actual number is %d.", name, len(args))
	}
	t := vector.Unwrap(args[0].DataType())
	switch {
	case isNullType(t):
		args[0] = castTo(args[0], vector.Float64)
	case vector.IsNumeric(t) || t.ID() == arrow.DATE32 || t.ID() == arrow.TIMESTAMP || t.ID() == arrow.INTERVAL_MONTHS || t.ID() == arrow.DURATION:
	default:
		return nil, errorAt(f.Pos, ErrType, "[DATATYPE_MISMATCH.UNEXPECTED_INPUT_TYPE] Cannot resolve \"%s\" due to data type mismatch: Parameter 1 requires the (\"NUMERIC\" or \"DATE\" or \"TIMESTAMP\" or \"TIMESTAMP_NTZ\" or \"INTERVAL YEAR TO MONTH\" or \"INTERVAL DAY TO SECOND\") type, however %q has the type %q.", sql.Format(f), exprText(f, 0), vector.TypeName(t))
	}
	pct, err := percentageLiteral(f, args[1])
	if err != nil {
		return nil, err
	}
	args[1] = pct
	if len(args) == 3 {
		at := vector.Unwrap(args[2].DataType())
		if !vector.IsIntegral(at) || !isConstant(args[2]) {
			return nil, errorAt(f.Pos, ErrType, "[DATATYPE_MISMATCH.UNEXPECTED_INPUT_TYPE] Cannot resolve \"%s\" due to data type mismatch: the accuracy must be an integral constant, however %q has the type %q.", sql.Format(f), exprText(f, 2), vector.TypeName(at))
		}
		l, err := foldConstant(castTo(args[2], vector.Int64))
		if err != nil {
			return nil, errorAt(f.Pos, ErrType, "Cannot evaluate the accuracy of %s: %v.", sql.Format(f), err)
		}
		v, ok := l.Value.(int64)
		if !ok || v <= 0 || v > 2147483647 {
			return nil, errorAt(f.Pos, ErrType, "[DATATYPE_MISMATCH.VALUE_OUT_OF_RANGE] Cannot resolve \"%s\" due to data type mismatch: The accuracy provided must be a literal between (0, 2147483647] (current value = %v).", sql.Format(f), l.Value)
		}
		args[2] = l
	}
	return args, nil
}
