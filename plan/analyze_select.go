package plan

import (
	"errors"
	"strconv"
	"strings"

	"github.com/apache/arrow/go/v17/arrow"

	"github.com/arrowstream/arrowstream/sql"
	"github.com/arrowstream/arrowstream/vector"
)

// selectSpec is a SELECT block (or a DataFrame select / groupBy) to
// resolve over an input scope.
type selectSpec struct {
	pos      sql.Pos
	items    []*sql.SelectItem
	where    sql.Expr
	groupBy  []sql.Expr
	grouped  bool // GROUP BY given (the DataFrame groupBy may have no keys)
	having   sql.Expr
	orderBy  []*sql.OrderItem
	distinct bool
	b        *budget // the analysis's budget (nil from the DataFrame API)
	windows  []*sql.NamedWindow
	qualify  sql.Expr
	a        *analyzer
	// groupingSets are GROUPING SETS, CUBE or ROLLUP's sets of groupBy's
	// expressions; nil for a plain GROUP BY.
	groupingSets [][]sql.Expr
	// groupByListLen is sql.Select.GroupByListLen: the Hive form's count
	// of grouping columns at the head of groupBy.
	groupByListLen int
}

// outItem is one output column of a select list being built.
type outItem struct {
	src   sql.Expr // nil for a column from a star
	pos   sql.Pos
	expr  Expr
	name  string
	alias bool
	qual  string
}

// selectBlock resolves a select over in: WHERE, time windows, generators,
// grouping and aggregates, HAVING, the select list, DISTINCT and ORDER BY.
func selectBlock(in *scope, s selectSpec) (*scope, error) {
	cur := in
	if s.having != nil && !s.grouped && s.b.legacySwitches().HavingAsWhere {
		var err error
		if s, err = havingAsWhere(s); err != nil {
			return nil, err
		}
	}
	if s.where != nil {
		r := &resolver{b: s.b, a: s.a, sc: cur, clause: "WHERE"}
		c, err := r.expr(s.where)
		if err != nil {
			return nil, err
		}
		if c, err = requireBoolean(s.where.Position(), "WHERE", c); err != nil {
			return nil, err
		}
		f, err := filterWithSubqueries(cur.node, c)
		if err != nil {
			return nil, errorAt(s.where.Position(), ErrType, "%v", err)
		}
		cur = &scope{node: f, cols: cur.cols}
	}
	special := map[sql.Expr]Expr{}
	cur, err := assignWindows(cur, s, special)
	if err != nil {
		return nil, err
	}
	items, err := expandItems(cur, s.items, s.a.lateralOuter(), s.b.legacySwitches().QuotedRegexColumnNames)
	if err != nil {
		return nil, err
	}
	aggregating := s.grouped || s.having != nil || containsAggregate(s)
	cur, items, err = assignGenerator(s.b, cur, items, special, aggregating)
	if err != nil {
		return nil, err
	}
	wins, err := newWinCollector(s.windows)
	if err != nil {
		return nil, err
	}
	if aggregating {
		return aggregateBlock(cur, s, items, special, wins)
	}
	r := &resolver{b: s.b, a: s.a, sc: cur, clause: "SELECT", special: special, wins: wins}
	for i := range items {
		if err := resolveItem(r, &items[i]); err != nil {
			return nil, err
		}
	}
	order, err := resolveOrder(r, s, items, nil)
	if err != nil {
		return nil, err
	}
	qualify, err := resolveQualify(r, s, items)
	if err != nil {
		return nil, err
	}
	if cur, err = applyWindows(cur, s, items, order, qualify); err != nil {
		return nil, err
	}
	return finishSelect(cur, s, items, order)
}

// resolveItem resolves a pending select item and names it.
func resolveItem(r *resolver, it *outItem) error {
	if it.expr != nil {
		return nil
	}
	e, err := r.expr(it.src)
	if err != nil {
		return err
	}
	it.expr = e
	if !it.alias {
		it.name = AutoName(e)
		if c, ok := e.(*ColumnRef); ok && c.Index < len(r.sc.cols) {
			it.qual = r.sc.cols[c.Index].qual
		}
	}
	return nil
}

