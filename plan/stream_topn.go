package plan

import (
	"fmt"

	"github.com/apache/arrow/go/v17/arrow"

	"github.com/arrowstream/arrowstream/vector"
)

// StreamingTopN keeps the first N rows per partition of a stream in the
// order of a row_number() window, an extension beyond Spark (which
// refuses non-time windows on streams), as Flink's Top-N: it is what
// `... QUALIFY row_number() OVER (PARTITION BY k ORDER BY v) <= N` and
// `SELECT * FROM (SELECT ..., row_number() OVER (...) AS rn ...) WHERE
// rn <= N` become over an append-only stream. Its output is Filter's
// (Window's input columns and the row number).
//
// Output contract. Update mode: each epoch, for every partition whose
// ranking changed, the rows at the ranks that now hold a different row,
// with their rank: an upsert by (partition keys, rank); a rank once
// filled stays filled (the input only adds rows, or with UpsertKey
// replaces them within their partition). Append mode: a
// partition's final ranking, once, when the watermark passes the
// partition's time key (PARTITION BY must include a watermarked
// timestamp or window column). In both modes a partition with a time key
// is evicted when the watermark passes it, and rows at or below the late
// watermark are dropped. Only the streaming engine runs it
// (RewriteStreaming adds it); Filter and Window describe the ranking and
// are built over each epoch's candidate rows.
type StreamingTopN struct {
	Input  Node
	Window *Window
	Filter *Filter
	N      int64
	// PartCols are the input columns of PARTITION BY; TimeCol is the
	// one carrying the watermark (-1: none).
	PartCols []int
	TimeCol  int
	// TimeShift (µs) is how far TimeCol runs ahead of event time when it
	// is derived from one (window.end: 0; ts + INTERVAL 1 MINUTE: one
	// minute): a partition is final when its time − shift ≤ watermark.
	TimeShift int64
	// UpsertKey, when the input is an Update-mode aggregation, are the
	// input columns that key its rows (its grouping keys): a row replaces
	// the kept row of its key, and every row of a partition is kept (a
	// retracting top-N, stream_topn_retract.go). Nil for an append-only
	// input.
	UpsertKey []int
}

// Schema implements Node.
func (n *StreamingTopN) Schema() *arrow.Schema { return n.Filter.Schema() }

// Children implements Node.
func (n *StreamingTopN) Children() []Node { return []Node{n.Input} }

// IsStreaming implements Node.
func (n *StreamingTopN) IsStreaming() bool { return n.Input.IsStreaming() }

func (n *StreamingTopN) String() string {
	if n.UpsertKey != nil {
		return fmt.Sprintf("StreamingTopN %d %s retracting by %v [stateful]", n.N, n.Window.String(), n.UpsertKey)
	}
	return fmt.Sprintf("StreamingTopN %d %s [stateful]", n.N, n.Window.String())
}

// matchTopN recognizes a Filter keeping the first N row numbers of a
// one-function row_number() Window: rn <= N, rn < N+1, rn = 1 (and the
// mirrored forms). N is at least 1.
func matchTopN(n Node) (*Filter, *Window, int64, bool) {
	f, ok := n.(*Filter)
	if !ok {
		return nil, nil, 0, false
	}
	w, ok := f.Input.(*Window)
	if !ok {
		return nil, nil, 0, false
	}
	limit, ok := topNLimit(f.Cond, w, w.Schema().NumFields()-1)
	return f, w, limit, ok
}

// matchTopNAnalyzed is matchTopN on an analyzed plan, where the Filter
// may reach the Window through aliases and projections of columns (a
// subquery's SELECT list).
func matchTopNAnalyzed(n Node) (*Window, bool) {
	f, ok := n.(*Filter)
	if !ok {
		return nil, false
	}
	c, ok := f.Cond.(*Call)
	if !ok || len(c.Args) != 2 {
		return nil, false
	}
	col := -1
	for _, a := range c.Args {
		if r, ok := a.(*ColumnRef); ok {
			col = r.Index
		}
	}
	orig, below := col, f.Input
	for col >= 0 {
		switch x := below.(type) {
		case *SubqueryAlias:
			below = x.Input
			continue
		case *Project:
			r, ok := x.Exprs[col].Expr.(*ColumnRef)
			if !ok {
				return nil, false
			}
			col, below = r.Index, x.Input
			continue
		case *Window:
			if _, ok := topNLimit(c, x, orig); ok && col == x.Schema().NumFields()-1 {
				return x, true
			}
		}
		break
	}
	return nil, false
}

