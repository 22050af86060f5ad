package plan

import (
	"github.com/apache/arrow/go/v17/arrow"

	"github.com/arrowstream/arrowstream/sql"
	"github.com/arrowstream/arrowstream/vector"
)

// callTextMore resolves concat_ws, nanvl and the function forms of like
// and ilike, which Spark defines by other expressions; ok is false for
// other functions.
func (r *resolver) callTextMore(f *sql.FuncCall, name string) (e Expr, ok bool, err error) {
	switch name {
	case "like", "ilike":
		if len(f.Args) != 2 && len(f.Args) != 3 {
			return nil, false, nil // the like function's own arity error
		}
		x := &sql.Like{Pos: f.Pos, Op: sql.OpLike, X: f.Args[0], Pattern: f.Args[1]}
		if name == "ilike" {
			x.Op = sql.OpILike
		}
		if len(f.Args) == 3 {
			lit, isLit := f.Args[2].(*sql.Literal)
			if !isLit || lit.Kind != sql.LitString {
				return nil, true, errorAt(f.Args[2].Position(), ErrType, "The escape character of %s() must be a string literal.", name)
			}
			x.Escape = lit
		}
		e, err := r.like(x)
		return e, true, err
	case "concat_ws", "nanvl":
	default:
		return nil, false, nil
	}
	args, err := r.exprs(f.Args)
	if err != nil {
		return nil, true, err
	}
	if name == "nanvl" {
		e, err := nanvl(f, args)
		return e, true, err
	}
	e, err = concatWS(f, args)
	return e, true, err
}

// nanvl(a, b) is b where a is NaN, else a (NULL stays NULL), as Spark's
// NaNvl: both are cast to DOUBLE (FLOAT when both are), and b is only
// evaluated on the rows that take it (a CASE), so nanvl(x, 1/0) does not
// raise under ANSI where x is a number.
func nanvl(f *sql.FuncCall, args []Expr) (Expr, error) {
	if len(args) != 2 {
		return nil, errorAt(f.Pos, ErrType, "nanvl() needs 2 arguments, got %d.", len(args))
	}
	to := vector.Float64
	if vector.Unwrap(args[0].DataType()).ID() == arrow.FLOAT32 && vector.Unwrap(args[1].DataType()).ID() == arrow.FLOAT32 {
		to = vector.Float32
	}
	for i, a := range args {
		dt := vector.Unwrap(a.DataType())
		if !vector.IsNumeric(dt) && !isString(dt) && !isNullType(dt) {
			return nil, errorAt(f.Args[i].Position(), ErrType, "Cannot resolve nanvl(): argument %d requires (double or float) type, however, it is of %s type.", i+1, vector.TypeName(dt))
		}
		if !arrow.TypeEqual(dt, to) {
			args[i] = castTo(a, to)
		}
	}
	isNaN, err := newCall(f.Pos, "isnan", args[0])
	if err != nil {
		return nil, err
	}
	return newCase(f.Pos, []Expr{isNaN}, []Expr{args[1], args[0]}, true)
}

// concatWS is concat_ws(sep, x, ...): the non-NULL strings of its
// arguments, arrays of strings spread into their elements, joined by sep;
// NULL when sep is. Atomic values (numbers, booleans, dates, binaries)
// are cast to strings, as Spark's implicit casts do, and arrays of them
// to arrays of strings. It is array_join of the concatenated arrays,
// which skips NULL elements as concat_ws does.
func concatWS(f *sql.FuncCall, args []Expr) (Expr, error) {
	if len(args) == 0 {
		return nil, errorAt(f.Pos, ErrType, "concat_ws() requires at least one argument (the separator).")
	}
	strs := vector.ListOf(vector.String)
	none, err := newCall(f.Pos, "array")
	if err != nil {
		return nil, err
	}
	empty := castTo(none, strs)
	sep := args[0]
	if dt := vector.Unwrap(sep.DataType()); !isString(dt) {
		if !isAtomic(dt) && !isNullType(dt) {
			return nil, errorAt(f.Args[0].Position(), ErrType, "Cannot resolve concat_ws(): the separator must be a string, not %s.", vector.TypeName(dt))
		}
		sep = castTo(sep, vector.String)
	}
	parts := make([]Expr, 0, len(args)-1)
	for i, a := range args[1:] {
		dt := vector.Unwrap(a.DataType())
		if lt, ok := dt.(*arrow.ListType); ok {
			el := vector.Unwrap(lt.Elem())
			switch {
			case isString(el):
			case isAtomic(el) || isNullType(el):
				a = castTo(a, strs)
			default:
				return nil, errorAt(f.Args[i+1].Position(), ErrType, "Cannot resolve concat_ws(): argument %d requires (array<string> or string) type, however, it is of %s type.", i+2, vector.TypeName(dt))
			}
			// A NULL array adds nothing, as a NULL string does.
			c, err := newCall(f.Pos, "coalesce", a, empty)
			if err != nil {
				return nil, err
			}
			parts = append(parts, c)
			continue
		}
		if !isString(dt) {
			if !isAtomic(dt) && !isNullType(dt) {
				return nil, errorAt(f.Args[i+1].Position(), ErrType, "Cannot resolve concat_ws(): argument %d requires (array<string> or string) type, however, it is of %s type.", i+2, vector.TypeName(dt))
			}
			a = castTo(a, vector.String)
		}
		one, err := newCall(f.Pos, "array", a)
		if err != nil {
			return nil, err
		}
		parts = append(parts, one)
	}
	all := empty
	if len(parts) == 1 {
		all = parts[0]
	} else if len(parts) > 1 {
		c, err := newCall(f.Pos, "concat", parts...)
		if err != nil {
			return nil, err
		}
		all = c
	}
	return newCall(f.Pos, "array_join", all, sep)
}
