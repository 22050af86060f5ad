package memtarget

import (
	"fmt"
	"math"
	"runtime/debug"
	"runtime/metrics"
	"sync"
)

// Policy sets the limit from the held bytes: Base + Ratio·held, at least
// Floor and at most Ceiling (when positive).
type Policy struct {
	// Ratio is the runtime memory allowed per held byte over Base (> 0;
	// the bound is 1.5 for the whole resident set, so a ratio
	// somewhat below leaves room for memory outside the Go heap).
	Ratio float64
	// Base is the runtime's memory when nothing is held; 0 means what the
	// runtime holds when Start runs (after a collection), which is right
	// when Start runs before the queries do.
	Base int64
	// Floor is the smallest limit set (0: Base + 4 MiB).
	Floor int64
	// Ceiling is the largest limit set (0: none; else typically the
	// process's hard budget).
	Ceiling int64
	// Slack is the share of the live heap (as the last collection marked
	// it) the limit always leaves free over it, at least SlackMin bytes
	// (0: 1/8 and 4 MiB). Without it a limit under what is live (memory
	// the held bytes do not count: a query's own structures, an epoch's
	// working set) makes the collector run back to back, up to half the
	// CPU; with it the collector runs at most once per Slack of the live
	// heap allocated, as with GOGC=100·Slack, and the ratio is met only
	// where the live memory allows it.
	Slack    float64
	SlackMin int64
}

// Target applies a Policy to the process's soft memory limit. Safe for
// concurrent use.
type Target struct {
	policy Policy
	set    func(int64) int64 // debug.SetMemoryLimit; tests replace it
	// live reads what the limit must leave room for: the runtime's memory
	// that is not heap objects or free heap, plus the live heap.
	live func() int64

	mu    sync.Mutex
	prev  int64 // the limit before Start, restored by Stop
	limit int64 // the limit set last
	held  int64 // the held bytes it was set for
}

// Defaults: Floor over Base, Slack and SlackMin when the policy leaves
// them zero.
const (
	defaultHeadroom = 4 << 20
	defaultSlack    = 1.0 / 8
	defaultSlackMin = 4 << 20
)

// Start validates p, measures Base when it is zero and sets the limit for
// nothing held.
func Start(p Policy) (*Target, error) {
	return start(p, debug.SetMemoryLimit, runtimeMemory, liveMemory)
}

func start(p Policy, set func(int64) int64, measure, live func() int64) (*Target, error) {
	if !(p.Ratio > 0) || math.IsInf(p.Ratio, 0) {
		return nil, fmt.Errorf("memtarget: ratio %v: must be a positive number", p.Ratio)
	}
	if p.Base < 0 || p.Floor < 0 || p.Ceiling < 0 || p.SlackMin < 0 {
		return nil, fmt.Errorf("memtarget: negative base %d, floor %d, ceiling %d or minimum slack %d", p.Base, p.Floor, p.Ceiling, p.SlackMin)
	}
	if p.Slack < 0 || math.IsNaN(p.Slack) || math.IsInf(p.Slack, 0) {
		return nil, fmt.Errorf("memtarget: slack %v: must be a non-negative number", p.Slack)
	}
	if p.Slack == 0 {
		p.Slack = defaultSlack
	}
	if p.SlackMin == 0 {
		p.SlackMin = defaultSlackMin
	}
	if p.Base == 0 {
		p.Base = measure()
	}
	if p.Floor == 0 {
		p.Floor = p.Base + defaultHeadroom
	}
	if p.Ceiling > 0 && p.Floor > p.Ceiling {
		return nil, fmt.Errorf("memtarget: floor %d above ceiling %d", p.Floor, p.Ceiling)
	}
	t := &Target{policy: p, set: set, live: live}
	t.prev = set(-1) // a negative limit reads the current one
	t.Update(0)
	return t, nil
}

// Limit is the limit the policy gives for held bytes when live bytes
// (the runtime's memory besides heap objects and free heap, plus the
// live heap) must fit: Base + Ratio·held, at least Floor and live plus
// its slack, at most Ceiling.
func (p Policy) Limit(held, live int64) int64 {
	limit := int64(math.MaxInt64)
	if l := float64(p.Base) + p.Ratio*float64(max(held, 0)); l < math.MaxInt64 {
		limit = max(int64(l), p.Floor)
	}
	if l := float64(live) + max(p.Slack*float64(live), float64(p.SlackMin)); l < math.MaxInt64 {
		limit = max(limit, int64(l))
	} else {
		limit = math.MaxInt64
	}
	if p.Ceiling > 0 {
		limit = min(limit, p.Ceiling)
	}
	return limit
}

// Update sets the limit for the bytes held now and returns it. Called
// after each epoch (or each change of a table's size), it is cheap (a
// read of runtime/metrics; a limit equal to the last one is not set
// again).
func (t *Target) Update(held int64) int64 {
	limit := t.policy.Limit(held, t.live())
	t.mu.Lock()
	defer t.mu.Unlock()
	t.held = held
	if limit != t.limit {
		t.set(limit)
		t.limit = limit
	}
	return limit
}

// Policy is the policy in force, with Base and Floor as measured.
func (t *Target) Policy() Policy { return t.policy }

// Limit is the limit set last.
func (t *Target) Limit() int64 {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.limit
}

// Stop restores the limit that was in force before Start.
func (t *Target) Stop() {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.set(t.prev)
	t.limit = t.prev
}

// liveMemory is what a limit must leave room for now: the runtime's
// memory (as the limit counts it) less the heap's objects and free pages,
// plus the live heap the last collection marked.
func liveMemory() int64 {
	s := []metrics.Sample{
		{Name: "/memory/classes/total:bytes"},
		{Name: "/memory/classes/heap/released:bytes"},
		{Name: "/memory/classes/heap/objects:bytes"},
		{Name: "/memory/classes/heap/free:bytes"},
		{Name: "/gc/heap/live:bytes"},
	}
	metrics.Read(s)
	var v [5]int64
	for i := range s {
		if s[i].Value.Kind() != metrics.KindUint64 {
			return 0
		}
		v[i] = int64(s[i].Value.Uint64())
	}
	return max(v[0]-v[1]-v[2]-v[3], 0) + v[4]
}

// runtimeMemory is what the Go runtime's memory limit counts now, after a
// collection: everything it mapped minus the heap it returned to the OS.
func runtimeMemory() int64 {
	debug.FreeOSMemory()
	s := []metrics.Sample{
		{Name: "/memory/classes/total:bytes"},
		{Name: "/memory/classes/heap/released:bytes"},
	}
	metrics.Read(s)
	if s[0].Value.Kind() != metrics.KindUint64 || s[1].Value.Kind() != metrics.KindUint64 {
		return 0
	}
	return int64(s[0].Value.Uint64() - s[1].Value.Uint64())
}
