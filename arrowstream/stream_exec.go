package arrowstream

import (
	"context"
	"fmt"
	"strconv"
	"time"

	"github.com/apache/arrow/go/v17/arrow"
	"github.com/apache/arrow/go/v17/arrow/memory"

	"github.com/arrowstream/arrowstream/checkpoint"
	"github.com/arrowstream/arrowstream/plan"
	"github.com/arrowstream/arrowstream/vector"
)

// statefulOp is a streaming operator that keeps state across epochs.
type statefulOp interface {
	execute(ctx context.Context, ep EpochInfo, input vector.Operator) (vector.Operator, error)
	commit(ctx context.Context) error
	abort()
	shouldRunAnotherBatch(newWatermarkMs int64) bool
	report() StateOperatorProgress
}

func (s *statefulAggregate) report() StateOperatorProgress { return s.progress }
func (d *statefulDedup) report() StateOperatorProgress     { return d.progress }

// streamExec is the incremental execution of an analyzed streaming plan:
// per epoch it builds the plan's operators over the epoch's input, with
// stateless nodes built by the planner (plan.BuildOperator) and stateful
// ones (aggregation, deduplication, global limit) keeping their state in
// the checkpoint. It implements executor.
type streamExec struct {
	mem  memory.Allocator
	root plan.Node
	mode OutputMode

	sources  []Source
	descs    []string
	owned    []bool             // the query created the source and closes it
	scanSrc  map[*plan.Scan]int // streaming scan → source index
	srcUses  []int              // scans per source (a source named twice is read once)
	stateful map[plan.Node]statefulOp
	order    []statefulOp // for progress: downstream first, as Spark lists them

	// writer and stateStores: the state store provider the query's conf
	// selects, created at the first epoch and closed with the query.
	writer      *checkpoint.Writer
	stateStores checkpoint.StateStoreProvider

	wmNodes []*plan.EventTimeWatermark
	wmNames map[*plan.EventTimeWatermark]string
	wmStats []EventTimeStats
}

// newStreamExec plans root (analyzed) for incremental execution in mode.
func newStreamExec(mem memory.Allocator, root plan.Node, mode OutputMode, writer *checkpoint.Writer) (*streamExec, error) {
	if err := plan.CheckStreaming(root, plan.OutputMode(mode)); err != nil {
		return nil, err
	}
	opt, err := plan.Optimize(root)
	if err != nil {
		return nil, err
	}
	e := &streamExec{
		mem: mem, root: opt, mode: mode, scanSrc: map[*plan.Scan]int{}, writer: writer,
		stateful: map[plan.Node]statefulOp{}, wmNames: map[*plan.EventTimeWatermark]string{},
	}
	srcIndex := map[plan.Table]int{}
	opID := 0
	var walk func(n plan.Node) error
	walk = func(n plan.Node) error {
		switch x := n.(type) {
		case *plan.Scan:
			if !x.Streaming {
				return nil
			}
			i, ok := srcIndex[x.Table]
			if !ok {
				st, isStream := x.Table.(sourceOpener)
				if !isStream {
					return fmt.Errorf("arrowstream: table %s is not a streaming source of this session", x.Name)
				}
				src, own, err := st.open()
				if err != nil {
					return fmt.Errorf("arrowstream: open source %s: %w", x.Name, err)
				}
				i = len(e.sources)
				srcIndex[x.Table] = i
				e.sources = append(e.sources, src)
				e.owned = append(e.owned, own)
				e.srcUses = append(e.srcUses, 0)
				desc := x.Name
				if d, ok := src.(DescribedSource); ok {
					desc = d.Description()
				}
				e.descs = append(e.descs, desc)
			}
			e.scanSrc[x] = i
			e.srcUses[i]++
			return nil
		case *plan.EventTimeWatermark:
			e.wmNames[x] = "watermark" + strconv.Itoa(len(e.wmNodes))
			e.wmNodes = append(e.wmNodes, x)
		}
		if n.IsStreaming() {
			op, err := e.statefulFor(n, opID, writer)
			if err != nil {
				return err
			}
			if op != nil {
				e.stateful[n] = op
				e.order = append(e.order, op)
				opID++
			}
		}
		for _, c := range n.Children() {
			if err := walk(c); err != nil {
				return err
			}
		}
		return nil
	}
	if err := walk(opt); err != nil {
		e.Close()
		return nil, err
	}
	if len(e.sources) == 0 {
		e.Close()
		return nil, fmt.Errorf("arrowstream: the query reads no streaming source; use a batch query instead")
	}
	e.wmStats = make([]EventTimeStats, len(e.wmNodes))
	return e, nil
}

