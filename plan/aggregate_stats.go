package plan

import (
	"slices"

	"github.com/apache/arrow/go/v17/arrow"

	"github.com/arrowstream/arrowstream/sql"
	"github.com/arrowstream/arrowstream/vector"
)

// statAggregateNames are the statistical aggregates (variance family,
// covariance, correlation, regression), bound by vector.
var statAggregateNames = []string{
	"stddev_samp", "stddev", "std", "stddev_pop", "var_samp", "variance", "var_pop",
	"skewness", "kurtosis", "covar_pop", "covar_samp", "corr",
	"regr_sxx", "regr_syy", "regr_sxy", "regr_r2", "regr_slope", "regr_intercept",
	"bit_and", "bit_or", "bit_xor", "try_sum",
}

func init() {
	for _, n := range statAggregateNames {
		if f, ok := vector.AggFuncByName(n); ok {
			aggFuncs[n] = f
		}
	}
	// any_value(x[, ignoreNulls]) is first(x[, ignoreNulls]), as Spark
	// replaces it.
	aggFuncs["any_value"] = vector.AggFirst
}

// extAggregateArgs returns the argument check of an aggregate added
// beyond the core ones, or false.
func extAggregateArgs(f *sql.FuncCall, name string, fn vector.AggFunc, args []Expr) (func() ([]Expr, error), bool) {
	switch {
	case vector.IsStatistical(fn):
		return func() ([]Expr, error) { return statisticalArgs(f, name, args) }, true
	case isPercentileName(name):
		return func() ([]Expr, error) { return percentileArgs(f, name, args) }, true
	case name == "mode":
		return func() ([]Expr, error) { return modeArgs(f, args) }, true
	case name == "histogram_numeric":
		return func() ([]Expr, error) { return histogramArgs(f, args) }, true
	case (name == "collect_list" || name == "array_agg") && f.Distinct:
		// Spark collects the values its distinct aggregation hands over, in
		// an order the engine does not reproduce: refused, not answered in
		// another order.
		return func() ([]Expr, error) {
			return nil, errorAt(f.Pos, ErrUnsupported, "%s(DISTINCT ...) is not supported (its element order is Spark's distinct aggregation's); use collect_set or array_distinct(collect_list(...)).", name)
		}, true
	case name == "max_by" || name == "min_by":
		return func() ([]Expr, error) { return maxByArgs(f, name, args) }, true
	case name == "try_sum" || name == "try_avg":
		return func() ([]Expr, error) {
			if len(args) != 1 {
				return nil, errorAt(f.Pos, ErrType, "[WRONG_NUM_ARGS.WITHOUT_SUGGESTION] The `%s` requires 1 parameters but the actual number is %d.", name, len(args))
			}
			t := vector.Unwrap(args[0].DataType())
			switch {
			case isNullType(t) || isString(t):
				args[0] = castTo(args[0], vector.Float64)
			case t.ID() == arrow.DECIMAL128 || isInterval(args[0]) || t.ID() == arrow.INTERVAL_MONTHS:
			case !vector.IsNumeric(t):
				return nil, errorAt(f.Pos, ErrType, "[DATATYPE_MISMATCH.UNEXPECTED_INPUT_TYPE] Cannot resolve \"%s\" due to data type mismatch: Parameter 1 requires the \"NUMERIC\" type, however %q has the type %q.", sql.Format(f), sql.Format(f.Args[0]), vector.TypeName(t))
			}
			return args, nil
		}, true
	case name == "bit_and" || name == "bit_or" || name == "bit_xor":
		return func() ([]Expr, error) {
			if len(args) != 1 {
				return nil, errorAt(f.Pos, ErrType, "[WRONG_NUM_ARGS.WITHOUT_SUGGESTION] The `%s` requires 1 parameters but the actual number is %d.", name, len(args))
			}
			t := args[0].DataType()
			if isNullType(t) {
				args[0] = castTo(args[0], vector.Int32)
			} else if !vector.IsIntegral(vector.Unwrap(t)) {
				return nil, errorAt(f.Pos, ErrType, "[DATATYPE_MISMATCH.UNEXPECTED_INPUT_TYPE] Cannot resolve \"%s\" due to data type mismatch: Parameter 1 requires the \"INTEGRAL\" type, however %q has the type %q.", sql.Format(f), sql.Format(f.Args[0]), vector.TypeName(t))
			}
			return args, nil
		}, true
	}
	return nil, false
}

