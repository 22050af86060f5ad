package vector

import (
	"cmp"
	"context"
	"fmt"
	"os"
	"runtime"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/apache/arrow/go/v17/arrow"
	"github.com/apache/arrow/go/v17/arrow/array"
	"github.com/apache/arrow/go/v17/arrow/memory"
)

// gapCtx is a context that records, for every read of Err, how long it was
// since the previous read and where the code was at both ends of the
// longest gap: the diagnostic for "what runs for long without a check".
type gapCtx struct {
	context.Context
	mu       sync.Mutex
	last     time.Time
	lastAt   string
	maxGap   time.Duration
	from, to string
	checks   int
	pairs    map[[2]string]time.Duration // the longest gap per (from, to)
}

func newGapCtx() *gapCtx {
	return &gapCtx{Context: context.Background(), last: time.Now(), lastAt: "start", pairs: map[[2]string]time.Duration{}}
}

func (g *gapCtx) Err() error {
	now := time.Now()
	pcs := make([]uintptr, 12)
	n := runtime.Callers(2, pcs)
	frames := runtime.CallersFrames(pcs[:n])
	var b strings.Builder
	for {
		f, more := frames.Next()
		if strings.Contains(f.Function, "TestCheckGaps") {
			break
		}
		fmt.Fprintf(&b, "  %s:%d\n", strings.TrimPrefix(f.Function, "github.com/arrowstream/arrowstream/vector."), f.Line)
		if !more {
			break
		}
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	g.checks++
	d := now.Sub(g.last)
	if d > g.maxGap {
		g.maxGap, g.from, g.to = d, g.lastAt, b.String()
	}
	if k := [2]string{g.lastAt, b.String()}; d > g.pairs[k] {
		g.pairs[k] = d
	}
	g.last, g.lastAt = now, b.String()
	return nil
}

func (g *gapCtx) finish() {
	g.Err()
}

func (g *gapCtx) String() string {
	type gap struct {
		k [2]string
		d time.Duration
	}
	var gaps []gap
	for k, d := range g.pairs {
		gaps = append(gaps, gap{k, d})
	}
	slices.SortFunc(gaps, func(a, b gap) int { return cmp.Compare(b.d, a.d) })
	var b strings.Builder
	fmt.Fprintf(&b, "%d checks, longest gap %v; the longest per pair of places:\n", g.checks, g.maxGap)
	for _, x := range gaps[:min(len(gaps), 4)] {
		fmt.Fprintf(&b, "%v from:\n%sto:\n%s\n", x.d, x.k[0], x.k[1])
	}
	return b.String()
}

// TestCheckGaps (CHECK_GAPS=1, a diagnostic, not a pass/fail test) runs
// the long operations of BenchmarkCancelLatency's window cases with a
// context that records the longest time between two reads of its Err, and
// logs where the code was at both ends.
func TestCheckGaps(t *testing.T) {
	if os.Getenv("CHECK_GAPS") == "" {
		t.Skip("a diagnostic: CHECK_GAPS=1 runs it")
	}
	const rows = 20_000_000
	v := Col("value")
	running := WindowFrame{Start: FrameBound{Kind: FrameUnboundedPreceding}, End: FrameBound{Kind: FrameCurrentRow}}
	whole := WindowFrame{Start: FrameBound{Kind: FrameUnboundedPreceding}, End: FrameBound{Kind: FrameUnboundedFollowing}}
	ranged := WindowFrame{Range: true, Start: FrameBound{Kind: FramePreceding, Offset: 5}, End: FrameBound{Kind: FrameFollowing, Offset: 5}}
	cases := []struct {
		name     string
		shuffled bool
		spec     WindowOpSpec
	}{
		{"range", false, WindowOpSpec{OrderBy: []SortKey{{Expr: v}}, Calls: []WindowCall{
			{Func: WinAggregate, Agg: AggregateCall{Func: AggCount, Args: []Expr{v}}, Frame: ranged, Name: "c"}}}},
		{"no_sort", false, WindowOpSpec{Calls: []WindowCall{
			{Func: WinAggregate, Agg: AggregateCall{Func: AggSum, Args: []Expr{v}}, Frame: running, Name: "s"},
			{Func: WinRowNumber, Frame: running, Name: "r"}}}},
		{"partition_funcs", false, WindowOpSpec{Calls: []WindowCall{
			{Func: WinAggregate, Agg: AggregateCall{Func: AggSum, Args: []Expr{v}}, Frame: whole, Name: "s"},
			{Func: WinAggregate, Agg: AggregateCall{Func: AggMax, Args: []Expr{v}}, Frame: whole, Name: "m"},
			{Func: WinLag, N: 1, Args: []Expr{v}, Frame: whole, Name: "lag"}}}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			mem := memory.NewGoAllocator()
			schema := arrow.NewSchema([]arrow.Field{{Name: "value", Type: Int64}}, nil)
			var recs []arrow.Record
			for lo := 0; lo < rows; lo += 64 << 10 {
				b := array.NewInt64Builder(mem)
				for i := lo; i < min(lo+64<<10, rows); i++ {
					x := int64(i)
					if c.shuffled {
						x = int64(uint64(i) * 0x9e3779b97f4a7c15 >> 1)
					}
					b.Append(x)
				}
				col := b.NewArray()
				b.Release()
				recs = append(recs, array.NewRecord(schema, []arrow.Array{col}, int64(col.Len())))
				col.Release()
			}
			w, err := NewWindowOp(mem, NewOwnedScan(schema, recs), c.spec)
			if err != nil {
				t.Fatal(err)
			}
			ctx := newGapCtx()
			start := time.Now()
			rec, err := w.Next(ctx)
			ctx.finish()
			if err != nil {
				t.Fatal(err)
			}
			rec.Release()
			t.Logf("first Next %v; %s", time.Since(start), ctx)
			if err := w.Close(); err != nil {
				t.Fatal(err)
			}
		})
	}
}
