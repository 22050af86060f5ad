package memtarget

import (
	"math"
	"runtime"
	"runtime/debug"
	"runtime/metrics"
	"testing"
)

// fakeLimit stands for debug.SetMemoryLimit: it keeps the limit and
// counts the calls that set one.
type fakeLimit struct {
	limit int64
	sets  int
}

func (f *fakeLimit) set(l int64) int64 {
	old := f.limit
	if l >= 0 {
		f.limit = l
		f.sets++
	}
	return old
}

// TestPolicyLimit: the limit is Base + Ratio·held within Floor and
// Ceiling, and never under the live memory plus its slack, against a
// direct computation over many held and live figures.
func TestPolicyLimit(t *testing.T) {
	p := Policy{Ratio: 1.25, Base: 10 << 20, Floor: 12 << 20, Ceiling: 1 << 30, Slack: 0.125, SlackMin: 4 << 20}
	for _, held := range []int64{-5, 0, 1, 1 << 20, 1600 << 10, 100 << 20, 1 << 29, 1 << 40, math.MaxInt64} {
		for _, live := range []int64{0, 1 << 20, 20 << 20, 64 << 20, 900 << 20, 1 << 40} {
			want := float64(p.Base) + p.Ratio*float64(max(held, 0))
			want = math.Max(want, float64(p.Floor))
			want = math.Max(want, float64(live)+math.Max(float64(live)/8, 4<<20))
			want = math.Min(want, float64(p.Ceiling))
			if got := p.Limit(held, live); got != int64(want) {
				t.Errorf("Limit(%d, %d) = %d, want %d", held, live, got, int64(want))
			}
		}
	}
	if got := (Policy{Ratio: 2, Base: 1, Slack: 0.125, SlackMin: 1}).Limit(math.MaxInt64, 0); got != math.MaxInt64 {
		t.Errorf("no ceiling, huge held: %d", got)
	}
}

// TestTargetSetsAndRestores: Start measures Base and sets the floor,
// Update follows the held bytes (and does not set an unchanged limit
// again), Stop restores the limit in force before.
func TestTargetSetsAndRestores(t *testing.T) {
	f := &fakeLimit{limit: math.MaxInt64}
	live := int64(0)
	tg, err := start(Policy{Ratio: 1.5}, f.set, func() int64 { return 100 }, func() int64 { return live })
	if err != nil {
		t.Fatal(err)
	}
	if p := tg.Policy(); p.Base != 100 || p.Floor != 100+defaultHeadroom || p.Slack != defaultSlack || p.SlackMin != defaultSlackMin {
		t.Fatalf("policy %+v", p)
	}
	if f.limit != 100+defaultHeadroom || tg.Limit() != f.limit {
		t.Fatalf("limit at start %d (target says %d)", f.limit, tg.Limit())
	}
	if l := tg.Update(64 << 20); l != 100+96<<20 || f.limit != l {
		t.Fatalf("Update(64 MiB) = %d, set %d", l, f.limit)
	}
	sets := f.sets
	tg.Update(64 << 20)
	if f.sets != sets {
		t.Errorf("an unchanged limit was set again")
	}
	// More live than the held bytes allow: the limit leaves the slack.
	live = 200 << 20
	if l := tg.Update(64 << 20); l != live+live/8 {
		t.Errorf("Update with %d live = %d, want %d", live, l, live+live/8)
	}
	tg.Stop()
	if f.limit != math.MaxInt64 {
		t.Errorf("limit after Stop %d, want the previous (none)", f.limit)
	}
}