// statefulFor returns the stateful operator for a streaming node, or nil
// for a stateless one.
func (e *streamExec) statefulFor(n plan.Node, opID int, writer *checkpoint.Writer) (statefulOp, error) {
	switch x := n.(type) {
	case *plan.Aggregate:
		spec, err := plan.AggregateSpecFor(x, nil)
		if err != nil {
			return nil, err
		}
		if sk := plan.SessionKey(x); sk >= 0 {
			_, timed := plan.WatermarkDelay(x.Schema().Field(sk))
			return newStatefulSessionWindow(e.mem, opID, x.Input.Schema(), spec, sk, x.GroupBy[sk].Expr.(*plan.ColumnRef).Index, timed, e.mode, writer)
		}
		timeKey := -1
		for i := range x.GroupBy {
			if _, ok := plan.WatermarkDelay(x.Schema().Field(i)); ok {
				timeKey = i
				break
			}
		}
		return newStatefulAggregate(e.mem, opID, x.Input.Schema(), spec, e.mode, timeKey, writer)
	case *plan.Deduplicate:
		in := x.Input.Schema()
		timeCol, delay := -1, int64(0)
		if cols := plan.EventTimeColumns(in); len(cols) > 0 {
			timeCol = cols[0]
			delay, _ = plan.WatermarkDelay(in.Field(timeCol))
		}
		return newStatefulDedup(e.mem, opID, in, x.Keys, timeCol, x.WithinWatermark, time.Duration(delay)*time.Millisecond, writer)
	case *plan.Limit:
		if e.mode == Complete {
			return nil, nil // over a complete result every epoch: a plain limit
		}
		return newStatefulLimit(e.mem, opID, x.Input.Schema(), x.N, writer), nil
	case *plan.Join:
		if x.Left.IsStreaming() && x.Right.IsStreaming() {
			return newStatefulJoin(e.mem, opID, x, writer)
		}
	case *plan.SessionWindow:
		return nil, nil // assigned per epoch (sessionAssign), merged by the Aggregate above
	case *plan.FlatMapGroupsWithState:
		return newStatefulGroupState(e.mem, opID, x, writer)
	}
	return nil, nil
}

func describeNode(n plan.Node) string { return n.String() }

// Execute implements executor.
func (e *streamExec) Execute(ctx context.Context, ep EpochInfo, inputs []vector.Operator) (vector.Operator, error) {
	feeds, err := e.feeds(ctx, inputs)
	if err != nil {
		return nil, err
	}
	defer func() {
		for _, f := range feeds {
			f.release()
		}
	}()
	if e.stateStores == nil && len(e.order) > 0 {
		if e.stateStores, err = newStateProvider(ep.Conf, e.writer, e.mem, nil); err != nil {
			return nil, err
		}
	}
	ep.stateStores = e.stateStores
	env := &plan.Env{BatchTimestamp: time.UnixMilli(ep.BatchTimestampMs)}
	return e.build(ctx, e.root, ep, env, feeds)
}

// feed hands a source's epoch data to the scans that read it: the operator
// itself for a single scan, replays of its drained records for several.
type feed struct {
	op      vector.Operator
	schema  *arrow.Schema
	records []arrow.Record
	shared  bool
}

func (f *feed) next() (vector.Operator, error) {
	if !f.shared {
		op := f.op
		f.op = nil
		if op == nil {
			return nil, fmt.Errorf("arrowstream: source read twice in one epoch")
		}
		return op, nil
	}
	return vector.NewScan(f.schema, f.records...)
}

func (f *feed) release() {
	if f.op != nil {
		f.op.Close()
	}
	releaseRecords(f.records)
}

