package plan

import (
	"fmt"

	"github.com/apache/arrow/go/v17/arrow"
)

// InferFilters adds to each join the filters its condition implies on one
// input, as Spark's InferFiltersFromConstraints does, so that rows that
// can never match are dropped before the join (and before the state of a
// streaming join or of an aggregation below it):
//
//   - through an equality of two columns of the same type, l = r or
//     l <=> r: a one-column constraint on l (a filter below the left
//     input, a left-only conjunct of the condition) holds for r on every
//     matching row, and the other way round: a.k = b.k AND b.k % 2 = 0
//     filters a by a.k % 2 = 0;
//   - the columns of an equality l = r (not <=>) are not NULL on matching
//     rows: IS NOT NULL on each nullable key.
//
// A filter goes only onto an input whose unmatched rows the join drops:
// both for inner and left semi joins, the right for left outer and left
// anti joins, the left for right outer joins, none for full outer joins.
// A filter on the preserved side of an outer join would remove its
// unmatched rows from the answer. Only constraints built from
// comparisons, IN lists, IS [NOT] NULL, NOT/AND/OR, LIKE, BETWEEN and
// % by a non-zero literal are transferred: they cannot raise an error on
// a row of the other side (an ANSI overflow or a failing cast could) and
// are deterministic (rand() and current_timestamp() are not). Floating
// point columns are left alone (0.0 = -0.0 although a predicate may tell
// them apart).
//
// The inferred filters are added to the join's condition as one-side
// conjuncts, which PushDownPredicates then moves into the inputs.
func InferFilters(n Node) Node {
	memo := map[Node][]Expr{}
	return inferFilters(n, memo)
}

func inferFilters(n Node, memo map[Node][]Expr) Node {
	n = mapChildren(n, func(k Node) Node { return inferFilters(k, memo) })
	j, ok := n.(*Join)
	if !ok || j.Cond == nil {
		return n
	}
	onLeft, onRight := false, false
	switch j.Type {
	case InnerJoin, LeftSemiJoin:
		onLeft, onRight = true, true
	case LeftOuterJoin, LeftAntiJoin:
		onRight = true
	case RightOuterJoin:
		onLeft = true
	}
	if !onLeft && !onRight {
		return n
	}
	nl := j.Left.Schema().NumFields()
	conds := splitConjuncts(j.Cond)
	// The equalities between one column of each side.
	type pair struct {
		l, r     *ColumnRef
		nullSafe bool
	}
	var pairs []pair
	for _, c := range conds {
		call, ok := c.(*Call)
		if !ok || (call.Func != "=" && call.Func != "<=>") || len(call.Args) != 2 {
			continue
		}
		a, aok := call.Args[0].(*ColumnRef)
		b, bok := call.Args[1].(*ColumnRef)
		if !aok || !bok || (a.Index < nl) == (b.Index < nl) || !arrow.TypeEqual(a.Type, b.Type) || !transferableType(a.Type) {
			continue
		}
		if a.Index >= nl {
			a, b = b, a
		}
		pairs = append(pairs, pair{l: a, r: b, nullSafe: call.Func == "<=>"})
	}
	if len(pairs) == 0 {
		return n
	}
	// Constraints known on each input, over the join's columns.
	var known []Expr
	known = append(known, constraintsOf(j.Left, memo)...)
	for _, e := range constraintsOf(j.Right, memo) {
		known = append(known, shiftColumns(e, nl))
	}
	known = append(known, conds...)
	have := make(map[string]bool, len(known))
	for _, e := range known {
		have[inferKey(e)] = true
	}
	var added []Expr
	add := func(e Expr) {
		if s := inferKey(e); !have[s] && len(added) < maxInferred {
			have[s] = true
			added = append(added, e)
		}
	}
	for _, p := range pairs {
		if !p.nullSafe {
			if onLeft && p.l.Null {
				add(mustCall("isnotnull", p.l))
			}
			if onRight && p.r.Null {
				add(mustCall("isnotnull", p.r))
			}
		}
	}
	for _, e := range known {
		cols := Columns(e)
		if len(cols) != 1 || !transferable(e) {
			continue
		}
		for _, p := range pairs {
			switch {
			case cols[0] == p.l.Index && onRight:
				add(replaceColumn(e, p.l.Index, p.r))
			case cols[0] == p.r.Index && onLeft:
				add(replaceColumn(e, p.r.Index, p.l))
			}
		}
	}
	if len(added) == 0 {
		return n
	}
	c := *j
	c.Cond = conjoin(append(conds, added...))
	return &c
}

// inferKey identifies an expression by its text and the ordinals of its
// columns (the text names columns, and both inputs may have an a).
func inferKey(e Expr) string {
	return fmt.Sprint(e.String(), Columns(e))
}

// maxInferred bounds the filters inferred for one join.
const maxInferred = 64