// expandItems expands * and t.* and records the other items as pending.
// In a LATERAL subquery (outer not nil), t.* may name a FROM item before
// it: its columns become outer references.
//
// With regex (spark.sql.parser.quotedRegexColumnNames) a backquoted
// pattern item expands to the columns it matches (regex_columns.go).
func expandItems(sc *scope, items []*sql.SelectItem, outer *scope, regex bool) ([]outItem, error) {
	out := make([]outItem, 0, len(items))
	for _, it := range items {
		if qual, pattern, ok := regexColumn(it.Expr, regex); ok {
			if it.Alias != nil {
				return nil, errorAt(it.Alias.Pos, ErrUnsupported, "A regex column name `%s` cannot be aliased.", pattern)
			}
			cols, err := expandRegex(sc, qual, pattern, it.Pos)
			if err != nil {
				return nil, err
			}
			for _, c := range cols {
				ref := c.Expr.(*ColumnRef)
				out = append(out, outItem{pos: it.Pos, expr: ref, name: c.Name, qual: sc.cols[ref.Index].qual})
			}
			continue
		}
		if st, ok := it.Expr.(*sql.Star); ok {
			cols, err := sc.expandStar(st.Qualifier, st.Pos)
			if err != nil {
				fields, ok := structStar(sc, st)
				if !ok && outer != nil && len(st.Qualifier) > 0 {
					if oc, oerr := outer.expandStar(st.Qualifier, st.Pos); oerr == nil {
						for _, c := range oc {
							parts := append(append([]sql.Ident(nil), st.Qualifier...), sql.Ident{Pos: st.Pos, Name: c.Name})
							out = append(out, outItem{src: &sql.ColumnRef{Pos: st.Pos, Parts: parts}, pos: st.Pos, name: c.Name, alias: true})
						}
						continue
					}
				}
				if !ok {
					return nil, err
				}
				out = append(out, fields...)
				continue
			}
			for _, c := range cols {
				ref := c.Expr.(*ColumnRef)
				out = append(out, outItem{pos: st.Pos, expr: ref, name: c.Name, qual: sc.cols[ref.Index].qual})
			}
			continue
		}
		o := outItem{src: it.Expr, pos: it.Pos}
		if it.Alias != nil {
			o.name, o.alias = it.Alias.Name, true
		}
		out = append(out, o)
	}
	return out, nil
}

// containsAggregate reports whether the select list, HAVING or ORDER BY
// calls an aggregate function.
func containsAggregate(s selectSpec) bool {
	found := false
	visit := func(n sql.Node) bool {
		if found {
			return false
		}
		switch x := n.(type) {
		case *sql.FuncCall:
			if IsAggregateFunction(x.Name.Name) && x.Over == nil {
				found = true
				return false
			}
		case *sql.Subquery, *sql.Query:
			return false
		}
		return true
	}
	for _, it := range s.items {
		sql.Inspect(it.Expr, visit)
	}
	if s.having != nil {
		sql.Inspect(s.having, visit)
	}
	if s.qualify != nil {
		sql.Inspect(s.qualify, visit)
	}
	for _, o := range s.orderBy {
		sql.Inspect(o.Expr, visit)
	}
	return found
}

