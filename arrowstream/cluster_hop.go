package arrowstream

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"sync"

	"github.com/apache/arrow/go/v17/arrow"

	"github.com/arrowstream/arrowstream/arrowstream/stream"
	"github.com/arrowstream/arrowstream/plan"
)

// Stateful queries in cluster mode (docs/cluster.md): a stateful
// streaming query is cut below its stateful operator into two queries
// that run on every instance. The upstream stage (query
// <table>-repartition-0, checkpoint <table's checkpoint>/hop-0) reads the
// table's Kafka input in the table's consumer group and writes the rows
// that enter the stateful operator, hashed on its key, to the hop
// (stream.Repartitioner); the downstream stage (the table's query) reads
// the hop partitions assigned to this instance and keeps the state of
// their keys.

// SetRepartitioner installs the repartition hops of cluster mode
// (kafka.InstallCluster calls it). Without one, stateful queries are
// refused in cluster mode.
func (s *Session) SetRepartitioner(r stream.Repartitioner) {
	s.mu.Lock()
	s.hop = r
	s.mu.Unlock()
}

// hopCut is a stateful plan cut at its stateful operator's input.
type hopCut struct {
	up   plan.Node // the stateless input of the stateful operator
	keys []int     // the operator's key columns in up's output
	// hashed are the positions, among the operator's keys, of those in
	// keys (the hop hashes them; a window computed above the cut is not
	// among them); agg says the operator is an aggregation.
	hashed []int
	agg    bool
	// eventCol is the event-time column of up's output that the
	// downstream's watermark is declared on (-1: none).
	eventCol int
	// rebuild returns the plan with up replaced by n (of up's schema).
	rebuild func(n plan.Node) (plan.Node, error)
}

// errNoCut explains why a stateful plan cannot be cut.
var errNoCut = errors.New("cannot be cut at a repartition hop")

// cutAtState finds the one stateful operator of root (an aggregation or
// deduplication over a chain of single-input operators) and cuts below it.
func cutAtState(root plan.Node) (hopCut, error) {
	var path []plan.Node // root .. the stateful operator
	n := root
	for {
		path = append(path, n)
		switch x := n.(type) {
		case *plan.Aggregate:
			keys, err := aggregateKeys(x)
			if err != nil {
				return hopCut{}, err
			}
			if hasState(x.Input) {
				return hopCut{}, fmt.Errorf("%w: more than one stateful operator (only one per query is supported across instances)", errNoCut)
			}
			cut := cutBelowWatermark(path, x.Input, keys)
			cut.agg = true
			return cut, nil
		case *plan.Deduplicate:
			if hasState(x.Input) {
				return hopCut{}, fmt.Errorf("%w: more than one stateful operator (only one per query is supported across instances)", errNoCut)
			}
			keys := append([]int(nil), x.Keys...)
			if len(keys) == 0 {
				for i := range x.Input.Schema().NumFields() {
					keys = append(keys, i)
				}
			}
			return cutBelowWatermark(path, x.Input, keys), nil
		case *plan.Project, *plan.Filter, *plan.SubqueryAlias, *plan.EventTimeWatermark, *plan.WindowAssign, *plan.Sort, *plan.Limit:
			n = n.Children()[0]
		default:
			return hopCut{}, fmt.Errorf("%w: %T is not supported across instances (aggregations and deduplications over one Kafka table are)", errNoCut, n)
		}
	}
}

// cutBelowWatermark cuts at in, the stateful operator's input, or, when
// the chain below the operator declares a watermark, below that
// EventTimeWatermark: the downstream stage then declares the watermark
// (and computes windows) itself, over the hop. keys are the operator's
// key columns in in's output; the hop is hashed on those that pass
// unchanged down to the cut (a window computed above the cut is not
// among them: rows of one key and window still meet).
func cutBelowWatermark(path []plan.Node, in plan.Node, keys []int) hopCut {
	var chain []plan.Node // in .. the EventTimeWatermark
	n := in
	for {
		chain = append(chain, n)
		if _, ok := n.(*plan.EventTimeWatermark); ok {
			break
		}
		switch n.(type) {
		case *plan.Project, *plan.Filter, *plan.SubqueryAlias, *plan.WindowAssign:
			n = n.Children()[0]
			continue
		}
		all := make([]int, len(keys))
		for i := range all {
			all[i] = i
		}
		return hopCut{up: in, keys: keys, hashed: all, eventCol: -1, rebuild: rebuildPath(path)}
	}
	up := n.Children()[0]
	traced, hashed := []int{}, []int{}
	for pos, k := range keys {
		if i, ok := traceColumn(chain, k); ok {
			traced = append(traced, i)
			hashed = append(hashed, pos)
		}
	}
	etw := chain[len(chain)-1].(*plan.EventTimeWatermark)
	return hopCut{up: up, keys: traced, hashed: hashed, eventCol: etw.Column, rebuild: rebuildPath(append(append([]plan.Node(nil), path...), chain...))}
}

