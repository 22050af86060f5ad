package harness

import (
	"fmt"
	"runtime"
	"runtime/metrics"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/arrowstream/arrowstream/internal/memtarget"
)

// MemoryMeter measures a workload's process memory against what the
// query is meant to hold: its state (the stateful operators' live state,
// progress memoryUsedBytes) plus what its sink retains. Issue #19 asks for
// peak RSS ≤ 1.5× those held bytes; a raw peak RSS would also count the
// Go runtime's own footprint and the harness's input, so the meter takes
// a baseline first:
//
//   - StartMemory is called once the workload has generated its input:
//     it collects garbage, returns free memory to the OS and reads the
//     resident set as the baseline (an idle process with everything
//     loaded, the input included), then resets the peak.
//   - The run reports held bytes after each epoch (ObserveHeld).
//   - Figures reports the peak RSS, the baseline, the growth over it and
//     both ratios: peak RSS per held byte (the raw figure) and
//     RSS growth per held byte (what the run itself cost per byte held).
//
// Input allocated from InputAllocator lives outside the Go heap, so that
// it does not raise the garbage collector's heap goal either (a heap goal
// of twice the live heap would let the run keep as much garbage as the
// input's size). Safe for concurrent use.
type MemoryMeter struct {
	baseline     int64
	baselineHeap int64 // Go heap objects at the baseline (after a GC)
	rss          RSSWatch
	held         atomic.Int64
	goal         atomic.Int64 // the largest heap goal seen by ObserveHeld
	pooled       atomic.Int64 // the most free bytes ObservePooled saw
	heap         atomic.Int64 // Go heap objects after a GC, -1: not sampled
	peak         atomic.Int64 // peak RSS when Stop ran, 0: not stopped

	// The baseline's resident set split into anonymous memory and file
	// pages (the binary's code and data: resident in any process running
	// it, whatever it holds).
	baselineAnon, baselineFile int64
	sampler                    runtimeSampler
	start                      runtimeMem // at StartMemory
	mu                         sync.Mutex
	atPeak                     runtimeMem        // at the largest runtime resident ObserveHeld saw
	end                        runtimeMem        // when the peak was read
	target                     *memtarget.Target // nil: no memory target
	// peakAnon is the largest anonymous resident set sampled after an
	// epoch (at most every anonEvery), lastAnon when it was sampled last.
	peakAnon atomic.Int64
	lastAnon atomic.Int64
	status   statusReader // the samples' reads of /proc/self/status
}

// anonEvery spaces the samples of the anonymous resident set (a read of
// /proc/self/status) so that runs of thousands of small epochs do not
// pay for one per epoch.
const anonEvery = 5 * time.Millisecond

// StartMemoryFor is StartMemory under cfg's memory target: when
// cfg.MemoryTarget is positive, ObserveHeld also sets the runtime's soft
// memory limit to the baseline plus that many bytes per held byte, until
// the peak is read (Stop, Peak, SampleHeap, Figures), when the previous
// limit comes back.
func StartMemoryFor(cfg Config) (*MemoryMeter, error) {
	m := StartMemory()
	if cfg.MemoryTarget > 0 {
		t, err := memtarget.Start(memtarget.Policy{Ratio: cfg.MemoryTarget})
		if err != nil {
			return nil, fmt.Errorf("harness: memory target: %w", err)
		}
		m.target = t
	}
	return m, nil
}

// StartMemory takes the baseline and starts watching the peak.
func StartMemory() *MemoryMeter {
	Settle()
	m := &MemoryMeter{status: statusReader{open: openStatus}}
	m.heap.Store(-1)
	m.baselineHeap = HeapObjects()
	m.baseline, _ = CurrentRSS()
	m.baselineAnon, m.baselineFile = rssParts()
	m.start = m.sampler.read()
	m.rss = StartRSS()
	return m
}

// ObserveHeld records the bytes the query holds now (state plus sink); the
// meter keeps the largest, and the largest heap goal of the collector
// (which, with GOGC=100, lets the heap reach twice what was live after
// the last collection before the next one).
func (m *MemoryMeter) ObserveHeld(bytes int64) {
	storeMax(&m.held, bytes)
	if m.target != nil && m.peak.Load() == 0 {
		m.target.Update(bytes)
	}
	storeMax(&m.goal, heapGoal())
	if now := time.Now().UnixNano(); now-m.lastAnon.Load() >= int64(anonEvery) {
		m.lastAnon.Store(now)
		if anon, _ := m.status.rssParts(); anon > 0 {
			storeMax(&m.peakAnon, anon)
		}
	}
	r := m.sampler.read()
	m.mu.Lock()
	if r.resident() > m.atPeak.resident() {
		m.atPeak = r
	}
	m.mu.Unlock()
}

