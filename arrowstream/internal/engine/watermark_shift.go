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

// computeWatermarkShifts sets e.wmShift: per operator (index in order),
// how far (µs) its input watermark trails the global one.
func (e *streamExec) computeWatermarkShifts() {
	e.wmShift = make([]int64, len(e.order))
	var out func(n plan.Node) int64
	out = func(n plan.Node) int64 {
		var in int64
		for _, c := range n.Children() {
			if s := out(c); s > in {
				in = s
			}
		}
		if _, isWM := n.(*plan.EventTimeWatermark); isWM {
			return 0
		}
		i, ok := e.stateful[n]
		if !ok {
			return in
		}
		// A copy's entry may repeat: its first walk decides, as the
		// operators of a copy run over the same input.
		if in > e.wmShift[i] {
			e.wmShift[i] = in
		}
		if s, ok := e.order[i].(stateful.OutputWatermarkShifter); ok {
			return in + s.OutputWatermarkShiftUs()
		}
		return in
	}
	out(e.root)
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

// operatorEpoch is ep as operator i sees it: its own eviction and
// late-event watermarks.
func (e *streamExec) operatorEpoch(i int, ep stateful.Epoch) stateful.Epoch {
	if i < len(e.wmShift) && e.wmShift[i] > 0 {
		ep.WatermarkMs = shiftedWatermark(ep.WatermarkMs, e.wmShift[i])
		ep.LateWatermarkMs = shiftedWatermark(ep.LateWatermarkMs, e.wmShift[i])
	}
	return ep
}
