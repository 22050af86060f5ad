package difftest

import (
	"fmt"
	"math/rand/v2"
	"strings"
)

// Item is a select item: an expression, or an aggregate over one.
type Item struct {
	Agg string // "", "count(*)", "count", "count_distinct", "min", "max", "sum", "avg"
	E   *Expr  // nil for count(*)
	Win *Win   // a window function (Agg and E unused)
}

func (it Item) render(d Dialect) string {
	if it.Win != nil {
		return it.Win.render(d)
	}
	switch it.Agg {
	case "":
		return it.E.Render(d)
	case "count(*)":
		return "count(*)"
	case "count_distinct":
		return "count(DISTINCT " + it.E.Render(d) + ")"
	}
	return it.Agg + "(" + it.E.Render(d) + ")"
}

// From is the from clause: one table, two joined tables, or one table
// filtered in a subquery.
type From struct {
	Left, Right *Table
	Join        string // "" (one table), "JOIN", "LEFT JOIN", "RIGHT JOIN", "FULL JOIN", "CROSS JOIN"
	On          *Expr
	SubWhere    *Expr // one table as (SELECT * FROM t WHERE SubWhere) AS s
	// LeftWhere and RightWhere filter a joined table in a subquery,
	// (SELECT * FROM t WHERE LeftWhere) AS t: constraints the optimizer
	// infers filters for the other side from.
	LeftWhere, RightWhere *Expr
}

// sideSQL renders a joined table, filtered in a subquery when where is set.
func sideSQL(t *Table, where *Expr, d Dialect) string {
	if where == nil {
		return t.Name
	}
	return fmt.Sprintf("(SELECT * FROM %s WHERE %s) AS %s", t.Name, where.Render(d), t.Name)
}

func (f From) render(d Dialect) string {
	if f.Join == "" {
		if f.SubWhere != nil {
			return fmt.Sprintf("(SELECT * FROM %s WHERE %s) AS s", f.Left.Name, f.SubWhere.Render(d))
		}
		return f.Left.Name
	}
	l, r := sideSQL(f.Left, f.LeftWhere, d), sideSQL(f.Right, f.RightWhere, d)
	if f.Join == "CROSS JOIN" {
		return l + " CROSS JOIN " + r
	}
	join := f.Join
	if d == DuckDB && (join == "LEFT SEMI JOIN" || join == "LEFT ANTI JOIN") {
		join = strings.TrimPrefix(join, "LEFT ") // DuckDB's SEMI JOIN, ANTI JOIN
	}
	return fmt.Sprintf("%s %s %s ON %s", l, join, r, f.On.Render(d))
}

// Query is a generated SELECT.
type Query struct {
	Distinct bool
	Items    []Item
	From     From
	Where    *Expr
	GroupBy  []*Expr // rendered as the first len(GroupBy) items too
	Grouped  bool    // an aggregate query (GROUP BY, or a global aggregate)
	Having   *Expr
	OrderBy  bool // ORDER BY every output column
	Limit    int  // -1: none
	// Wrap puts the query in SELECT * FROM (...) AS o WHERE OuterWhere
	// (ORDER BY and LIMIT then apply to the outer query): a filter over
	// the output of aggregates, joins and DISTINCT, which the optimizer
	// pushes down.
	Wrap       bool
	OuterWhere *Expr
}

// outputScope is the scope of the output columns c0, c1, ...
func (q *Query) outputScope() scope {
	var cols []Column
	for i, it := range q.Items {
		cols = append(cols, Column{Name: fmt.Sprintf("c%d", i), Kind: kindOf(it.class())})
	}
	return scope{cols: cols}
}

// class is the type family of an item's value.
func (it Item) class() class {
	if it.Win != nil {
		return it.Win.class()
	}
	switch it.Agg {
	case "count(*)", "count", "count_distinct":
		return cInt
	case "avg":
		if it.E.cls == cDec {
			return cDec
		}
		return cFloat
	}
	return it.E.cls
}

// kindOf is a column kind of class c (for scopes of derived columns).
func kindOf(c class) Kind {
	return map[class]Kind{cBool: KBool, cInt: KInt64, cFloat: KFloat64, cDec: KDecimal, cStr: KString, cDate: KDate, cTs: KTimestamp}[c]
}