// traceColumn follows column col of chain[0]'s output down the chain to
// the column of the last node's input it is a copy of.
func traceColumn(chain []plan.Node, col int) (int, bool) {
	for _, n := range chain {
		switch x := n.(type) {
		case *plan.Project:
			ref, ok := x.Exprs[col].Expr.(*plan.ColumnRef)
			if !ok {
				return 0, false
			}
			col = ref.Index
		case *plan.WindowAssign:
			if col >= x.Input.Schema().NumFields() {
				return 0, false // the window column
			}
		case *plan.Filter, *plan.SubqueryAlias, *plan.EventTimeWatermark:
		default:
			return 0, false
		}
	}
	return col, true
}

// aggregateKeys are the grouping columns of a streaming aggregation; a
// global aggregation has none (its rows all go to one partition).
func aggregateKeys(a *plan.Aggregate) ([]int, error) {
	var keys []int
	for _, g := range a.GroupBy {
		ref, ok := g.Expr.(*plan.ColumnRef)
		if !ok {
			return nil, fmt.Errorf("%w: the grouping key %s is an expression, not a column", errNoCut, g.Name)
		}
		keys = append(keys, ref.Index)
	}
	return keys, nil
}

// hasState reports whether n holds a stateful operator or anything that is
// not a plain chain down to one scan.
func hasState(n plan.Node) bool {
	switch n.(type) {
	case *plan.Scan:
		return false
	case *plan.Project, *plan.Filter, *plan.SubqueryAlias, *plan.EventTimeWatermark, *plan.WindowAssign, *plan.Explode:
		return hasState(n.Children()[0])
	}
	return true
}

// rebuildPath returns a function that copies the operators of path (root
// first, the stateful operator last) with the stateful operator's input
// replaced. The copies keep their schemas: the new input has the old one's.
func rebuildPath(path []plan.Node) func(plan.Node) (plan.Node, error) {
	return func(in plan.Node) (plan.Node, error) {
		child := in
		for i := len(path) - 1; i >= 0; i-- {
			var err error
			if child, err = withInput(path[i], child); err != nil {
				return nil, err
			}
		}
		return child, nil
	}
}

// withInput copies a single-input operator with another input.
func withInput(n, in plan.Node) (plan.Node, error) {
	switch x := n.(type) {
	case *plan.Aggregate:
		c := *x
		c.Input = in
		return &c, nil
	case *plan.Deduplicate:
		c := *x
		c.Input = in
		return &c, nil
	case *plan.Project:
		c := *x
		c.Input = in
		return &c, nil
	case *plan.Filter:
		c := *x
		c.Input = in
		return &c, nil
	case *plan.SubqueryAlias:
		c := *x
		c.Input = in
		return &c, nil
	case *plan.EventTimeWatermark:
		c := *x
		c.Input = in
		return &c, nil
	case *plan.WindowAssign:
		c := *x
		c.Input = in
		return &c, nil
	case *plan.Sort:
		c := *x
		c.Input = in
		return &c, nil
	case *plan.Limit:
		c := *x
		c.Input = in
		return &c, nil
	}
	return nil, fmt.Errorf("%w: %T", errNoCut, n)
}

// hopTable is the downstream stage's streaming table: the hop.
type hopTable struct {
	schema *arrow.Schema
	open   func() (Source, error)
}

func (t *hopTable) Schema() *arrow.Schema { return t.schema }
func (t *hopTable) Streaming() bool       { return true }

// OpenSource implements engine.SourceTable.
func (t *hopTable) OpenSource() (Source, bool, error) {
	src, err := t.open()
	return src, true, err
}