// finishSelect projects the items (plus hidden ORDER BY columns), applies
// DISTINCT and the sort, and drops the hidden columns.
func finishSelect(cur *scope, s selectSpec, items []outItem, order []orderKey) (*scope, error) {
	exprs := make([]NamedExpr, 0, len(items)+len(order))
	cols := make([]scopeCol, 0, len(items))
	for _, it := range items {
		exprs = append(exprs, NamedExpr{Name: it.name, Expr: it.expr})
		cols = append(cols, scopeCol{qual: it.qual})
	}
	visible := len(exprs)
	keys := make([]SortKey, len(order))
	for i, o := range order {
		if o.output < 0 {
			if s.distinct {
				return nil, errorAt(o.pos, ErrAggregate, "ORDER BY expression %s is not in the select list, which SELECT DISTINCT requires.", o.expr)
			}
			exprs = append(exprs, NamedExpr{Name: "_order" + strconv.Itoa(i), Expr: o.expr})
			o.output = len(exprs) - 1
		}
		keys[i] = SortKey{Desc: o.desc, Nulls: o.nulls, Expr: &ColumnRef{Index: o.output}}
	}
	var node Node = cur.node
	if err := projectSubqueries(&node, exprs); err != nil {
		return nil, err
	}
	if !isIdentity(node, exprs) {
		p, err := NewProject(node, exprs)
		if err != nil {
			return nil, errorAt(s.pos, ErrType, "%v", err)
		}
		node = p
	}
	if s.distinct {
		d, err := distinctOf(node)
		if err != nil {
			return nil, err
		}
		node = d
	}
	if len(keys) > 0 {
		sch := node.Schema()
		for i := range keys {
			keys[i].Expr = ColumnOf(sch, keys[i].Expr.(*ColumnRef).Index)
		}
		node = &Sort{Input: node, Keys: keys}
		if len(exprs) > visible {
			p, err := NewProject(node, identityExprs(sch, visible))
			if err != nil {
				return nil, err
			}
			node = p
		}
	}
	return &scope{node: node, cols: cols}, nil
}

// isIdentity reports whether exprs select every column of n in order under
// the same names (a Project that would change nothing).
func isIdentity(n Node, exprs []NamedExpr) bool {
	s := n.Schema()
	if len(exprs) != s.NumFields() {
		return false
	}
	for i, e := range exprs {
		c, ok := e.Expr.(*ColumnRef)
		if !ok || c.Index != i || e.Name != s.Field(i).Name {
			return false
		}
	}
	return true
}

// identityExprs selects the first n columns of s.
func identityExprs(s *arrow.Schema, n int) []NamedExpr {
	out := make([]NamedExpr, n)
	for i := range out {
		out[i] = NamedExpr{Name: s.Field(i).Name, Expr: ColumnOf(s, i)}
	}
	return out
}

// distinctOf is SELECT DISTINCT / UNION: an Aggregate grouping by every
// column, as Spark's ReplaceDistinctWithAggregate.
func distinctOf(n Node) (Node, error) {
	return NewAggregate(n, identityExprs(n.Schema(), n.Schema().NumFields()), nil)
}

// orderKey is a resolved ORDER BY item: an output column, or (output < 0)
// an expression over the select's input to add as a hidden column.
type orderKey struct {
	pos    sql.Pos
	output int
	expr   Expr
	desc   bool
	nulls  vector.NullOrder
}

func nullOrder(n sql.NullsOrder) vector.NullOrder {
	switch n {
	case sql.NullsFirst:
		return vector.NullsFirst
	case sql.NullsLast:
		return vector.NullsLast
	}
	return vector.NullsDefault
}

// resolveOrder resolves ORDER BY items: an ordinal or an output name
// refers to the select list; anything else resolves over the input (via
// rewrite for an aggregating select) and reuses an equal select item.
func resolveOrder(r *resolver, s selectSpec, items []outItem, rewrite func(Expr, sql.Pos) (Expr, error)) ([]orderKey, error) {
	out := make([]orderKey, 0, len(s.orderBy))
	for _, o := range s.orderBy {
		k := orderKey{pos: o.Pos, output: -1, desc: o.Desc, nulls: nullOrder(o.Nulls)}
		if i, ok, err := ordinalOf(o.Expr, len(items), "ORDER BY", r.b.legacySwitches().NoOrderByOrdinal); err != nil {
			return nil, err
		} else if ok {
			k.output = i
			out = append(out, k)
			continue
		}
		if i := outputByName(o.Expr, items); i >= 0 {
			k.output = i
			out = append(out, k)
			continue
		}
		e, err := r.expr(o.Expr)
		var unresolved *Error
		if err != nil && errors.As(err, &unresolved) && errors.Is(err, ErrUnresolved) {
			// Spark resolves ORDER BY over the select's output first: an
			// expression may name a select alias (ORDER BY -col1 for c1
			// AS col1), also under GROUPING SETS.
			if x, aerr := resolveWithAliases(r, o.Expr, items); aerr == nil {
				e, err = x, nil
			}
		}
		if err != nil {
			return nil, err
		}
		key := exprKey(e)
		for i, it := range items {
			if exprKey(it.expr) == key {
				k.output = i
				break
			}
		}
		if k.output < 0 && rewrite != nil {
			if e, err = rewrite(e, o.Pos); err != nil {
				return nil, err
			}
		}
		k.expr = e
		out = append(out, k)
	}
	return out, nil
}

