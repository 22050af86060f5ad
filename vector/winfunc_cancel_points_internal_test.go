package vector

import (
	"context"
	"errors"
	"io"
	"math/rand/v2"
	"os"
	"testing"

	"github.com/apache/arrow/go/v17/arrow/memory"
)

// cancelAtCheckCtx reports context.Canceled from its after-th Err on (never
// when after is negative), counting every read: cancelling at the k-th
// check lands the cancel at one exact point of an operator's passes.
type cancelAtCheckCtx struct {
	context.Context
	after, checks int
}

func (c *cancelAtCheckCtx) Err() error {
	c.checks++
	if c.after >= 0 && c.checks >= c.after {
		return context.Canceled
	}
	return nil
}

// TestWindowRangeCancelledAnywhereReleases cancels window operators with a
// RANGE frame with offsets (and, beside it, the other frame kinds) at each
// context check an uncancelled run makes (a random 30 of them, 8 with
// -short; every one with WINDOW_CANCEL_ALL=1), on the checked allocator: each cancelled run returns
// context.Canceled and, once closed, leaves nothing allocated. A cancel
// landing after the boundaries had retained the order key (while the
// partitions or peer groups were found) used to leak the whole sorted key
// column: BenchmarkCancelLatency/window_20M_range's 160 MB.
func TestWindowRangeCancelledAnywhereReleases(t *testing.T) {
	rec := winTestRecord(memory.DefaultAllocator)
	defer rec.Release()
	v := Col("v")
	ranged := WindowFrame{Range: true, Start: FrameBound{Kind: FramePreceding, Offset: 3}, End: FrameBound{Kind: FrameFollowing, Offset: 2}}
	growing := WindowFrame{Start: FrameBound{Kind: FrameUnboundedPreceding}, End: FrameBound{Kind: FrameCurrentRow}}
	specs := map[string]WindowOpSpec{
		"range": {OrderBy: []SortKey{{Expr: Col("o")}}, Calls: []WindowCall{
			{Func: WinAggregate, Agg: AggregateCall{Func: AggCount, Args: []Expr{v}}, Frame: ranged, Name: "c"},
		}},
		"range_desc_partitioned": {PartitionBy: []Expr{Col("s")}, OrderBy: []SortKey{{Expr: Col("o"), Descending: true}}, Calls: []WindowCall{
			// count, not sum: a RANGE sum over many small partitions takes
			// seconds a run (frameAggregate gathers per frame).
			{Func: WinAggregate, Agg: AggregateCall{Func: AggCount, Args: []Expr{v}}, Frame: ranged, Name: "c"},
			{Func: WinRank, Frame: growing, Name: "r"},
		}},
		"range_and_rows": {OrderBy: []SortKey{{Expr: Col("o")}}, Calls: []WindowCall{
			{Func: WinAggregate, Agg: AggregateCall{Func: AggMax, Args: []Expr{v}}, Frame: ranged, Name: "m"},
			{Func: WinAggregate, Agg: AggregateCall{Func: AggSum, Args: []Expr{v}}, Frame: growing, Name: "s"},
			{Func: WinRowNumber, Frame: growing, Name: "n"},
		}},
	}
	// run drains a window operator over rec with ctx, closes it and
	// returns the bytes it left allocated.
	run := func(t *testing.T, spec WindowOpSpec, ctx context.Context) (int, error) {
		mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
		in, err := NewScan(rec.Schema(), rec)
		if err != nil {
			t.Fatal(err)
		}
		w, err := NewWindowOp(mem, in, spec)
		if err != nil {
			t.Fatal(err)
		}
		for {
			out, err2 := w.Next(ctx)
			if err2 != nil {
				if !errors.Is(err2, io.EOF) {
					err = err2
				}
				break
			}
			out.Release()
		}
		if err2 := w.Close(); err2 != nil {
			t.Fatal(err2)
		}
		return mem.CurrentAlloc(), err
	}
	r := rand.New(rand.NewPCG(17, 6))
	for name, spec := range specs {
		t.Run(name, func(t *testing.T) {
			full := &cancelAtCheckCtx{Context: context.Background(), after: -1}
			if left, err := run(t, spec, full); err != nil || left != 0 {
				t.Fatalf("uncancelled run: err %v, %d bytes left", err, left)
			}
			ks := make([]int, 0, full.checks)
			for k := 1; k <= full.checks; k++ {
				ks = append(ks, k)
			}
			keep := 30
			if testing.Short() {
				keep = 8
			}
			if os.Getenv("WINDOW_CANCEL_ALL") != "" {
				keep = len(ks)
			}
			if len(ks) > keep {
				r.Shuffle(len(ks), func(i, j int) { ks[i], ks[j] = ks[j], ks[i] })
				ks = ks[:keep]
			}
			for _, k := range ks {
				ctx := &cancelAtCheckCtx{Context: context.Background(), after: k}
				left, err := run(t, spec, ctx)
				if !errors.Is(err, context.Canceled) {
					t.Fatalf("cancelled at check %d of %d: err %v, want context.Canceled", k, full.checks, err)
				}
				if left != 0 {
					t.Fatalf("cancelled at check %d of %d: %d bytes still allocated after Close", k, full.checks, left)
				}
			}
		})
	}
}