// Render renders q in dialect d; output columns are c0, c1, ...
func (q *Query) Render(d Dialect) string {
	if q.Wrap {
		inner := q.clone()
		inner.Wrap, inner.OrderBy, inner.Limit = false, false, -1
		outer := &Query{Items: q.Items, OrderBy: q.OrderBy, Limit: q.Limit}
		var b strings.Builder
		b.WriteString("SELECT * FROM (" + inner.Render(d) + ") AS o")
		if q.OuterWhere != nil {
			b.WriteString(" WHERE " + q.OuterWhere.Render(d))
		}
		b.WriteString(outer.tail())
		return b.String()
	}
	var b strings.Builder
	b.WriteString("SELECT ")
	if q.Distinct {
		b.WriteString("DISTINCT ")
	}
	for i, it := range q.Items {
		if i > 0 {
			b.WriteString(", ")
		}
		fmt.Fprintf(&b, "%s AS c%d", it.render(d), i)
	}
	b.WriteString(" FROM " + q.From.render(d))
	if q.Where != nil {
		b.WriteString(" WHERE " + q.Where.Render(d))
	}
	if len(q.GroupBy) > 0 {
		keys := make([]string, len(q.GroupBy))
		for i, k := range q.GroupBy {
			keys[i] = k.Render(d)
		}
		b.WriteString(" GROUP BY " + strings.Join(keys, ", "))
	}
	if q.Having != nil {
		b.WriteString(" HAVING " + q.Having.Render(d))
	}
	b.WriteString(q.tail())
	return b.String()
}

// tail renders ORDER BY and LIMIT.
func (q *Query) tail() string {
	var b strings.Builder
	if q.OrderBy {
		keys := make([]string, len(q.Items))
		for i := range q.Items {
			keys[i] = fmt.Sprintf("c%d NULLS FIRST", i)
		}
		b.WriteString(" ORDER BY " + strings.Join(keys, ", "))
	}
	if q.Limit >= 0 {
		fmt.Fprintf(&b, " LIMIT %d", q.Limit)
	}
	return b.String()
}

func (q *Query) String() string { return q.Render(Spark) }

// clone copies q deeply enough to change its clauses.
func (q *Query) clone() *Query {
	c := *q
	c.Items = append([]Item(nil), q.Items...)
	c.GroupBy = append([]*Expr(nil), q.GroupBy...)
	return &c
}

// gen draws tables and queries.
type gen struct {
	r *rand.Rand
	o Options
}

// query draws a query over tables.
func (g *gen) query(tables []*Table) *Query {
	r := g.r
	q := &Query{Limit: -1}
	q.From.Left = tables[r.IntN(len(tables))]
	sc := scope{cols: q.From.Left.Columns}
	if len(tables) > 1 && r.IntN(2) == 0 {
		q.From.Left, q.From.Right = tables[0], tables[1]
		if r.IntN(2) == 0 {
			q.From.Left, q.From.Right = tables[1], tables[0]
		}
		q.From.Join = []string{"JOIN", "JOIN", "LEFT JOIN", "RIGHT JOIN", "FULL JOIN", "CROSS JOIN", "LEFT SEMI JOIN", "LEFT ANTI JOIN"}[r.IntN(8)]
		sc = scope{cols: append(append([]Column(nil), q.From.Left.Columns...), q.From.Right.Columns...)}
		var key *[2]Column
		if q.From.Join != "CROSS JOIN" {
			q.From.On, key = g.joinCond(q.From.Left, q.From.Right)
		}
		semi := strings.HasSuffix(q.From.Join, "SEMI JOIN") || strings.HasSuffix(q.From.Join, "ANTI JOIN")
		if semi {
			sc = scope{cols: q.From.Left.Columns} // only the left side is visible above
		}
		if key != nil && r.IntN(2) == 0 {
			// A one-column predicate on a join key, somewhere the
			// optimizer reads constraints from (filters it infers for the
			// other side through the key).
			g.keyConstraint(q, key, semi)
		}
	} else if r.IntN(5) == 0 {
		q.From.SubWhere = exprGen{g, sc}.expr(cBool, 2)
	}
	x := exprGen{g, sc}
	if r.IntN(3) != 0 {
		w := x.expr(cBool, 3)
		if q.Where != nil {
			w = call("(%s AND %s)", cBool, q.Where, w)
		}
		q.Where = w
	}
	if r.IntN(2) == 0 {
		g.aggregate(q, x)
	} else {
		n := 1 + r.IntN(4)
		for i := 0; i < n; i++ {
			q.Items = append(q.Items, Item{E: x.any(3)})
		}
		w := r.IntN(6) // a window item in a third of the queries, two in half of those
		if g.o.DuckDB {
			// DuckDB 1.x answered a dense_rank() with the values of
			// another window's rank() in the same query (seed 20 of
			// the 20-case test): one window item per query there.
			w = min(w, 1)
		}
		for ; w > 0 && w <= 2; w-- {
			q.Items = append(q.Items, Item{Win: g.window(sc)})
		}
		q.Distinct = r.IntN(4) == 0
	}
	if r.IntN(4) == 0 {
		q.OrderBy = true
		if r.IntN(2) == 0 {
			q.Limit = r.IntN(6)
		}
	}
	if r.IntN(3) == 0 {
		q.Wrap = true
		if r.IntN(4) != 0 {
			q.OuterWhere = exprGen{g, q.outputScope()}.expr(cBool, 2)
		}
	}
	return q
}

