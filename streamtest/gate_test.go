package streamtest

import (
	"testing"

	"github.com/arrowstream/arrowstream/arrowstream"
)

// The engine asks sources 0 and 1 in turn once per trigger; a publish
// between the two asks of one trigger must reach the query whole, in the
// next trigger.
func TestGateKeepsMultiAddTogether(t *testing.T) {
	g := newGate()
	g.add()
	g.add()
	trigger := func() [2]string {
		return [2]string{g.latest(0).String(), g.latest(1).String()}
	}
	g.publish(map[int]arrowstream.Offset{0: arrowstream.Offset("0")})
	if got := trigger(); got != [2]string{"0", "-"} {
		t.Fatalf("first trigger sees %v", got)
	}
	// Publish between the asks of one trigger.
	a := g.latest(0)
	g.publish(map[int]arrowstream.Offset{0: arrowstream.Offset("1"), 1: arrowstream.Offset("0")})
	b := g.latest(1)
	if a.String() != "0" || b.String() != "-" {
		t.Fatalf("a publish split a trigger: %s %s", a, b)
	}
	if got := trigger(); got != [2]string{"1", "0"} {
		t.Fatalf("next trigger sees %v", got)
	}
	// A query that reads only source 1 sees every publish at its next ask.
	g.publish(map[int]arrowstream.Offset{1: arrowstream.Offset("1")})
	if got := g.latest(1).String(); got != "1" {
		t.Fatalf("single-source query sees %s", got)
	}
}