// ordinalOf recognises an integer literal position (1-based) of a list
// of n items; with off (spark.sql.groupByOrdinal/orderByOrdinal=false)
// there are none: the literal is a constant.
func ordinalOf(e sql.Expr, n int, clause string, off bool) (int, bool, error) {
	l, ok := e.(*sql.Literal)
	if off || !ok || l.Kind != sql.LitInt {
		return 0, false, nil
	}
	v, err := strconv.Atoi(l.Value)
	if err != nil || v < 1 || v > n {
		return 0, false, errorAt(l.Pos, ErrUnresolved, "%s position %s is not in select list (valid range is [1, %d]).", clause, l.Value, n)
	}
	return v - 1, true, nil
}

// outputByName finds a single-part name among the select list's names.
func outputByName(e sql.Expr, items []outItem) int {
	c, ok := e.(*sql.ColumnRef)
	if !ok || len(c.Parts) != 1 {
		return -1
	}
	found := -1
	for i, it := range items {
		if strings.EqualFold(it.name, c.Parts[0].Name) {
			if found >= 0 {
				return -1
			}
			found = i
		}
	}
	return found
}

// aggregateBlock resolves a grouping select: keys, aggregates, HAVING and
// the select list over the Aggregate's output.
func aggregateBlock(cur *scope, s selectSpec, items []outItem, special map[sql.Expr]Expr, wins *winCollector) (*scope, error) {
	kr := &resolver{b: s.b, a: s.a, sc: cur, clause: "GROUP BY", special: special}
	var keys []NamedExpr
	keyIndex := map[string]int{}
	keyOf := map[sql.Expr]int{}
	if !s.b.legacySwitches().NoGroupByOrdinal { // without ordinals a * is fine
		if err := starWithGroupOrdinal(s.groupBy, items); err != nil {
			return nil, err
		}
	}
	listKeys := 0
	for gi, g := range s.groupBy {
		e, err := groupKey(kr, g, items)
		if err != nil {
			return nil, err
		}
		if gi == s.groupByListLen {
			listKeys = len(keys)
		}
		k := exprKey(e)
		if i, dup := keyIndex[k]; dup {
			keyOf[g] = i
			continue
		}
		if s.groupByListLen > 0 && gi >= s.groupByListLen {
			// Spark's Hive form: a set may only name grouping columns.
			return nil, errorAt(g.Position(), ErrUnresolved, "the grouping set expression %s is not in the GROUP BY list (%d columns) before GROUPING SETS.", sql.Format(g), listKeys)
		}
		keyIndex[k] = len(keys)
		keyOf[g] = len(keys)
		keys = append(keys, NamedExpr{Name: AutoName(e), Expr: e})
	}
	var gs *groupingCtx
	if s.groupingSets != nil {
		gs = &groupingCtx{keys: keys, keyIndex: keyIndex}
		for _, set := range s.groupingSets {
			ids := make([]int, len(set))
			for i, g := range set {
				ids[i] = keyOf[g]
			}
			gs.sets = append(gs.sets, ids)
		}
	}
	coll := &aggCollector{}
	r := &resolver{b: s.b, a: s.a, sc: cur, clause: "SELECT", aggs: coll, special: special, grouping: gs, wins: wins}
	for i := range items {
		if err := resolveItem(r, &items[i]); err != nil {
			return nil, err
		}
	}
	var having Expr
	if s.having != nil {
		hr := &resolver{b: s.b, a: s.a, sc: cur, clause: "HAVING", aggs: coll, special: special, grouping: gs, noOuter: true}
		h, err := hr.expr(s.having)
		var unresolved *Error
		if err != nil && errors.As(err, &unresolved) && errors.Is(err, ErrUnresolved) {
			// HAVING may name a select alias (HAVING c > 1 for count(*) AS c).
			h, err = resolveWithAliases(hr, s.having, items)
		}
		if err != nil && errors.Is(err, ErrUnresolved) && s.a != nil && len(s.a.outer) > 0 {
			// ... and, in a subquery, a column of the enclosing query.
			hr.noOuter = false
			h, err = hr.expr(s.having)
		}
		if err != nil {
			return nil, err
		}
		if having, err = requireBoolean(s.having.Position(), "HAVING", h); err != nil {
			return nil, err
		}
	}
	nk := len(keys)
	if gs != nil {
		nk++ // the grouping id column follows the keys
	}
	rewrite := func(e Expr, pos sql.Pos) (Expr, error) { return rewriteAggregated(e, keyIndex, nk, pos) }
	order, err := resolveOrder(r, s, items, rewrite)
	if err != nil {
		return nil, err
	}
	qualify, err := resolveQualify(r, s, items)
	if err != nil {
		return nil, err
	}
	aggs := make([]AggregateExpr, len(coll.aggs))
	used := map[string]bool{}
	for _, k := range keys {
		used[k.Name] = true
	}
	for i, a := range coll.aggs {
		aggs[i] = *a
		aggs[i].Name = uniqueName(a.Name, used)
	}
	var aggKeys []NamedExpr
	if gs == nil { // grouping sets keep their keys' subqueries unplanned (refused when built)
		aggKeys = keys
	}
	aggIn, aggKeys, err := aggregateSubqueries(cur.node, aggKeys, aggs)
	if err != nil {
		return nil, err
	}
	var agg Node
	if gs != nil {
		agg, err = groupingSetsAggregate(aggIn, gs, aggs)
	} else {
		agg, err = NewAggregate(aggIn, aggKeys, aggs)
	}
	if err != nil {
		return nil, errorAt(s.pos, ErrType, "%v", err)
	}
	aggScope := &scope{node: agg, cols: make([]scopeCol, agg.Schema().NumFields())}
	for i, k := range keys {
		if c, ok := k.Expr.(*ColumnRef); ok && c.Index < len(cur.cols) {
			aggScope.cols[i].qual = cur.cols[c.Index].qual
		}
	}
	fix := func(e Expr, pos sql.Pos) (Expr, error) {
		e, err := rewriteAggregated(e, keyIndex, nk, pos)
		if err != nil {
			return nil, err
		}
		return reindex(e, agg.Schema()), nil
	}
	for i := range items {
		if items[i].expr, err = fix(items[i].expr, items[i].pos); err != nil {
			return nil, err
		}
	}
	for i := range order {
		if order[i].expr != nil {
			order[i].expr = reindex(order[i].expr, agg.Schema())
		}
	}
	var node Node = agg
	if having != nil {
		h, err := fix(having, s.having.Position())
		if err != nil {
			return nil, err
		}
		f, err := filterWithSubqueries(agg, h)
		if err != nil {
			return nil, errorAt(s.having.Position(), ErrType, "%v", err)
		}
		node = f
	}
	if qualify != nil {
		if qualify, err = fix(qualify, s.qualify.Position()); err != nil {
			return nil, err
		}
	}
	wsc, err := applyWindows(&scope{node: node, cols: aggScope.cols}, s, items, order, qualify)
	if err != nil {
		return nil, err
	}
	res, err := finishSelect(wsc, s, items, order)
	if err != nil {
		return nil, err
	}
	return collapseIntoAggregate(res), nil
}

