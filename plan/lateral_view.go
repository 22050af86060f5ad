package plan

import (
	"strings"

	"github.com/apache/arrow/go/v17/arrow"

	"github.com/arrowstream/arrowstream/sql"
)

// lateralView analyzes input LATERAL VIEW [OUTER] f(args) t [AS] c, ...:
// an Explode of the generator's array over the input's rows, its columns
// qualified by t and named by the aliases (or the generator's defaults:
// col; key, value; pos, col; the struct fields of inline; c0, ... of
// json_tuple; col0, ... of stack). OUTER keeps an input row whose
// generator makes no rows, with NULLs, as the _outer generators do.
func (a *analyzer) lateralView(x *sql.LateralView) (*scope, error) {
	sc, err := a.fromItem(x.Input)
	if err != nil {
		return nil, err
	}
	f := x.Func
	if !isGenerator(f.Name.Name) {
		return nil, errorAt(f.Pos, ErrUnsupported, "LATERAL VIEW needs a generator (explode, posexplode, inline, json_tuple, stack and the _outer forms), not %s.", strings.ToLower(f.Name.Name))
	}
	r := &resolver{funcs: a.b.userFuncs(), sc: sc, clause: "LATERAL VIEW", special: map[sql.Expr]Expr{}}
	var g genInput
	if multiArgGenerator(f.Name.Name) {
		args := make([]Expr, len(f.Args))
		for i, arg := range f.Args {
			if args[i], err = r.expr(arg); err != nil {
				return nil, err
			}
		}
		if g, err = multiGeneratorInput(f, args); err != nil {
			return nil, err
		}
	} else {
		if len(f.Args) != 1 {
			return nil, errorAt(f.Pos, ErrType, "%s() needs one argument, got %d.", strings.ToLower(f.Name.Name), len(f.Args))
		}
		arg, err := r.expr(f.Args[0])
		if err != nil {
			return nil, err
		}
		if g, err = generatorInput(f, arg); err != nil {
			return nil, err
		}
	}
	names := g.fields
	if names == nil {
		names = []string{"col"}
	}
	if x.Columns != nil {
		if len(x.Columns) != len(names) {
			return nil, errorAt(x.Pos, ErrType, "[UDTF_ALIAS_NUMBER_MISMATCH] The number of aliases supplied in the AS clause does not match the number of columns output by the UDTF. Expected %d aliases, but got %s.", len(names), joinIdents(x.Columns))
		}
		names = make([]string, len(x.Columns))
		for i, c := range x.Columns {
			names[i] = c.Name
		}
	}
	e, err := NewExplode(sc.node, g.array, names[0], x.Outer || g.outer)
	if err != nil {
		return nil, errorAt(f.Pos, ErrType, "%v", trimSentinel(err))
	}
	cols := append([]scopeCol(nil), sc.cols...)
	if g.fields == nil {
		return &scope{node: e, cols: append(cols, scopeCol{qual: x.Table.Name})}, nil
	}
	// The Explode appends one struct column: project its fields out.
	in := e.Schema()
	exprs := make([]NamedExpr, 0, in.NumFields()-1+len(names))
	for i := 0; i < in.NumFields()-1; i++ {
		exprs = append(exprs, NamedExpr{Name: in.Field(i).Name, Expr: ColumnOf(in, i)})
	}
	col := ColumnOf(in, in.NumFields()-1)
	st := col.Type.(*arrow.StructType)
	for k, name := range names {
		exprs = append(exprs, NamedExpr{Name: name, Expr: &GetField{X: col, Index: k, Name: st.Field(k).Name}})
		cols = append(cols, scopeCol{qual: x.Table.Name})
	}
	p, err := NewProject(e, exprs)
	if err != nil {
		return nil, errorAt(f.Pos, ErrType, "%v", trimSentinel(err))
	}
	return &scope{node: p, cols: cols}, nil
}
