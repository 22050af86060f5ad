package plan

import (
	"context"
	"fmt"

	"github.com/apache/arrow/go/v17/arrow"

	"github.com/arrowstream/arrowstream/vector"
)

// Optimize rewrites a logical plan into an equivalent cheaper one:
// SubqueryAlias removal, constant folding, filter merging, predicate
// push-down (through projections, joins, unions, windows, sorts and
// aggregates, into batch scans), filters inferred through join keys
// (InferFilters) and projection pruning, then removal of no-op
// projections. The output schema is unchanged.
//
// Streaming safety. A rewrite must not change what a streaming query
// computes, so:
//   - only deterministic predicates that do not read the event-time column
//     pass an EventTimeWatermark (Spark's rule): the node's max event time
//     sets the watermark, so rows such a predicate rejects do not move it,
//     as in Spark, while a predicate on the event time stays above;
//   - a predicate that calls current_timestamp() is never pushed below a
//     stateful streaming operator (Aggregate, Deduplicate, stream-stream
//     Join, FlatMapGroupsWithState), whose state outlives the epoch whose
//     batch time the predicate reads;
//   - through a streaming Aggregate only predicates over grouping keys, and
//     through a streaming Deduplicate only predicates over its keys, pass
//     (every row of a group passes or fails together, so state and output
//     are those of the filtered groups);
//   - nothing passes a Limit or a FlatMapGroupsWithState;
//   - streaming scans are never pruned or given filters (the engine
//     supplies their data); the projections above them are;
//   - pruning keeps the event-time columns of a streaming Deduplicate's
//     and a stream-stream Join's inputs (they drop late rows and evict
//     state by them), and everything below a FlatMapGroupsWithState;
//     what else a join's input keeps is what its state holds, so a
//     checkpoint's layout decides (OptimizeOptions).
//
// Each rule is also exported on its own for tests and for the streaming
// planner: FoldConstants, MergeFilters, PushDownPredicates,
// InferFilters, PruneColumns.
func Optimize(n Node) (Node, error) {
	return OptimizeContext(context.Background(), n)
}

// OptimizeContext is Optimize checking ctx between rules (each rule is
// linear in the plan's size).
func OptimizeContext(ctx context.Context, n Node) (Node, error) {
	return OptimizeWith(ctx, n, OptimizeOptions{})
}

// OptimizeOptions are the choices a streaming query's checkpoint fixes
// (the zero value is what a new query gets).
type OptimizeOptions struct {
	// KeepStreamJoinInputColumns leaves on a stream-stream join's inputs
	// the columns that only filters below the join read: the layout of
	// join state that checkpoints written before pruning reached join
	// inputs recorded, which a restart must keep.
	KeepStreamJoinInputColumns bool
}

// OptimizeWith is OptimizeContext with options.
func OptimizeWith(ctx context.Context, n Node, o OptimizeOptions) (Node, error) {
	var err error
	stopped := func() bool {
		if e := ctx.Err(); e != nil {
			err = fmt.Errorf("plan: optimization stopped: %w", e)
			return true
		}
		return false
	}
	if stopped() {
		return nil, err
	}
	n = RemoveAliases(n)
	if n, err = FoldConstants(n); err != nil {
		return nil, err
	}
	// Filters go down, so that each join sees the constraints of its
	// inputs; the filters inferred from them go down in the next round
	// (where a join above may infer more from them).
	for i := 0; i < 3; i++ {
		if stopped() {
			return nil, err
		}
		n = MergeFilters(n)
		n = PushDownPredicates(n)
		n = InferFilters(n)
	}
	n = MergeFilters(n)
	n = PushDownPredicates(n)
	n = MergeFilters(n)
	if stopped() {
		return nil, err
	}
	if n, err = (pruner{keepStreamJoinInputs: o.KeepStreamJoinInputColumns}).columns(n); err != nil {
		return nil, err
	}
	n = CollapseProjects(n)
	if stopped() {
		return nil, err
	}
	return n, nil
}

