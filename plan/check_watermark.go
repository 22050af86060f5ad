package plan

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
// keep), has event-time columns of two streams: two columns that come,
// unchanged, from the two sides of a stream-stream join below. Its late-row
// filter and state eviction need the one event time of its stream. Spark
// refuses any two distinct event-time attributes; the check is kept to the
// two-streams case because columns derived from one event time (a window
// and its window_time, which Spark 3.4+ accepts together in a dedup after a
// window aggregation) are one stream's. A stream-stream join itself is not
// checked: it takes each side's event time from its keys or condition.
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
	var names []string
	var paths [][]joinSide
	for _, i := range cols {
		if _, ok := WatermarkDelay(fields[i]); !ok {
			continue
		}
		p := joinSides(n, i)
		for j, q := range paths {
			if otherSides(p, q) {
				return violation(RuleMultipleEventTimeCols, "More than one event time columns are available. Please ensure there is at most one event time column per stream. event time columns: (%s,%s)", names[j], fields[i].Name)
			}
		}
		names = append(names, fields[i].Name)
		paths = append(paths, p)
	}
	return nil
}

// joinSide is one stream-stream join a column passes through and the side
// it comes from.
type joinSide struct {
	join  *Join
	right bool
}

// joinSides follows column col of n down through the nodes that pass it
// on unchanged (a projection of a bare column, filters, joins) to the node
// that made it, and lists the stream-stream joins on the way with the side
// the column comes from.
func joinSides(n Node, col int) []joinSide {
	var out []joinSide
	for {
		switch x := n.(type) {
		case *Project:
			r, ok := x.Exprs[col].Expr.(*ColumnRef)
			if !ok {
				return out
			}
			n, col = x.Input, r.Index
		case *Filter, *Deduplicate, *Limit, *Sort, *SubqueryAlias:
			n = x.Children()[0]
		case *EventTimeWatermark:
			if col == x.Column {
				return out
			}
			n = x.Input
		case *Join:
			nl := x.Left.Schema().NumFields()
			right := col >= nl
			if x.Left.IsStreaming() && x.Right.IsStreaming() {
				out = append(out, joinSide{x, right})
			}
			if right {
				n, col = x.Right, col-nl
			} else {
				n = x.Left
			}
		default:
			return out
		}
	}
}

// otherSides reports whether two columns come from opposite sides of one
// join.
func otherSides(p, q []joinSide) bool {
	for _, a := range p {
		for _, b := range q {
			if a.join == b.join && a.right != b.right {
				return true
			}
		}
	}
	return false
}
