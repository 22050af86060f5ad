package stateful

import (
	"context"
	"time"

	"github.com/apache/arrow/go/v17/arrow"
	"github.com/apache/arrow/go/v17/arrow/memory"

	"github.com/arrowstream/arrowstream/arrowstream/stream"
	"github.com/arrowstream/arrowstream/checkpoint"
	"github.com/arrowstream/arrowstream/plan"
	"github.com/arrowstream/arrowstream/vector"
)

// Epoch is what a stateful operator knows about the epoch it runs: the
// epoch itself and the state store provider of the query, which holds the
// operator's state partitions.
type Epoch struct {
	stream.EpochInfo
	// Stores provides the operators' state partitions (nil: each operator
	// keeps its state in a memory provider of its own).
	Stores checkpoint.StateStoreProvider
}

// Op is a streaming operator that keeps state across epochs. Execute
// consumes its input and returns the epoch's output with the epoch's
// state changes staged; the engine then calls Commit (after the sink has
// committed the epoch) or Abort.
type Op interface {
	Execute(ctx context.Context, ep Epoch, input vector.Operator) (vector.Operator, error)
	Commit(ctx context.Context) error
	Abort()
	// ShouldRunAnotherBatch reports whether a no-data epoch at the new
	// global watermark would produce output or evict state.
	ShouldRunAnotherBatch(newWatermarkMs int64) bool
	// Report describes the operator after its last epoch.
	Report() stream.StateOperatorProgress
}

// TwoInputOp is a stateful operator over two inputs (the stream-stream
// join): the engine hands it both children instead of calling Execute.
type TwoInputOp interface {
	Op
	ExecuteTwo(ctx context.Context, ep Epoch, left, right vector.Operator) (vector.Operator, error)
}

// Planner turns the streaming nodes of a query's plan into stateful
// operators.
type Planner struct {
	Mem    memory.Allocator
	Mode   stream.OutputMode
	Writer *checkpoint.Writer
}

// Plan returns the stateful operator for a streaming node (opID numbers
// the query's stateful operators: its state lives under state/<opID>), or
// false for a node the engine builds with plan.BuildOperator.
func (p Planner) Plan(n plan.Node, opID int) (Op, bool, error) {
	op, err := p.plan(n, opID)
	if err != nil || op == nil {
		return nil, false, err
	}
	return op, true, nil
}

func (p Planner) plan(n plan.Node, opID int) (Op, error) {
	switch x := n.(type) {
	case *plan.Aggregate:
		spec, err := plan.AggregateSpecFor(x, nil)
		if err != nil {
			return nil, err
		}
		if sk := plan.SessionKey(x); sk >= 0 {
			_, timed := plan.WatermarkDelay(x.Schema().Field(sk))
			return newStatefulSessionWindow(p.Mem, opID, x.Input.Schema(), spec, sk, x.GroupBy[sk].Expr.(*plan.ColumnRef).Index, timed, p.Mode, p.Writer)
		}
		timeKey := -1
		for i := range x.GroupBy {
			if _, ok := plan.WatermarkDelay(x.Schema().Field(i)); ok {
				timeKey = i
				break
			}
		}
		return newStatefulAggregate(p.Mem, opID, x.Input.Schema(), spec, p.Mode, timeKey, p.Writer)
	case *plan.Deduplicate:
		in := x.Input.Schema()
		timeCol, delay := -1, int64(0)
		if cols := plan.EventTimeColumns(in); len(cols) > 0 {
			timeCol = cols[0]
			delay, _ = plan.WatermarkDelay(in.Field(timeCol))
		}
		return newStatefulDedup(p.Mem, opID, in, x.Keys, timeCol, x.WithinWatermark, time.Duration(delay)*time.Millisecond, p.Writer)
	case *plan.Limit:
		if !limitSeesAppends(x, p.Mode) {
			return nil, nil // over a complete result every epoch: a plain limit
		}
		return newStatefulLimit(p.Mem, opID, x.Input.Schema(), x.N, p.Writer), nil
	case *plan.Join:
		if x.Left.IsStreaming() && x.Right.IsStreaming() {
			return newStatefulJoin(p.Mem, opID, x, p.Writer)
		}
	case *plan.SessionWindow:
		return nil, nil // assigned per epoch (NewSessionAssign), merged by the Aggregate above
	case *plan.FlatMapGroupsWithState:
		return newStatefulGroupState(p.Mem, opID, x, p.Writer)
	}
	return nil, nil
}

// NewAggregate returns a streaming aggregation of input by spec (the
// operator Plan makes for a plain Aggregate); timeKey is the grouping key
// that carries the watermark, -1 for none.
func NewAggregate(mem memory.Allocator, opID int, input *arrow.Schema, spec vector.AggregateSpec, mode stream.OutputMode, timeKey int, writer *checkpoint.Writer) (Op, error) {
	return newStatefulAggregate(mem, opID, input, spec, mode, timeKey, writer)
}

// NewDedup returns a streaming deduplication of input on the key columns
// keys (the operator Plan makes for a Deduplicate); timeCol is the
// event-time column (-1: none) and delay its watermark delay.
func NewDedup(mem memory.Allocator, opID int, input *arrow.Schema, keys []int, timeCol int, withinWatermark bool, delay time.Duration, writer *checkpoint.Writer) (Op, error) {
	return newStatefulDedup(mem, opID, input, keys, timeCol, withinWatermark, delay, writer)
}

// limitSeesAppends reports whether a streaming limit's input is a stream
// of appended rows, so that the limit must count the rows it let through
// across epochs (Spark's StreamingGlobalLimitStrategy): always in Append
// mode, and in Complete mode when no streaming aggregation is below it (a
// limit under the aggregation, as in limit(5).groupBy(...).count()). Above
// a streaming aggregation in Complete mode the input is the whole result
// every epoch, and the limit is a plain one. Update mode refuses streaming
// limits before planning (plan.CheckStreaming).
func limitSeesAppends(l *plan.Limit, mode stream.OutputMode) bool {
	if mode == stream.Append {
		return true
	}
	return !hasStreamingAggregate(l.Input)
}

// hasStreamingAggregate reports whether n or a node below it is a
// streaming aggregation.
func hasStreamingAggregate(n plan.Node) bool {
	if a, ok := n.(*plan.Aggregate); ok && a.IsStreaming() {
		return true
	}
	for _, c := range n.Children() {
		if hasStreamingAggregate(c) {
			return true
		}
	}
	return false
}