// ObservePooled records the bytes of free buffers the engine's allocator
// pool keeps for reuse now (vector.PoolAllocator's Retained and
// RetainedLarge): resident, not held by the query; the meter keeps the
// largest.
func (m *MemoryMeter) ObservePooled(bytes int64) { storeMax(&m.pooled, bytes) }

func storeMax(a *atomic.Int64, v int64) {
	for {
		old := a.Load()
		if v <= old || a.CompareAndSwap(old, v) {
			return
		}
	}
}

// SampleHeap reads the peak RSS so far (so that the collection it runs
// cannot lower it) and then the Go heap's live objects after a full
// collection: called at the end of a run, while the query still holds
// its data, it shows the Go memory beside the held bytes (Arrow buffers
// from Go's allocator are in the Go heap).
func (m *MemoryMeter) SampleHeap() {
	m.stopPeak()
	runtime.GC()
	m.heap.Store(HeapObjects())
}

// Stop ends the watch: the peak RSS is read now (later calls of Figures
// report the same peak). Runs that tear down large structures after
// their measured part call it first.
func (m *MemoryMeter) Stop() { m.stopPeak() }

func (m *MemoryMeter) stopPeak() {
	m.status.close() // a sample after this opens it again
	if m.peak.Load() != 0 {
		return
	}
	if p, ok := m.rss.Peak(); ok && p > 0 {
		m.peak.Store(p)
	}
	if m.target != nil {
		m.target.Stop()
	}
	r := m.sampler.read()
	m.mu.Lock()
	m.end = r
	m.mu.Unlock()
}

// Baseline is the resident set at StartMemory (0 where the OS does not
// tell).
func (m *MemoryMeter) Baseline() int64 { return m.baseline }

// Held is the most bytes ObserveHeld was given.
func (m *MemoryMeter) Held() int64 { return m.held.Load() }

// Peak is the peak resident set since StartMemory (0 where the OS does
// not tell).
func (m *MemoryMeter) Peak() int64 {
	m.stopPeak()
	return m.peak.Load()
}

// Growth is the peak resident set over the baseline.
func (m *MemoryMeter) Growth() int64 {
	p := m.Peak()
	if p == 0 || m.baseline == 0 {
		return 0
	}
	return max(p-m.baseline, 0)
}

// Figures are the meter's figures for workload: "peak_rss", and where
// known "baseline_rss", "peak_rss_growth", "peak_held",
// "peak_rss_per_held_byte", "rss_growth_per_held_byte", "baseline_heap"
// (the Go heap's objects at the baseline), "peak_heap_goal" (the largest
// heap goal seen after an epoch), "heap_after_gc" (see SampleHeap) and
// "peak_pool_free" (see ObservePooled).
func (m *MemoryMeter) Figures(workload string) []Figure {
	peak := m.Peak()
	if peak == 0 {
		return nil
	}
	fig := func(name string, v float64, unit string) Figure {
		return Figure{Workload: workload, Figure: name, Value: v, Unit: unit}
	}
	figs := []Figure{fig("peak_rss", float64(peak), "bytes")}
	// The growth is left out when the resident set did not grow past the
	// baseline (the kernel may drop clean pages, such as the binary's,
	// meanwhile).
	growth := m.Growth()
	if m.baseline > 0 {
		figs = append(figs, fig("baseline_rss", float64(m.baseline), "bytes"))
	}
	if growth > 0 {
		figs = append(figs, fig("peak_rss_growth", float64(growth), "bytes"))
	}
	if held := m.Held(); held > 0 {
		figs = append(figs, fig("peak_held", float64(held), "bytes"),
			fig("peak_rss_per_held_byte", float64(peak)/float64(held), "ratio"))
		if growth > 0 {
			figs = append(figs, fig("rss_growth_per_held_byte", float64(growth)/float64(held), "ratio"))
		}
	}
	figs = append(figs, fig("baseline_heap", float64(m.baselineHeap), "bytes"))
	if g := m.goal.Load(); g > 0 {
		figs = append(figs, fig("peak_heap_goal", float64(g), "bytes"))
	}
	if h := m.heap.Load(); h >= 0 {
		figs = append(figs, fig("heap_after_gc", float64(h), "bytes"))
	}
	if p := m.pooled.Load(); p > 0 {
		figs = append(figs, fig("peak_pool_free", float64(p), "bytes"))
	}
	return append(figs, m.runtimeFigures(fig)...)
}

