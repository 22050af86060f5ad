package plan

import (
	"strings"
)

// Rules on watermark definitions that Spark 3.4+ enforces by default
// (spark.sql.streaming.statefulOperator.allowMultiple = true, the only
// mode this engine runs; docs/semantics.md §3.1). Spark finds both when
// it plans the first micro-batch (WatermarkPropagator and
// WatermarkSupport.findEventTimeColumn); the engine refuses the query
// when it starts, before any epoch.
const (
	RuleRedefineWatermark     = "redefining-watermark"
	RuleMultipleEventTimeCols = "multiple-event-time-columns"
)

// checkWatermarkNode refuses a streaming watermark node that has another
// watermark below it whose value reaches it: the per-operator watermark
// propagation gives every watermark node the global watermark, so a
// second one downstream cannot have a meaning of its own. The value
// passes every node except flatMapGroupsWithState, which produces no
// output watermark (its timeouts may emit rows of any time).
func checkWatermarkNode(w *EventTimeWatermark) error {
	if w.IsStreaming() && carriesWatermark(w.Input) {
		return violation(RuleRedefineWatermark, "Redefining watermark is disallowed. You can set the config 'spark.sql.streaming.statefulOperator.allowMultiple' to 'false' to restore the previous behavior. Note that multiple stateful operators will be disallowed.")
	}
	return nil
}

// carriesWatermark reports whether n's output has a watermark value:
// whether a streaming watermark node below n reaches it.
func carriesWatermark(n Node) bool {
	if !n.IsStreaming() {
		return false
	}
	switch n.(type) {
	case *EventTimeWatermark:
		return true
	case *FlatMapGroupsWithState:
		return false
	}
	for _, k := range n.Children() {
		if carriesWatermark(k) {
			return true
		}
	}
	return false
}

// checkEventTimeColumns refuses a dedup or flatMapGroupsWithState whose
// input, or an aggregation whose grouping keys (the columns its state rows
// keep), has more than one event-time column: its late-row filter and
// state eviction need the one event time of its stream. Copies of one
// column (the same attribute selected twice) count once, as in Spark,
// which compares attribute ids. A stream-stream join is left alone: it
// takes each side's event time from its join keys or condition.
func checkEventTimeColumns(n Node) error {
	if !isStateful(n) {
		return nil
	}
	switch x := n.(type) {
	case *Aggregate:
		var cols []int
		for _, k := range x.GroupBy {
			if c, ok := k.Expr.(*ColumnRef); ok && c.Index < x.Input.Schema().NumFields() {
				cols = append(cols, c.Index)
			}
		}
		return eventTimeColumnsError(x.Input, cols)
	case *Join:
		return nil
	default:
		return eventTimeColumnsError(n.Children()[0], nil)
	}
}

// eventTimeColumnsError checks the columns cols of n's output (every
// column when cols is nil).
func eventTimeColumnsError(n Node, cols []int) error {
	fields := n.Schema().Fields()
	if cols == nil {
		for i := range fields {
			cols = append(cols, i)
		}
	}
	type origin struct {
		node Node
		col  int
	}
	var names []string
	seen := map[origin]bool{}
	for _, i := range cols {
		if _, ok := WatermarkDelay(fields[i]); !ok {
			continue
		}
		on, oc := columnOrigin(n, i)
		if seen[origin{on, oc}] {
			continue
		}
		seen[origin{on, oc}] = true
		names = append(names, fields[i].Name)
	}
	if len(names) > 1 {
		return violation(RuleMultipleEventTimeCols, "More than one event time columns are available. Please ensure there is at most one event time column per stream. event time columns: (%s)", strings.Join(names, ","))
	}
	return nil
}

// columnOrigin follows column col of n down through the nodes that pass
// it on unchanged (a projection of a bare column, filters, a join's
// side) to the node that made it, so that two output columns with the
// same origin are recognised as one attribute.
func columnOrigin(n Node, col int) (Node, int) {
	for {
		switch x := n.(type) {
		case *Project:
			r, ok := x.Exprs[col].Expr.(*ColumnRef)
			if !ok {
				return n, col
			}
			n, col = x.Input, r.Index
		case *Filter, *Deduplicate, *Limit, *Sort, *SubqueryAlias:
			n = x.Children()[0]
		case *EventTimeWatermark:
			if col == x.Column {
				return n, col
			}
			n = x.Input
		case *Join:
			if nl := x.Left.Schema().NumFields(); col >= nl {
				n, col = x.Right, col-nl
			} else {
				n = x.Left
			}
		default:
			return n, col
		}
	}
}