// keyConstraint puts a one-column predicate on one of the key columns
// into the ON condition, the WHERE clause (where the key is visible) or
// a subquery filtering that key's table.
func (g *gen) keyConstraint(q *Query, key *[2]Column, semi bool) {
	r := g.r
	side := r.IntN(2)
	col := key[side]
	p := g.keyPred(col)
	switch where := r.IntN(3); {
	case where == 0:
		q.From.On = call("(%s AND %s)", cBool, q.From.On, p)
	case where == 1 && (side == 0 || !semi):
		q.Where = p
	case side == 0:
		q.From.LeftWhere = p
	default:
		q.From.RightWhere = p
	}
}

// keyPred draws a predicate over column c alone of the kinds InferFilters
// transfers (comparisons, IN, BETWEEN, IS [NOT] NULL, % by a literal) and
// some it must not (arithmetic that may overflow).
func (g *gen) keyPred(c Column) *Expr {
	r := g.r
	x := exprGen{g, scope{cols: []Column{c}}}
	col := leaf(c.Name, "", c.class())
	switch r.IntN(7) {
	case 0:
		return call("(%s IS NOT NULL)", cBool, col)
	case 1:
		return call("(%s IS NULL)", cBool, col)
	case 2:
		return call("(%s IN (%s, %s))", cBool, col, x.literal(c.class()), x.literal(c.class()))
	case 3:
		return call("(%s BETWEEN %s AND %s)", cBool, col, x.literal(c.class()), x.literal(c.class()))
	case 4:
		if c.class() == cInt {
			m := r.IntN(3) + 2
			return leaf(fmt.Sprintf("(%s %% %d = %d)", c.Name, m, r.IntN(m)), "", cBool)
		}
	case 5:
		if c.class() == cInt {
			return call("((%s + 1) > %s)", cBool, col, x.literal(cInt))
		}
	}
	op := []string{"<", "<=", ">", ">=", "=", "<>"}[r.IntN(6)]
	return call("(%s "+op+" %s)", cBool, col, x.literal(c.class()))
}

// joinCond draws an ON condition: usually an equality of two columns of
// the same class (so that rows meet), sometimes with a conjunct more; it
// returns the equality's columns when there is one.
func (g *gen) joinCond(l, rt *Table) (*Expr, *[2]Column) {
	r := g.r
	var pairs [][2]Column
	for _, a := range l.Columns {
		for _, b := range rt.Columns {
			ca, cb := a.class(), b.class()
			if ca == cb || ca.numeric() && cb.numeric() {
				pairs = append(pairs, [2]Column{a, b})
			}
		}
	}
	sc := scope{cols: append(append([]Column(nil), l.Columns...), rt.Columns...)}
	if len(pairs) == 0 || r.IntN(8) == 0 {
		return exprGen{g, sc}.expr(cBool, 2), nil
	}
	p := pairs[r.IntN(len(pairs))]
	if r.IntN(2) == 0 {
		// Prefer columns of one kind: those are the keys filters are
		// inferred through.
		var same [][2]Column
		for _, q := range pairs {
			if q[0].Kind == q[1].Kind {
				same = append(same, q)
			}
		}
		if len(same) > 0 {
			p = same[r.IntN(len(same))]
		}
	}
	eq := leaf(p[0].Name+" = "+p[1].Name, "", cBool)
	if r.IntN(5) == 0 {
		eq = leaf(p[0].Name+" <=> "+p[1].Name, p[0].Name+" IS NOT DISTINCT FROM "+p[1].Name, cBool)
	}
	if r.IntN(4) == 0 {
		return call("(%s AND %s)", cBool, eq, exprGen{g, sc}.expr(cBool, 1)), &p
	}
	return eq, &p
}