func (e *streamExec) feeds(ctx context.Context, inputs []vector.Operator) ([]*feed, error) {
	feeds := make([]*feed, len(inputs))
	for i, in := range inputs {
		feeds[i] = &feed{op: in, schema: in.Schema()}
		if e.srcUses[i] > 1 {
			recs, err := vector.Drain(ctx, in)
			in.Close()
			feeds[i].op = nil
			if err != nil {
				for _, f := range feeds[:i] {
					f.release()
				}
				for _, rest := range inputs[i+1:] {
					rest.Close()
				}
				return nil, err
			}
			feeds[i].records, feeds[i].shared = recs, true
		}
	}
	return feeds, nil
}

// build builds node n's operator for the epoch.
func (e *streamExec) build(ctx context.Context, n plan.Node, ep EpochInfo, env *plan.Env, feeds []*feed) (vector.Operator, error) {
	if s, ok := n.(*plan.Scan); ok && s.Streaming {
		raw, err := feeds[e.scanSrc[s]].next()
		if err != nil {
			return nil, err
		}
		return plan.BuildScanOn(e.mem, s, raw, env)
	}
	kids := n.Children()
	children := make([]vector.Operator, len(kids))
	for i, k := range kids {
		op, err := e.build(ctx, k, ep, env, feeds)
		if err != nil {
			for _, c := range children[:i] {
				c.Close()
			}
			return nil, err
		}
		children[i] = op
	}
	if w, ok := n.(*plan.EventTimeWatermark); ok {
		i := e.wmIndex(w)
		return newEventTimeWatermark(children[0], w.Column, w.DelayMs, e.wmNames[w], &e.wmStats[i]), nil
	}
	if sw, ok := n.(*plan.SessionWindow); ok {
		return newSessionAssign(e.mem, sw, children[0], env)
	}
	if op, ok := e.stateful[n]; ok {
		if two, ok := op.(twoInputOp); ok && len(children) == 2 {
			return two.executeTwo(ctx, ep, children[0], children[1])
		}
		return op.execute(ctx, ep, children[0])
	}
	out, err := plan.BuildOperator(ctx, e.mem, n, children, env)
	if err != nil {
		for _, c := range children {
			c.Close()
		}
		return nil, err
	}
	return out, nil
}

func (e *streamExec) wmIndex(w *plan.EventTimeWatermark) int {
	for i, x := range e.wmNodes {
		if x == w {
			return i
		}
	}
	return -1
}

// CommitState implements executor.
func (e *streamExec) CommitState(ctx context.Context, _ EpochInfo) error {
	for i, op := range e.order {
		if err := op.commit(ctx); err != nil {
			for _, rest := range e.order[i+1:] {
				rest.abort()
			}
			return err
		}
	}
	return nil
}

// AbortState implements executor.
func (e *streamExec) AbortState(EpochInfo) {
	for _, op := range e.order {
		op.abort()
	}
}

// WatermarkNodes implements executor.
func (e *streamExec) WatermarkNodes() []string {
	out := make([]string, len(e.wmNodes))
	for i, w := range e.wmNodes {
		out[i] = e.wmNames[w]
	}
	return out
}

// EventTimeStats implements executor.
func (e *streamExec) EventTimeStats() []EventTimeStats {
	return append([]EventTimeStats(nil), e.wmStats...)
}

// ShouldRunAnotherBatch implements executor.
func (e *streamExec) ShouldRunAnotherBatch(wm int64) bool {
	for _, op := range e.order {
		if op.shouldRunAnotherBatch(wm) {
			return true
		}
	}
	return false
}

// StateProgress implements executor.
func (e *streamExec) StateProgress() []StateOperatorProgress {
	out := make([]StateOperatorProgress, len(e.order))
	for i, op := range e.order {
		out[i] = op.report()
	}
	return out
}

// Close implements executor: it closes the sources the query created and
// the state store provider.
func (e *streamExec) Close() error {
	for i, src := range e.sources {
		if e.owned[i] {
			src.Close()
		}
	}
	if e.stateStores != nil {
		err := e.stateStores.Close()
		e.stateStores = nil
		return err
	}
	return nil
}
