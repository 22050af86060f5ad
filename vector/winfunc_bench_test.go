package vector_test

import (
	"context"
	"math/rand"
	"testing"

	"github.com/apache/arrow/go/v17/arrow"
	"github.com/apache/arrow/go/v17/arrow/array"
	"github.com/apache/arrow/go/v17/arrow/memory"

	"github.com/arrowstream/arrowstream/vector"
)

// windowBenchInput is 1M rows in 64K batches: k, a bigint with 1000
// distinct values, and v, a random double.
func windowBenchInput(mem memory.Allocator) (*arrow.Schema, []arrow.Record) {
	schema := arrow.NewSchema([]arrow.Field{
		{Name: "k", Type: vector.Int64},
		{Name: "v", Type: vector.Float64},
	}, nil)
	r := rand.New(rand.NewSource(1))
	var recs []arrow.Record
	for b := 0; b < 16; b++ {
		kb := array.NewInt64Builder(mem)
		vb := array.NewFloat64Builder(mem)
		for i := 0; i < 1<<16; i++ {
			kb.Append(r.Int63n(1000))
			vb.Append(r.Float64())
		}
		k, v := kb.NewArray(), vb.NewArray()
		recs = append(recs, array.NewRecord(schema, []arrow.Array{k, v}, 1<<16))
		k.Release()
		v.Release()
		kb.Release()
		vb.Release()
	}
	return schema, recs
}

var (
	growingFrame = vector.WindowFrame{Start: vector.FrameBound{Kind: vector.FrameUnboundedPreceding}, End: vector.FrameBound{Kind: vector.FrameCurrentRow}}
	wholeFrame   = vector.WindowFrame{Start: vector.FrameBound{Kind: vector.FrameUnboundedPreceding}, End: vector.FrameBound{Kind: vector.FrameUnboundedFollowing}}
)

// BenchmarkWindowOp is row_number() and a running sum(v) OVER (PARTITION
// BY k ORDER BY v) over 1M rows; bench/peers/duckdb compares the same with
// DuckDB over 10M rows.
func BenchmarkWindowOp(b *testing.B) {
	mem := memory.NewGoAllocator()
	schema, recs := windowBenchInput(mem)
	defer func() {
		for _, r := range recs {
			r.Release()
		}
	}()
	calls := map[string]vector.WindowCall{
		"row_number":  {Func: vector.WinRowNumber, Frame: growingFrame},
		"running_sum": {Func: vector.WinAggregate, Agg: vector.AggregateCall{Func: vector.AggSum, Args: []vector.Expr{vector.Col("v")}}, Frame: growingFrame},
		"moving_max":  {Func: vector.WinAggregate, Agg: vector.AggregateCall{Func: vector.AggMax, Args: []vector.Expr{vector.Col("v")}}, Frame: vector.WindowFrame{Start: vector.FrameBound{Kind: vector.FramePreceding, Offset: 10}, End: vector.FrameBound{Kind: vector.FrameCurrentRow}}},
		// The passes issue 17's last round chunked: a whole-partition
		// aggregate (accumulator update, then the gather of each
		// partition's value to its rows), lag's gather, lead IGNORE NULLS
		// and a RANGE frame (its key preparation).
		"partition_sum":     {Func: vector.WinAggregate, Agg: vector.AggregateCall{Func: vector.AggSum, Args: []vector.Expr{vector.Col("v")}}, Frame: wholeFrame},
		"lag":               {Func: vector.WinLag, N: 1, Args: []vector.Expr{vector.Col("v")}, Frame: growingFrame},
		"lead_ignore_nulls": {Func: vector.WinLead, N: 2, IgnoreNulls: true, Args: []vector.Expr{vector.Col("v")}, Frame: growingFrame},
		"range_sum": {Func: vector.WinAggregate, Agg: vector.AggregateCall{Func: vector.AggSum, Args: []vector.Expr{vector.Col("v")}},
			Frame: vector.WindowFrame{Range: true, Start: vector.FrameBound{Kind: vector.FramePreceding, FloatOffset: 0.01}, End: vector.FrameBound{Kind: vector.FrameCurrentRow}}},
	}
	for _, name := range []string{"row_number", "running_sum", "moving_max", "partition_sum", "lag", "lead_ignore_nulls", "range_sum"} {
		b.Run(name, func(b *testing.B) {
			ctx := context.Background()
			for b.Loop() {
				scan, err := vector.NewScan(schema, recs...)
				if err != nil {
					b.Fatal(err)
				}
				op, err := vector.NewWindowOp(mem, scan, vector.WindowOpSpec{
					PartitionBy: []vector.Expr{vector.Col("k")},
					OrderBy:     []vector.SortKey{vector.Asc(vector.Col("v"))},
					Calls:       []vector.WindowCall{calls[name]},
				})
				if err != nil {
					b.Fatal(err)
				}
				out, err := vector.Drain(ctx, op)
				if err != nil {
					b.Fatal(err)
				}
				for _, r := range out {
					r.Release()
				}
				op.Close()
			}
			b.ReportMetric(float64(b.N)*float64(1<<20)/b.Elapsed().Seconds()/1e6, "Mrows/s")
		})
	}
}
