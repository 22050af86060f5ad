package plan

import (
	"fmt"
	"strings"

	"github.com/apache/arrow/go/v17/arrow"

	"github.com/arrowstream/arrowstream/sql"
	"github.com/arrowstream/arrowstream/vector"
)

// subqueryKind is what a subquery expression computes.
type subqueryKind uint8

const (
	subScalar subqueryKind = iota // (SELECT one value)
	subExists                     // EXISTS (query)
	subIn                         // x IN (query)
)

// subqueryExpr stands for a subquery used as an expression while the
// analyzer resolves a clause. It never leaves the analyzer: the clause's
// node is rebuilt over joins with the subquery's plan (see
// planSubqueries), and the expression becomes a reference to the joined
// columns. Plan is the analyzed subquery; its outerRefs index Outer, the
// values of the enclosing query it is correlated with (expressions over
// the clause's input, so that rewrites of the clause rewrite them too).
// Lhs is the values of x IN (query), one per column of the subquery (a
// row value (a, b) IN (SELECT x, y ...) compares column by column).
type subqueryExpr struct {
	kind  subqueryKind
	id    int
	pos   sql.Pos
	plan  Node
	lhs   []Expr // subIn only
	outer []Expr
}

func (*subqueryExpr) exprNode() {}

func (s *subqueryExpr) DataType() arrow.DataType {
	if s.kind == subScalar {
		return s.plan.Schema().Field(0).Type
	}
	return vector.Boolean
}

func (s *subqueryExpr) Nullable() bool { return s.kind != subExists }

func (s *subqueryExpr) Children() []Expr {
	if s.lhs == nil {
		return s.outer
	}
	return append(append([]Expr(nil), s.lhs...), s.outer...)
}

func (s *subqueryExpr) withChildren(kids []Expr) *subqueryExpr {
	c := *s
	if s.lhs != nil {
		c.lhs, kids = kids[:len(s.lhs):len(s.lhs)], kids[len(s.lhs):]
	}
	c.outer = kids
	return &c
}

func (s *subqueryExpr) String() string {
	switch s.kind {
	case subExists:
		return "exists(subquery)"
	case subIn:
		if len(s.lhs) == 1 {
			return fmt.Sprintf("(%s IN (listquery()))", s.lhs[0])
		}
		parts := make([]string, len(s.lhs))
		for i, e := range s.lhs {
			parts[i] = fmt.Sprint(e)
		}
		return fmt.Sprintf("((%s) IN (listquery()))", strings.Join(parts, ", "))
	}
	return "scalarsubquery()"
}

// outerRef is a reference, inside a correlated subquery, to value Index of
// the enclosing subqueryExpr's Outer.
type outerRef struct {
	index int
	name  string
	typ   arrow.DataType
	null  bool
}

func (*outerRef) exprNode()                  {}
func (o *outerRef) DataType() arrow.DataType { return o.typ }
func (o *outerRef) Nullable() bool           { return o.null }
func (o *outerRef) Children() []Expr         { return nil }
func (o *outerRef) String() string           { return "outer(" + vector.QuoteIdent(o.name) + ")" }

// outerCtx is an enclosing query's scope while a subquery is analyzed:
// names the subquery cannot resolve are looked up here, and each becomes
// an outerRef to refs.
type outerCtx struct {
	sc *scope
	// lateral: the enclosing scope is the FROM items before a LATERAL
	// subquery (whose t.* may expand over them).
	lateral bool
	refs    []Expr
	keys    map[string]int
	// res is the enclosing clause's resolver (nil for LATERAL): a HAVING
	// takes the subquery's aggregates of only its columns (see
	// outerAggregate).
	res *resolver
}

// lookupOuter resolves a name the subquery's own scope does not have in
// the nearest enclosing query's scope.
func (a *analyzer) lookupOuter(x *sql.ColumnRef) (Expr, bool) {
	if len(a.outer) == 0 {
		return nil, false
	}
	ctx := a.outer[len(a.outer)-1]
	e, err := ctx.sc.lookup(x.Parts, x.Pos)
	if err != nil {
		return nil, false
	}
	return ctx.outerRefTo(e), true
}