// starWithGroupOrdinal refuses GROUP BY positions over a select list
// with a star, as Spark does: the positions would depend on how the star
// expands.
func starWithGroupOrdinal(groupBy []sql.Expr, items []outItem) error {
	star := false
	for _, it := range items {
		star = star || it.src == nil
	}
	if !star {
		return nil
	}
	for _, g := range groupBy {
		if l, ok := g.(*sql.Literal); ok && l.Kind == sql.LitInt {
			return errorAt(l.Pos, ErrAggregate, "Star (*) is not allowed in select list when GROUP BY ordinal position is used.")
		}
	}
	return nil
}

// groupKey resolves one GROUP BY item: an ordinal or a select alias
// stands for that select item's expression.
func groupKey(r *resolver, g sql.Expr, items []outItem) (Expr, error) {
	if i, ok, err := ordinalOf(g, len(items), "GROUP BY", r.b.legacySwitches().NoGroupByOrdinal); err != nil {
		return nil, err
	} else if ok {
		it := items[i]
		if it.expr != nil {
			return it.expr, nil
		}
		if containsAggregate(selectSpec{items: []*sql.SelectItem{{Expr: it.src}}}) {
			return nil, errorAt(g.Position(), ErrAggregate, "GROUP BY position %d is an aggregate function, and aggregate functions are not allowed in GROUP BY.", i+1)
		}
		return r.expr(it.src)
	}
	e, err := r.expr(g)
	if err != nil && errors.Is(err, ErrUnresolved) {
		if e2, err2 := resolveWithAliases(r, g, items); err2 == nil {
			return e2, nil
		}
	}
	return e, err
}

