package vector_test

import (
	"context"
	"testing"

	"github.com/apache/arrow/go/v17/arrow/memory"

	"github.com/arrowstream/arrowstream/vector"
)

// BenchmarkLiveRawEpoch folds one epoch of input rows (64K rows over 10K
// keys; SUM, COUNT grouped by a single bigint key and by a two-word
// composite key, the words grouper of GROUP BY key, window) into live
// state that already holds those groups: "merge" aggregates the rows
// partially and merges the partial rows (the path for any aggregate),
// "raw" folds the rows straight in (vector.LiveRaw). Compare the two in
// one run:
//
//	go test -run '^$' -bench 'BenchmarkLiveRawEpoch' -cpu 1 ./vector/
func BenchmarkLiveRawEpoch(b *testing.B) {
	ctx := context.Background()
	mem := memory.NewGoAllocator()
	aggs := []vector.AggregateCall{
		{Func: vector.AggSum, Args: []vector.Expr{vector.Col("v")}, Name: "s"},
		{Func: vector.AggCountStar, Name: "n"},
	}
	keys, vals := benchAggData(benchAggBatch, 10_000, 3)
	recs := benchAggRecords(keys, vals)
	defer func() {
		for _, r := range recs {
			r.Release()
		}
	}()
	for _, shape := range []struct {
		name    string
		groupBy []vector.NamedExpr
	}{
		{"key", []vector.NamedExpr{vector.As(vector.Col("k"), "k")}},
		{"composite", []vector.NamedExpr{vector.As(vector.Col("k"), "k"), vector.As(vector.Col("k"), "k2")}},
	} {
		spec := vector.AggregateSpec{GroupBy: shape.groupBy, Aggregates: aggs}
		partial, err := vector.PartialSchema(benchAggSchema, spec)
		if err != nil {
			b.Fatal(err)
		}
		newLive := func(b *testing.B) *vector.LiveAggregate {
			live, err := vector.NewLiveAggregate(mem, partial, len(shape.groupBy), aggs)
			if err != nil {
				b.Fatal(err)
			}
			return live
		}
		mergeEpoch := func(b *testing.B, live *vector.LiveAggregate) {
			scan, err := vector.NewScan(benchAggSchema, recs...)
			if err != nil {
				b.Fatal(err)
			}
			spec.Mode = vector.AggPartial
			op, err := vector.NewHashAggregate(mem, scan, spec)
			if err != nil {
				b.Fatal(err)
			}
			parts, err := vector.Drain(ctx, op)
			op.Close()
			if err != nil {
				b.Fatal(err)
			}
			for _, p := range parts {
				if _, err := live.Merge(ctx, p); err != nil {
					b.Fatal(err)
				}
				p.Release()
			}
		}
		rawEpoch := func(b *testing.B, raw *vector.LiveRaw) {
			for _, r := range recs {
				ks, err := raw.Keys(ctx, r)
				if err != nil {
					b.Fatal(err)
				}
				_, err = raw.Update(ctx, r, ks)
				for _, k := range ks {
					k.Release()
				}
				if err != nil {
					b.Fatal(err)
				}
			}
		}
		report := func(b *testing.B) {
			b.ReportMetric(float64(len(keys))*float64(b.N)/b.Elapsed().Seconds(), "rows/s")
		}
		b.Run(shape.name+"/merge", func(b *testing.B) {
			live := newLive(b)
			defer live.Close()
			mergeEpoch(b, live)
			b.ResetTimer()
			for b.Loop() {
				mergeEpoch(b, live)
			}
			report(b)
		})
		b.Run(shape.name+"/raw", func(b *testing.B) {
			live := newLive(b)
			defer live.Close()
			raw, ok, err := live.Raw(benchAggSchema, shape.groupBy)
			if err != nil || !ok {
				b.Fatalf("Raw: %v, %v", ok, err)
			}
			rawEpoch(b, raw)
			b.ResetTimer()
			for b.Loop() {
				rawEpoch(b, raw)
			}
			report(b)
		})
	}
}
