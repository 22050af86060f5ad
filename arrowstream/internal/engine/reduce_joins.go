package engine

import (
	"github.com/arrowstream/arrowstream/arrowstream/internal/stateful"
	"github.com/arrowstream/arrowstream/plan"
)

// reduceJoins lets each stream-stream join read only by a max or min
// aggregation directly above it emit only the pairs that aggregation
// keeps (stateful.ReduceJoinForAggregate). A join whose node the plan
// holds twice, or that is or has a shared copy (shared_subplan.go), has
// other readers and is left whole.
func (e *streamExec) reduceJoins(root plan.Node, sh *subplanSharing) {
	refs := map[plan.Node]int{}
	var count func(n plan.Node)
	count = func(n plan.Node) {
		refs[n]++
		for _, c := range n.Children() {
			count(c)
		}
	}
	count(root)
	shared := map[plan.Node]bool{}
	for dup, first := range sh.dupOf {
		shared[dup], shared[first] = true, true
	}
	for n, i := range e.stateful {
		a, ok := n.(*plan.Aggregate)
		if !ok {
			continue
		}
		j, ok := a.Input.(*plan.Join)
		if !ok || refs[j] != 1 || shared[j] || shared[a] {
			continue
		}
		if k, ok := e.stateful[j]; ok {
			stateful.ReduceJoinForAggregate(e.order[k], e.order[i], a)
		}
	}
}
