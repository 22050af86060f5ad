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
}

// Target applies a Policy to the process's soft memory limit. Safe for
// concurrent use.
type Target struct {
	policy Policy
	set    func(int64) int64 // debug.SetMemoryLimit; tests replace it

	mu    sync.Mutex
	prev  int64 // the limit before Start, restored by Stop
	limit int64 // the limit set last
	held  int64 // the held bytes it was set for
}

// defaultHeadroom is Floor over Base when the policy leaves it zero.
const defaultHeadroom = 4 << 20

// Start validates p, measures Base when it is zero and sets the limit for
// nothing held.
func Start(p Policy) (*Target, error) {
	return start(p, debug.SetMemoryLimit, runtimeMemory)
}

func start(p Policy, set func(int64) int64, measure func() int64) (*Target, error) {
	if !(p.Ratio > 0) || math.IsInf(p.Ratio, 0) {
		return nil, fmt.Errorf("memtarget: ratio %v: must be a positive number", p.Ratio)
	}
	if p.Base < 0 || p.Floor < 0 || p.Ceiling < 0 {
		return nil, fmt.Errorf("memtarget: negative base %d, floor %d or ceiling %d", p.Base, p.Floor, p.Ceiling)
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
	t := &Target{policy: p, set: set}
	t.prev = set(-1) // a negative limit reads the current one
	t.Update(0)
	return t, nil
}

// Limit is the limit the policy gives for held bytes.
func (p Policy) Limit(held int64) int64 {
	limit := int64(math.MaxInt64)
	if l := float64(p.Base) + p.Ratio*float64(max(held, 0)); l < math.MaxInt64 {
		limit = max(int64(l), p.Floor)
	}
	if p.Ceiling > 0 {
		limit = min(limit, p.Ceiling)
	}
	return limit
}

// Update sets the limit for the bytes held now and returns it. Called
// after each epoch (or each change of a table's size), it is cheap: a
// limit equal to the last one is not set again.
func (t *Target) Update(held int64) int64 {
	limit := t.policy.Limit(held)
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