// runtimeFigures tell where the resident set goes: the baseline's file
// pages ("baseline_rss_file", the binary) and anonymous memory
// ("baseline_rss_anon": the runtime, the generated input); the Go
// runtime's memory by class when it held the most after an epoch
// ("peak_go_resident": mapped and not returned to the OS, of which
// "at_peak_heap_objects" live or unswept objects, "at_peak_heap_free"
// free pages kept, "at_peak_heap_unused" free slots in spans in use,
// "at_peak_stacks" goroutine and thread stacks); and the collector's CPU
// over the run ("gc_cpu_seconds", the runtime's estimate, without the
// marking it does on idle processors).
// A figure that is zero (no free heap at the peak, no collection during
// a short run) is left out, as the workloads leave out figures they
// cannot tell.
func (m *MemoryMeter) runtimeFigures(mk func(string, float64, string) Figure) []Figure {
	var figs []Figure
	fig := func(name string, v float64, unit string) Figure {
		if v <= 0 {
			return Figure{}
		}
		return mk(name, v, unit)
	}

	if m.baselineFile > 0 || m.baselineAnon > 0 {
		figs = append(figs, fig("baseline_rss_file", float64(m.baselineFile), "bytes"),
			fig("baseline_rss_anon", float64(m.baselineAnon), "bytes"))
	}
	// File pages are the kernel's to drop and read again (on a loaded
	// machine it drops tens of MiB of the binary's during a run, which
	// lowers the peak's growth over the baseline): the anonymous growth is
	// the figure they do not blur. Sampled after epochs, it can miss a
	// peak inside one.
	if a := m.peakAnon.Load(); a > 0 && m.baselineAnon > 0 {
		figs = append(figs, fig("peak_rss_anon_sampled", float64(a), "bytes"))
		if held := m.Held(); held > 0 {
			figs = append(figs, fig("anon_growth_per_held_byte", float64(max(a-m.baselineAnon, 0))/float64(held), "ratio"))
		}
	}
	m.mu.Lock()
	at, end := m.atPeak, m.end
	m.mu.Unlock()
	if at.total > 0 {
		figs = append(figs, fig("peak_go_resident", float64(at.resident()), "bytes"),
			fig("at_peak_heap_objects", float64(at.heapObjects), "bytes"),
			fig("at_peak_heap_free", float64(at.heapFree), "bytes"),
			fig("at_peak_heap_unused", float64(at.heapUnused), "bytes"),
			fig("at_peak_stacks", float64(at.stacks), "bytes"))
	}
	if end.total > 0 {
		figs = append(figs, fig("gc_cpu_seconds", max(end.gcCPU-m.start.gcCPU, 0), "s"))
	}
	if m.target != nil {
		figs = append(figs, fig("memory_target_ratio", m.target.Policy().Ratio, "ratio"),
			fig("memory_target_base", float64(m.target.Policy().Base), "bytes"))
	}
	return slices.DeleteFunc(figs, func(f Figure) bool { return f.Figure == "" })
}

// heapGoal is the collector's current heap goal (runtime/metrics
// /gc/heap/goal:bytes).
func heapGoal() int64 {
	s := []metrics.Sample{{Name: "/gc/heap/goal:bytes"}}
	metrics.Read(s)
	if s[0].Value.Kind() != metrics.KindUint64 {
		return 0
	}
	return int64(s[0].Value.Uint64())
}

// HeapObjects is the Go heap's bytes in live and not yet swept objects
// (runtime/metrics /memory/classes/heap/objects:bytes).
func HeapObjects() int64 {
	s := []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}}
	metrics.Read(s)
	if s[0].Value.Kind() != metrics.KindUint64 {
		return 0
	}
	return int64(s[0].Value.Uint64())
}

// ReportMemory reports m's figures as benchmark metrics: the growth over
// the baseline and the held bytes in MiB, growth per held byte, and the
// Go heap after GC when sampled.
func ReportMemory(b interface {
	ReportMetric(n float64, unit string)
}, m *MemoryMeter) {
	const mib = 1 << 20
	for _, f := range m.Figures("") {
		switch f.Figure {
		case "baseline_rss", "peak_rss_growth", "peak_held", "heap_after_gc", "peak_rss", "baseline_heap", "peak_heap_goal", "peak_pool_free",
			"baseline_rss_file", "peak_go_resident", "at_peak_heap_objects", "at_peak_heap_free":
			b.ReportMetric(f.Value/mib, f.Figure+"-MiB")
		case "rss_growth_per_held_byte":
			b.ReportMetric(f.Value, "growth/held")
		}
	}
}
