package engine

import (
	"context"
	"fmt"
	"io"
	"strconv"
	"time"

	"github.com/apache/arrow/go/v17/arrow"
	"github.com/apache/arrow/go/v17/arrow/memory"

	"github.com/arrowstream/arrowstream/arrowstream/internal/stateful"
	"github.com/arrowstream/arrowstream/arrowstream/stream"
	"github.com/arrowstream/arrowstream/checkpoint"
	"github.com/arrowstream/arrowstream/plan"
	"github.com/arrowstream/arrowstream/vector"
)

// SourceTable is a catalog table that is a streaming source of the
// session: a query opens its own source, or the table's shared one.
type SourceTable interface {
	// OpenSource returns the source for a query and whether the query owns
	// it (closes it when it stops).
	OpenSource() (src stream.Source, owned bool, err error)
}

// StateProviderFunc builds the state store provider a query's effective
// settings select (the session's registry of providers).
type StateProviderFunc func(conf map[string]string, w *checkpoint.Writer) (checkpoint.StateStoreProvider, error)

// streamExec is the incremental execution of an analyzed streaming plan:
// per epoch it builds the plan's operators over the epoch's input, with
// stateless nodes built by the planner (plan.BuildOperator) and stateful
// ones (aggregation, deduplication, global limit) keeping their state in
// the checkpoint. It implements executor.
type streamExec struct {
	mem  memory.Allocator
	root plan.Node
	mode stream.OutputMode

	sources  []stream.Source
	descs    []string
	owned    []bool             // the query created the source and closes it
	scanSrc  map[*plan.Scan]int // streaming scan → source index
	srcUses  []int              // scans per source (a source named twice is read once)
	stateful map[plan.Node]int  // stateful node → index in order
	order    []stateful.Op      // for progress: downstream first, as Spark lists them
	// wmShift is, per operator in order, how far (µs) its input
	// watermark trails the global one (watermark_shift.go).
	wmShift []int64
	// noInputWm marks the operators whose input has no watermark (all
	// of it comes through flatMapGroupsWithState): they see 0.
	noInputWm []bool

	// state opens, commits and aborts the operators' declared state, in
	// the state store provider the query's conf selects (created at the
	// first epoch and closed with the query).
	state   *stateLifecycle
	planner stateful.Planner // plans stateful nodes, builds engine-only ones per epoch

	// chains are the stateless parts of the plan compiled once and rerun
	// every epoch (compiled.go); unchainable marks nodes found to need
	// building every epoch (current_timestamp(), operators that cannot
	// rerun).
	chains      map[plan.Node]*chain
	unchainable map[plan.Node]bool

	wmNodes []*plan.EventTimeWatermark
	wmNames map[*plan.EventTimeWatermark]string
	wmStats []stateful.EventTimeStats

	// Kept from epoch to epoch, so that an epoch's fixed work allocates
	// none of them (issue 19, branch ep25): WatermarkNodes' answer (the
	// names never change), EventTimeStats' copy, the epoch's feeds and
	// the plan nodes' children (plan.Node.Children allocates a slice
	// per call; the plan does not change after newStreamExec).
	wmList   []string
	statsOut []stateful.EventTimeStats
	feedBuf  []feed
	feedPtrs []*feed
	kids     map[plan.Node][]plan.Node
	// views holds the epoch's chain views (newView); each epoch starts a
	// new array.
	views []chainView

	reuse bool // this epoch reuses compiled chains (ConfReusePlan)

	// sharing describes the copies of stateful subplans found in the plan
	// (shared_subplan.go) until the first epoch settles the shape
	// (shaped); shared then maps each shared subtree's root, the first
	// and its copies, to its run in the epoch, and readers counts the
	// readers of each shared operator (by index in order).
	sharing *subplanSharing
	shaped  bool
	shared  map[plan.Node]*sharedRun
	readers []int
}

// NewExec plans root (analyzed) for incremental execution in mode, with
// its stateful operators' state in the provider newProvider returns (nil:
// each operator keeps its state in memory), optimized with the options
// its checkpoint fixes (PlanOptions).
func NewExec(mem memory.Allocator, root plan.Node, mode stream.OutputMode, writer *checkpoint.Writer, newProvider StateProviderFunc, opts plan.OptimizeOptions) (Executor, []stream.Source, []string, error) {
	e, err := newStreamExecWith(mem, root, mode, writer, opts)
	if err != nil {
		return nil, nil, nil, err
	}
	e.state.newProvider = newProvider
	return e, e.sources, e.descs, nil
}

