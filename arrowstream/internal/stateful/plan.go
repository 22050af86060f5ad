package stateful

import (
	"context"
	"fmt"
	"time"

	"github.com/apache/arrow/go/v17/arrow"
	"github.com/apache/arrow/go/v17/arrow/memory"

	"github.com/arrowstream/arrowstream/arrowstream/stream"
	"github.com/arrowstream/arrowstream/checkpoint"
	"github.com/arrowstream/arrowstream/plan"
	"github.com/arrowstream/arrowstream/vector"
)

// Epoch is what a stateful operator knows about the epoch it runs: the
// epoch itself and the operator's state stores, which the engine opened.
type Epoch struct {
	stream.EpochInfo
	// State holds the operator's stores for the epoch, one per partition
	// (index: key hash modulo len), opened by the engine at version ID.
	State []checkpoint.StateStore
}

// StateDecl is the state a stateful operator declares. The engine owns the
// state's lifecycle: before the operator runs an epoch it opens the
// partitions state/<OpID>/<p> at the epoch's version (checking Schema
// against the checkpoint), and after the epoch it commits them, before the
// sink sees the epoch's output, or aborts them.
type StateDecl struct {
	OpID int
	// Schema describes the state layout (kind, key and value columns); it
	// is recorded in state/<OpID>/_metadata/schema on first use and must
	// match on every restart.
	Schema string
	// Global: one partition whatever the query's shuffle partitions (the
	// global limit's count).
	Global bool
}

// StateCommit describes an operator's stores after the engine committed
// them, for its progress report.
type StateCommit struct {
	NumRowsTotal    int64
	MemoryUsedBytes int64
	CommitTimeMs    int64
	Partitions      int64
	CustomMetrics   map[string]int64
}

// Op is a streaming operator that keeps state across epochs. Execute
// consumes its input, reads and writes the stores in ep.State, and returns
// the epoch's output; every state read and write is done by the time the
// output is drained. The engine then commits the stores and calls
// Committed, or aborts them and calls Abort.
type Op interface {
	// State declares the operator's state.
	State() StateDecl
	Execute(ctx context.Context, ep Epoch, input vector.Operator) (vector.Operator, error)
	// Committed tells the operator that the engine committed its state
	// for the epoch.
	Committed(c StateCommit)
	// Abort tells the operator that the epoch's state updates were
	// discarded.
	Abort()
	// ShouldRunAnotherBatch reports whether a no-data epoch at the new
	// global watermark would produce output or evict state.
	ShouldRunAnotherBatch(newWatermarkMs int64) bool
	// Report describes the operator after its last epoch.
	Report() stream.StateOperatorProgress
}

// OutputWatermarkShifter is an operator whose output watermark trails its
// input watermark: the stream-stream join, which may emit a row as late as
// its state watermarks let it keep one.
type OutputWatermarkShifter interface {
	// OutputWatermarkShiftUs is how far (µs, ≥ 0) the output watermark
	// is below the input watermark.
	OutputWatermarkShiftUs() int64
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
	Mem  memory.Allocator
	Mode stream.OutputMode

	// assign keeps the session assignments' schemas that BuildEpoch
	// builds alike every epoch (nil in a Planner not made by NewPlanner:
	// built anew each time).
	assign *assignSchemas
}

