package engine

import (
	"testing"

	"github.com/arrowstream/arrowstream/arrowstream/internal/stateful"
	"github.com/arrowstream/arrowstream/arrowstream/stream"
)

// eventTimeSrc is a source that reports the event time its writers reached.
type eventTimeSrc struct {
	stream.Source
	ms int64
	ok bool
}

func (s eventTimeSrc) EventTimeMaxMs() (int64, bool) { return s.ms, s.ok }

// TestSourceEventTime: an event-time source's report replaces what the
// watermark nodes saw (the smallest report of several); without one, or
// with none active, the nodes' statistics stand.
func TestSourceEventTime(t *testing.T) {
	stats := func() []stateful.EventTimeStats {
		return []stateful.EventTimeStats{{NodeName: "n1", Count: 3, MaxMs: 9000, DelayMs: 100}, {NodeName: "n2"}}
	}
	got := sourceEventTime(nil, stats())
	if got[0].MaxMs != 9000 || got[1].Count != 0 {
		t.Fatalf("without event-time sources: %+v, want the statistics unchanged", got)
	}
	got = sourceEventTime([]stream.Source{eventTimeSrc{ms: 5000, ok: false}}, stats())
	if got[0].MaxMs != 9000 {
		t.Fatalf("with no active writer: %+v, want the statistics unchanged", got)
	}
	got = sourceEventTime([]stream.Source{eventTimeSrc{ms: 7000, ok: true}, eventTimeSrc{ms: 4000, ok: true}}, stats())
	if got[0].MaxMs != 4000 || got[0].Count != 3 || got[1].MaxMs != 4000 || got[1].Count != 1 {
		t.Fatalf("with two sources: %+v, want both nodes at the smaller report, 4000", got)
	}
}