// mapChildren rebuilds n with each child replaced by f(child).
func mapChildren(n Node, f func(Node) Node) Node {
	kids := n.Children()
	if len(kids) == 0 {
		return n
	}
	nk := make([]Node, len(kids))
	changed := false
	for i, k := range kids {
		nk[i] = f(k)
		changed = changed || nk[i] != k
	}
	if !changed {
		return n
	}
	return withChildren(n, nk)
}

// withChildren copies n with new children of the same schemas.
func withChildren(n Node, kids []Node) Node {
	switch x := n.(type) {
	case *SubqueryAlias:
		c := *x
		c.Input = kids[0]
		return &c
	case *Project:
		c := *x
		c.Input = kids[0]
		return &c
	case *Filter:
		c := *x
		c.Input = kids[0]
		return &c
	case *Aggregate:
		c := *x
		c.Input = kids[0]
		return &c
	case *Join:
		c := *x
		c.Left, c.Right = kids[0], kids[1]
		return &c
	case *Union:
		c := *x
		c.Inputs = kids
		return &c
	case *Limit:
		c := *x
		c.Input = kids[0]
		return &c
	case *Sort:
		c := *x
		c.Input = kids[0]
		return &c
	case *Deduplicate:
		c := *x
		c.Input = kids[0]
		return &c
	case *EventTimeWatermark:
		c := *x
		c.Input = kids[0]
		return &c
	case *WindowAssign:
		c := *x
		c.Input = kids[0]
		return &c
	case *SessionWindow:
		c := *x
		c.Input = kids[0]
		return &c
	case *Explode:
		c := *x
		c.Input = kids[0]
		return &c
	case *FlatMapGroupsWithState:
		c := *x
		c.Input = kids[0]
		return &c
	case *Window:
		c := *x
		c.Input = kids[0]
		return &c
	}
	return n
}

// RemoveAliases drops SubqueryAlias nodes (they only matter to name
// resolution).
func RemoveAliases(n Node) Node {
	n = mapChildren(n, RemoveAliases)
	if a, ok := n.(*SubqueryAlias); ok {
		return a.Input
	}
	return n
}

// mapExprs rewrites every expression of n with f.
func mapExprs(n Node, f func(Expr) (Expr, error)) (Node, error) {
	var err error
	one := func(e Expr) Expr {
		if e == nil || err != nil {
			return e
		}
		var r Expr
		r, err = f(e)
		return r
	}
	switch x := n.(type) {
	case *Project:
		c := *x
		c.Exprs = make([]NamedExpr, len(x.Exprs))
		for i, e := range x.Exprs {
			c.Exprs[i] = NamedExpr{Name: e.Name, Expr: one(e.Expr)}
		}
		return &c, err
	case *Filter:
		c := *x
		c.Cond = one(x.Cond)
		return &c, err
	case *Join:
		c := *x
		c.Cond = one(x.Cond)
		return &c, err
	case *Aggregate:
		c := *x
		c.GroupBy = make([]NamedExpr, len(x.GroupBy))
		for i, e := range x.GroupBy {
			c.GroupBy[i] = NamedExpr{Name: e.Name, Expr: one(e.Expr)}
		}
		c.Aggs = make([]AggregateExpr, len(x.Aggs))
		for i, a := range x.Aggs {
			c.Aggs[i] = a
			c.Aggs[i].Args = make([]Expr, len(a.Args))
			for j, arg := range a.Args {
				c.Aggs[i].Args[j] = one(arg)
			}
		}
		return &c, err
	case *Sort:
		c := *x
		c.Keys = make([]SortKey, len(x.Keys))
		for i, k := range x.Keys {
			c.Keys[i] = SortKey{Expr: one(k.Expr), Desc: k.Desc, Nulls: k.Nulls}
		}
		return &c, err
	case *WindowAssign:
		c := *x
		c.Time = one(x.Time)
		return &c, err
	case *SessionWindow:
		c := *x
		c.Time = one(x.Time)
		if x.GapExpr != nil {
			c.GapExpr = one(x.GapExpr)
		}
		return &c, err
	case *Explode:
		c := *x
		c.Expr = one(x.Expr)
		return &c, err
	case *Window:
		w := mapWindowExprs(x, one)
		return w, err
	case *Scan:
		if len(x.Filters) == 0 {
			return n, nil
		}
		c := *x
		c.Filters = make([]Expr, len(x.Filters))
		for i, e := range x.Filters {
			c.Filters[i] = one(e)
		}
		return &c, err
	}
	return n, nil
}