// newStreamExec plans root (analyzed) for incremental execution in mode.
func newStreamExec(mem memory.Allocator, root plan.Node, mode stream.OutputMode, writer *checkpoint.Writer) (*streamExec, error) {
	return newStreamExecWith(mem, root, mode, writer, plan.OptimizeOptions{})
}

func newStreamExecWith(mem memory.Allocator, root plan.Node, mode stream.OutputMode, writer *checkpoint.Writer, opts plan.OptimizeOptions) (*streamExec, error) {
	if err := plan.CheckStreaming(root, plan.OutputMode(mode)); err != nil {
		return nil, err
	}
	opt, err := plan.OptimizeWith(context.Background(), root, opts)
	if err != nil {
		return nil, err
	}
	if opt, err = plan.RewriteStreaming(opt, plan.OutputMode(mode)); err != nil {
		return nil, err
	}
	e := &streamExec{
		mem: mem, root: opt, mode: mode, scanSrc: map[*plan.Scan]int{},
		stateful: map[plan.Node]int{}, wmNames: map[*plan.EventTimeWatermark]string{},
		chains: map[plan.Node]*chain{}, unchainable: map[plan.Node]bool{},
		kids: map[plan.Node][]plan.Node{},
	}
	srcIndex := map[plan.Table]int{}
	opID := 0
	planner := stateful.NewPlanner(mem, mode)
	e.planner = planner
	sh := newSubplanSharing()
	var walk func(n plan.Node) error
	walk = func(n plan.Node) error {
		inCopy := false
		switch x := n.(type) {
		case *plan.Scan:
			if !x.Streaming {
				return nil
			}
			i, ok := srcIndex[x.Table]
			if !ok {
				st, isStream := x.Table.(SourceTable)
				if !isStream {
					return fmt.Errorf("arrowstream: table %s is not a streaming source of this session", x.Name)
				}
				src, own, err := st.OpenSource()
				if err != nil {
					return fmt.Errorf("arrowstream: open source %s: %w", x.Name, err)
				}
				i = len(e.sources)
				srcIndex[x.Table] = i
				e.sources = append(e.sources, src)
				e.owned = append(e.owned, own)
				e.srcUses = append(e.srcUses, 0)
				sh.srcUses = append(sh.srcUses, 0)
				desc := x.Name
				if d, ok := src.(stream.DescribedSource); ok {
					desc = d.Description()
				}
				e.descs = append(e.descs, desc)
			}
			e.scanSrc[x] = i
			e.srcUses[i]++
			if sh.depth == 0 {
				sh.srcUses[i]++
			}
			return nil
		case *plan.EventTimeWatermark:
			e.wmNames[x] = "watermark" + strconv.Itoa(len(e.wmNodes))
			e.wmNodes = append(e.wmNodes, x)
			sh.wmInCopy = append(sh.wmInCopy, sh.depth > 0)
		}
		if n.IsStreaming() {
			op, ok, err := planner.Plan(n, opID)
			if err != nil {
				return err
			}
			if ok {
				// Planned in the unshared shape, numbered as without
				// sharing; a copy is dropped when the first epoch
				// settles the shape (shared_subplan.go).
				if first := sh.copyOf(n); first != nil {
					sh.dupOf[n] = first
					inCopy = true
					sh.depth++
				}
				e.stateful[n] = len(e.order)
				e.order = append(e.order, op)
				sh.opInCopy = append(sh.opInCopy, sh.depth > 0)
				sh.opNodes = append(sh.opNodes, n)
				opID++
			}
		}
		for _, c := range n.Children() {
			if err := walk(c); err != nil {
				return err
			}
		}
		if inCopy {
			sh.depth--
		}
		return nil
	}
	err = walk(opt)
	e.sharing = sh
	if err == nil {
		e.reduceJoins(opt, sh)
	}
	decls := make([]stateful.StateDecl, len(e.order))
	for i, op := range e.order {
		decls[i] = op.State()
	}
	e.state = newStateLifecycle(writer, mem, decls)
	if err != nil {
		e.Close()
		return nil, err
	}
	if len(e.sources) == 0 {
		e.Close()
		return nil, fmt.Errorf("arrowstream: the query reads no streaming source; use a batch query instead")
	}
	e.wmStats = make([]stateful.EventTimeStats, len(e.wmNodes))
	e.nameWatermarks()
	e.computeWatermarkShifts()
	return e, nil
}

