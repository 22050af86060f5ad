package vector_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math/rand"
	"testing"
	"time"

	"github.com/apache/arrow/go/v17/arrow"
	"github.com/apache/arrow/go/v17/arrow/array"
	"github.com/apache/arrow/go/v17/arrow/memory"

	"github.com/arrowstream/arrowstream/vector"
)

const opsBatchRows = 1 << 16

// opsRepeat returns the same record n times, as a source that costs nothing.
type opsRepeat struct {
	rec  arrow.Record
	left int
}

func (r *opsRepeat) Schema() *arrow.Schema { return r.rec.Schema() }

func (r *opsRepeat) Next(context.Context) (arrow.Record, error) {
	if r.left == 0 {
		return nil, io.EOF
	}
	r.left--
	r.rec.Retain()
	return r.rec, nil
}

func (r *opsRepeat) Close() error { return nil }

// opsDrain pulls op to the end, releasing records, and returns the rows.
func opsDrain(b *testing.B, op vector.Operator) int64 {
	var rows int64
	for {
		rec, err := op.Next(context.Background())
		if errors.Is(err, io.EOF) {
			return rows
		}
		if err != nil {
			b.Fatal(err)
		}
		rows += rec.NumRows()
		rec.Release()
	}
}

var abBenchSchema = arrow.NewSchema([]arrow.Field{
	{Name: "a", Type: vector.Int64, Nullable: true},
	{Name: "b", Type: vector.Float64, Nullable: true},
}, nil)

// abBatch is a 64K-row batch of a uniform in [0, limit) and b uniform in
// [0, 1), without nulls.
func abBatch(mem memory.Allocator, limit int64) (arrow.Record, []int64, []float64) {
	r := rand.New(rand.NewSource(1))
	a := make([]int64, opsBatchRows)
	bv := make([]float64, opsBatchRows)
	for i := range a {
		a[i] = r.Int63n(limit)
		bv[i] = r.Float64()
	}
	ab := array.NewInt64Builder(mem)
	ab.AppendValues(a, nil)
	fb := array.NewFloat64Builder(mem)
	fb.AppendValues(bv, nil)
	cols := []arrow.Array{ab.NewArray(), fb.NewArray()}
	ab.Release()
	fb.Release()
	rec := array.NewRecord(abBenchSchema, cols, opsBatchRows)
	cols[0].Release()
	cols[1].Release()
	return rec, a, bv
}

// BenchmarkFilterProject runs
//
//	SELECT a, b * 2.0 FROM t WHERE a > 100
//
// over 64K-row batches (a uniform in [0, 200), so 49.5% of rows pass; b a
// double; no nulls) through Filter and Project, and in the same run a tight
// hand-written branch-free loop over the same buffers that does the same
// work into preallocated outputs. It reports rows/s of each (input rows) and
// ratio = ours / loop.
func BenchmarkFilterProject(b *testing.B) {
	for _, a := range opsAllocators() {
		b.Run(a.name, func(b *testing.B) { benchFilterProject(b, a.mem) })
	}
}

func benchFilterProject(b *testing.B, mem memory.Allocator) {
	rec, av, bv := abBatch(mem, 200)
	defer rec.Release()
	f, err := vector.NewFilter(mem, &opsRepeat{rec: rec, left: b.N}, vector.Gt(vector.Col("a"), vector.Lit(int64(100))))
	if err != nil {
		b.Fatal(err)
	}
	p, err := vector.NewProject(mem, f, []vector.NamedExpr{vector.As(vector.Col("a"), "a"), vector.As(vector.Mul(vector.Col("b"), vector.Lit(float64(2.0))), "b2")})
	if err != nil {
		b.Fatal(err)
	}
	defer p.Close()
	outA := make([]int64, opsBatchRows)
	outB := make([]float64, opsBatchRows)
	ctx := context.Background()
	// The two alternate batch by batch so that both see the same machine
	// (the build machines are noisy from one second to the next).
	var ours, loop time.Duration
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		t0 := time.Now()
		out, err := p.Next(ctx)
		if err != nil {
			b.Fatal(err)
		}
		t1 := time.Now()
		kept := tightFilterProject(av, bv, outA, outB, 100)
		t2 := time.Now()
		if int64(kept) != out.NumRows() {
			b.Fatalf("operators kept %d rows, loop %d", out.NumRows(), kept)
		}
		out.Release()
		ours += t1.Sub(t0)
		loop += t2.Sub(t1)
	}
	b.StopTimer()
	rows := float64(opsBatchRows) * float64(b.N)
	b.ReportMetric(rows/ours.Seconds(), "ours-rows/s")
	b.ReportMetric(rows/loop.Seconds(), "loop-rows/s")
	b.ReportMetric(loop.Seconds()/ours.Seconds(), "ratio")
}

// tightFilterProject is the hand-written baseline: out = (a, b*c) where
// a > k, branch-free (the row is always written, the cursor advances only
// when it passes).
func tightFilterProject(a []int64, b []float64, outA []int64, outB []float64, k int64) int {
	n := 0
	b = b[:len(a)]
	outA = outA[:len(a)]
	outB = outB[:len(a)]
	for i, v := range a {
		outA[n] = v
		outB[n] = b[i] * 2.0
		if v > k {
			n++
		}
	}
	return n
}

// BenchmarkFilter measures Filter alone (selection vector from the
// predicate's mask, then a gather of both columns) at 1%, 50% and 99%
// selectivity over 64K-row batches of (a bigint, b double).
func BenchmarkFilter(b *testing.B) {
	for _, a := range opsAllocators() {
		b.Run(a.name, func(b *testing.B) { benchFilter(b, a.mem) })
	}
}

func benchFilter(b *testing.B, mem memory.Allocator) {
	rec, _, _ := abBatch(mem, 10000)
	defer rec.Release()
	for _, sel := range []struct {
		name string
		k    int64
	}{{"1%", 9899}, {"50%", 4999}, {"99%", 99}} {
		b.Run(fmt.Sprintf("selectivity=%s", sel.name), func(b *testing.B) {
			f, err := vector.NewFilter(mem, &opsRepeat{rec: rec, left: b.N}, vector.Gt(vector.Col("a"), vector.Lit(int64(sel.k))))
			if err != nil {
				b.Fatal(err)
			}
			b.ResetTimer()
			opsDrain(b, f)
			b.StopTimer()
			f.Close()
			b.ReportMetric(float64(opsBatchRows)*float64(b.N)/b.Elapsed().Seconds(), "rows/s")
		})
	}
}

// opsAllocators are the allocators every operator benchmark runs on: Go's
// (fresh, zeroed memory for every buffer, reclaimed by the GC) and a pooling
// one (buffers reused across batches, as the engine is meant to run).
func opsAllocators() []struct {
	name string
	mem  memory.Allocator
} {
	return []struct {
		name string
		mem  memory.Allocator
	}{{"alloc=go", memory.NewGoAllocator()}, {"alloc=pool", vector.NewPoolAllocator(memory.NewGoAllocator(), 0)}}
}
