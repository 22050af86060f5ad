package poisonmem

import (
	"flag"
	"fmt"
	"runtime"
	"sort"
	"strings"
	"sync"
	"testing"
	"unsafe"

	"github.com/apache/arrow/go/v17/arrow/memory"
)

// Pattern is the byte released memory is overwritten with.
const Pattern = 0xA5

// alignment matches Arrow's Go allocator: buffers start on 64-byte
// boundaries so that SIMD-minded code sees what it would in production.
const alignment = 64

// stackDepth bounds the frames recorded per allocation: enough to get past
// Arrow's builder and buffer internals to the engine code that asked.
const stackDepth = 32

type live struct {
	size  int
	stack []uintptr
}

// Allocator is a checked, poisoning memory.Allocator. The zero value is not
// usable; call New or NewChecked. Safe for concurrent use.
type Allocator struct {
	mu    sync.Mutex
	live  map[*byte]live
	bytes int
	trace bool // record each allocation's stack (see tracesStacks)
}

var _ memory.Allocator = (*Allocator)(nil)

// New returns an empty poisoning allocator. The caller checks it with
// AssertSize.
func New() *Allocator {
	return &Allocator{live: map[*byte]live{}, trace: tracesStacks()}
}

// tracesStacks reports whether allocators record the stack of each
// allocation: always, except in a fuzzing worker. There runtime.Callers was
// most of an execution's cost (~60 % of FuzzExprEval's, whose inputs are
// rebuilt for every execution), and a leak the fuzzer finds still fails the
// input, which is saved under testdata/fuzz; running it again with
// `go test -run` is not a worker, and lists the stacks.
func tracesStacks() bool {
	f := flag.Lookup("test.fuzzworker")
	return f == nil || f.Value.String() != "true"
}

// NewChecked returns a poisoning allocator that fails t at cleanup unless
// every byte it handed out was released, listing each leak with the stack
// that allocated it.
func NewChecked(t testing.TB) *Allocator {
	a := New()
	t.Cleanup(func() { a.AssertSize(t, 0) })
	return a
}

// Poisons reports that this allocator overwrites and retires released
// memory; pooling allocators stacked on it must not recycle buffers.
func (a *Allocator) Poisons() bool { return true }

// Allocate implements memory.Allocator: fresh, zeroed, 64-byte aligned
// memory.
func (a *Allocator) Allocate(size int) []byte {
	if size < 0 {
		panic(fmt.Sprintf("poisonmem: Allocate(%d): negative size", size))
	}
	buf := make([]byte, size+alignment)
	off := 0
	if r := int(uintptr(unsafe.Pointer(unsafe.SliceData(buf))) % alignment); r != 0 {
		off = alignment - r
	}
	b := buf[off : off+size : off+size]
	if size == 0 {
		return b
	}
	var stack []uintptr
	if a.trace {
		stack = make([]uintptr, stackDepth)
		stack = stack[:runtime.Callers(2, stack)]
	}
	a.mu.Lock()
	a.live[unsafe.SliceData(b)] = live{size: size, stack: stack}
	a.bytes += size
	a.mu.Unlock()
	return b
}

// Reallocate implements memory.Allocator. It always moves the data to new
// memory and poisons the old buffer, so that a pointer kept across a
// resize reads garbage instead of going stale silently.
func (a *Allocator) Reallocate(size int, b []byte) []byte {
	nb := a.Allocate(size)
	copy(nb, b)
	a.Free(b)
	return nb
}

// Free implements memory.Allocator: it poisons b and forgets it. Freeing a
// buffer this allocator does not hold (a double free, or memory from
// another allocator) panics, naming the buffer.
func (a *Allocator) Free(b []byte) {
	if len(b) == 0 {
		return
	}
	p := unsafe.SliceData(b)
	a.mu.Lock()
	l, ok := a.live[p]
	if ok {
		delete(a.live, p)
		a.bytes -= l.size
	}
	a.mu.Unlock()
	if !ok {
		panic(fmt.Sprintf("poisonmem: Free of %d bytes at %p: not a live buffer of this allocator (double free, or allocated elsewhere)", len(b), p))
	}
	full := unsafe.Slice(p, l.size)
	for i := range full {
		full[i] = Pattern
	}
}

// CurrentAlloc returns the bytes handed out and not yet freed.
func (a *Allocator) CurrentAlloc() int {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.bytes
}

// TestingT is the part of testing.TB AssertSize needs.
type TestingT interface {
	Helper()
	Errorf(format string, args ...any)
}

// maxLeaksReported bounds the leaks AssertSize lists one by one.
const maxLeaksReported = 10

// AssertSize fails t unless exactly sz bytes are live. With sz == 0 it
// lists the leaked buffers, largest first, each with the stack that
// allocated it (Arrow's and this package's own frames left out).
func (a *Allocator) AssertSize(t TestingT, sz int) {
	t.Helper()
	a.mu.Lock()
	got := a.bytes
	var leaks []live
	if sz == 0 {
		for _, l := range a.live {
			leaks = append(leaks, l)
		}
	}
	a.mu.Unlock()
	if got == sz {
		return
	}
	sort.Slice(leaks, func(i, j int) bool { return leaks[i].size > leaks[j].size })
	var msg strings.Builder
	fmt.Fprintf(&msg, "poisonmem: %d bytes live, want %d", got, sz)
	if len(leaks) > 0 {
		fmt.Fprintf(&msg, " (%d buffers leaked)", len(leaks))
	}
	for i, l := range leaks {
		if i == maxLeaksReported {
			fmt.Fprintf(&msg, "\n... and %d more", len(leaks)-i)
			break
		}
		if l.stack == nil {
			fmt.Fprintf(&msg, "\nLEAK of %d bytes (stacks are not recorded in a fuzzing worker: run the saved input with go test -run to see where)", l.size)
			continue
		}
		fmt.Fprintf(&msg, "\nLEAK of %d bytes allocated at\n%s", l.size, formatStack(l.stack))
	}
	t.Errorf("%s", msg.String())
}

// formatStack renders the frames of an allocation that belong to the code
// under test, skipping Arrow's memory package and this one.
func formatStack(pcs []uintptr) string {
	var b strings.Builder
	frames := runtime.CallersFrames(pcs)
	for {
		f, more := frames.Next()
		if !skipFrame(f.Function) {
			fmt.Fprintf(&b, "\t%s\n\t\t%s:%d\n", f.Function, f.File, f.Line)
		}
		if !more {
			break
		}
	}
	return b.String()
}

func skipFrame(fn string) bool {
	return strings.Contains(fn, "/arrow/go/v17/arrow/memory.") ||
		strings.Contains(fn, "/internal/testutil/poisonmem.") ||
		strings.HasPrefix(fn, "runtime.") || strings.HasPrefix(fn, "testing.")
}
