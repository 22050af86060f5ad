package plan

import (
	"github.com/apache/arrow/go/v17/arrow"

	"github.com/arrowstream/arrowstream/sql"
	"github.com/arrowstream/arrowstream/vector"
)

// greatestCall resolves greatest(a, b, ...) and least(a, b, ...): the
// arguments are cast to their common type (Spark's type coercion of
// Greatest and Least), NULLs are skipped.
func greatestCall(f *sql.FuncCall, name string, args []Expr) (Expr, error) {
	if len(args) < 2 {
		return nil, errorAt(f.Pos, ErrType, "[WRONG_NUM_ARGS.WITHOUT_SUGGESTION] The `%s` requires > 1 parameters but the actual number is %d.", name, len(args))
	}
	common, err := coerceAll(f.Pos, name+"()", args)
	if err != nil {
		return nil, err
	}
	// coerceAll leaves numbers of different types as they are: greatest
	// needs one type.
	types := make([]arrow.DataType, len(common))
	for i, a := range common {
		types[i] = a.DataType()
	}
	t, ok := commonType(types)
	if !ok || isNullType(t) {
		t = vector.Unwrap(common[0].DataType())
	}
	out := make([]Expr, len(common))
	for i, a := range common {
		out[i] = castTo(a, t)
	}
	return newCall(f.Pos, name, out...)
}
