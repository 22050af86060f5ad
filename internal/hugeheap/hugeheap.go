package hugeheap

import (
	"errors"
	"fmt"
	"os"
	"runtime"
	"runtime/metrics"
	"strings"
	"sync"
	"time"
	"unsafe"
)

// EnabledFile is the kernel's THP mode: "always", "madvise" or "never",
// the one in force in brackets.
const EnabledFile = "/sys/kernel/mm/transparent_hugepage/enabled"

// MapsFile lists the process's mappings.
const MapsFile = "/proc/self/maps"

// ErrUnsupported is Start's error where the advice is not implemented
// (not Linux).
var ErrUnsupported = errors.New("hugeheap: transparent huge pages are only advised on Linux")

// Options configure an Advisor. The zero value is usable.
type Options struct {
	// Interval is the shortest time between two checks of the heap's
	// size (default 100ms): the timer starts there, and goes back there
	// after a growth.
	Interval time.Duration
	// MaxInterval is the longest (default 5s): while the heap does not
	// grow the timer doubles up to it, so an idle process wakes rarely.
	MaxInterval time.Duration
	// Reserve, when positive, grows the heap by that many bytes once at
	// Start (an allocation never touched, collected at once), so that the
	// address space later growth lands in is mapped and advised already.
	// It costs one collection at Start; the memory is never touched, so
	// it is not resident.
	Reserve int64

	// ModeFile is the kernel's THP mode file (default EnabledFile); a
	// program's tests point it elsewhere.
	ModeFile string

	// mapsFile replaces MapsFile in tests.
	mapsFile string
}

// Stats say what an Advisor did.
type Stats struct {
	// Mode is the kernel's THP mode ("madvise", "always", "never").
	Mode string
	// Active is whether the Advisor advises (Mode "madvise"); otherwise
	// it is a no-op.
	Active bool
	// Passes counts the passes over the mappings (one at Start, one per
	// growth seen).
	Passes int64
	// Calls counts the madvise calls made (one per heap mapping not
	// advised by an earlier pass).
	Calls int64
	// Mappings and Bytes are the Go heap's read-write mappings the last
	// pass covered (heapSpans) and their size.
	Mappings int
	Bytes    int64
}

// Advisor advises the process's heap. Start one per process.
type Advisor struct {
	opts Options

	mu    sync.Mutex
	stats Stats
	seen  map[uintptr]uintptr // start → end of each heap span advised by the last pass
	// anchor is a heap object the Advisor keeps, to find the heap's
	// mappings by (heapSpans): the collector does not move objects.
	anchor    *[8]uintptr
	lastTotal uint64 // /memory/classes/total:bytes at the last pass
	sample    []metrics.Sample

	stop chan struct{}
	done chan struct{}
}

const totalMetric = "/memory/classes/total:bytes"

// Start reads the kernel's THP mode and, in "madvise" mode, advises the
// Go heap's mappings (its arenas' read-write memory; not the runtime's
// metadata, the bss or other anonymous memory) and starts watching the
// heap's growth. In "always" or "never" mode it returns an inactive
// Advisor (nothing to advise). Its error names the file it could not
// read. Stop ends the watching.
func Start(o Options) (*Advisor, error) {
	if o.Interval <= 0 {
		o.Interval = 100 * time.Millisecond
	}
	if o.MaxInterval < o.Interval {
		o.MaxInterval = max(5*time.Second, o.Interval)
	}
	if o.ModeFile == "" {
		o.ModeFile = EnabledFile
	}
	if o.mapsFile == "" {
		o.mapsFile = MapsFile
	}
	mode, err := readMode(o.ModeFile)
	if err != nil {
		return nil, err
	}
	a := &Advisor{opts: o, stats: Stats{Mode: mode}, sample: []metrics.Sample{{Name: totalMetric}}, anchor: new([8]uintptr)}
	if mode != "madvise" {
		return a, nil
	}
	if !supported {
		return nil, ErrUnsupported
	}
	a.stats.Active = true
	if o.Reserve > 0 {
		reserve(o.Reserve)
	}
	a.mu.Lock()
	err = a.pass()
	a.mu.Unlock()
	if err != nil {
		return nil, err
	}
	if o.Reserve > 0 {
		// Collect the reservation now, so that the collector's next goal
		// is set from what is live, not from the reserved bytes.
		runtime.GC()
	}
	a.stop, a.done = make(chan struct{}), make(chan struct{})
	go a.watch()
	return a, nil
}

