package stateful

import "github.com/arrowstream/arrowstream/vector"

// finalPassState is a streaming aggregation's vector.FinalPass, bound at
// its first finalize: the final rows of its evicted or changed groups are
// their partial-state columns as they are when every aggregate allows it
// (count; min and max of integral values), instead of a final aggregation
// bound and run over them each epoch (vector.FinalRows).
type finalPassState struct {
	pass  *vector.FinalPass
	bound bool // tried: pass is nil when the aggregates do not allow it
}

// finalPassOf returns the operator's final pass for spec (its AggFinal
// spec over the partial layout), or nil when it does not apply; a bind
// error leaves the general path, which reports it.
func (s *statefulAggregate) finalPassOf(spec vector.AggregateSpec) *vector.FinalPass {
	f := &s.finalPass
	if !f.bound {
		f.bound = true
		if p, ok, err := vector.NewFinalPass(s.mem, s.partialSchema, spec); ok && err == nil {
			f.pass = p
		}
	}
	return f.pass
}