// TestStartRejectsBadPolicy: ratios that are not positive numbers,
// negative bytes and a floor above the ceiling are errors naming them.
func TestStartRejectsBadPolicy(t *testing.T) {
	for _, p := range []Policy{
		{}, {Ratio: -1}, {Ratio: math.NaN()}, {Ratio: math.Inf(1)},
		{Ratio: 1, Base: -1}, {Ratio: 1, Floor: -1}, {Ratio: 1, Ceiling: -1},
		{Ratio: 1, Base: 10, Floor: 100, Ceiling: 50},
		{Ratio: 1, Slack: -0.5}, {Ratio: 1, Slack: math.NaN()}, {Ratio: 1, SlackMin: -1},
	} {
		f := &fakeLimit{limit: math.MaxInt64}
		if _, err := start(p, f.set, func() int64 { return 1 }, func() int64 { return 0 }); err == nil {
			t.Errorf("policy %+v accepted", p)
		} else if f.sets != 0 {
			t.Errorf("policy %+v: rejected (%v) but a limit was set", p, err)
		}
	}
}

// TestTargetBoundsHeapGoal: with 32 MiB held live, the collector's heap
// goal after a collection stays within Base + 1.25·held under a target,
// where the default collector (GOGC=100) sets it at about twice what is
// live. (The goal, not a peak under churn: the limit is soft, and on a
// loaded machine an allocation burst outruns the collector's marking.)
func TestTargetBoundsHeapGoal(t *testing.T) {
	const held = 32 << 20
	tg, err := Start(Policy{Ratio: 1.25})
	if err != nil {
		t.Fatal(err)
	}
	defer tg.Stop()
	base := tg.Policy().Base
	live := make([][]byte, 0, held>>20)
	for range held >> 20 {
		live = append(live, make([]byte, 1<<20))
	}
	tg.Update(held)
	runtime.GC()
	s := []metrics.Sample{{Name: "/gc/heap/goal:bytes"}}
	metrics.Read(s)
	goal := int64(s[0].Value.Uint64())
	runtime.KeepAlive(live)
	bound := base + held*5/4 + 1<<20
	t.Logf("base %d MiB, limit %d MiB, heap goal %d MiB (bound %d MiB)", base>>20, tg.Limit()>>20, goal>>20, bound>>20)
	if goal > bound {
		t.Errorf("heap goal %d MiB over %d MiB (base %d + 1.25×%d held + 1 MiB)", goal>>20, bound>>20, base>>20, held>>20)
	}
	if got := debug.SetMemoryLimit(-1); got != tg.Limit() {
		t.Errorf("runtime limit %d, target's %d", got, tg.Limit())
	}
}

var sink = make([][]byte, 4)

// TestTargetLeavesSlackOverLive: 64 MiB live against 1 MiB held (memory
// the held bytes do not count): the limit stays the live memory plus its
// slack, so a churn of garbage runs a handful of collections instead of
// one after another.
func TestTargetLeavesSlackOverLive(t *testing.T) {
	if testing.Short() {
		t.Skip("allocates 256 MiB of garbage")
	}
	const liveBytes = 64 << 20
	tg, err := Start(Policy{Ratio: 1.25})
	if err != nil {
		t.Fatal(err)
	}
	defer tg.Stop()
	live := make([][]byte, 0, liveBytes>>20)
	for range liveBytes >> 20 {
		live = append(live, make([]byte, 1<<20))
	}
	runtime.GC()
	limit := tg.Update(1 << 20)
	s := []metrics.Sample{{Name: "/gc/cycles/total:gc-cycles"}}
	metrics.Read(s)
	before := s[0].Value.Uint64()
	const churn = 256 << 20
	for i := range churn / (64 << 10) {
		sink[i%len(sink)] = make([]byte, 64<<10)
	}
	clear(sink)
	metrics.Read(s)
	cycles := s[0].Value.Uint64() - before
	runtime.KeepAlive(live)
	t.Logf("limit %d MiB for %d MiB live, 1 MiB held: %d collections over %d MiB of garbage", limit>>20, liveBytes>>20, cycles, churn>>20)
	if limit < liveBytes+liveBytes/8 {
		t.Errorf("limit %d under the live heap %d plus its slack", limit, liveBytes)
	}
	// One collection per slack (8 MiB) allocated is 32; allow twice that.
	if cycles > 64 {
		t.Errorf("%d collections over %d MiB of garbage with %d MiB live", cycles, churn>>20, liveBytes>>20)
	}
}
