package plan

import (
	"github.com/arrowstream/arrowstream/sql"
	"github.com/arrowstream/arrowstream/vector"
)

// boolAggregates are Spark's boolean aggregates and the aggregate each
// is: over booleans (false < true, NULLs ignored, NULL over no values)
// every is min and any is max.
var boolAggregates = map[string]string{
	"every": "min", "bool_and": "min",
	"any": "max", "some": "max", "bool_or": "max",
}

// isAggregateAlias reports whether name is an aggregate resolved by
// rewriting it into another (the boolean aggregates and count_if).
func isAggregateAlias(name string) bool {
	_, ok := boolAggregates[name]
	return ok || name == "count_if" || regrAliases[name]
}

// aggregateAlias resolves every/bool_and/any/some/bool_or and count_if.
func (r *resolver) aggregateAlias(f *sql.FuncCall, name string) (Expr, error) {
	if regrAliases[name] {
		return r.regrAlias(f, name)
	}
	if len(f.Args) != 1 {
		return nil, errorAt(f.Pos, ErrType, "[WRONG_NUM_ARGS.WITHOUT_SUGGESTION] The `%s` requires 1 parameters but the actual number is %d.", name, len(f.Args))
	}
	if _, ok := f.Args[0].(*sql.Star); ok {
		return nil, errorAt(f.Pos, ErrUnsupported, "Invalid usage of '*' in %s().", name)
	}
	sub := *r
	sub.aggs = nil
	sub.inAgg = true
	arg, err := sub.expr(f.Args[0])
	if err != nil {
		return nil, err
	}
	if t := arg.DataType(); t.ID() != vector.Boolean.ID() && !isNullType(t) {
		return nil, errorAt(f.Pos, ErrType, "[DATATYPE_MISMATCH.UNEXPECTED_INPUT_TYPE] Cannot resolve \"%s(%s)\" due to data type mismatch: The first parameter requires the \"BOOLEAN\" type, however %q has the type %q.", name, sql.Format(f.Args[0]), sql.Format(f.Args[0]), vector.TypeName(t))
	}
	g := *f
	if name == "count_if" {
		// count(x OR NULL): counts the rows where x is true.
		g.Name = sql.Ident{Pos: f.Name.Pos, Name: "count"}
		g.Args = []sql.Expr{&sql.BinaryExpr{Pos: f.Pos, Op: sql.OpOr, L: f.Args[0], R: &sql.Literal{Pos: f.Pos, Kind: sql.LitNull}}}
		return r.call(&g)
	}
	g.Name = sql.Ident{Pos: f.Name.Pos, Name: boolAggregates[name]}
	if isNullType(arg.DataType()) {
		g.Args = []sql.Expr{&sql.Cast{Pos: f.Pos, X: f.Args[0], Type: &sql.TypeName{Pos: f.Pos, Name: "BOOLEAN"}}}
	}
	return r.call(&g)
}