// statisticalArgs checks and converts the arguments of a statistical
// aggregate: Spark casts them to double implicitly, strings included;
// numbers are converted by vector's accumulator itself, so that the
// column keeps its name (stddev(a), not stddev(CAST(a AS DOUBLE))).
func statisticalArgs(f *sql.FuncCall, name string, args []Expr) ([]Expr, error) {
	want := 1
	if len(statArity2[name]) > 0 {
		want = 2
	}
	if len(args) != want {
		return nil, errorAt(f.Pos, ErrType, "[WRONG_NUM_ARGS.WITHOUT_SUGGESTION] The `%s` requires %d parameters but the actual number is %d.", name, want, len(args))
	}
	for i, x := range args {
		t := x.DataType()
		switch {
		case isNullType(t):
			args[i] = castTo(x, vector.Float64)
		case isString(t):
			args[i] = castTo(x, vector.Float64)
		case !vector.IsNumeric(vector.Unwrap(t)):
			return nil, errorAt(f.Pos, ErrType, "[DATATYPE_MISMATCH.UNEXPECTED_INPUT_TYPE] Cannot resolve \"%s\" due to data type mismatch: Parameter %d requires the \"DOUBLE\" type, however %q has the type %q.", sql.Format(f), i+1, sql.Format(f.Args[i]), vector.TypeName(t))
		}
	}
	return args, nil
}

// statArity2 are the statistical aggregates of two arguments, with Spark's
// parameter names.
var statArity2 = map[string][]string{
	"covar_pop": {"expr1", "expr2"}, "covar_samp": {"expr1", "expr2"}, "corr": {"expr1", "expr2"},
	"regr_sxx": {"y", "x"}, "regr_syy": {"y", "x"}, "regr_sxy": {"y", "x"}, "regr_r2": {"y", "x"},
	"regr_slope": {"y", "x"}, "regr_intercept": {"y", "x"},
}

// regrAliases are the regression aggregates Spark defines by others:
// regr_count(y, x) is count(y, x); regr_avgx(y, x) and regr_avgy(y, x)
// are avg of x and of y over the rows where both are set.
var regrAliases = map[string]bool{"regr_count": true, "regr_avgx": true, "regr_avgy": true}

// regrAlias rewrites a regr_count/regr_avgx/regr_avgy call.
func (r *resolver) regrAlias(f *sql.FuncCall, name string) (Expr, error) {
	if len(f.Args) != 2 {
		return nil, errorAt(f.Pos, ErrType, "[WRONG_NUM_ARGS.WITHOUT_SUGGESTION] The `%s` requires 2 parameters but the actual number is %d.", name, len(f.Args))
	}
	for _, a := range f.Args {
		if _, ok := a.(*sql.Star); ok {
			return nil, errorAt(f.Pos, ErrUnsupported, "Invalid usage of '*' in %s().", name)
		}
	}
	g := *f
	y, x := f.Args[0], f.Args[1]
	if name == "regr_count" {
		g.Name = sql.Ident{Pos: f.Name.Pos, Name: "count"}
		return r.call(&g)
	}
	val := x
	if name == "regr_avgy" {
		val = y
	}
	both := &sql.BinaryExpr{Pos: f.Pos, Op: sql.OpAnd,
		L: &sql.IsNull{Pos: f.Pos, X: y, Not: true}, R: &sql.IsNull{Pos: f.Pos, X: x, Not: true}}
	g.Name = sql.Ident{Pos: f.Name.Pos, Name: "avg"}
	g.Args = []sql.Expr{&sql.Case{Pos: f.Pos, Whens: []*sql.When{{Pos: f.Pos, Cond: both, Result: val}}}}
	return r.call(&g)
}

// AggregateFunctionNames lists the names of the aggregate functions the
// planner resolves (aliases included), for documentation checks.
func AggregateFunctionNames() []string {
	var names []string
	for n := range aggFuncs {
		names = append(names, n)
	}
	for n := range boolAggregates {
		names = append(names, n)
	}
	for n := range regrAliases {
		names = append(names, n)
	}
	names = append(names, "count_if")
	slices.Sort(names)
	return names
}
