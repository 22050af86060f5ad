package plan

import (
	"strings"

	"github.com/arrowstream/arrowstream/sql"
	"github.com/arrowstream/arrowstream/vector"
)

// pivot analyzes FROM item PIVOT (aggs FOR column IN (values)) as Spark
// does: group by every column of the item that neither the aggregates nor
// the pivot column read, and compute each aggregate once per value over
// the rows whose pivot column is that value (NULL-safe equality), as
// agg FILTER (WHERE column <=> value). With one aggregate a column is
// named after its value (or the value's alias); with several,
// value_aggregate.
func (a *analyzer) pivot(x *sql.Pivot) (*scope, error) {
	in, err := a.fromItem(x.Input)
	if err != nil {
		return nil, err
	}
	used := map[string]bool{}
	mark := func(n sql.Node) {
		sql.Inspect(n, func(m sql.Node) bool {
			if c, ok := m.(*sql.ColumnRef); ok {
				for _, p := range c.Parts {
					used[strings.ToLower(p.Name)] = true
				}
			}
			return true
		})
	}
	for _, it := range x.Aggs {
		mark(it.Expr)
	}
	mark(x.Column)
	var items []*sql.SelectItem
	var groupBy []sql.Expr
	s := in.node.Schema()
	for i := 0; i < s.NumFields(); i++ {
		name := s.Field(i).Name
		if in.cols[i].hidden || used[strings.ToLower(name)] {
			continue
		}
		ref := &sql.ColumnRef{Pos: x.Pos, Parts: []sql.Ident{{Pos: x.Pos, Name: name}}}
		if in.cols[i].qual != "" {
			ref.Parts = append([]sql.Ident{{Pos: x.Pos, Name: in.cols[i].qual}}, ref.Parts...)
		}
		items = append(items, &sql.SelectItem{Pos: x.Pos, Expr: ref, Alias: &sql.Ident{Pos: x.Pos, Name: name}})
		groupBy = append(groupBy, ref)
	}
	for _, v := range x.Values {
		constant := true
		sql.Inspect(v.Expr, func(m sql.Node) bool {
			switch m.(type) {
			case *sql.ColumnRef, *sql.Subquery:
				constant = false
			}
			return constant
		})
		if !constant {
			return nil, errorAt(v.Pos, ErrType, "[NON_LITERAL_PIVOT_VALUES] Literal expressions required for pivot values, found %s.", sql.Format(v.Expr))
		}
		for _, ag := range x.Aggs {
			cond := pivotCondition(x.Column, v)
			g, bad := pivotAggregate(ag.Expr, cond)
			if bad != nil {
				return nil, errorAt(ag.Pos, ErrAggregate, "Aggregate expression required for pivot, but %s did not appear in any aggregate function.", sql.Format(bad))
			}
			name := pivotValueName(v)
			if len(x.Aggs) > 1 {
				an := sql.Format(ag.Expr)
				if ag.Alias != nil {
					an = ag.Alias.Name
				}
				name += "_" + an
			}
			items = append(items, &sql.SelectItem{Pos: ag.Pos, Expr: g, Alias: &sql.Ident{Pos: ag.Pos, Name: name}})
		}
	}
	sc, err := selectBlock(&scope{node: in.node, cols: in.cols}, selectSpec{
		b: a.b, a: a, pos: x.Pos, items: items, groupBy: groupBy, grouped: true,
	})
	if err != nil {
		return nil, err
	}
	n, err := a.finish(sc)
	if err != nil {
		return nil, err
	}
	return &scope{node: n, cols: make([]scopeCol, n.Schema().NumFields())}, nil
}

// pivotValueName names a pivot value's column: its alias, or the value as
// Spark prints it (a string's contents, a number's digits).
func pivotValueName(v *sql.SelectItem) string {
	if v.Alias != nil {
		return v.Alias.Name
	}
	if l, ok := v.Expr.(*sql.Literal); ok {
		if l.Kind == sql.LitNull {
			return "null"
		}
		return l.Value
	}
	return sql.Format(v.Expr)
}

