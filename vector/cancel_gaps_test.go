package vector_test

import (
	"context"
	"fmt"
	"runtime"
	"strings"
	"time"
)

// cpuGapCtx is a context that measures the CPU time an operation spends
// between two reads of its Err: the work a cancel may have to wait for.
// Under load a goroutine gets a fraction of a core, so the wall time from
// a cancel to the return is this CPU gap stretched by the load; the gap
// itself does not depend on the load, and is the figure to bound. Only
// reads made on the operation's thread (locked by runOp) are counted; the
// fields are written by that thread alone and read after the run ended.
type cpuGapCtx struct {
	context.Context
	tid    int           // the operation's thread; 0: measure nothing
	last   time.Duration // its CPU clock at the previous check
	max    time.Duration // the longest gap
	checks int
	maxEnd int           // the check that ended the longest gap
	final  time.Duration // from the last check to the return of the final Next
	prevAt []uintptr     // where the previous check was
	from   []uintptr     // where the longest gap began
	to     []uintptr     // and where it ended
}

func newCPUGapCtx(parent context.Context) *cpuGapCtx {
	return &cpuGapCtx{Context: parent}
}

// start is called on the operation's thread before its first Next.
func (g *cpuGapCtx) start(tid int) {
	if now, ok := threadCPU(tid); ok {
		g.tid, g.last = tid, now
	}
}

func (g *cpuGapCtx) Err() error {
	if g.tid != 0 && currentTid() == g.tid {
		g.check(3)
	}
	return g.Context.Err()
}

// check records the gap since the previous check (skip: frames of the
// stack to leave out of where it was).
func (g *cpuGapCtx) check(skip int) {
	now, ok := threadCPU(g.tid)
	if !ok {
		return
	}
	pcs := make([]uintptr, 16)
	pcs = pcs[:runtime.Callers(skip, pcs)]
	g.checks++
	if d := now - g.last; d > g.max {
		g.max, g.from, g.to, g.maxEnd = d, g.prevAt, pcs, g.checks
	}
	g.last, g.prevAt = now, pcs
}

// ended is called on the operation's thread when Next returned its error:
// the gap since the last check is kept apart (final), as what the
// operation does on its way out (it releases what it held) rather than
// between two checks of its work.
func (g *cpuGapCtx) ended() {
	if now, ok := threadCPU(g.tid); ok && g.tid != 0 {
		g.final = now - g.last
	}
}

// returned is called on the operation's thread each time Next returned
// (a batch or the end): the caller sees a cancel there, so the time from
// the last check to the return is a gap too, and the return ends it.
func (g *cpuGapCtx) returned() {
	if g.tid != 0 {
		g.check(3)
	}
}

// skip starts the next gap now: the caller's work since the last check
// (releasing the batch Next returned) is not the operation's.
func (g *cpuGapCtx) skip() {
	if now, ok := threadCPU(g.tid); ok && g.tid != 0 {
		g.last = now
	}
}

// where describes the longest gap: the stacks at its two ends.
func (g *cpuGapCtx) where() string {
	frames := func(pcs []uintptr) string {
		if len(pcs) == 0 {
			return "  (the start)\n"
		}
		var b strings.Builder
		fs := runtime.CallersFrames(pcs)
		for {
			f, more := fs.Next()
			fmt.Fprintf(&b, "  %s:%d\n", strings.TrimPrefix(f.Function, "github.com/arrowstream/arrowstream/"), f.Line)
			if !more || strings.Contains(f.Function, "vector_test.runOp") {
				break
			}
		}
		return b.String()
	}
	return fmt.Sprintf("%d checks, longest CPU gap %v, ended by check %d, from:\n%sto:\n%sthe final Next's %v after its last check",
		g.checks, g.max, g.maxEnd, frames(g.from), frames(g.to), g.final)
}
