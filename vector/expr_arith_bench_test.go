package vector_test

import (
	"context"
	"math/bits"
	"math/rand/v2"
	"testing"
	"unsafe"

	"github.com/apache/arrow/go/v17/arrow"
	"github.com/apache/arrow/go/v17/arrow/array"
	"github.com/apache/arrow/go/v17/arrow/memory"

	"github.com/arrowstream/arrowstream/vector"
)

// benchRows is the batch size of the kernel benchmarks: 64K rows, the
// engine's batch size (docs/performance.md, "Machine and library facts").
const benchRows = 64 * 1024

// exprPool is a minimal pooling allocator: freed buffers are kept by
// size class and handed out again, so that steady-state benchmarks measure
// kernels rather than the first touch of fresh pages (docs/performance.md,
// "Machine and library facts"). It is
// not safe for concurrent use.
type exprPool struct {
	free  map[int][][]byte
	class map[*byte]int
	under *memory.GoAllocator
}

func newExprPool() *exprPool {
	return &exprPool{free: map[int][][]byte{}, class: map[*byte]int{}, under: memory.NewGoAllocator()}
}

func (p *exprPool) Allocate(size int) []byte {
	if size == 0 {
		return p.under.Allocate(0)
	}
	c := 1 << bits.Len(uint(size-1))
	if l := p.free[c]; len(l) > 0 {
		b := l[len(l)-1]
		p.free[c] = l[:len(l)-1]
		return b[:size]
	}
	b := p.under.Allocate(c)
	p.class[unsafe.SliceData(b)] = c
	return b[:size]
}

func (p *exprPool) Reallocate(size int, b []byte) []byte {
	if c, ok := p.class[unsafe.SliceData(b)]; ok && size <= c {
		return b[:size]
	}
	nb := p.Allocate(size)
	copy(nb, b)
	p.Free(b)
	return nb
}

func (p *exprPool) Free(b []byte) {
	if c, ok := p.class[unsafe.SliceData(b)]; ok {
		p.free[c] = append(p.free[c], b[:c])
	}
}

// int64Record is a benchRows-row record of two int64 columns a and b
// with small random values (no overflow in + or *).
func int64Record() arrow.Record {
	mem := memory.NewGoAllocator()
	r := rand.New(rand.NewPCG(1, 2))
	cols := make([]arrow.Array, 2)
	for c := range cols {
		bld := array.NewInt64Builder(mem)
		for range benchRows {
			bld.Append(r.Int64N(1<<20) - 1<<19)
		}
		cols[c] = bld.NewArray()
		bld.Release()
	}
	return array.NewRecord(exprSchema("a", vector.Int64, "b", vector.Int64), cols, benchRows)
}

// benchVersusHand runs e over rec (with Go's allocator, and with a pooling
// one) and the hand-written loop over the same buffers, then reports the
// time ratios in a "ratio" sub-benchmark (expr/hand, pool/hand: 1.0 means
// as fast as the hand loop).
func benchVersusHand(b *testing.B, rec arrow.Record, e vector.Expr, hand func()) {
	var exprNs, poolNs, handNs float64
	runExpr := func(mem memory.Allocator, ns *float64) func(b *testing.B) {
		return func(b *testing.B) {
			ev, err := e.Bind(rec.Schema(), mem)
			if err != nil {
				b.Fatal(err)
			}
			ctx := context.Background()
			b.ResetTimer()
			for range b.N {
				arr, err := ev.Eval(ctx, rec)
				if err != nil {
					b.Fatal(err)
				}
				arr.Release()
			}
			reportRows(b, rec.NumRows())
			*ns = float64(b.Elapsed().Nanoseconds()) / float64(b.N)
		}
	}
	b.Run("expr", runExpr(memory.NewGoAllocator(), &exprNs))
	b.Run("expr-pool", runExpr(newExprPool(), &poolNs))
	b.Run("hand", func(b *testing.B) {
		for range b.N {
			hand()
		}
		reportRows(b, rec.NumRows())
		handNs = float64(b.Elapsed().Nanoseconds()) / float64(b.N)
	})
	b.Run("ratio", func(b *testing.B) {
		if handNs > 0 {
			b.ReportMetric(exprNs/handNs, "expr/hand")
			b.ReportMetric(poolNs/handNs, "pool/hand")
		}
		b.ReportMetric(0, "ns/op")
	})
}

func reportRows(b *testing.B, rows int64) {
	b.ReportMetric(float64(rows)*float64(b.N)/b.Elapsed().Seconds(), "rows/s")
}

// BenchmarkInt64Kernels measures col + 1, col > 1 and col * col against
// hand-written loops over the same input buffers (writing into a buffer
// allocated once, the best case).
func BenchmarkInt64Kernels(b *testing.B) {
	rec := int64Record()
	defer rec.Release()
	a := rec.Column(0).(*array.Int64).Int64Values()
	c := rec.Column(1).(*array.Int64).Int64Values()
	out := make([]int64, benchRows)
	bitsOut := make([]uint64, benchRows/64)
	b.Run("add-const", func(b *testing.B) {
		benchVersusHand(b, rec, vector.Add(col("a"), lit(int64(1))), func() {
			for i, v := range a {
				out[i] = v + 1
			}
		})
	})
	b.Run("gt-const", func(b *testing.B) {
		benchVersusHand(b, rec, vector.Gt(col("a"), lit(int64(1))), func() {
			clear(bitsOut)
			for i, v := range a {
				if v > 1 {
					bitsOut[i>>6] |= 1 << (uint(i) & 63)
				}
			}
		})
	})
	b.Run("mul", func(b *testing.B) {
		benchVersusHand(b, rec, vector.Mul(col("a"), col("b")), func() {
			for i, v := range a {
				out[i] = v * c[i]
			}
		})
	})
}
