package engine

import (
	"context"
	"io"
	"strconv"
	"strings"

	"github.com/apache/arrow/go/v17/arrow"

	"github.com/arrowstream/arrowstream/arrowstream/internal/stateful"
	"github.com/arrowstream/arrowstream/arrowstream/stream"
	"github.com/arrowstream/arrowstream/plan"
	"github.com/arrowstream/arrowstream/vector"
)

// A stateful subplan read twice (a CTE or view read by both sides of a
// join, a self-join of an aggregation) appears twice in the optimized
// plan: two equal subtrees, each rooted at a stateful operator. Spark
// plans and runs both, each with its own state. Here, when the query's
// ConfShareStatefulSubplans is on, the first one runs once per epoch and
// its output (drained into records) is handed to every reader as a scan of
// its own references; the copies are not run, keep no state and declare
// none. Both readers see the same rows in the same order that two runs of
// the subplan over the epoch's input would give (plan.SubplanKey admits
// only deterministic plans over the same streaming sources).
//
// The shape is settled once per run, at the first epoch, from the
// settings the offset log froze: a checkpoint written without sharing
// (before it existed, or with the setting off) holds state for every copy
// and keeps running every copy. Operator numbers (state/<op>) are those
// of the unshared plan, so that every operator that is not a copy keeps
// its number whichever shape runs; a copy's number is simply unused.

// subplanSharing records, while newStreamExec walks the plan in its
// unshared shape, which stateful subtrees are copies of an earlier one.
type subplanSharing struct {
	keys  map[string]plan.Node    // subplan key → first subtree with it
	dupOf map[plan.Node]plan.Node // a copy's root → the first subtree's root
	// tables numbers the streaming tables for the keys (scans of the same
	// table read the same source: streamExec opens one per table).
	tables map[plan.Table]int
	// depth > 0 while the walk is inside a copy.
	depth int
	// opNodes lists the stateful operators' nodes in the walk's order
	// (one node may be walked twice: a plan that holds the same subtree
	// twice); opInCopy and wmInCopy mark the stateful operators and
	// watermark nodes inside a copy; srcUses counts each source's scans
	// outside the copies.
	opNodes  []plan.Node
	opInCopy []bool
	wmInCopy []bool
	srcUses  []int
}

func newSubplanSharing() *subplanSharing {
	return &subplanSharing{keys: map[string]plan.Node{}, dupOf: map[plan.Node]plan.Node{}, tables: map[plan.Table]int{}}
}

// copyOf returns the earlier subtree that the stateful subtree n is a copy
// of, or nil (n becomes the first of its key). Inside a copy it returns
// nil: the copy's root stands for the whole subtree.
func (s *subplanSharing) copyOf(n plan.Node) plan.Node {
	if s.depth > 0 {
		return nil
	}
	key, ok := plan.SubplanKey(n, func(x *plan.Scan) (string, bool) {
		id, seen := s.tables[x.Table]
		if !seen {
			id = len(s.tables)
			s.tables[x.Table] = id
		}
		return strconv.Itoa(id), true
	})
	if !ok {
		return nil
	}
	if first, ok := s.keys[key]; ok {
		return first
	}
	s.keys[key] = n
	return nil
}

// sharedRun is a shared subplan's output in the current epoch: built and
// drained by its first reader, replayed to each reader.
type sharedRun struct {
	first   plan.Node // the subtree that runs
	readers int
	ran     bool
	schema  *arrow.Schema
	records []arrow.Record
}

func (r *sharedRun) release() {
	vector.ReleaseRecords(r.records)
	r.records, r.schema, r.ran = nil, nil, false
}

// shareSubplans reports whether a run's settings share stateful subplans.
func shareSubplans(conf map[string]string) bool {
	return !strings.EqualFold(strings.TrimSpace(conf[stream.ConfShareStatefulSubplans]), "false")
}

// settleShape fixes the plan's shape for the run from the epoch's (frozen)
// settings: with sharing on, the copies' operators are dropped (closed,
// their state neither opened nor declared) and each first subtree is run
// once for all its readers. Called at the start of every Execute; only the
// first call decides.
func (e *streamExec) settleShape(conf map[string]string) {
	if e.shaped {
		return
	}
	e.shaped = true
	sh := e.sharing
	e.sharing = nil
	if sh == nil || len(sh.dupOf) == 0 || !shareSubplans(conf) {
		return
	}
	keep := make([]bool, len(e.order))
	order := e.order[:0:0]
	clear(e.stateful)
	for i, op := range e.order {
		if sh.opInCopy[i] {
			if c, ok := op.(io.Closer); ok {
				c.Close()
			}
			continue
		}
		keep[i] = true
		e.stateful[sh.opNodes[i]] = len(order)
		order = append(order, op)
	}
	e.order = order
	e.state.keep(keep)
	wms := e.wmNodes[:0:0]
	for i, w := range e.wmNodes {
		if !sh.wmInCopy[i] {
			wms = append(wms, w)
		}
	}
	e.wmNodes = wms
	e.wmStats = make([]stateful.EventTimeStats, len(wms))
	e.nameWatermarks()
	e.srcUses = sh.srcUses
	e.shared = map[plan.Node]*sharedRun{}
	e.readers = make([]int, len(e.order))
	for dup, first := range sh.dupOf {
		r := e.shared[first]
		if r == nil {
			r = &sharedRun{first: first, readers: 1}
			e.shared[first] = r
		}
		r.readers++
		e.shared[dup] = r
	}
	for first, r := range e.shared {
		if first == r.first {
			e.readers[e.stateful[first]] = r.readers
		}
	}
}

// buildShared returns a reader's view of a shared subplan's output for the
// epoch, running the subplan at its first reader.
func (e *streamExec) buildShared(ctx context.Context, r *sharedRun, ep stateful.Epoch, env *plan.Env, feeds []*feed) (vector.Operator, error) {
	if !r.ran {
		op, err := e.buildNode(ctx, r.first, ep, env, feeds)
		if err != nil {
			return nil, err
		}
		recs, err := vector.Drain(ctx, op)
		schema := op.Schema()
		op.Close()
		if err != nil {
			return nil, err
		}
		r.records, r.schema, r.ran = recs, schema, true
	}
	return vector.NewScan(r.schema, r.records...)
}

// releaseShared drops the epoch's shared outputs (each reader's scan holds
// its own references).
func (e *streamExec) releaseShared() {
	for n, r := range e.shared {
		if n == r.first {
			r.release()
		}
	}
}

// SharedReadersMetric is the custom progress metric of a stateful operator
// that runs once for several readers of the same subplan: how many.
const SharedReadersMetric = "sharedReaders"

// withReaders adds the readers of operator i, when shared, to its report.
func (e *streamExec) withReaders(i int, p stream.StateOperatorProgress) stream.StateOperatorProgress {
	if i >= len(e.readers) || e.readers[i] < 2 {
		return p
	}
	m := make(map[string]int64, len(p.CustomMetrics)+1)
	for k, v := range p.CustomMetrics {
		m[k] = v
	}
	m[SharedReadersMetric] = int64(e.readers[i])
	p.CustomMetrics = m
	return p
}
