package kafka

import (
	"testing"
	"time"
)

// TestStageReadTellsHopPaceOfPlannedEpochs: the upstream stage's source
// marks its epoch in flight at its planning, through the registry that
// links it to its hop sink's pace, whichever registers first; a stage
// without a hop sink (a stateless table) tells nothing.
func TestStageReadTellsHopPaceOfPlannedEpochs(t *testing.T) {
	t0 := time.Unix(1000, 0)
	for _, sinkFirst := range []bool{true, false} {
		var reads stageReads
		pace := newHopPace()
		var r *stageRead
		if sinkFirst {
			reads.link("/ck/t/hop-0/", pace)
			r = reads.register("/ck/t/hop-0", "i1")
		} else {
			r = reads.register("/ck/t/hop-0", "i1")
			reads.link("/ck/t/hop-0/", pace)
		}
		r.planned(t0)
		if got := pace.inFlight(); !got.Equal(t0) {
			t.Fatalf("sink first %v: in flight since %v, want %v", sinkFirst, got, t0)
		}
		// The sink's start keeps the planning's time; its end clears it.
		pace.writingFrom(t0.Add(time.Second))
		if got := pace.inFlight(); !got.Equal(t0) {
			t.Fatalf("sink first %v: in flight since %v after the sink began, want %v", sinkFirst, got, t0)
		}
		pace.ended()
		if got := pace.inFlight(); !got.IsZero() {
			t.Fatalf("sink first %v: in flight since %v after the epoch ended", sinkFirst, got)
		}
		// A hold for minOffsetsPerTrigger is told the same way; the next
		// planning of an epoch ends it.
		r.holding(t0.Add(500 * time.Millisecond))
		if got := pace.holdingUntil(); !got.Equal(t0.Add(500 * time.Millisecond)) {
			t.Fatalf("sink first %v: holding until %v, want %v", sinkFirst, got, t0.Add(500*time.Millisecond))
		}
		r.planned(t0.Add(time.Second))
		if got := pace.holdingUntil(); !got.IsZero() {
			t.Fatalf("sink first %v: holding until %v after the next planning", sinkFirst, got)
		}
		pace.ended()
		other := reads.register("/ck/u", "i1")
		other.planned(t0)
		if got := pace.inFlight(); !got.IsZero() {
			t.Fatalf("sink first %v: another stage's planning marked this pace", sinkFirst)
		}
	}
	var none *stageRead
	none.planned(t0) // a source outside cluster mode: nil-safe
	none.holding(t0)
}