// outerRefTo is an outerRef to e, a value of the enclosing query.
func (ctx *outerCtx) outerRefTo(e Expr) *outerRef {
	k := exprKey(e)
	if ctx.keys == nil {
		ctx.keys = map[string]int{}
	}
	i, ok := ctx.keys[k]
	if !ok {
		i = len(ctx.refs)
		ctx.keys[k] = i
		ctx.refs = append(ctx.refs, e)
	}
	return &outerRef{index: i, name: AutoName(e), typ: e.DataType(), null: e.Nullable()}
}

// outerAggregate resolves an aggregate call f of a subquery clause that
// takes no aggregates (its WHERE) as an aggregate of the enclosing
// query, when every column f reads is the enclosing query's and that
// query's clause is a HAVING: as Spark's analyzer does for a subquery in
// HAVING (min(emp.salary) in HAVING EXISTS (SELECT ... WHERE bonus_amt <
// min(emp.salary)) is the group's minimum). ok is false otherwise.
func (r *resolver) outerAggregate(f *sql.FuncCall, name string) (Expr, bool, error) {
	if r.a == nil || len(r.a.outer) == 0 {
		return nil, false, nil
	}
	stack := r.a.outer
	ctx := stack[len(stack)-1]
	if ctx.res == nil || ctx.res.clause != "HAVING" || ctx.res.aggs == nil {
		return nil, false, nil
	}
	// Resolve the call here first, to see what its columns are; the outer
	// values this looks up are not kept.
	n, keys := len(ctx.refs), len(ctx.keys)
	probe := *r
	probe.aggs = &aggCollector{}
	a, err := probe.aggregateExpr(f, name, true)
	if len(ctx.keys) != keys {
		for k, i := range ctx.keys {
			if i >= n {
				delete(ctx.keys, k)
			}
		}
	}
	ctx.refs = ctx.refs[:n]
	if err != nil {
		return nil, false, nil
	}
	outer, local := false, false
	for _, x := range a.Args {
		Walk(x, func(e Expr) bool {
			switch e.(type) {
			case *outerRef:
				outer = true
			case *ColumnRef:
				local = true
			}
			return true
		})
	}
	if !outer || local {
		return nil, false, nil
	}
	r.a.outer = stack[:len(stack)-1]
	e, err := ctx.res.expr(f)
	r.a.outer = stack
	if err != nil {
		return nil, true, err
	}
	return ctx.outerRefTo(e), true, nil
}

// analyzeSubquery analyzes q with the resolver's scope as the enclosing
// scope for correlated names.
func (r *resolver) analyzeSubquery(q *sql.Query, pos sql.Pos, kind subqueryKind) (*subqueryExpr, error) {
	if r.a == nil {
		return nil, errorAt(pos, ErrUnsupported, "Subqueries are only supported in SQL queries.")
	}
	ctx := &outerCtx{sc: r.sc, res: r}
	r.a.outer = append(r.a.outer, ctx)
	r.a.region++
	sc, err := r.a.query(q)
	r.a.region--
	r.a.outer = r.a.outer[:len(r.a.outer)-1]
	if err != nil {
		return nil, err
	}
	n, err := r.a.finish(sc)
	if err != nil {
		return nil, err
	}
	if n.IsStreaming() {
		return nil, errorAt(pos, ErrUnsupported, "Subqueries over streaming sources are not supported: a subquery reads a table, not a stream.")
	}
	r.a.subqueries++
	return &subqueryExpr{kind: kind, id: r.a.subqueries, pos: pos, plan: n, outer: ctx.refs}, nil
}

// subquery resolves a scalar subquery or EXISTS.
func (r *resolver) subquery(x *sql.Subquery) (Expr, error) {
	kind := subScalar
	if x.Exists {
		kind = subExists
	}
	s, err := r.analyzeSubquery(x.Query, x.Pos, kind)
	if err != nil {
		return nil, err
	}
	if kind == subScalar && s.plan.Schema().NumFields() != 1 {
		return nil, errorAt(x.Pos, ErrType, "[INVALID_SUBQUERY_EXPRESSION.SCALAR_SUBQUERY_RETURN_MORE_THAN_ONE_OUTPUT_COLUMN] Invalid subquery: Scalar subquery must return only one column, but got %d.", s.plan.Schema().NumFields())
	}
	return s, nil
}