// transferableType: the types whose equal values no transferable
// predicate tells apart (not floating point: 0.0 = -0.0).
func transferableType(dt arrow.DataType) bool {
	switch dt.ID() {
	case arrow.FLOAT16, arrow.FLOAT32, arrow.FLOAT64, arrow.STRUCT, arrow.LIST, arrow.MAP, arrow.DICTIONARY:
		return false
	}
	return true
}

// transferable reports whether e is built only of operations that are
// deterministic and cannot fail on any value (see InferFilters).
func transferable(e Expr) bool {
	ok := true
	Walk(e, func(x Expr) bool {
		if !ok {
			return false
		}
		switch v := x.(type) {
		case *ColumnRef, *Literal:
		case *Cast:
			_, lit := v.X.(*Literal)
			ok = lit
		case *Call:
			switch v.Func {
			case "=", "<>", "<", "<=", ">", ">=", "<=>", "and", "or", "not", "isnull", "isnotnull", "in", "between", "like":
			case "%":
				l, lit := v.Args[1].(*Literal)
				ok = lit && l.Value != nil && !isZero(l.Value)
			default:
				ok = false
			}
		default:
			ok = false
		}
		return ok
	})
	return ok
}

func isZero(v any) bool {
	switch x := v.(type) {
	case int8:
		return x == 0
	case int16:
		return x == 0
	case int32:
		return x == 0
	case int64:
		return x == 0
	case uint8:
		return x == 0
	case uint16:
		return x == 0
	case uint32:
		return x == 0
	case uint64:
		return x == 0
	}
	return true // not an integer literal: not known to be safe
}

// replaceColumn returns e with references to column from replaced by to.
func replaceColumn(e Expr, from int, to *ColumnRef) Expr {
	out, _ := Transform(e, func(x Expr) (Expr, error) {
		if c, ok := x.(*ColumnRef); ok && c.Index == from {
			return to, nil
		}
		return x, nil
	})
	return out
}

// constraintsOf lists one-column predicates that hold (are TRUE) on every
// row n outputs, over n's columns: the filters below it, as far as the
// nodes between pass the column through unchanged.
func constraintsOf(n Node, memo map[Node][]Expr) []Expr {
	if cs, ok := memo[n]; ok {
		return cs
	}
	var out []Expr
	keep := func(es []Expr) {
		for _, e := range es {
			if len(out) < maxConstraints && len(Columns(e)) == 1 && transferable(e) {
				out = append(out, e)
			}
		}
	}
	switch x := n.(type) {
	case *Filter:
		keep(splitConjuncts(x.Cond))
		keep(constraintsOf(x.Input, memo))
	case *SubqueryAlias, *Sort, *Limit, *EventTimeWatermark, *Deduplicate, *WindowAssign, *SessionWindow:
		keep(constraintsOf(n.Children()[0], memo))
	case *Project:
		keep(mapConstraints(constraintsOf(x.Input, memo), x.Exprs))
	case *Aggregate:
		keep(mapConstraints(constraintsOf(x.Input, memo), x.GroupBy))
	case *Scan:
		m := make([]int, x.tableSchema().NumFields())
		for i := range m {
			m[i] = i
			if x.Columns != nil {
				m[i] = -1
			}
		}
		for i, c := range x.Columns {
			m[c] = i
		}
		for _, f := range x.Filters {
			if e, err := remapColumns(f, m); err == nil {
				keep(splitConjuncts(e))
			}
		}
	case *Join:
		nl := x.Left.Schema().NumFields()
		switch x.Type {
		case InnerJoin:
			keep(constraintsOf(x.Left, memo))
			for _, e := range constraintsOf(x.Right, memo) {
				keep([]Expr{shiftColumns(e, nl)})
			}
			keep(splitConjuncts(x.Cond))
		case LeftOuterJoin, LeftSemiJoin, LeftAntiJoin:
			keep(constraintsOf(x.Left, memo))
		case RightOuterJoin:
			for _, e := range constraintsOf(x.Right, memo) {
				keep([]Expr{shiftColumns(e, nl)})
			}
		}
	}
	memo[n] = out
	return out
}

// maxConstraints bounds the constraints kept per node.
const maxConstraints = 64

// mapConstraints rewrites constraints over a node's input to its output
// columns exprs, keeping those whose column the output passes on as a
// bare reference.
func mapConstraints(cs []Expr, exprs []NamedExpr) []Expr {
	var out []Expr
	for _, e := range cs {
		col := Columns(e)[0]
		for i, ne := range exprs {
			if c, ok := ne.Expr.(*ColumnRef); ok && c.Index == col {
				out = append(out, replaceColumn(e, col, &ColumnRef{Index: i, Name: ne.Name, Type: c.Type, Null: c.Null}))
				break
			}
		}
	}
	return out
}