// nameWatermarks sets WatermarkNodes' answer from wmNodes (when the plan
// is planned, and when the first epoch settles its shape).
func (e *streamExec) nameWatermarks() {
	e.wmList = make([]string, len(e.wmNodes))
	for i, w := range e.wmNodes {
		e.wmList[i] = e.wmNames[w]
	}
}

// Execute implements executor: it opens the operators' state at the
// epoch's version, then builds the plan over the inputs.
func (e *streamExec) Execute(ctx context.Context, ep stream.EpochInfo, inputs []vector.Operator) (vector.Operator, error) {
	e.settleShape(ep.Conf)
	if err := e.state.open(ep.CheckpointDir, ep.ID, ep.NumPartitions, ep.Conf); err != nil {
		for _, in := range inputs {
			in.Close()
		}
		return nil, err
	}
	feeds, err := e.feeds(ctx, inputs)
	if err != nil {
		return nil, err
	}
	defer func() {
		for _, f := range feeds {
			f.release()
			*f = feed{} // kept for the next epoch: hold none of this one's
		}
		e.releaseShared()
	}()
	sep := stateful.Epoch{EpochInfo: ep}
	env := &plan.Env{BatchTimestamp: time.UnixMilli(ep.BatchTimestampMs)}
	e.reuse = reusePlan(ep.Conf)
	e.views = nil
	return e.build(ctx, e.root, sep, env, feeds)
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
	vector.ReleaseRecords(f.records)
}

