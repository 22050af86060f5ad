package engine

import (
	"github.com/arrowstream/arrowstream/arrowstream/internal/stateful"
	"github.com/arrowstream/arrowstream/plan"
)

// Per-operator watermarks (docs/semantics.md §3.3, Spark's
// PropagateWatermarkSimulator): a stateful operator's input watermark is
// the min of its children's output watermarks; a watermark node outputs
// the global watermark, a stateless node its input's, and a stateful node
// what it lets through. Aggregation and deduplication let their input
// through; the stream-stream join lets through min(left state watermark,
// right state watermark, input), because a row it holds until its state
// watermark passes may still come out joined (or null-padded) that late.
// Every state watermark is the input watermark minus a constant, so each
// operator's input watermark is the global one minus a fixed shift, the
// sum of the joins' shifts on its deepest path to a watermark node.
//
// flatMapGroupsWithState outputs no watermark at all: its function may
// emit rows of any event time, so nothing downstream can be bounded by
// its input's (Spark's produceOutputWatermark returns None for it in
// every mode). A child without a watermark is left out of the min; an
// operator none of whose children has one sees 0 (Spark's input
// watermark None, read as 0), whatever the global watermark.

// computeWatermarkShifts sets e.wmShift: per operator (index in order),
// how far (µs) its input watermark trails the global one; and e.noInputWm:
// the operators that get no input watermark.
func (e *streamExec) computeWatermarkShifts() {
	e.wmShift = make([]int64, len(e.order))
	hasWm := make([]bool, len(e.order))
	seen := make([]bool, len(e.order))
	// out returns n's output shift and whether n outputs a watermark.
	var out func(n plan.Node) (int64, bool)
	out = func(n plan.Node) (int64, bool) {
		var in int64
		has := false
		for _, c := range n.Children() {
			s, ok := out(c)
			if !ok {
				continue
			}
			if !has || s > in {
				in = s
			}
			has = true
		}
		if _, isWM := n.(*plan.EventTimeWatermark); isWM {
			return 0, true
		}
		i, ok := e.stateful[n]
		if !ok {
			return in, has
		}
		// A copy's entry may repeat: the operators of a copy run over the
		// same input, so every walk gives the same answer.
		seen[i] = true
		if has {
			hasWm[i] = true
			if in > e.wmShift[i] {
				e.wmShift[i] = in
			}
		}
		if _, isFMGWS := n.(*plan.FlatMapGroupsWithState); isFMGWS || !has {
			return 0, false
		}
		if s, ok := e.order[i].(stateful.OutputWatermarkShifter); ok {
			return in + s.OutputWatermarkShiftUs(), true
		}
		return in, true
	}
	out(e.root)
	e.noInputWm = make([]bool, len(e.order))
	for i := range e.order {
		e.noInputWm[i] = seen[i] && !hasWm[i]
	}
}

// shiftedWatermark is an operator's input watermark (ms) for the global
// watermark wmMs: 0 while the global watermark is 0 (Spark skips the
// propagation then), else wmMs less the shift, never below 0.
func shiftedWatermark(wmMs, shiftUs int64) int64 {
	if wmMs == 0 || shiftUs <= 0 {
		return wmMs
	}
	w := wmMs - (shiftUs+999)/1000
	if w < 0 {
		return 0
	}
	return w
}

// operatorWatermark is operator i's input watermark (ms) for the global
// watermark wmMs.
func (e *streamExec) operatorWatermark(i int, wmMs int64) int64 {
	if i < len(e.noInputWm) && e.noInputWm[i] {
		return 0
	}
	if i < len(e.wmShift) {
		return shiftedWatermark(wmMs, e.wmShift[i])
	}
	return wmMs
}

// operatorEpoch is ep as operator i sees it: its own eviction and
// late-event watermarks.
func (e *streamExec) operatorEpoch(i int, ep stateful.Epoch) stateful.Epoch {
	ep.WatermarkMs = e.operatorWatermark(i, ep.WatermarkMs)
	ep.LateWatermarkMs = e.operatorWatermark(i, ep.LateWatermarkMs)
	return ep
}
