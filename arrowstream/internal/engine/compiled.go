package engine

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"sync/atomic"

	"github.com/apache/arrow/go/v17/arrow"

	"github.com/arrowstream/arrowstream/plan"
	"github.com/arrowstream/arrowstream/vector"
)

// ConfReusePlan turns the reuse of compiled stateless operators across
// epochs off ("false"): every epoch then builds and binds its whole
// operator tree again. Read each epoch.
const ConfReusePlan = "arrowstream.streaming.reusePlan"

// reusePlan reports whether conf lets an epoch reuse compiled chains.
func reusePlan(conf map[string]string) bool {
	return !strings.EqualFold(strings.TrimSpace(conf[ConfReusePlan]), "false")
}

// What changes between the epochs of a query, and what does not.
//
// The plan (optimized and rewritten once, in newStreamExec) is the same
// every epoch; so are the stateful operators (planned once, their state
// live across epochs). What an epoch brings is its sources' data, its
// watermark, its batch id and timestamp, the state versions it opens and
// its settings. The stateless operators (Project, Filter, WindowAssign,
// a streaming scan's pushed filters and columns) depend on none of these
// except through their input's schema and through current_timestamp().
// So each maximal subtree of them is compiled once — expressions bound,
// output schemas built, Project-over-Filter selections fused — into a
// chain whose leaves are vector.Slots, and rerun every epoch with the
// epoch's operators below it (the source's data, a stateful operator's
// output) set into its slots.
//
// A chain is compiled again when an input's schema differs from the one
// its slot was bound to (a source whose dictionary encoding changes, a
// stateful operator's first output), and not reused at all when it read
// current_timestamp() (bound as a constant of one epoch), when its
// operators cannot rerun, while the previous epoch's output is still
// open, or when ConfReusePlan is "false".

// chain is a subtree of stateless nodes compiled once for many epochs.
type chain struct {
	root   vector.Operator // the compiled operators, owning the slots
	leaves []chainLeaf
	// inUse is set while an epoch's view of the chain is open (the sink
	// may close the view on another goroutine than the next Execute).
	inUse atomic.Bool
}

// chainLeaf is one input of a chain, built per epoch.
type chainLeaf struct {
	node plan.Node // built by streamExec.build (stateful, or not chainable)
	raw  *plan.Scan
	slot *vector.Slot
}

func (c *chain) close() {
	if c.root != nil {
		c.root.Close()
		c.root = nil
	}
}

// chainable reports whether node n can be part of a compiled chain: a
// stateless node whose operator reruns. Streaming scans are chainable
// when something was pushed into them (the raw epoch input is a leaf).
func (e *streamExec) chainable(n plan.Node) bool {
	if _, ok := e.stateful[n]; ok {
		return false
	}
	switch x := n.(type) {
	case *plan.Scan:
		return x.Streaming && (len(x.Filters) > 0 || x.Columns != nil) && !e.unchainable[n]
	case *plan.Project, *plan.Filter, *plan.WindowAssign, *plan.SubqueryAlias:
		return !e.unchainable[n]
	}
	return false
}

// chainLeaves lists the inputs of the chain rooted at n, in the order
// compileChain consumes them.
func (e *streamExec) chainLeaves(n plan.Node, out []chainLeaf) []chainLeaf {
	if s, ok := n.(*plan.Scan); ok {
		return append(out, chainLeaf{raw: s})
	}
	for _, k := range n.Children() {
		if e.chainable(k) {
			out = e.chainLeaves(k, out)
		} else {
			out = append(out, chainLeaf{node: k})
		}
	}
	return out
}

// buildChained returns node n's operator for the epoch from its compiled
// chain, compiling it first when there is none or its inputs' schemas
// changed. The operator returned is a view: closing it closes the
// epoch's inputs and readies the chain for the next epoch.
func (e *streamExec) buildChained(ctx context.Context, n plan.Node, env *plan.Env, buildLeaf func(chainLeaf) (vector.Operator, error)) (vector.Operator, error) {
	c := e.chains[n]
	if c != nil && c.inUse.Load() {
		c = nil // the previous epoch's output is still open: build afresh
	}
	var leaves []chainLeaf
	if c != nil {
		leaves = c.leaves
	} else {
		leaves = e.chainLeaves(n, nil)
	}
	inputs := make([]vector.Operator, len(leaves))
	for i, l := range leaves {
		op, err := buildLeaf(l)
		if err != nil {
			closeOps(inputs[:i])
			return nil, err
		}
		inputs[i] = op
	}
	if c != nil && sameSchemas(c.leaves, inputs) {
		for i, l := range c.leaves {
			if err := l.slot.Set(inputs[i]); err != nil {
				closeOps(inputs[i+1:])
				e.dropChain(n, c)
				return nil, err
			}
		}
		c.inUse.Store(true)
		return e.newView(c), nil
	}
	if old := e.chains[n]; old != nil && !old.inUse.Load() {
		e.dropChain(n, old)
	}
	// Compile over slots of this epoch's schemas.
	fresh := &chain{leaves: make([]chainLeaf, len(leaves))}
	for i, l := range leaves {
		l.slot = vector.NewSlot(inputs[i].Schema())
		fresh.leaves[i] = l
	}
	cenv := *env
	pos := 0
	root, err := e.compileChain(ctx, n, &cenv, fresh.leaves, &pos)
	if err != nil {
		closeOps(inputs)
		for _, l := range fresh.leaves {
			l.slot.Close()
		}
		return nil, err
	}
	fresh.root = root
	for i, l := range fresh.leaves {
		if err := l.slot.Set(inputs[i]); err != nil {
			closeOps(inputs[i+1:])
			fresh.close()
			return nil, err
		}
	}
	keep := true
	switch {
	case cenv.ReadBatchTimestamp():
		keep = false // bound to this epoch's current_timestamp()
	case vector.Rerun(root) != nil:
		keep = false
	}
	if !keep {
		// Run it once, as an epoch's own operators, and build this node
		// the old way from now on.
		e.unchainable[n] = true
		slog.Debug("streaming plan: operators rebuilt every epoch", "node", n.String())
		return root, nil
	}
	if e.chains[n] == nil {
		e.chains[n] = fresh
	}
	if e.chains[n] != fresh {
		// An older chain is still in use (its epoch's output open): this
		// one serves the epoch alone.
		return root, nil
	}
	fresh.inUse.Store(true)
	return e.newView(fresh), nil
}

