package plan

import (
	"fmt"

	"github.com/apache/arrow/go/v17/arrow"

	"github.com/arrowstream/arrowstream/vector"
)

// StreamingOver computes aggregate window functions over a ROWS frame
// that ends at the current row (`avg(x) OVER (PARTITION BY k ORDER BY t
// ROWS BETWEEN n PRECEDING AND CURRENT ROW)`) over an append-only stream,
// an extension beyond Spark (which refuses non-time windows on streams),
// as Flink's OverAggregate. The first ORDER BY key is a watermarked
// event-time column, ascending: each input row is emitted once, with its
// aggregates over its partition's previous n rows and itself in
// (ORDER BY, arrival) order, when the watermark passes its time (Append
// mode). The state is, per partition, its last n emitted rows and the
// rows the watermark has not passed yet. Only the streaming engine runs
// it (RewriteStreaming adds it); Window describes the functions and is
// built over each epoch's rows.
type StreamingOver struct {
	Input  Node
	Window *Window
	// PartCols are the input columns of PARTITION BY; TimeCol the first
	// ORDER BY column, which carries the watermark, TimeShift (µs) how far
	// it runs ahead of event time.
	PartCols  []int
	TimeCol   int
	TimeShift int64
	// Preceding is the longest frame's n: the rows kept per partition.
	Preceding int64
}

// Schema implements Node.
func (n *StreamingOver) Schema() *arrow.Schema { return n.Window.Schema() }

// Children implements Node.
func (n *StreamingOver) Children() []Node { return []Node{n.Input} }

// IsStreaming implements Node.
func (n *StreamingOver) IsStreaming() bool { return n.Input.IsStreaming() }

func (n *StreamingOver) String() string {
	return fmt.Sprintf("StreamingOver %d preceding %s [stateful]", n.Preceding, n.Window.String())
}

// overSupport says why a streaming Window cannot run as a StreamingOver in
// mode ("" when it can), with the operator's parameters.
func overSupport(w *Window, mode OutputMode) (o StreamingOver, why string) {
	in := w.Input.Schema()
	for _, f := range w.Funcs {
		if f.Func != vector.WinAggregate || f.Agg == nil {
			return o, "a streaming OVER computes aggregates (sum, count, avg, min, max), not " + f.Name
		}
		switch f.Agg.Func {
		case vector.AggSum, vector.AggCount, vector.AggCountStar, vector.AggAvg, vector.AggMin, vector.AggMax:
		default:
			return o, "a streaming OVER computes sum, count, avg, min and max, not " + f.Name
		}
		if f.Agg.Distinct {
			return o, "a streaming OVER does not compute DISTINCT aggregates (" + f.Name + ")"
		}
		fr := f.Frame
		switch {
		case fr.Start.Kind == vector.FrameUnboundedPreceding:
			return o, "a streaming OVER needs a bounded frame (ROWS BETWEEN n PRECEDING AND CURRENT ROW): " + fr.String() + " would keep every row of a partition"
		case fr.Range:
			return o, "a streaming OVER needs a ROWS frame (BETWEEN n PRECEDING AND CURRENT ROW), not " + fr.String()
		case fr.End.Kind != vector.FrameCurrentRow || fr.Start.Kind == vector.FrameFollowing || fr.Start.Kind == vector.FrameUnboundedFollowing:
			return o, "a streaming OVER needs a frame that ends at the current row (ROWS BETWEEN n PRECEDING AND CURRENT ROW): " + fr.String() + " needs rows that have not arrived"
		case fr.Start.Kind == vector.FramePreceding:
			o.Preceding = max(o.Preceding, fr.Start.Offset)
		}
	}
	if mode != Append {
		// In Append mode every operator below emits a row once, so the
		// input only adds rows.
		return o, "a streaming OVER emits each row once, when the watermark passes it: it needs Append mode"
	}
	for _, p := range w.PartitionBy {
		c, ok := p.(*ColumnRef)
		if !ok {
			return o, "a streaming OVER partitions by columns only, not by " + p.String()
		}
		o.PartCols = append(o.PartCols, c.Index)
	}
	if len(w.OrderBy) == 0 {
		return o, "a streaming OVER needs ORDER BY a watermarked event-time column"
	}
	k := w.OrderBy[0]
	c, ok := k.Expr.(*ColumnRef)
	if !ok || k.Desc || !arrow.TypeEqual(in.Field(c.Index).Type, vector.Timestamp) {
		return o, "a streaming OVER needs its first ORDER BY key to be a watermarked timestamp column, ascending, not " + k.Expr.String()
	}
	shift, timed := WatermarkBound(in.Field(c.Index))
	if !timed {
		return o, "a streaming OVER needs its first ORDER BY key to be a watermarked timestamp column: " + in.Field(c.Index).Name + " carries no watermark"
	}
	o.TimeCol, o.TimeShift = c.Index, shift
	return o, ""
}

// rewriteOver replaces each streaming Window that StreamingOver supports
// in mode by one.
func rewriteOver(n Node, mode OutputMode) Node {
	rec := func(k Node) Node { return rewriteOver(k, mode) }
	switch x := n.(type) {
	case *DistinctMark:
		c := *x
		c.Input = rec(x.Input)
		return &c
	case *StreamingTopN:
		c := *x
		c.Input = rec(x.Input)
		return &c
	case *StreamingOver:
		c := *x
		c.Input = rec(x.Input)
		return &c
	case *Window:
		if x.IsStreaming() {
			if o, why := overSupport(x, mode); why == "" {
				in := rec(x.Input)
				nw := *x
				nw.Input = in
				o.Input, o.Window = in, &nw
				return &o
			}
		}
	}
	return mapChildren(n, rec)
}

// overShaped reports whether w computes only aggregates with explicit
// ROWS or RANGE frames: what a streaming OVER is meant for, so that a
// refusal says which of its conditions failed.
func overShaped(w *Window) bool {
	for _, f := range w.Funcs {
		if f.Func != vector.WinAggregate {
			return false
		}
	}
	return len(w.OrderBy) > 0
}
