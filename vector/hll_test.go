package vector_test

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/apache/arrow/go/v17/arrow"
	"github.com/apache/arrow/go/v17/arrow/array"
	"github.com/apache/arrow/go/v17/arrow/memory"

	"github.com/arrowstream/arrowstream/internal/testutil/poisonmem"
	"github.com/arrowstream/arrowstream/vector"
)

func TestHLLPrecision(t *testing.T) {
	for _, c := range []struct {
		rsd float64
		p   int
	}{{0.05, 9}, {0.01, 14}, {0.3, 4}, {0.005, 16}} {
		p, err := vector.HLLPrecision(c.rsd)
		if err != nil || p != c.p {
			t.Errorf("HLLPrecision(%v) = %d, %v; want %d", c.rsd, p, err, c.p)
		}
	}
	for _, rsd := range []float64{0, -1, 0.5, math.NaN(), 1e-9} {
		if _, err := vector.HLLPrecision(rsd); err == nil {
			t.Errorf("HLLPrecision(%v): want an error", rsd)
		}
	}
	if got := vector.HLLEstimate(make([]uint8, 512)); got != 0 {
		t.Errorf("estimate of an empty sketch = %v", got)
	}
}

// hllRecords builds (g bigint, x) rows: for each of groups groups, n
// distinct values, each appearing twice, shuffled, in 64K-row batches.
func hllRecords(mem memory.Allocator, groups, n int, strs bool, seed uint64) (*arrow.Schema, []arrow.Record) {
	vt := vector.Int64
	if strs {
		vt = vector.String
	}
	schema := arrow.NewSchema([]arrow.Field{{Name: "g", Type: vector.Int64}, {Name: "x", Type: vt}}, nil)
	r := rand.New(rand.NewPCG(seed, 1))
	type row struct {
		g int64
		x uint64
	}
	var rows []row
	for g := 0; g < groups; g++ {
		for i := 0; i < n; i++ {
			x := r.Uint64()
			rows = append(rows, row{int64(g), x}, row{int64(g), x})
		}
	}
	r.Shuffle(len(rows), func(i, j int) { rows[i], rows[j] = rows[j], rows[i] })
	var recs []arrow.Record
	for lo := 0; lo < len(rows); lo += 64 << 10 {
		hi := min(lo+64<<10, len(rows))
		b := array.NewRecordBuilder(mem, schema)
		for _, rw := range rows[lo:hi] {
			b.Field(0).(*array.Int64Builder).Append(rw.g)
			if strs {
				b.Field(1).(*array.StringBuilder).Append(fmt.Sprintf("value-%x", rw.x))
			} else {
				b.Field(1).(*array.Int64Builder).Append(int64(rw.x))
			}
		}
		recs = append(recs, b.NewRecord())
		b.Release()
	}
	return schema, recs
}

// estimates runs spec over recs and returns approx_count_distinct by group.
func estimates(t *testing.T, mem memory.Allocator, schema *arrow.Schema, spec vector.AggregateSpec, recs []arrow.Record) map[int64]int64 {
	t.Helper()
	scan, err := vector.NewScan(schema, recs...)
	if err != nil {
		t.Fatal(err)
	}
	op, err := vector.NewHashAggregate(mem, scan, spec)
	if err != nil {
		t.Fatal(err)
	}
	defer op.Close()
	out, err := vector.Drain(context.Background(), op)
	if err != nil {
		t.Fatal(err)
	}
	got := map[int64]int64{}
	for _, rec := range out {
		for i := 0; i < int(rec.NumRows()); i++ {
			got[rec.Column(0).(*array.Int64).Value(i)] = rec.Column(1).(*array.Int64).Value(i)
		}
		rec.Release()
	}
	return got
}

func TestHLLAccuracy(t *testing.T) {
	mem := poisonmem.New()
	defer mem.AssertSize(t, 0)
	spec := vector.AggregateSpec{
		GroupBy:    []vector.NamedExpr{vector.As(vector.Col("g"), "g")},
		Aggregates: []vector.AggregateCall{{Func: vector.AggApproxCountDistinct, Args: []vector.Expr{vector.Col("x")}, Name: "c"}},
	}
	// The standard error of 512 registers is 1.04/sqrt(512) ≈ 4.6%: every
	// estimate must be within 3 of them, and their mean error near 0.8 of
	// one (|N(0, σ)| averages 0.8σ).
	const sigma = 1.04 / 22.627
	var sumErr float64
	var count int
	for _, c := range []struct {
		groups, n int
		strs      bool
	}{{10, 100_000, false}, {10, 10_000, false}, {10, 1_000, false}, {3, 100_000, true}, {10, 100, false}} {
		schema, recs := hllRecords(mem, c.groups, c.n, c.strs, uint64(c.n))
		got := estimates(t, mem, schema, spec, recs)
		// Partial sketches of two halves merge into exactly the same
		// sketch as the whole.
		half := len(recs) / 2
		if half > 0 {
			pschema, err := vector.PartialSchema(schema, spec)
			if err != nil {
				t.Fatal(err)
			}
			var partials []arrow.Record
			for _, part := range [][]arrow.Record{recs[:half], recs[half:]} {
				scan, _ := vector.NewScan(schema, part...)
				op, err := vector.NewHashAggregate(mem, scan, withMode(spec, vector.AggPartial))
				if err != nil {
					t.Fatal(err)
				}
				out, err := vector.Drain(context.Background(), op)
				if err != nil {
					t.Fatal(err)
				}
				op.Close()
				partials = append(partials, out...)
			}
			merged := estimates(t, mem, pschema, finalSpec(spec, vector.AggFinal), partials)
			releaseRecords(partials)
			for g, e := range got {
				if merged[g] != e {
					t.Errorf("n=%d group %d: merged estimate %d, whole %d", c.n, g, merged[g], e)
				}
			}
		}
		releaseRecords(recs)
		if len(got) != c.groups {
			t.Fatalf("%d groups, want %d", len(got), c.groups)
		}
		for g, e := range got {
			rel := (float64(e) - float64(c.n)) / float64(c.n)
			if math.Abs(rel) > 3*sigma {
				t.Errorf("n=%d strings=%v group %d: estimate %d, relative error %.3f", c.n, c.strs, g, e, rel)
			}
			sumErr += math.Abs(rel)
			count++
		}
	}
	if mean := sumErr / float64(count); mean > 1.1*sigma {
		t.Errorf("mean relative error %.4f, want <= %.4f", mean, 1.1*sigma)
	} else {
		t.Logf("mean relative error %.4f over %d sketches (σ = %.4f)", mean, count, sigma)
	}
}