// NewPlanner returns a Planner for one query, which keeps across its
// epochs what BuildEpoch builds alike every epoch.
func NewPlanner(mem memory.Allocator, mode stream.OutputMode) Planner {
	return Planner{Mem: mem, Mode: mode, assign: &assignSchemas{}}
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
	// Each stateful operator allocates through the allocator labelled
	// with its name (vector.ForOperator), so that a limit error that its
	// Arrow buffers or an epoch's reservation break names it (its state
	// accounts label their own reservations with the state's name).
	if name := statefulOperatorName(n, opID); name != "" {
		p.Mem = vector.ForOperator(p.Mem, name)
	}
	switch x := n.(type) {
	case *plan.Aggregate:
		spec, err := plan.AggregateSpecFor(x, nil)
		if err != nil {
			return nil, err
		}
		if sk := plan.SessionKey(x); sk >= 0 {
			_, timed := plan.WatermarkDelay(x.Schema().Field(sk))
			return newStatefulSessionWindow(p.Mem, opID, x.Input.Schema(), spec, sk, x.GroupBy[sk].Expr.(*plan.ColumnRef).Index, timed, p.Mode)
		}
		timeKey := -1
		for i := range x.GroupBy {
			if _, ok := plan.WatermarkDelay(x.Schema().Field(i)); ok {
				timeKey = i
				break
			}
		}
		s, err := newStatefulAggregate(p.Mem, opID, x.Input.Schema(), spec, p.Mode, timeKey)
		if err != nil {
			return nil, err
		}
		s.panes = panesFor(x, p.Mode, timeKey)
		return s, nil
	case *plan.Deduplicate:
		in := x.Input.Schema()
		timeCol, delay := -1, int64(0)
		if cols := plan.EventTimeColumns(in); len(cols) > 0 {
			timeCol = dedupTimeColumn(cols, x.Keys)
			delay, _ = plan.WatermarkDelay(in.Field(timeCol))
		}
		return newStatefulDedup(p.Mem, opID, in, x.Keys, timeCol, x.WithinWatermark, time.Duration(delay)*time.Millisecond)
	case *plan.Limit:
		if !limitSeesAppends(x, p.Mode) {
			return nil, nil // over a complete result every epoch: a plain limit
		}
		return newStatefulLimit(p.Mem, opID, x.Input.Schema(), x.N), nil
	case *plan.Join:
		if x.Left.IsStreaming() && x.Right.IsStreaming() {
			j, err := newStatefulJoin(p.Mem, opID, x)
			if err != nil {
				return nil, err
			}
			// The bound holds when the max side emits a window once, after
			// it closed: Append mode.
			if b, ok := plan.JoinMaxBoundFor(x); ok && p.Mode == stream.Append {
				j.prune = newJoinPrune(b)
			}
			// Likewise: the rows side's windows come once, all at a time.
			if b, ok := plan.JoinSelfMaxFor(x); ok && p.Mode == stream.Append {
				j.selfMax = &joinSelfMax{b: b}
			}
			return j, nil
		}
	case *plan.FlatMapGroupsWithState:
		return newStatefulGroupState(p.Mem, opID, x)
	case *plan.DistinctMark:
		return newStatefulDistinctMark(p.Mem, opID, x, p.Mode)
	case *plan.StreamingTopN:
		return newStatefulTopN(p.Mem, opID, x, p.Mode)
	case *plan.StreamingOver:
		return newStatefulOver(p.Mem, opID, x)
	}
	return nil, nil
}

// BuildEpoch builds, for one epoch, a streaming node that keeps no state
// of its own but that only the streaming engine runs (plan.BuildOperator
// refuses it): a session window's assignment, whose sessions the session
// aggregation above merges with its state. It returns false for other
// nodes. It owns children, even on error.
func (p Planner) BuildEpoch(n plan.Node, children []vector.Operator, env *plan.Env) (vector.Operator, bool, error) {
	if sw, ok := n.(*plan.SessionWindow); ok {
		op, err := newSessionAssign(p.Mem, sw, children[0], env, p.assign)
		return op, true, err
	}
	return nil, false, nil
}

// NewAggregate returns a streaming aggregation of input by spec (the
// operator Plan makes for a plain Aggregate); timeKey is the grouping key
// that carries the watermark, -1 for none.
func NewAggregate(mem memory.Allocator, opID int, input *arrow.Schema, spec vector.AggregateSpec, mode stream.OutputMode, timeKey int) (Op, error) {
	return newStatefulAggregate(mem, opID, input, spec, mode, timeKey)
}

// NewDedup returns a streaming deduplication of input on the key columns
// keys (the operator Plan makes for a Deduplicate); timeCol is the
// event-time column (-1: none) and delay its watermark delay.
func NewDedup(mem memory.Allocator, opID int, input *arrow.Schema, keys []int, timeCol int, withinWatermark bool, delay time.Duration) (Op, error) {
	return newStatefulDedup(mem, opID, input, keys, timeCol, withinWatermark, delay)
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

// statefulOperatorName names the stateful operator of node n (opID) in
// memory-limit errors, or "" for a node that has none.
func statefulOperatorName(n plan.Node, opID int) string {
	var what string
	switch x := n.(type) {
	case *plan.Aggregate:
		what = "streaming aggregation"
		if plan.SessionKey(x) >= 0 {
			what = "session window"
		}
	case *plan.Deduplicate:
		what = "streaming deduplication"
	case *plan.Limit:
		what = "streaming limit"
	case *plan.Join:
		what = "stream-stream join"
	case *plan.FlatMapGroupsWithState:
		what = "flatMapGroupsWithState"
	case *plan.DistinctMark:
		what = "streaming DISTINCT aggregate"
	case *plan.StreamingTopN:
		what = "streaming top-N"
	case *plan.StreamingOver:
		what = "streaming OVER"
	default:
		return ""
	}
	return fmt.Sprintf("%s (stateful operator %d)", what, opID)
}

// dedupTimeColumn picks a deduplication's event-time column among the
// input's (cols): one that is a key when there is one, so that state is
// evicted by it (a dedup after a windowed aggregation has the window and,
// as a key, window_time(window)); else the first, which only filters late
// rows. No keys means every column is a key.
func dedupTimeColumn(cols, keys []int) int {
	if len(keys) == 0 {
		return cols[0]
	}
	for _, c := range cols {
		for _, k := range keys {
			if c == k {
				return c
			}
		}
	}
	return cols[0]
}
