package plan

import (
	"github.com/arrowstream/arrowstream/sql"
	"github.com/arrowstream/arrowstream/vector"
)

// statAggregateNames are the statistical aggregates (variance family,
// covariance, correlation, regression), bound by vector.
var statAggregateNames = []string{
	"stddev_samp", "stddev", "std", "stddev_pop", "var_samp", "variance", "var_pop",
	"skewness", "kurtosis", "covar_pop", "covar_samp", "corr",
	"regr_sxx", "regr_syy", "regr_sxy", "regr_r2", "regr_slope", "regr_intercept",
}

func init() {
	for _, n := range statAggregateNames {
		if f, ok := vector.AggFuncByName(n); ok {
			aggFuncs[n] = f
		}
	}
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