// resolveWithAliases resolves e where a single-part name that is not a
// column names a select item (by alias).
func resolveWithAliases(r *resolver, e sql.Expr, items []outItem) (Expr, error) {
	special := map[sql.Expr]Expr{}
	for k, v := range r.special {
		special[k] = v
	}
	sql.Inspect(e, func(n sql.Node) bool {
		c, ok := n.(*sql.ColumnRef)
		if !ok || len(c.Parts) != 1 {
			return true
		}
		if _, err := r.sc.lookup(c.Parts, c.Pos); err == nil {
			return true
		}
		for _, it := range items {
			if it.alias && strings.EqualFold(it.name, c.Parts[0].Name) {
				if it.expr != nil {
					special[c] = it.expr
				} else if x, err := r.expr(it.src); err == nil {
					special[c] = x
				}
				break
			}
		}
		return true
	})
	r2 := *r
	r2.special = special
	return r2.expr(e)
}

// rewriteAggregated rewrites an expression over the aggregate's input
// into one over its output: grouping expressions become key columns and
// aggregate placeholders aggregate columns. A column left over is neither
// grouped nor aggregated.
func rewriteAggregated(e Expr, keys map[string]int, nKeys int, pos sql.Pos) (Expr, error) {
	if i, ok := keys[exprKey(e)]; ok {
		return &ColumnRef{Index: i, Name: AutoName(e), Type: e.DataType(), Null: e.Nullable()}, nil
	}
	switch x := e.(type) {
	case *aggPlaceholder:
		return &ColumnRef{Index: nKeys + x.index, Name: x.agg.Name, Type: x.agg.Type, Null: true}, nil
	case *groupingRef:
		return x.value(), nil
	case *ColumnRef:
		return nil, errorAt(pos, ErrAggregate, "expression %s is neither present in the group by, nor is it an aggregate function. Add to group by or wrap in first() (or first_value) if you don't care which value you get.", backquote(x.Name))
	}
	kids := e.Children()
	if len(kids) == 0 {
		return e, nil
	}
	nk := make([]Expr, len(kids))
	for i, k := range kids {
		r, err := rewriteAggregated(k, keys, nKeys, pos)
		if err != nil {
			return nil, err
		}
		nk[i] = r
	}
	return WithChildren(e, nk), nil
}

// reindex refreshes the names, types and nullability of the column
// references of e from schema s (after rewriting onto a new input).
func reindex(e Expr, s *arrow.Schema) Expr {
	out, _ := Transform(e, func(x Expr) (Expr, error) {
		if c, ok := x.(*ColumnRef); ok && c.Index >= 0 && c.Index < s.NumFields() {
			return ColumnOf(s, c.Index), nil
		}
		return x, nil
	})
	return out
}

// uniqueName returns name, or name_1, name_2 ... when taken, and marks it
// used.
func uniqueName(name string, used map[string]bool) string {
	out := name
	for i := 1; used[out]; i++ {
		out = name + "_" + strconv.Itoa(i)
	}
	used[out] = true
	return out
}