// newView returns an epoch's view of chain c. The epoch's views share one
// array, made for the epoch (Execute drops the last epoch's): one
// allocation instead of one per chain, and a view is never handed out
// again, so that a late second Close of an earlier epoch's view cannot
// close a later epoch's inputs.
func (e *streamExec) newView(c *chain) *chainView {
	if len(e.views) == cap(e.views) {
		e.views = make([]chainView, 0, max(len(e.chains), 2*cap(e.views), 1))
	}
	e.views = append(e.views, chainView{c: c})
	return &e.views[len(e.views)-1]
}

func (e *streamExec) dropChain(n plan.Node, c *chain) {
	c.close()
	if e.chains[n] == c {
		delete(e.chains, n)
	}
}

// compileChain builds the operators of the chain rooted at n with
// plan.BuildOperator, taking leaves[*pos:] for its inputs in chainLeaves
// order. On error everything built is closed except the slots.
func (e *streamExec) compileChain(ctx context.Context, n plan.Node, env *plan.Env, leaves []chainLeaf, pos *int) (vector.Operator, error) {
	if s, ok := n.(*plan.Scan); ok {
		l := leaves[*pos]
		*pos++
		return plan.BuildScanOn(e.mem, s, &slotRef{l.slot}, env)
	}
	kids := n.Children()
	children := make([]vector.Operator, len(kids))
	for i, k := range kids {
		var op vector.Operator
		var err error
		if e.chainable(k) {
			op, err = e.compileChain(ctx, k, env, leaves, pos)
		} else {
			op = &slotRef{leaves[*pos].slot}
			*pos++
		}
		if err != nil {
			closeOps(children[:i])
			return nil, err
		}
		children[i] = op
	}
	out, err := plan.BuildOperator(ctx, e.mem, n, children, env)
	if err != nil {
		closeOps(children)
		return nil, err
	}
	return out, nil
}

// slotRef is a chain's reference to one of its slots: closing it (the
// chain's own Close, or a failed compile) leaves the slot to the chain,
// which closes every slot itself.
type slotRef struct{ *vector.Slot }

func (s *slotRef) Close() error { return s.Slot.CloseInput() }

// sameSchemas reports whether every input has its slot's schema.
func sameSchemas(leaves []chainLeaf, inputs []vector.Operator) bool {
	for i, l := range leaves {
		if !plan.SchemasEqual(l.slot.Schema(), inputs[i].Schema()) {
			return false
		}
	}
	return true
}

func closeOps(ops []vector.Operator) {
	for _, op := range ops {
		if op != nil {
			op.Close()
		}
	}
}

// chainView is one epoch's use of a chain: Next pulls the compiled
// operators; Close closes the epoch's inputs (the chain's slots) and
// reruns the chain, which is then free for the next epoch.
type chainView struct {
	c      *chain
	closed bool
}

func (v *chainView) Schema() *arrow.Schema { return v.c.root.Schema() }

func (v *chainView) Next(ctx context.Context) (arrow.Record, error) {
	if v.closed {
		return nil, errors.New("arrowstream: epoch operator is closed")
	}
	return v.c.root.Next(ctx)
}

func (v *chainView) Close() error {
	if v.closed {
		return nil
	}
	v.closed = true
	var first error
	for _, l := range v.c.leaves {
		if err := l.slot.CloseInput(); err != nil && first == nil {
			first = err
		}
	}
	if err := vector.Rerun(v.c.root); err != nil {
		// Cannot happen for a chain that reran when compiled; keep it
		// in use so that it is never handed out again.
		return errors.Join(first, fmt.Errorf("arrowstream: compiled operators: %w", err))
	}
	v.c.inUse.Store(false)
	return first
}

// closeChains closes every compiled chain (the query stops).
func (e *streamExec) closeChains() {
	for n, c := range e.chains {
		c.close()
		for _, l := range c.leaves {
			l.slot.Close()
		}
		delete(e.chains, n)
	}
}
