package engine

import (
	"fmt"
	"strings"

	"github.com/arrowstream/arrowstream/arrowstream/internal/stateful"
)

// WatermarkPolicy combines the watermarks of several inputs into the
// query's global watermark.
type WatermarkPolicy int

const (
	// WatermarkMin advances only when every input advances (the default).
	WatermarkMin WatermarkPolicy = iota
	// WatermarkMax advances with the fastest input.
	WatermarkMax
)

func (p WatermarkPolicy) String() string {
	if p == WatermarkMax {
		return "max"
	}
	return "min"
}

// ParseWatermarkPolicy parses "min" or "max".
func ParseWatermarkPolicy(s string) (WatermarkPolicy, error) {
	switch strings.ToLower(strings.TrimSpace(s)) {
	case "min", "":
		return WatermarkMin, nil
	case "max":
		return WatermarkMax, nil
	}
	return 0, fmt.Errorf("arrowstream: watermark policy %q: valid values are 'min' and 'max'", s)
}

// watermarkTracker keeps each watermark node's watermark (in memory only,
// as Spark: they are not persisted) and the global watermark, which never
// decreases.
type watermarkTracker struct {
	policy WatermarkPolicy
	nodes  map[string]int64 // node → watermark ms; absent: no value yet (counts as 0)
	global int64
}

func newWatermarkTracker(policy WatermarkPolicy, global int64) *watermarkTracker {
	return &watermarkTracker{policy: policy, nodes: map[string]int64{}, global: global}
}

// observe folds one epoch's statistics in (docs/semantics.md §3.2). nodes lists
// every watermark node of the plan, so that nodes that never saw data count
// as 0 under the min policy.
func (t *watermarkTracker) observe(nodes []string, stats []stateful.EventTimeStats) {
	for _, s := range stats {
		if s.Count == 0 {
			continue
		}
		candidate := s.MaxMs - s.DelayMs
		if cur, ok := t.nodes[s.NodeName]; !ok || candidate > cur {
			t.nodes[s.NodeName] = candidate
		}
	}
	if len(nodes) == 0 {
		return
	}
	var chosen int64
	for i, n := range nodes {
		wm := t.nodes[n] // 0 when absent
		switch {
		case i == 0:
			chosen = wm
		case t.policy == WatermarkMin && wm < chosen:
			chosen = wm
		case t.policy == WatermarkMax && wm > chosen:
			chosen = wm
		}
	}
	if chosen > t.global {
		t.global = chosen
	}
}
