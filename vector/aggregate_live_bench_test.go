package vector_test

import (
	"context"
	"testing"

	"github.com/apache/arrow/go/v17/arrow"
	"github.com/apache/arrow/go/v17/arrow/memory"

	"github.com/arrowstream/arrowstream/vector"
)

// BenchmarkLiveAggregateEpoch is one streaming epoch's work on live
// state: merging a partial batch (SUM, COUNT by bigint key; 4K keys
// touched) into a LiveAggregate of 1e5 and 1e6 groups in place, then
// taking the changed groups' state (what the operator writes to its
// store). Its cost follows the epoch, not the state: the two sizes should
// take about the same time per epoch.
//
//	go test -run '^$' -bench 'BenchmarkLiveAggregateEpoch' -cpu 1 ./vector/
func BenchmarkLiveAggregateEpoch(b *testing.B) {
	ctx := context.Background()
	mem := memory.NewGoAllocator()
	spec := vector.AggregateSpec{
		GroupBy: []vector.NamedExpr{vector.As(vector.Col("k"), "k")},
		Aggregates: []vector.AggregateCall{
			{Func: vector.AggSum, Args: []vector.Expr{vector.Col("v")}, Name: "s"},
			{Func: vector.AggCountStar, Name: "n"},
		},
	}
	partialOfRecs := func(recs []arrow.Record) []arrow.Record {
		scan, err := vector.NewScan(benchAggSchema, recs...)
		if err != nil {
			b.Fatal(err)
		}
		spec.Mode = vector.AggPartial
		op, err := vector.NewHashAggregate(mem, scan, spec)
		if err != nil {
			b.Fatal(err)
		}
		defer op.Close()
		out, err := vector.Drain(ctx, op)
		if err != nil {
			b.Fatal(err)
		}
		return out
	}
	for _, groups := range []int{100_000, 1_000_000} {
		keys, vals := benchAggData(groups, groups, 1)
		stateRecs := benchAggRecords(keys, vals)
		state := partialOfRecs(stateRecs)
		ek, ev := benchAggData(benchAggBatch, 4096, 2)
		for i := range ek {
			ek[i] = keys[int(uint64(ek[i])%uint64(groups))]
		}
		epochRecs := benchAggRecords(ek, ev)
		epoch := partialOfRecs(epochRecs)
		partial := state[0].Schema()
		b.Run("groups="+itoa(groups), func(b *testing.B) {
			live, err := vector.NewLiveAggregate(mem, partial, 1, spec.Aggregates)
			if err != nil {
				b.Fatal(err)
			}
			defer live.Close()
			for _, r := range state {
				if _, err := live.Merge(ctx, r); err != nil {
					b.Fatal(err)
				}
			}
			b.ResetTimer()
			for b.Loop() {
				var changed []int32
				for _, r := range epoch {
					gids, err := live.Merge(ctx, r)
					if err != nil {
						b.Fatal(err)
					}
					changed = append(changed, gids...)
				}
				rec, err := live.State(changed)
				if err != nil {
					b.Fatal(err)
				}
				rec.Release()
			}
		})
		for _, rs := range [][]arrow.Record{stateRecs, state, epochRecs, epoch} {
			for _, r := range rs {
				r.Release()
			}
		}
	}
}

func itoa(n int) string {
	switch n {
	case 100_000:
		return "1e5"
	case 1_000_000:
		return "1e6"
	}
	return "n"
}
