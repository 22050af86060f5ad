package plan

import (
	"github.com/apache/arrow/go/v17/arrow"

	"github.com/arrowstream/arrowstream/vector"
)

// SlidingPanes describes an aggregation over a sliding window that can be
// computed from slide-sized panes (Flink's sliding-window panes): every
// window is the union of Width/Slide consecutive panes, so each row is
// aggregated once into its pane, and a window's value is the combination
// of its panes' partial states when the window is emitted.
type SlidingPanes struct {
	// Key is the grouping key that is the window.
	Key int
	// Width, Slide and Start are the window's (µs); Slide divides Width.
	Width, Slide, Start int64
	// Input is the aggregation's input with the sliding window assignment
	// replaced by a tumbling one of width Slide (the panes); every other
	// node of the input is the original one.
	Input Node
}

// PanesFor returns how a's sliding window can be computed from panes, or
// false when it cannot be exactly: the window key must come from a
// sliding window(…) whose slide divides its width, reach the aggregation
// through plain column references only (projections, filters and aliases
// that do not otherwise read it), be read by no other grouping key or
// aggregate argument, and every aggregate must combine exactly whatever
// the grouping of its rows: count(*), count, min, max, and sum over
// integers (a floating-point sum's value depends on the order of its
// additions; first/last on the order of the rows).
func PanesFor(a *Aggregate) (SlidingPanes, bool) {
	in := a.Input.Schema()
	for _, ag := range a.Aggs {
		if ag.Distinct || !paneCombines(ag) {
			return SlidingPanes{}, false
		}
	}
	for key, g := range a.GroupBy {
		ref, ok := g.Expr.(*ColumnRef)
		if !ok || !arrow.TypeEqual(in.Field(ref.Index).Type, vector.WindowType) {
			continue
		}
		if readElsewhere(a, key, ref.Index) {
			continue
		}
		input, w, ok := paneInput(a.Input, ref.Index)
		if !ok {
			continue
		}
		return SlidingPanes{Key: key, Width: w.Width, Slide: w.Slide, Start: w.Start, Input: input}, true
	}
	return SlidingPanes{}, false
}

// paneCombines reports whether an aggregate's partial states over disjoint
// row sets combine into exactly the value over their union, in any order.
func paneCombines(ag AggregateExpr) bool {
	switch ag.Func {
	case vector.AggCountStar, vector.AggCount, vector.AggMin, vector.AggMax:
		return true
	case vector.AggSum:
		if len(ag.Args) != 1 {
			return false
		}
		switch ag.Args[0].DataType().ID() {
		case arrow.INT8, arrow.INT16, arrow.INT32, arrow.INT64:
			return true
		}
	}
	return false
}

// readElsewhere reports whether the aggregation reads input column col
// other than as grouping key key.
func readElsewhere(a *Aggregate, key, col int) bool {
	for i, g := range a.GroupBy {
		if i != key && usesColumn(g.Expr, col) {
			return true
		}
	}
	for _, ag := range a.Aggs {
		for _, e := range ag.Args {
			if usesColumn(e, col) {
				return true
			}
		}
	}
	return false
}

// paneInput returns n with the sliding window assignment that produces
// its column col replaced by the tumbling one of its panes, and that
// assignment; false when col does not come from a sliding window through
// plain references.
func paneInput(n Node, col int) (Node, *WindowAssign, bool) {
	switch x := n.(type) {
	case *WindowAssign:
		if col < x.Input.Schema().NumFields() {
			return nil, nil, false // a window computed below: not this one
		}
		if x.Slide >= x.Width || x.Width%x.Slide != 0 {
			return nil, nil, false
		}
		if _, ok := x.Time.(*ColumnRef); !ok {
			return nil, nil, false // the watermark marker comes from a bare column
		}
		panes, err := NewWindowAssign(x.Input, x.Time, x.Slide, x.Slide, x.Start, x.Name)
		if err != nil {
			return nil, nil, false
		}
		return panes, x, true
	case *Project:
		ref, ok := x.Exprs[col].Expr.(*ColumnRef)
		if !ok {
			return nil, nil, false
		}
		for i, e := range x.Exprs {
			if i != col && usesColumn(e.Expr, ref.Index) {
				return nil, nil, false
			}
		}
		in, w, ok := paneInput(x.Input, ref.Index)
		if !ok {
			return nil, nil, false
		}
		return withChildren(x, []Node{in}), w, true
	case *Filter:
		if usesColumn(x.Cond, col) {
			return nil, nil, false
		}
		in, w, ok := paneInput(x.Input, col)
		if !ok {
			return nil, nil, false
		}
		return withChildren(x, []Node{in}), w, true
	case *SubqueryAlias:
		in, w, ok := paneInput(x.Input, col)
		if !ok {
			return nil, nil, false
		}
		return withChildren(x, []Node{in}), w, true
	}
	return nil, nil, false
}
