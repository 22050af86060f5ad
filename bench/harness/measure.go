package harness

import (
	"runtime"
	"runtime/debug"
	"slices"
	"time"
)

// Span measures one timed piece of work: wall-clock and process CPU time.
type Span struct {
	wall0 time.Time
	cpu0  time.Duration
	cpuOK bool
	// aside is the CPU the harness's own bookkeeping used inside the span
	// (Aside), taken out of Stop's figure.
	aside time.Duration
}

// StartSpan starts measuring.
func StartSpan() Span {
	cpu, ok := ProcessCPU()
	return Span{wall0: time.Now(), cpu0: cpu, cpuOK: ok}
}

// Stop returns the wall-clock and CPU time since StartSpan. Where the
// process CPU time is not available, cpu is the wall-clock time (one core
// assumed).
func (s Span) Stop() (wall, cpu time.Duration) {
	wall = time.Since(s.wall0)
	if c, ok := ProcessCPU(); ok && s.cpuOK {
		cpu = c - s.cpu0 - s.aside
	}
	if cpu <= 0 {
		cpu = wall
	}
	return wall, cpu
}

// Aside runs f, the harness's own bookkeeping between pieces of the
// measured work (reading memory figures after an epoch, say), and takes
// the CPU it used out of the span's CPU figure, so that the figure
// counts the measured work only. f runs on its goroutine's thread, locked
// to it, and only that thread's CPU over f is taken out: the work's
// other threads (background snapshots, the collector) keep counting
// while f runs. Where a thread's CPU time is not available (not Linux),
// nothing is taken out.
func (s *Span) Aside(f func()) {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	t0, ok0 := threadCPU()
	f()
	if t1, ok1 := threadCPU(); ok0 && ok1 && t1 > t0 {
		s.aside += t1 - t0
	}
}

// AsideCPU is the CPU Aside has taken out so far.
func (s *Span) AsideCPU() time.Duration { return s.aside }

// Settle collects garbage and returns the heap's free memory to the OS:
// called before each measured run (StartMemory calls it before the
// engine's), so that the engine and its peers start from the same state,
// each paying for the collections and the first touch of the memory it
// uses, none running on what another one left.
func Settle() { debug.FreeOSMemory() }

// PerCore is a rate per core: work units over the CPU seconds the process
// used for them (user + system, all threads). On the shared, loaded
// machines the project runs on, a process often waits for a CPU: the CPU
// time charges it only for the time it ran, so figures taken under
// different loads stay comparable; a run that used several cores is
// divided by all of them. Without a CPU figure (cpu <= 0) it falls back
// to wall-clock time.
func PerCore(units float64, wall, cpu time.Duration) float64 {
	d := cpu
	if d <= 0 {
		d = wall
	}
	if d <= 0 {
		return 0
	}
	return units / d.Seconds()
}

// Percentile returns the p-th percentile (0 < p ≤ 100) of ds by the
// nearest-rank method, or 0 for no samples.
func Percentile(ds []time.Duration, p float64) time.Duration {
	if len(ds) == 0 {
		return 0
	}
	s := slices.Clone(ds)
	slices.Sort(s)
	rank := int(p/100*float64(len(s))+0.999999) - 1
	return s[min(max(rank, 0), len(s)-1)]
}

// Median returns the median of xs (0 for none).
func Median(xs []float64) float64 {
	if len(xs) == 0 {
		return 0
	}
	s := slices.Clone(xs)
	slices.Sort(s)
	return s[len(s)/2]
}
