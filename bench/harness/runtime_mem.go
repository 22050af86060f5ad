package harness

import (
	"runtime/metrics"
	"sync"
)

// runtimeMem is the Go runtime's memory by class at one moment
// (runtime/metrics /memory/classes/...), to tell where a resident set
// goes: live objects, free heap the runtime keeps (not yet returned to
// the OS), span fragmentation, goroutine stacks and the runtime's own
// metadata. Memory outside the runtime (mapped buffers, the binary's
// pages) is the resident set minus resident().
type runtimeMem struct {
	total        int64   // everything the runtime mapped
	heapObjects  int64   // live and not yet swept objects
	heapFree     int64   // free heap pages still mapped (not released)
	heapReleased int64   // free heap pages returned to the OS
	heapUnused   int64   // free slots inside spans in use
	stacks       int64   // goroutine and OS thread stacks
	gcCPU        float64 // the collector's CPU seconds so far (estimated, idle marking left out)
}

// resident is what the runtime holds mapped and not returned to the OS:
// close to its share of the resident set (pages never touched aside).
func (r runtimeMem) resident() int64 { return r.total - r.heapReleased }

var runtimeMemNames = []string{
	"/memory/classes/total:bytes",
	"/memory/classes/heap/objects:bytes",
	"/memory/classes/heap/free:bytes",
	"/memory/classes/heap/released:bytes",
	"/memory/classes/heap/unused:bytes",
	"/memory/classes/heap/stacks:bytes",
	"/memory/classes/os-stacks:bytes",
	"/cpu/classes/gc/total:cpu-seconds",
	"/cpu/classes/gc/mark/idle:cpu-seconds",
}

// runtimeSampler reads runtimeMem with a reused sample slice (ObserveHeld
// runs after every epoch).
type runtimeSampler struct {
	mu      sync.Mutex
	samples []metrics.Sample
}

func (s *runtimeSampler) read() runtimeMem {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.samples == nil {
		s.samples = make([]metrics.Sample, len(runtimeMemNames))
		for i, n := range runtimeMemNames {
			s.samples[i].Name = n
		}
	}
	metrics.Read(s.samples)
	u := func(i int) int64 {
		if s.samples[i].Value.Kind() != metrics.KindUint64 {
			return 0
		}
		return int64(s.samples[i].Value.Uint64())
	}
	r := runtimeMem{
		total: u(0), heapObjects: u(1), heapFree: u(2), heapReleased: u(3),
		heapUnused: u(4), stacks: u(5) + u(6),
	}
	// The collector's CPU without its idle-priority marking, which runs
	// only on processors that have nothing else to do (and which the
	// runtime counts at their full time).
	if v, idle := s.samples[7].Value, s.samples[8].Value; v.Kind() == metrics.KindFloat64 && idle.Kind() == metrics.KindFloat64 {
		r.gcCPU = v.Float64() - idle.Float64()
	}
	return r
}