// aggregate turns q into an aggregate query: group keys (possibly none)
// and aggregates, maybe a HAVING.
func (g *gen) aggregate(q *Query, x exprGen) {
	r := g.r
	q.Grouped = true
	nk := r.IntN(3)
	for i := 0; i < nk; i++ {
		k := x.any(1)
		if k.leaf && !isColumn(k, x.scope) {
			// a bare integer literal in GROUP BY is a position (Spark's
			// rule); group by a column instead
			col := x.scope.cols[r.IntN(len(x.scope.cols))]
			k = leaf(col.Name, "", col.class())
		}
		q.GroupBy = append(q.GroupBy, k)
		q.Items = append(q.Items, Item{E: k})
	}
	na := 1 + r.IntN(3)
	for i := 0; i < na; i++ {
		q.Items = append(q.Items, g.aggItem(x))
	}
	if r.IntN(3) == 0 {
		q.Having = g.havingPred(q, x, 2)
	}
}

// aggItem draws an aggregate call.
func (g *gen) aggItem(x exprGen) Item {
	r := g.r
	switch r.IntN(8) {
	case 0:
		return Item{Agg: "count(*)"}
	case 1:
		return Item{Agg: "count", E: x.any(2)}
	case 2:
		if g.o.NoDistinctAgg {
			return Item{Agg: "count", E: x.any(2)}
		}
		return Item{Agg: "count_distinct", E: x.any(1)}
	case 3, 4:
		c := []class{cInt, cFloat, cDec, cStr, cDate, cTs, cBool}[r.IntN(7)]
		if g.o.DuckDB && c == cFloat {
			c = cInt
		}
		return Item{Agg: []string{"min", "max"}[r.IntN(2)], E: x.expr(c, 2)}
	case 5, 6:
		c := []class{cInt, cInt, cDec}[r.IntN(3)]
		return Item{Agg: "sum", E: x.expr(c, 2)}
	}
	c := []class{cInt, cDec}[r.IntN(2)]
	if !g.o.DuckDB && r.IntN(2) == 0 {
		c = cFloat
	}
	return Item{Agg: "avg", E: x.expr(c, 2)}
}

// havingPred draws a predicate over the group keys and aggregates.
func (g *gen) havingPred(q *Query, x exprGen, depth int) *Expr {
	r := g.r
	if depth > 0 {
		switch r.IntN(6) {
		case 0:
			return call("(%s AND %s)", cBool, g.havingPred(q, x, depth-1), g.havingPred(q, x, depth-1))
		case 1:
			return call("(%s OR %s)", cBool, g.havingPred(q, x, depth-1), g.havingPred(q, x, depth-1))
		case 2:
			return call("(NOT %s)", cBool, g.havingPred(q, x, depth-1))
		}
	}
	if len(q.GroupBy) > 0 && r.IntN(3) == 0 {
		k := q.GroupBy[r.IntN(len(q.GroupBy))]
		if r.IntN(2) == 0 {
			return call("(%s IS NULL)", cBool, k)
		}
		return call("(%s = %s)", cBool, k, x.literal(k.cls))
	}
	switch r.IntN(3) {
	case 0:
		return leaf(fmt.Sprintf("(count(*) > %d)", r.IntN(3)), "", cBool)
	case 1:
		c := []class{cInt, cStr, cDec}[r.IntN(3)]
		e := x.expr(c, 1)
		op := []string{"<", ">", "=", "<>"}[r.IntN(4)]
		f := []string{"min", "max"}[r.IntN(2)]
		return call("("+f+"(%s) "+op+" %s)", cBool, e, x.literal(c))
	}
	e := x.expr(cInt, 1)
	return call("(sum(%s) > %s)", cBool, e, x.literal(cInt))
}

func isColumn(e *Expr, s scope) bool {
	for _, c := range s.cols {
		if e.spark == c.Name {
			return true
		}
	}
	return false
}