// collapseIntoAggregate removes a Project directly above an Aggregate
// that only selects its columns in order, moving the names into the
// Aggregate (SELECT k, count(*) AS c ... GROUP BY k gives one node).
func collapseIntoAggregate(sc *scope) *scope {
	p, ok := sc.node.(*Project)
	if !ok {
		return sc
	}
	a, ok := p.Input.(*Aggregate)
	if !ok || len(p.Exprs) != a.Schema().NumFields() {
		return sc
	}
	for i, e := range p.Exprs {
		if c, ok := e.Expr.(*ColumnRef); !ok || c.Index != i {
			return sc
		}
	}
	keys := append([]NamedExpr(nil), a.GroupBy...)
	aggs := append([]AggregateExpr(nil), a.Aggs...)
	for i, e := range p.Exprs {
		if i < len(keys) {
			keys[i].Name = e.Name
		} else {
			aggs[i-len(keys)].Name = e.Name
		}
	}
	if !uniqueNames(keys, aggs) {
		return sc
	}
	na, err := NewAggregate(a.Input, keys, aggs)
	if err != nil {
		return sc
	}
	return &scope{node: na, cols: sc.cols}
}

// uniqueNames reports whether the aggregates' names are distinct (they
// prefix partial state columns).
func uniqueNames(keys []NamedExpr, aggs []AggregateExpr) bool {
	seen := map[string]bool{}
	for _, k := range keys {
		seen[k.Name] = true
	}
	for _, a := range aggs {
		if seen[a.Name] {
			return false
		}
		seen[a.Name] = true
	}
	return true
}

// havingAsWhere applies spark.sql.legacy.parser.havingWithoutGroupByAsWhere
// to a select with HAVING and no GROUP BY. Spark's parser then filters the
// select's projection by the condition instead of making the query a
// global aggregate; a select list with aggregates is still an aggregate
// (Spark resolves the filter over it as HAVING), so only a select without
// aggregates changes. The condition joins WHERE: the same rows pass as
// above the projection as long as it names input columns, not the
// select's aliases, and no window function sees the rows first; those
// cases are refused rather than answered differently from Spark.
func havingAsWhere(s selectSpec) (selectSpec, error) {
	having := s.having
	s.having = nil
	if containsAggregate(s) {
		s.having = having
		return s, nil
	}
	aliases := map[string]bool{}
	for _, it := range s.items {
		if it.Alias != nil {
			aliases[strings.ToLower(it.Alias.Name)] = true
		}
	}
	var bad error
	visit := func(n sql.Node) bool {
		if bad != nil {
			return false
		}
		switch x := n.(type) {
		case *sql.FuncCall:
			if IsAggregateFunction(x.Name.Name) && x.Over == nil {
				bad = errorAt(x.Pos, ErrAggregate, "Aggregate/Window/Generate expressions are not valid in where clause of the query (HAVING without GROUP BY is WHERE under %s): %s.", ConfHavingAsWhere, sql.Format(x))
			}
		case *sql.ColumnRef:
			if len(x.Parts) == 1 && aliases[strings.ToLower(x.Parts[0].Name)] {
				bad = errorAt(x.Pos, ErrUnsupported, "HAVING naming the select alias %s is not supported under %s=true; name the input column.", backquote(x.Parts[0].Name), ConfHavingAsWhere)
			}
		case *sql.Subquery, *sql.Query:
			return false
		}
		return true
	}
	sql.Inspect(having, visit)
	if bad != nil {
		return s, bad
	}
	if s.qualify != nil || selectHasWindow(s) {
		return s, errorAt(having.Position(), ErrUnsupported, "HAVING without GROUP BY beside window functions is not supported under %s=true (it filters after them).", ConfHavingAsWhere)
	}
	if s.where == nil {
		s.where = having
	} else {
		s.where = &sql.BinaryExpr{Pos: having.Position(), Op: sql.OpAnd, L: s.where, R: having}
	}
	return s, nil
}

// selectHasWindow reports whether the select list or ORDER BY calls a
// window function.
func selectHasWindow(s selectSpec) bool {
	found := false
	visit := func(n sql.Node) bool {
		if f, ok := n.(*sql.FuncCall); ok && f.Over != nil {
			found = true
		}
		switch n.(type) {
		case *sql.Subquery, *sql.Query:
			return false
		}
		return !found
	}
	for _, it := range s.items {
		sql.Inspect(it.Expr, visit)
	}
	for _, o := range s.orderBy {
		sql.Inspect(o.Expr, visit)
	}
	return found
}
