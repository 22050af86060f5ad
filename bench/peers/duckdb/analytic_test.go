package duckdbpeer

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"math"
	"runtime"
	"slices"
	"testing"

	"github.com/apache/arrow/go/v17/arrow"
	"github.com/apache/arrow/go/v17/arrow/array"
	"github.com/apache/arrow/go/v17/arrow/memory"

	"github.com/arrowstream/arrowstream/bench/gen"
	"github.com/arrowstream/arrowstream/vector"
)

// The window-function benchmark of the SQL issue: row_number() and a
// running sum over 10M rows, partitioned by an int64 key (1000 keys) and
// ordered by a float64 value, DuckDB one thread against Arrowstream's
// WindowOp on one core. Each engine sums the window column, so that only one
// row leaves the engine; every answer is checked against a reference.
var (
	anRows = flag.Int("window.rows", 10_000_000, "rows of the window-function data set")
	anKeys = flag.Int("window.keys", 1000, "distinct partition keys of the window-function data set")
)

type anQuery struct {
	name string
	// duck is DuckDB's query; it returns one number.
	duck string
	// call is Arrowstream's window function over (PARTITION BY k ORDER BY v).
	call vector.WindowCall
}

var anQueries = []anQuery{
	{"row_number",
		"SELECT sum(rn)::DOUBLE FROM (SELECT row_number() OVER (PARTITION BY k ORDER BY v) AS rn FROM t)",
		vector.WindowCall{Func: vector.WinRowNumber, Name: "rn",
			Frame: vector.WindowFrame{Start: vector.FrameBound{Kind: vector.FrameUnboundedPreceding}, End: vector.FrameBound{Kind: vector.FrameCurrentRow}}}},
	{"running_sum",
		"SELECT sum(s) FROM (SELECT sum(v) OVER (PARTITION BY k ORDER BY v ROWS BETWEEN UNBOUNDED PRECEDING AND CURRENT ROW) AS s FROM t)",
		vector.WindowCall{Func: vector.WinAggregate, Name: "s",
			Agg:   vector.AggregateCall{Func: vector.AggSum, Args: []vector.Expr{vector.Col("v")}},
			Frame: vector.WindowFrame{Start: vector.FrameBound{Kind: vector.FrameUnboundedPreceding}, End: vector.FrameBound{Kind: vector.FrameCurrentRow}}}},
}

// anReference computes both answers: the sum of row numbers and the sum
// of the running sums, from the rows sorted per key.
func anReference(keys []int64, vals []float64) map[string]float64 {
	parts := map[int64][]float64{}
	for i, k := range keys {
		parts[k] = append(parts[k], vals[i])
	}
	var rn, rs float64
	for _, p := range parts {
		slices.Sort(p)
		var run float64
		for i, v := range p {
			rn += float64(i + 1)
			run += v
			rs += run
		}
	}
	return map[string]float64{"row_number": rn, "running_sum": rs}
}

func anClose(a, b float64) bool {
	return math.Abs(a-b) <= 1e-9*math.Max(math.Abs(a), math.Abs(b))
}

// arrowstreamWindow runs the WindowOp over the batches and sums its last
// column.
func arrowstreamWindow(ctx context.Context, mem memory.Allocator, recs []arrow.Record, q anQuery) (float64, error) {
	scan, err := vector.NewScan(gen.AggSchema, recs...)
	if err != nil {
		return 0, err
	}
	op, err := vector.NewWindowOp(mem, scan, vector.WindowOpSpec{
		PartitionBy: []vector.Expr{vector.Col("k")},
		OrderBy:     []vector.SortKey{vector.Asc(vector.Col("v"))},
		Calls:       []vector.WindowCall{q.call},
	})
	if err != nil {
		scan.Close()
		return 0, err
	}
	defer op.Close()
	var total float64
	for {
		rec, err := op.Next(ctx)
		if err != nil {
			if errors.Is(err, io.EOF) {
				return total, nil
			}
			return 0, err
		}
		switch c := rec.Column(int(rec.NumCols()) - 1).(type) {
		case *array.Int32:
			var s int64
			for _, v := range c.Int32Values() {
				s += int64(v)
			}
			total += float64(s)
		case *array.Float64:
			for _, v := range c.Float64Values() {
				total += v
			}
		default:
			rec.Release()
			return 0, fmt.Errorf("window column is %s", c.DataType())
		}
		rec.Release()
	}
}

var anFigures figures

// BenchmarkWindowFunctions measures the window queries on DuckDB (one thread) and
// Arrowstream, on the same rows; run with -cpu 1.
func BenchmarkWindowFunctions(b *testing.B) {
	if p := runtime.GOMAXPROCS(0); p != 1 {
		b.Logf("GOMAXPROCS=%d: run with -cpu 1 to compare one core with one core", p)
	}
	keys, vals := gen.AggData(*anRows, *anKeys, aggSeed)
	ref := anReference(keys, vals)
	recs := gen.AggRecords(memory.DefaultAllocator, keys, vals, gen.DefaultBatchRows)
	defer func() {
		for _, r := range recs {
			r.Release()
		}
	}()
	duck, err := loadDuck(keys, vals)
	if err != nil {
		b.Fatalf("loading DuckDB: %v", err)
	}
	defer duck.close()
	if err := duck.setThreads(1); err != nil {
		b.Fatal(err)
	}
	ctx := context.Background()
	for qi, q := range anQueries {
		b.Run(q.name+"/duckdb-1thread", func(b *testing.B) {
			iters := 0
			for b.Loop() {
				var got float64
				if err := duck.conn.QueryRowContext(ctx, q.duck).Scan(&got); err != nil {
					b.Fatalf("%s: %v", q.duck, err)
				}
				if !anClose(got, ref[q.name]) {
					b.Fatalf("DuckDB: %s = %v, want %v", q.name, got, ref[q.name])
				}
				iters++
			}
			anFigures.add(qi, "duckdb-1thread", float64(len(keys))*float64(iters)/b.Elapsed().Seconds())
		})
		b.Run(q.name+"/arrowstream", func(b *testing.B) {
			iters := 0
			for b.Loop() {
				got, err := arrowstreamWindow(ctx, memory.DefaultAllocator, recs, q)
				if err != nil {
					b.Fatal(err)
				}
				if !anClose(got, ref[q.name]) {
					b.Fatalf("Arrowstream: %s = %v, want %v", q.name, got, ref[q.name])
				}
				iters++
			}
			anFigures.add(qi, "arrowstream", float64(len(keys))*float64(iters)/b.Elapsed().Seconds())
		})
	}
	b.Cleanup(func() {
		for qi, q := range anQueries {
			d, ok1 := anFigures.median(qi, "duckdb-1thread")
			a, ok2 := anFigures.median(qi, "arrowstream")
			if ok1 && ok2 {
				fmt.Printf("window %-12s %d rows, %d keys: duckdb-1thread %.2f M rows/s, arrowstream %.2f M rows/s, ratio %.2fx\n",
					q.name, *anRows, *anKeys, d, a, a/d)
			}
		}
	})
}