func (e *streamExec) feeds(ctx context.Context, inputs []vector.Operator) ([]*feed, error) {
	if len(e.feedBuf) != len(inputs) {
		e.feedBuf, e.feedPtrs = make([]feed, len(inputs)), make([]*feed, len(inputs))
		for i := range e.feedBuf {
			e.feedPtrs[i] = &e.feedBuf[i]
		}
	}
	feeds := e.feedPtrs
	for i, in := range inputs {
		e.feedBuf[i] = feed{op: in, schema: in.Schema()}
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

// children returns n's children, asked of the plan once.
func (e *streamExec) children(n plan.Node) []plan.Node {
	kids, ok := e.kids[n]
	if !ok {
		kids = n.Children()
		e.kids[n] = kids
	}
	return kids
}

// build builds node n's operator for the epoch: a view of a shared
// subplan's output (shared_subplan.go), from its compiled chain when n is
// stateless and its operators rerun (compiled.go), else afresh.
func (e *streamExec) build(ctx context.Context, n plan.Node, ep stateful.Epoch, env *plan.Env, feeds []*feed) (vector.Operator, error) {
	if r := e.shared[n]; r != nil {
		return e.buildShared(ctx, r, ep, env, feeds)
	}
	return e.buildNode(ctx, n, ep, env, feeds)
}

// buildNode is build without the shared subplans' check.
func (e *streamExec) buildNode(ctx context.Context, n plan.Node, ep stateful.Epoch, env *plan.Env, feeds []*feed) (vector.Operator, error) {
	if e.reuse && e.chainable(n) {
		return e.buildChained(ctx, n, env, func(l chainLeaf) (vector.Operator, error) {
			if l.raw != nil {
				return feeds[e.scanSrc[l.raw]].next()
			}
			return e.build(ctx, l.node, ep, env, feeds)
		})
	}
	if s, ok := n.(*plan.Scan); ok && s.Streaming {
		raw, err := feeds[e.scanSrc[s]].next()
		if err != nil {
			return nil, err
		}
		return plan.BuildScanOn(e.mem, s, raw, env)
	}
	kids := e.children(n)
	_, isWM := n.(*plan.EventTimeWatermark)
	if i, ok := e.stateful[n]; ok || isWM {
		return e.buildOneOrTwo(ctx, n, i, isWM, kids, ep, env, feeds)
	}
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
	if out, ok, err := e.planner.BuildEpoch(n, children, env); ok {
		return out, err // it owns children, even on error
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

// buildOneOrTwo builds a watermark node or stateful operator i over its
// one or two children. The children's operators are handed on one by
// one, never as a slice, so they stay in an array on the stack: every
// epoch builds these nodes, and a slice each was a tenth of an empty
// q7 epoch's allocations.
func (e *streamExec) buildOneOrTwo(ctx context.Context, n plan.Node, i int, isWM bool, kids []plan.Node, ep stateful.Epoch, env *plan.Env, feeds []*feed) (vector.Operator, error) {
	if !isWM {
		// A stateful operator may run over a rewritten input (a sliding
		// window's aggregation over its panes), chosen per epoch from
		// the query's settings.
		if c, ok := e.order[i].(stateful.InputChooser); ok {
			kids = c.ChildNodes(kids, ep.Conf)
		}
	}
	if len(kids) == 0 || len(kids) > 2 {
		return nil, fmt.Errorf("arrowstream: %s has %d inputs, want one or two", n, len(kids))
	}
	var buf [2]vector.Operator
	for j, k := range kids {
		op, err := e.build(ctx, k, ep, env, feeds)
		if err != nil {
			closeOps(buf[:j])
			return nil, err
		}
		buf[j] = op
	}
	if isWM {
		w := n.(*plan.EventTimeWatermark)
		return stateful.NewEventTimeWatermark(buf[0], w.Column, w.DelayMs, e.wmNames[w], &e.wmStats[e.wmIndex(w)]), nil
	}
	op := e.order[i]
	ep = e.operatorEpoch(i, ep)
	ep.State = e.state.stores(i)
	if two, ok := op.(stateful.TwoInputOp); ok && len(kids) == 2 {
		return two.ExecuteTwo(ctx, ep, buf[0], buf[1])
	}
	return op.Execute(ctx, ep, buf[0])
}

func (e *streamExec) wmIndex(w *plan.EventTimeWatermark) int {
	for i, x := range e.wmNodes {
		if x == w {
			return i
		}
	}
	return -1
}

// HasState implements executor.
func (e *streamExec) HasState() bool { return len(e.order) > 0 }

// CommitState implements executor: it commits every operator's stores,
// then tells the operators.
func (e *streamExec) CommitState(ctx context.Context, _ stream.EpochInfo) error {
	if len(e.order) == 0 {
		return nil
	}
	commits, err := e.state.commit(ctx)
	if err != nil {
		for _, op := range e.order {
			op.Abort()
		}
		return err
	}
	for i, op := range e.order {
		op.Committed(commits[i])
	}
	return nil
}

// StateLogEnd implements stateLogMarker.
func (e *streamExec) StateLogEnd() *checkpoint.StateLogMark { return e.state.stateLogEnd() }

// ExpectStateLog implements stateLogMarker.
func (e *streamExec) ExpectStateLog(m *checkpoint.StateLogMark) { e.state.expectLogged = m }

// UseEpochLog implements stateLogMarker.
func (e *streamExec) UseEpochLog(l *checkpoint.SegmentLog) error { return e.state.useEpochLog(l) }

// AbortState implements executor.
func (e *streamExec) AbortState(stream.EpochInfo) {
	e.state.abort()
	for _, op := range e.order {
		op.Abort()
	}
}

// WatermarkNodes implements executor. The slice is the executor's, the
// same every call: callers read it.
func (e *streamExec) WatermarkNodes() []string { return e.wmList }

// EventTimeStats implements executor. The copy is kept for the next
// call: callers may change it (sourceEventTime does) but not keep it.
func (e *streamExec) EventTimeStats() []stateful.EventTimeStats {
	e.statsOut = append(e.statsOut[:0], e.wmStats...)
	return e.statsOut
}

// ShouldRunAnotherBatch implements executor.
func (e *streamExec) ShouldRunAnotherBatch(wm int64) bool {
	for i, op := range e.order {
		if op.ShouldRunAnotherBatch(e.operatorWatermark(i, wm)) {
			return true
		}
	}
	return false
}

// StateProgress implements executor.
func (e *streamExec) StateProgress() []stream.StateOperatorProgress {
	out := make([]stream.StateOperatorProgress, len(e.order))
	for i, op := range e.order {
		out[i] = e.withReaders(i, op.Report())
	}
	return out
}

// Close implements executor: it closes the sources the query created and
// the state store provider.
func (e *streamExec) Close() error {
	e.closeChains()
	// Operators that keep Arrow memory across epochs (the stream-stream
	// join's live batches) free it.
	for _, op := range e.order {
		if c, ok := op.(io.Closer); ok {
			c.Close()
		}
	}
	for i, src := range e.sources {
		if e.owned[i] {
			src.Close()
		}
	}
	if e.state != nil {
		return e.state.close()
	}
	return nil
}