// startWithHop starts a stateful query of a cluster as its two stages.
func (s *Session) startWithHop(ctx context.Context, w *DataStreamWriter) (*StreamingQuery, error) {
	s.mu.Lock()
	hop := s.hop
	s.mu.Unlock()
	if hop == nil {
		return nil, s.clusterStateCheck(w.name, true)
	}
	refuse := func(err error) error {
		return fmt.Errorf("arrowstream: cluster mode (cluster %q): stateful streaming query %s: %w (docs/cluster.md)", s.cluster, w.name, err)
	}
	if w.name == "" {
		return nil, refuse(errors.New("a stateful query needs a name in cluster mode (its repartition topic and groups are named after it)"))
	}
	if w.trigger.IsContinuous() {
		return nil, refuse(errors.New("continuous triggers are not supported across a repartition hop"))
	}
	cut, err := cutAtState(w.df.node)
	if err != nil {
		return nil, refuse(err)
	}
	dir, temporary, err := s.checkpointDirFor(w.name, w.opts)
	if err != nil {
		return nil, err
	}
	if temporary {
		os.RemoveAll(dir)
		return nil, refuse(errors.New("a stateful query needs a durable checkpoint in cluster mode (a checkpoint root or checkpointLocation)"))
	}
	conf := s.confFor(ctx)
	parts := conf[ConfShufflePartitions]
	recorded, err := hopPartitionsRecorded(dir)
	if err != nil {
		return nil, refuse(err)
	}
	if parts == "" {
		// A restart from the checkpoint (its catalog recreates the table
		// without the --init file's SET) keeps the hop's partitions.
		parts = recorded
	}
	if parts == "" {
		parts = defaultShufflePartitions()
	}
	n, err := strconv.Atoi(parts)
	if err != nil || n <= 0 {
		return nil, refuse(fmt.Errorf("%s = %q is not a positive number of partitions", ConfShufflePartitions, parts))
	}
	if recorded == "" {
		if err := recordHopPartitions(dir, n); err != nil {
			return nil, refuse(err)
		}
	}
	schema := cut.up.Schema()
	eventCol := cut.eventCol
	spec := stream.HopSpec{Table: w.name, Hop: 0, Schema: schema, KeyColumns: cut.keys, Partitions: n,
		EventTimeColumn: eventCol, CheckpointDir: filepath.Join(dir, "hop-0")}
	upSink, err := hop.HopSink(s.mem, spec)
	if err != nil {
		return nil, refuse(err)
	}

	// The downstream stage reads the hop; a watermark declared in the
	// query is declared there, over the hop (cutBelowWatermark).
	var down plan.Node
	scan, err := plan.NewScan(w.name+"-repartition-0", &hopTable{schema: schema, open: func() (Source, error) {
		return hop.HopSource(s.mem, spec)
	}}, true)
	if err != nil {
		return nil, refuse(err)
	}
	if down, err = cut.rebuild(scan); err != nil {
		return nil, refuse(err)
	}

	upOpts := map[string]string{}
	for k, v := range w.opts {
		if k != "checkpointLocation" {
			upOpts[k] = v
		}
	}
	// A fenced hop transaction fails an upstream epoch (hop_fence.go in
	// the kafka package): the stage runs it again rather than stopping.
	hopStageRestarts(upOpts)
	// Each stage stops the other: a stage alone would either stall (the
	// downstream) or fill the hop for nobody (the upstream).
	var (
		mu        sync.Mutex
		upQ, dnQ  *StreamingQuery
		upStopped bool
	)
	upW := &DataStreamWriter{df: &DataFrame{s: s, node: cut.up}, sink: upSink, mode: Append, trigger: w.trigger,
		name: w.name + "-repartition-0", opts: upOpts, ckDir: spec.CheckpointDir, clusterTable: w.name, hopped: true, ownSink: true,
		onStop: func(err error) {
			mu.Lock()
			upStopped = true
			q := dnQ
			mu.Unlock()
			if q != nil {
				if err != nil {
					go q.Fail(fmt.Errorf("arrowstream: the repartition stage %s-repartition-0 failed: %w", w.name, err))
				} else {
					go q.Stop()
				}
			}
		}}
	uq, err := upW.Start(ctx)
	if err != nil {
		if cs, ok := upSink.(stream.ClosingSink); ok {
			cs.CloseSink()
		}
		return nil, err
	}
	dnW := *w
	dnW.df = &DataFrame{s: s, node: down}
	dnW.hopped = true
	if err := movingStage(&dnW, cut); err != nil {
		uq.Stop()
		return nil, refuse(err)
	}
	prev := w.onStop
	dnW.onStop = func(err error) {
		if prev != nil {
			prev(err)
		}
		mu.Lock()
		q := upQ
		mu.Unlock()
		if q != nil {
			go q.Stop()
		}
	}
	dq, err := dnW.Start(ctx)
	if err != nil {
		uq.Stop()
		return nil, err
	}
	mu.Lock()
	upQ, dnQ = uq, dq
	stopped := upStopped
	mu.Unlock()
	if stopped {
		go dq.Stop()
	}
	return dq, nil
}
