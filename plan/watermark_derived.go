package plan

import (
	"strconv"

	"github.com/apache/arrow/go/v17/arrow"

	"github.com/arrowstream/arrowstream/vector"
)

// Watermarks through derived columns (docs/semantics.md §7, beyond
// Spark). A column computed from an event-time column t by an
// order-keeping shift, d = t + s (ts + INTERVAL …, window.end,
// window.start, window_time(window), window.end − INTERVAL …, a cast of a
// timestamp to itself), is not an event-time column (Spark's Alias of an
// expression drops the watermark marker, and so does this planner: no
// operator drops late rows or emits by it), but it carries
// WatermarkShiftKey = s: a row whose event time is not late (t > W) has
// d > W + s. The stream-stream join reads that bound to evict the other
// side's state through range conditions over d (Nexmark q7's
// `B.dateTime BETWEEN M.rowtime − INTERVAL 10 SECONDS AND M.rowtime`
// with rowtime = window.end − INTERVAL 1 MILLISECOND), and drops the
// rows whose d is behind the late-event watermark + s, as it drops late
// rows by their event time.

// WatermarkShiftKey is the field metadata key of a column derived from an
// event-time column by an order-keeping shift: its value is the shift in
// µs (the column exceeds the watermark + shift for every row that is not
// late).
const WatermarkShiftKey = "arrowstream.watermarkShiftUs"

// WatermarkBound reports whether the values of field f are bounded below
// by the watermark: an event-time column (shift 0; for a window struct,
// its end) or a column derived from one (the shift in µs it carries).
func WatermarkBound(f arrow.Field) (shiftUs int64, ok bool) {
	if _, ok := WatermarkDelay(f); ok {
		return 0, true
	}
	if !f.HasMetadata() {
		return 0, false
	}
	i := f.Metadata.FindKey(WatermarkShiftKey)
	if i < 0 {
		return 0, false
	}
	s, err := strconv.ParseInt(f.Metadata.Values()[i], 10, 64)
	return s, err == nil
}

// derivedMetadata is the metadata of a projected column computed by e
// over input: WatermarkShiftKey when e is an order-keeping shift of a
// column bounded by the watermark (see derivedShift), none otherwise.
func derivedMetadata(input Node, e Expr) arrow.Metadata {
	if !arrow.TypeEqual(e.DataType(), vector.Timestamp) {
		return arrow.Metadata{}
	}
	s, ok := derivedShift(input, e, 0)
	if !ok {
		return arrow.Metadata{}
	}
	return arrow.NewMetadata([]string{WatermarkShiftKey}, []string{strconv.FormatInt(s, 10)})
}

// maxShiftDepth bounds the shift chains derivedShift follows (a chain of
// thousands of + INTERVAL terms is not a watermark worth the walk).
const maxShiftDepth = 64

// derivedShift matches e, a timestamp (or window struct) expression over
// input's columns, as t + s for a column t bounded by the watermark: the
// column itself, t ± a constant day-time interval, a cast of a timestamp
// to timestamp, window.end, window.start (of a window of known width) and
// window_time(window). A window struct's bound is its end's.
func derivedShift(input Node, e Expr, depth int) (int64, bool) {
	if depth > maxShiftDepth {
		return 0, false
	}
	in := input.Schema()
	switch x := e.(type) {
	case *ColumnRef:
		if x.Index < 0 || x.Index >= in.NumFields() {
			return 0, false
		}
		return WatermarkBound(in.Field(x.Index))
	case *Cast:
		if !arrow.TypeEqual(x.To, vector.Timestamp) || !arrow.TypeEqual(x.X.DataType(), vector.Timestamp) {
			return 0, false
		}
		return derivedShift(input, x.X, depth+1)
	case *GetField:
		if !arrow.TypeEqual(x.X.DataType(), vector.WindowType) {
			return 0, false
		}
		s, ok := derivedShift(input, x.X, depth+1)
		if !ok {
			return 0, false
		}
		switch x.Name {
		case "end":
			return s, true
		case "start":
			c, isCol := x.X.(*ColumnRef)
			if !isCol {
				return 0, false
			}
			w, ok := windowWidth(input, c.Index, 0)
			return s - w, ok
		}
		return 0, false
	case *Call:
		switch {
		case x.Func == "window_time" && len(x.Args) == 1:
			s, ok := derivedShift(input, x.Args[0], depth+1)
			return s - 1, ok // the window's end − 1 µs
		case (x.Func == "+" || x.Func == "-") && len(x.Args) == 2:
			t, lit := x.Args[0], x.Args[1]
			if x.Func == "+" && !arrow.TypeEqual(t.DataType(), vector.Timestamp) {
				t, lit = lit, t // INTERVAL … + ts
			}
			if !arrow.TypeEqual(t.DataType(), vector.Timestamp) {
				return 0, false
			}
			l, ok := lit.(*Literal)
			if !ok {
				return 0, false
			}
			d, ok := l.Value.(arrow.Duration)
			if !ok {
				return 0, false
			}
			s, ok := derivedShift(input, t, depth+1)
			if !ok {
				return 0, false
			}
			if x.Func == "-" {
				return s - int64(d), true
			}
			return s + int64(d), true
		}
	}
	return 0, false
}

// windowWidth finds the width (µs) of the fixed window struct in column
// col of n's output by following the column down to its WindowAssign
// through nodes that pass columns on unchanged.
func windowWidth(n Node, col int, depth int) (int64, bool) {
	if depth > maxShiftDepth || col < 0 || col >= n.Schema().NumFields() {
		return 0, false
	}
	switch x := n.(type) {
	case *WindowAssign:
		if col == x.Schema().NumFields()-1 {
			return x.Width, true
		}
		return windowWidth(x.Input, col, depth+1)
	case *Project:
		if c, ok := x.Exprs[col].Expr.(*ColumnRef); ok {
			return windowWidth(x.Input, c.Index, depth+1)
		}
	case *Aggregate:
		if col < len(x.GroupBy) {
			if c, ok := x.GroupBy[col].Expr.(*ColumnRef); ok {
				return windowWidth(x.Input, c.Index, depth+1)
			}
		}
	case *Join:
		nl := x.Left.Schema().NumFields()
		if col < nl {
			return windowWidth(x.Left, col, depth+1)
		}
		if x.Type != LeftSemiJoin && x.Type != LeftAntiJoin {
			return windowWidth(x.Right, col-nl, depth+1)
		}
	case *Filter, *SubqueryAlias, *EventTimeWatermark, *Deduplicate, *Limit, *Sort:
		return windowWidth(n.Children()[0], col, depth+1)
	}
	return 0, false
}

// withoutKey returns md without key (md itself when it has none).
func withoutKey(md arrow.Metadata, key string) arrow.Metadata {
	i := md.FindKey(key)
	if i < 0 {
		return md
	}
	keys := append(append([]string(nil), md.Keys()[:i]...), md.Keys()[i+1:]...)
	vals := append(append([]string(nil), md.Values()[:i]...), md.Values()[i+1:]...)
	return arrow.NewMetadata(keys, vals)
}
