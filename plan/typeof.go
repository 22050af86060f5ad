package plan

import (
	"github.com/arrowstream/arrowstream/sql"
	"github.com/arrowstream/arrowstream/vector"
)

// typeofCall resolves typeof(x): the name of x's type as Spark's
// DataType.catalogString writes it (int, decimal(2,1), array<int>,
// struct<a:int,b:string>, timestamp_ntz, void), a constant: x is never
// evaluated. Intervals are refused: Spark names a day-time or year-month
// interval by its fields (interval day, interval hour to second), which
// the engine's one type of each kind does not keep.
func (r *resolver) typeofCall(f *sql.FuncCall) (Expr, error) {
	if len(f.Args) != 1 {
		return nil, errorAt(f.Pos, ErrType, "[WRONG_NUM_ARGS.WITHOUT_SUGGESTION] The `typeof` requires 1 parameters but the actual number is %d.", len(f.Args))
	}
	x, err := r.expr(f.Args[0])
	if err != nil {
		return nil, err
	}
	dt := vector.Unwrap(x.DataType())
	if isInterval(x) || isYMInterval(x) {
		return nil, errorAt(f.Pos, ErrUnsupported, "typeof() of an interval is not supported: Spark names the interval's fields (interval day, interval hour to second), which the engine's interval types do not keep.")
	}
	return &Literal{Value: vector.TypeName(dt), Type: vector.String}, nil
}