// topNLimit returns N when cond keeps the row numbers up to N of w, whose
// row number is column rn of cond's input.
func topNLimit(cond Expr, w *Window, rn int) (int64, bool) {
	if len(w.Funcs) != 1 || w.Funcs[0].Func != vector.WinRowNumber {
		return 0, false
	}
	c, ok := cond.(*Call)
	if !ok || len(c.Args) != 2 {
		return 0, false
	}
	op, a, b := c.Func, c.Args[0], c.Args[1]
	if isColumn(b, rn) {
		a, b = b, a
		switch op {
		case "<=":
			op = ">="
		case ">=":
			op = "<="
		case "<":
			op = ">"
		case ">":
			op = "<"
		}
	}
	lit, isLit := b.(*Literal)
	if !isColumn(a, rn) || !isLit {
		return 0, false
	}
	var v int64
	switch x := lit.Value.(type) {
	case int32:
		v = int64(x)
	case int64:
		v = x
	default:
		return 0, false
	}
	switch op {
	case "<=":
	case "<":
		v--
	case "=", "==":
		if v != 1 {
			return 0, false
		}
	default:
		return 0, false
	}
	return v, v >= 1
}

func isColumn(e Expr, i int) bool {
	c, ok := e.(*ColumnRef)
	return ok && c.Index == i
}

// topNSupport says why a matched top-N cannot run as a StreamingTopN in
// mode ("" when it can), and returns its partition columns and time
// column.
func topNSupport(w *Window, mode OutputMode) (cols []int, timeCol int, shift int64, why string) {
	timeCol = -1
	in := w.Input.Schema()
	for _, p := range w.PartitionBy {
		c, ok := p.(*ColumnRef)
		if !ok {
			return nil, -1, 0, "a streaming top-N partitions by columns only, not by " + p.String()
		}
		cols = append(cols, c.Index)
		s, timed := WatermarkBound(in.Field(c.Index))
		if !timed || timeCol >= 0 {
			continue
		}
		switch dt := in.Field(c.Index).Type.(type) {
		case *arrow.TimestampType:
			timeCol, shift = c.Index, s
		case *arrow.StructType:
			if arrow.TypeEqual(dt, vector.WindowType) {
				timeCol, shift = c.Index, s
			}
		}
	}
	switch {
	case mode == Complete:
		return nil, -1, 0, "Complete mode recomputes the window each epoch"
	case mode == Update && containsStreamingAggregate(w.Input):
		if _, why := topNUpsertKey(w); why != "" {
			return nil, -1, 0, why
		}
	case mode == Append && timeCol < 0:
		return nil, -1, 0, "a streaming top-N in Append mode needs a watermarked time column or window in PARTITION BY"
	}
	return cols, timeCol, shift, ""
}

// RewriteStreaming applies the streaming extensions beyond Spark to an
// optimized streaming plan for mode: distinct aggregates
// (RewriteStreamingDistinct), top-N per partition (StreamingTopN) and
// OVER windows with ROWS frames (StreamingOver).
func RewriteStreaming(n Node, mode OutputMode) (Node, error) {
	n = rewriteTopN(n, mode)
	n = rewriteOver(n, mode)
	if err := checkNoStreamingWindow(n, mode); err != nil {
		return nil, err
	}
	return RewriteStreamingDistinct(n)
}