// inSubquery resolves x [NOT] IN (query). As in Spark, x built as a
// struct (a row value (a, b), struct(a, b) or named_struct) stands for its
// fields, compared with the subquery's columns one by one.
func (r *resolver) inSubquery(x *sql.In) (Expr, error) {
	v, err := r.expr(x.X)
	if err != nil {
		return nil, err
	}
	s, err := r.analyzeSubquery(x.Query, x.Pos, subIn)
	if err != nil {
		return nil, err
	}
	lhs := []Expr{v}
	if c, ok := v.(*Call); ok && c.Func == "named_struct" && len(c.Args)%2 == 0 && len(c.Args) > 0 {
		lhs = make([]Expr, 0, len(c.Args)/2)
		for i := 1; i < len(c.Args); i += 2 {
			lhs = append(lhs, c.Args[i])
		}
	}
	rs := s.plan.Schema()
	if n := rs.NumFields(); n != len(lhs) {
		return nil, errorAt(x.Pos, ErrType, "[DATATYPE_MISMATCH.IN_SUBQUERY_LENGTH_MISMATCH] Cannot resolve %s IN (subquery): the number of columns in the left hand side of an IN subquery does not match the number of columns in the output of subquery (left: %d, right: %d).", sql.Format(x.X), len(lhs), n)
	}
	var bad []string
	for i, l := range lhs {
		rt := rs.Field(i).Type
		if _, err := inEquality(x.Pos, l, &ColumnRef{Name: rs.Field(i).Name, Type: rt, Null: true}); err != nil {
			bad = append(bad, fmt.Sprintf("%s (%s) and %s (%s)", l, vector.TypeName(l.DataType()), vector.QuoteIdent(rs.Field(i).Name), vector.TypeName(rt)))
		}
	}
	if len(bad) > 0 {
		if len(lhs) == 1 {
			return nil, errorAt(x.Pos, ErrType, "[DATATYPE_MISMATCH.IN_SUBQUERY_DATA_TYPE_MISMATCH] Cannot resolve %s IN (subquery) due to data type mismatch: the left side is %s and the subquery returns %s.", sql.Format(x.X), vector.TypeName(v.DataType()), vector.TypeName(rs.Field(0).Type))
		}
		return nil, errorAt(x.Pos, ErrType, "[DATATYPE_MISMATCH.IN_SUBQUERY_DATA_TYPE_MISMATCH] Cannot resolve %s IN (subquery) due to data type mismatch: the data type of one or more elements in the left hand side of an IN subquery is not compatible with the data type of the output of the subquery; mismatched columns: %s.", sql.Format(x.X), strings.Join(bad, ", "))
	}
	s.lhs = lhs
	if x.Not {
		return newCall(x.Pos, "not", s)
	}
	return s, nil
}

// hasSubquery reports whether e contains a subquery expression.
func hasSubquery(e Expr) bool {
	found := false
	Walk(e, func(x Expr) bool {
		if _, ok := x.(*subqueryExpr); ok {
			found = true
		}
		return !found
	})
	return found
}

func anySubquery(es []Expr) bool {
	for _, e := range es {
		if e != nil && hasSubquery(e) {
			return true
		}
	}
	return false
}

// subqueryKey renders a subquery expression for exprKey: two subqueries
// are never the same expression.
func subqueryKey(s *subqueryExpr) string {
	var b strings.Builder
	fmt.Fprintf(&b, "subquery#%d(", s.id)
	for _, c := range s.Children() {
		b.WriteString(exprKey(c))
		b.WriteByte(',')
	}
	b.WriteByte(')')
	return b.String()
}

// inEquality is l = r with Spark's comparison coercion, as IN compares.
func inEquality(pos sql.Pos, l, r Expr) (Expr, error) {
	l, r = coerceComparison(l, r)
	return newCall(pos, "=", l, r)
}
