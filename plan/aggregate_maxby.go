package plan

import (
	"github.com/apache/arrow/go/v17/arrow"

	"github.com/arrowstream/arrowstream/sql"
	"github.com/arrowstream/arrowstream/vector"
)

func init() {
	for _, n := range []string{"max_by", "min_by", "try_avg", "collect_list", "collect_set"} {
		if f, ok := vector.AggFuncByName(n); ok {
			aggFuncs[n] = f
		}
	}
	// array_agg is collect_list, as Spark names its column.
	aggFuncs["array_agg"] = aggFuncs["collect_list"]
}

// maxByArgs checks max_by(x, ord) and min_by(x, ord): two arguments, the
// second of a type with an ordering (Spark's checkForOrderingExpr); a
// NULL-typed ordering orders nothing, so every group's result is NULL.
func maxByArgs(f *sql.FuncCall, name string, args []Expr) ([]Expr, error) {
	if len(args) != 2 {
		return nil, errorAt(f.Pos, ErrType, "[WRONG_NUM_ARGS.WITHOUT_SUGGESTION] The `%s` requires 2 parameters but the actual number is %d.", name, len(args))
	}
	if isNullType(args[1].DataType()) {
		args[1] = castTo(args[1], vector.Int32)
	}
	t := vector.Unwrap(args[1].DataType())
	switch t.(type) {
	case *arrow.ListType, *arrow.StructType, *arrow.MapType:
		return nil, errorAt(f.Pos, ErrUnsupported, "%s ordered by %s is not supported (numbers, strings, binaries, booleans, dates, timestamps, decimals and intervals are).", name, vector.TypeName(t))
	}
	return args, nil
}