// checkNoStreamingWindow refuses a streaming Window left after the top-N
// rewrite outside Complete mode over an aggregation: the checker let it
// through as a top-N that the optimized plan no longer shows (it must not
// run as a per-epoch window, which would rank each epoch alone).
func checkNoStreamingWindow(n Node, mode OutputMode) error {
	if w, ok := n.(*Window); ok && w.IsStreaming() && !(mode == Complete && containsStreamingAggregate(w.Input)) {
		return violation(RuleNonTimeWindow, "Non-time-based windows are not supported on streaming DataFrames/Datasets (a top-N form the streaming top-N does not recognize after optimization)")
	}
	for _, k := range n.Children() {
		if err := checkNoStreamingWindow(k, mode); err != nil {
			return err
		}
	}
	return nil
}

func rewriteTopN(n Node, mode OutputMode) Node {
	rec := func(k Node) Node { return rewriteTopN(k, mode) }
	switch x := n.(type) {
	case *DistinctMark:
		c := *x
		c.Input = rec(x.Input)
		return &c
	case *StreamingTopN:
		c := *x
		c.Input = rec(x.Input)
		return &c
	}
	if f, w, limit, ok := matchTopN(n); ok && w.IsStreaming() {
		if cols, timeCol, shift, why := topNSupport(w, mode); why == "" {
			in := rec(w.Input)
			nw := *w
			nw.Input = in
			nf := *f
			nf.Input = &nw
			top := &StreamingTopN{Input: in, Window: &nw, Filter: &nf, N: limit, PartCols: cols, TimeCol: timeCol, TimeShift: shift}
			if mode == Update && containsStreamingAggregate(w.Input) {
				top.UpsertKey, _ = topNUpsertKey(w)
			}
			return top
		}
	}
	return mapChildren(n, rec)
}

// TopNKeyColumns returns, for an analyzed query whose result is a
// streaming top-N (stream_topn.go), the output columns that key its
// Update-mode upserts: the partition columns and the row number (the row
// number may be left out when N is 1). It returns nil when n is no such
// query or the output drops a key column.
func TopNKeyColumns(n Node) []string {
	var path []Node
	for cur := n; ; {
		path = append(path, cur)
		if w, ok := matchTopNAnalyzed(cur); ok {
			return topNKeys(n, path, w)
		}
		switch x := cur.(type) {
		case *Project, *SubqueryAlias, *Filter:
			cur = x.Children()[0]
		default:
			return nil
		}
	}
}

// topNKeys maps w's partition columns and row number up through the
// path (top first, ending at the top-N Filter) to n's output names.
func topNKeys(n Node, path []Node, w *Window) []string {
	limit := int64(0)
	if f, ok := path[len(path)-1].(*Filter); ok {
		// The Filter may reach w through projections: only N matters.
		for _, a := range f.Cond.Children() {
			if l, ok := a.(*Literal); ok {
				switch v := l.Value.(type) {
				case int32:
					limit = int64(v)
				case int64:
					limit = v
				}
			}
		}
	}
	var cols []int
	for _, p := range w.PartitionBy {
		c, ok := p.(*ColumnRef)
		if !ok {
			return nil
		}
		cols = append(cols, c.Index)
	}
	rn := w.Schema().NumFields() - 1
	cols = append(cols, rn)
	// From w's output up to n's: through the projections between the
	// Filter and w, then along the path.
	var below []Node
	for cur := path[len(path)-1].Children()[0]; cur != Node(w); cur = cur.Children()[0] {
		below = append(below, cur)
	}
	chain := append(append([]Node(nil), path...), below...)
	for i := len(chain) - 1; i >= 0; i-- {
		p, ok := chain[i].(*Project)
		if !ok {
			continue
		}
		for j, c := range cols {
			cols[j] = -1
			for k, e := range p.Exprs {
				if r, ok := e.Expr.(*ColumnRef); ok && r.Index == c && c >= 0 {
					cols[j] = k
					break
				}
			}
		}
	}
	out := make([]string, 0, len(cols))
	for j, c := range cols {
		if c < 0 {
			if j == len(cols)-1 && limit == 1 {
				continue // top-1: the partition keys suffice
			}
			return nil
		}
		out = append(out, n.Schema().Field(c).Name)
	}
	return out
}