// unpivot analyzes FROM item UNPIVOT [INCLUDE NULLS] (value FOR name IN
// (columns)) as Spark: per input row and listed column, the other columns,
// the column's name (or alias) and its value, the values widened to one
// type; rows whose value is NULL are dropped unless INCLUDE NULLS.
func (a *analyzer) unpivot(x *sql.Unpivot) (*scope, error) {
	in, err := a.fromItem(x.Input)
	if err != nil {
		return nil, err
	}
	r := &resolver{b: a.b, sc: in, clause: "UNPIVOT"}
	listed := map[int]bool{}
	cols := make([]Expr, len(x.Columns))
	for i, it := range x.Columns {
		e, err := r.expr(it.Expr)
		if err != nil {
			return nil, err
		}
		c, ok := e.(*ColumnRef)
		if !ok {
			return nil, errorAt(it.Pos, ErrUnsupported, "UNPIVOT lists columns, not %s.", sql.Format(it.Expr))
		}
		listed[c.Index] = true
		cols[i] = c
	}
	s := in.node.Schema()
	nodes := make([]Node, len(cols))
	for i, c := range cols {
		var exprs []NamedExpr
		for j := 0; j < s.NumFields(); j++ {
			if !listed[j] && !in.cols[j].hidden {
				exprs = append(exprs, NamedExpr{Name: s.Field(j).Name, Expr: ColumnOf(s, j)})
			}
		}
		name := c.(*ColumnRef).Name
		if al := x.Columns[i].Alias; al != nil {
			name = al.Name
		} else if ref, ok := x.Columns[i].Expr.(*sql.ColumnRef); ok {
			name = ref.Parts[len(ref.Parts)-1].Name
		}
		exprs = append(exprs,
			NamedExpr{Name: x.Name.Name, Expr: &Literal{Value: name, Type: vector.String}},
			NamedExpr{Name: x.Value.Name, Expr: c})
		var src Node = in.node
		if !x.IncludeNulls {
			if src, err = NewFilter(src, mustCall("isnotnull", c)); err != nil {
				return nil, err
			}
		}
		if nodes[i], err = NewProject(src, exprs); err != nil {
			return nil, err
		}
	}
	var n Node = nodes[0]
	if len(nodes) > 1 {
		if n, err = unionOf(x.Pos, nodes); err != nil {
			return nil, err
		}
	}
	return &scope{node: n, cols: make([]scopeCol, n.Schema().NumFields())}, nil
}

// pivotCondition is the condition of the rows value v takes: the pivot
// column <=> v, or for several columns, FOR (a, b) IN ((1, 'x'), ...),
// a <=> 1 AND b <=> 'x': Spark compares the tuples as structs by position
// (their field names differ), which for two tuples is that conjunction.
// A value that is not a tuple of as many items is compared whole (and
// refused for its type).
func pivotCondition(column sql.Expr, v *sql.SelectItem) sql.Expr {
	cols, isTuple := column.(*sql.FuncCall)
	vals, valTuple := v.Expr.(*sql.FuncCall)
	if !isTuple || !valTuple || !strings.EqualFold(cols.Name.Name, "struct") || !strings.EqualFold(vals.Name.Name, "struct") || len(cols.Args) != len(vals.Args) {
		return &sql.BinaryExpr{Pos: v.Pos, Op: sql.OpNullSafeEq, L: column, R: v.Expr}
	}
	var cond sql.Expr
	for i, c := range cols.Args {
		val := vals.Args[i]
		if al, ok := val.(*sql.ArgAlias); ok {
			val = al.X
		}
		eq := &sql.BinaryExpr{Pos: v.Pos, Op: sql.OpNullSafeEq, L: c, R: val}
		if cond == nil {
			cond = eq
			continue
		}
		cond = &sql.BinaryExpr{Pos: v.Pos, Op: sql.OpAnd, L: cond, R: eq}
	}
	return cond
}