// FoldConstants evaluates constant sub-expressions (no columns, no
// current_timestamp()) with vector's kernels, and simplifies boolean
// connectives with a constant side. A constant whose evaluation fails
// (division by zero) is left for run time, where the error belongs. A
// Filter whose condition folds to TRUE is removed.
func FoldConstants(n Node) (Node, error) {
	var err error
	n = mapChildren(n, func(k Node) Node {
		if err != nil {
			return k
		}
		var r Node
		r, err = FoldConstants(k)
		return r
	})
	if err != nil {
		return nil, err
	}
	n, err = mapExprs(n, foldExpr)
	if err != nil {
		return nil, err
	}
	if f, ok := n.(*Filter); ok {
		if l, ok := f.Cond.(*Literal); ok && l.Value == true {
			return f.Input, nil
		}
	}
	return n, nil
}

// foldExpr folds one expression tree bottom-up. A call the analyzer
// already folded (newCall) is replaced by its value without a descent.
func foldExpr(e Expr) (Expr, error) {
	if c, ok := e.(*Call); ok && c.typing.folded != nil && arrow.TypeEqual(c.typing.folded.Type, c.Type) {
		if f := dtFieldsOf(c); f != 0 && c.typing.folded.dtFields != f {
			// A day-time interval keeps its type's fields (a copy: the
			// folded literal is shared).
			l := *c.typing.folded
			l.dtFields = f
			return &l, nil
		}
		return c.typing.folded, nil
	}
	kids := e.Children()
	var nk []Expr
	for i, k := range kids {
		r, err := foldExpr(k)
		if err != nil {
			return nil, err
		}
		if r != k && nk == nil {
			nk = append(make([]Expr, 0, len(kids)), kids[:i]...)
		}
		if nk != nil {
			nk = append(nk, r)
		}
	}
	if nk != nil {
		e = WithChildren(e, nk)
	}
	return foldNode(e)
}

// foldNode folds one node whose children are folded.
func foldNode(x Expr) (Expr, error) {
	switch y := x.(type) {
	case *Literal, *ColumnRef, *CurrentTimestamp:
		return x, nil
	case *Call:
		if s := simplifyLogic(y); s != nil {
			return s, nil
		}
	}
	if !isConstant(x) {
		return x, nil
	}
	l, err := foldConstant(x)
	if err != nil {
		return x, nil
	}
	if !arrow.TypeEqual(l.Type, x.DataType()) && !isNullType(x.DataType()) {
		return x, nil
	}
	return l, nil
}

// simplifyLogic applies x AND TRUE = x, x AND FALSE = FALSE, x OR TRUE =
// TRUE, x OR FALSE = x (valid in three-valued logic), or returns nil.
func simplifyLogic(c *Call) Expr {
	if c.Func != "and" && c.Func != "or" || len(c.Args) != 2 {
		return nil
	}
	for i, a := range c.Args {
		l, ok := a.(*Literal)
		if !ok {
			continue
		}
		b, isBool := l.Value.(bool)
		if !isBool {
			continue
		}
		other := c.Args[1-i]
		switch {
		case c.Func == "and" && b, c.Func == "or" && !b:
			return other
		default:
			return &Literal{Value: b, Type: vector.Boolean}
		}
	}
	return nil
}

// MergeFilters merges adjacent filters: Filter(Filter(x, a), b) becomes
// Filter(x, a AND b).
func MergeFilters(n Node) Node {
	n = mapChildren(n, MergeFilters)
	if f, ok := n.(*Filter); ok {
		if g, ok := f.Input.(*Filter); ok {
			return &Filter{Input: g.Input, Cond: mustCall("and", g.Cond, f.Cond)}
		}
	}
	return n
}