// reserve grows the heap by n bytes it never touches: a large allocation
// is taken from fresh address space, which the runtime does not zero.
// The bytes are garbage when it returns.
//
//go:noinline
func reserve(n int64) {
	b := make([]byte, n)
	runtime.KeepAlive(b)
}

// readMode returns the bracketed word of the kernel's THP setting.
func readMode(file string) (string, error) {
	b, err := os.ReadFile(file)
	if err != nil {
		return "", fmt.Errorf("hugeheap: THP mode: %w", err)
	}
	s := string(b)
	i, j := strings.IndexByte(s, '['), strings.IndexByte(s, ']')
	if i < 0 || j < i {
		return "", fmt.Errorf("hugeheap: THP mode: %s: no bracketed mode in %q", file, strings.TrimSpace(s))
	}
	return s[i+1 : j], nil
}

// Stats returns what the Advisor did so far.
func (a *Advisor) Stats() Stats {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.stats
}

// Check advises the mappings again if the runtime's memory grew since the
// last pass; it reports whether it did. The watcher calls it on its
// timer; a program may also call it where it knows the heap grew.
func (a *Advisor) Check() (bool, error) {
	if !a.stats.Active {
		return false, nil
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	metrics.Read(a.sample)
	if a.sample[0].Value.Kind() != metrics.KindUint64 || a.sample[0].Value.Uint64() <= a.lastTotal {
		return false, nil
	}
	return true, a.pass()
}

// pass advises the heap's mappings not advised by the previous pass;
// a.mu held.
func (a *Advisor) pass() error {
	metrics.Read(a.sample)
	if a.sample[0].Value.Kind() == metrics.KindUint64 {
		a.lastTotal = a.sample[0].Value.Uint64()
	}
	maps, err := os.ReadFile(a.opts.mapsFile)
	if err != nil {
		return fmt.Errorf("hugeheap: %w", err)
	}
	spans := heapSpans(maps, []uintptr{uintptr(unsafe.Pointer(a.anchor))})
	seen := make(map[uintptr]uintptr, len(spans))
	var calls int64
	var size int64
	var firstErr error
	for _, s := range spans {
		seen[s.start] = s.end
		size += int64(s.end - s.start)
		if e, ok := a.seen[s.start]; ok && e == s.end {
			continue
		}
		calls++
		if err := adviseHuge(s.start, s.end-s.start); err != nil && firstErr == nil {
			firstErr = fmt.Errorf("hugeheap: madvise %#x-%#x: %w", s.start, s.end, err)
		}
	}
	a.seen = seen
	a.stats.Passes++
	a.stats.Calls += calls
	a.stats.Mappings = len(seen)
	a.stats.Bytes = size
	return firstErr
}

// watch checks for growth on a timer that backs off while nothing grows.
func (a *Advisor) watch() {
	defer close(a.done)
	d := a.opts.Interval
	t := time.NewTimer(d)
	defer t.Stop()
	for {
		select {
		case <-a.stop:
			return
		case <-t.C:
		}
		if grew, _ := a.Check(); grew {
			d = a.opts.Interval
		} else {
			d = min(2*d, a.opts.MaxInterval)
		}
		t.Reset(d)
	}
}

// Stop ends the watching (the advice stays). Safe on an inactive or nil
// Advisor, and more than once.
func (a *Advisor) Stop() {
	if a == nil || a.stop == nil {
		return
	}
	select {
	case <-a.stop:
	default:
		close(a.stop)
	}
	<-a.done
}

// String says what was advised, for a log line.
func (s Stats) String() string {
	if !s.Active {
		return fmt.Sprintf("THP mode %q: nothing advised", s.Mode)
	}
	return fmt.Sprintf("THP mode %q: %d heap mappings, %d MiB advised MADV_HUGEPAGE", s.Mode, s.Mappings, s.Bytes>>20)
}
