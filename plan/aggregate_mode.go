package plan

import (
	"github.com/arrowstream/arrowstream/sql"
	"github.com/arrowstream/arrowstream/vector"
)

// mode(x [, deterministic]) and mode() WITHIN GROUP (ORDER BY x [DESC]),
// bound by vector as Spark's Mode: ties go to the first value in Spark's
// hash map order, or with deterministic = true or WITHIN GROUP to the
// lowest value (the highest with DESC).

func init() {
	aggFuncs["mode"] = vector.AggMostFrequent
}

// modeArgs checks mode's arguments and returns the value alone.
func modeArgs(f *sql.FuncCall, args []Expr) ([]Expr, error) {
	if f.Distinct {
		return nil, errorAt(f.Pos, ErrUnsupported, "[INVALID_INVERSE_DISTRIBUTION_FUNCTION.DISTINCT_UNSUPPORTED] Cannot compute the inverse distribution function `mode`: DISTINCT is not supported.")
	}
	if f.Within != nil {
		if len(args) != 1 {
			return nil, errorAt(f.Pos, ErrType, "[INVALID_INVERSE_DISTRIBUTION_FUNCTION.WRONG_NUM_ORDERINGS] Invalid inverse distribution function `mode`: requires 0 orderings in WITHIN GROUP but got %d.", len(args)-1)
		}
		return args, nil
	}
	switch len(args) {
	case 0:
		return nil, errorAt(f.Pos, ErrType, "[INVALID_INVERSE_DISTRIBUTION_FUNCTION.WITHIN_GROUP_MISSING] Invalid inverse distribution function `mode`: WITHIN GROUP is required.")
	case 1:
		return args, nil
	case 2:
		if !isConstant(args[1]) {
			return nil, errorAt(f.Pos, ErrType, "[NON_FOLDABLE_ARGUMENT] The function `mode` requires the parameter `deterministic` to be a foldable expression of the type \"BOOLEAN\", but the actual argument is a non-foldable.")
		}
		l, err := foldConstant(args[1])
		if err != nil {
			return nil, err
		}
		if l.Value == nil {
			return nil, errorAt(f.Pos, ErrType, "[DATATYPE_MISMATCH.UNEXPECTED_NULL] Cannot resolve %q due to data type mismatch: the `deterministic` must not be null.", sql.Format(f))
		}
		if _, ok := l.Value.(bool); !ok {
			return nil, errorAt(f.Pos, ErrType, "[UNEXPECTED_INPUT_TYPE] Parameter second of function `mode` requires the \"BOOLEAN\" type, however %q has the type %q.", sql.Format(f.Args[1]), vector.TypeName(args[1].DataType()))
		}
		return args, nil
	}
	return nil, errorAt(f.Pos, ErrType, "[WRONG_NUM_ARGS.WITHOUT_SUGGESTION] The `mode` requires [0, 1, 2] parameters but the actual number is %d.", len(args))
}

// modeCall picks mode's vector function and names its column as Spark
// does: Spark's WITHIN GROUP (ORDER BY x) and mode(x, true) print as
// "ORDER BY x DESC" and WITHIN GROUP (ORDER BY x DESC) as "ORDER BY x"
// (Spark's Mode.sql inverts the direction it prints).
func modeCall(f *sql.FuncCall, a *AggregateExpr) {
	low := f.Within != nil && !f.Within.Desc
	if f.Within == nil && len(a.Args) == 2 {
		if l, ok := a.Args[1].(*Literal); ok && l.Value == true {
			low = true
		}
		a.Args = a.Args[:1]
	}
	high := f.Within != nil && f.Within.Desc
	p := &exprPrinter{pretty: true}
	p.expr(a.Args[0])
	switch {
	case low:
		a.Func, a.Name = vector.AggMostFrequentLow, "mode() WITHIN GROUP (ORDER BY "+p.b.String()+" DESC)"
	case high:
		a.Func, a.Name = vector.AggMostFrequentHigh, "mode() WITHIN GROUP (ORDER BY "+p.b.String()+")"
	default:
		a.Func, a.Name = vector.AggMostFrequent, "mode("+p.b.String()+")"
	}
}