// CollapseProjects removes projections that select their input unchanged
// and merges a projection into the one below it when that duplicates no
// computation.
func CollapseProjects(n Node) Node {
	n = mapChildren(n, CollapseProjects)
	p, ok := n.(*Project)
	if !ok {
		return n
	}
	if isIdentity(p.Input, p.Exprs) && schemaMetaEqual(p.Schema(), p.Input.Schema()) {
		return p.Input
	}
	inner, ok := p.Input.(*Project)
	if !ok {
		return n
	}
	uses := make([]int, len(inner.Exprs))
	for _, e := range p.Exprs {
		Walk(e.Expr, func(x Expr) bool {
			if c, ok := x.(*ColumnRef); ok && c.Index < len(uses) {
				uses[c.Index]++
			}
			return true
		})
	}
	for i, e := range inner.Exprs {
		switch e.Expr.(type) {
		case *ColumnRef, *Literal:
		default:
			if uses[i] > 1 {
				return n
			}
		}
	}
	for _, e := range p.Exprs {
		if literalIntoCall(e.Expr, inner.Exprs) {
			return n
		}
	}
	exprs := make([]NamedExpr, len(p.Exprs))
	for i, e := range p.Exprs {
		exprs[i] = NamedExpr{Name: e.Name, Expr: substitute(e.Expr, inner.Exprs)}
	}
	merged, err := NewProject(inner.Input, exprs)
	if err != nil || !schemaMetaEqual(merged.Schema(), p.Schema()) {
		return n
	}
	return merged
}

// schemaMetaEqual compares names, types and field metadata (the watermark
// marker), ignoring nullability.
func schemaMetaEqual(a, b *arrow.Schema) bool {
	if a.NumFields() != b.NumFields() {
		return false
	}
	for i := range a.Fields() {
		fa, fb := a.Field(i), b.Field(i)
		if fa.Name != fb.Name || !arrow.TypeEqual(fa.Type, fb.Type) || !fa.Metadata.Equal(fb.Metadata) {
			return false
		}
	}
	return true
}

// substitute replaces column references of e by the expressions they
// reference in a projection below.
func substitute(e Expr, exprs []NamedExpr) Expr {
	out, _ := Transform(e, func(x Expr) (Expr, error) {
		if c, ok := x.(*ColumnRef); ok && c.Index >= 0 && c.Index < len(exprs) {
			return exprs[c.Index].Expr, nil
		}
		return x, nil
	})
	return out
}

// literalIntoCall reports whether substituting exprs into e would make a
// literal of exprs an argument (or part of one) of a call in e. Functions
// that take some arguments only as literals (date_add's string days
// without ANSI, a format, an option map) check the analyzed call, where
// the argument is a column, as Spark's analyzer does; inlining the
// column's constant would make a refused call pass.
func literalIntoCall(e Expr, exprs []NamedExpr) bool {
	found := false
	Walk(e, func(x Expr) bool {
		c, ok := x.(*Call)
		if !ok {
			return !found
		}
		for _, a := range c.Args {
			Walk(a, func(y Expr) bool {
				if r, ok := y.(*ColumnRef); ok && r.Index >= 0 && r.Index < len(exprs) {
					if _, lit := exprs[r.Index].Expr.(*Literal); lit {
						found = true
					}
				}
				return !found
			})
		}
		return !found
	})
	return found
}

// remapColumns rewrites column ordinals with m (old → new); it fails on a
// column mapped to -1.
func remapColumns(e Expr, m []int) (Expr, error) {
	return Transform(e, func(x Expr) (Expr, error) {
		if c, ok := x.(*ColumnRef); ok {
			if c.Index < 0 || c.Index >= len(m) || m[c.Index] < 0 {
				return nil, fmt.Errorf("plan: column %s (#%d) was pruned", c.Name, c.Index)
			}
			r := *c
			r.Index = m[c.Index]
			return &r, nil
		}
		return x, nil
	})
}

func containsCurrentTimestamp(e Expr) bool {
	found := false
	Walk(e, func(x Expr) bool {
		if _, ok := x.(*CurrentTimestamp); ok {
			found = true
		}
		return !found
	})
	return found
}
