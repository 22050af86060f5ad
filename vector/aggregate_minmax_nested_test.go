package vector_test

import (
	"context"
	"math"
	"math/rand"
	"testing"

	"github.com/apache/arrow/go/v17/arrow"
	"github.com/apache/arrow/go/v17/arrow/array"

	"github.com/arrowstream/arrowstream/vector"
	vt "github.com/arrowstream/arrowstream/vector/vectortest"
)

var nestedMinMaxSchema = arrow.NewSchema([]arrow.Field{
	{Name: "k", Type: vector.Int64},
	{Name: "s", Type: arrow.StructOf(
		arrow.Field{Name: "a", Type: vector.Int32, Nullable: true},
		arrow.Field{Name: "d", Type: vector.Float64, Nullable: true}), Nullable: true},
}, nil)

// modelCmp orders two struct<a int, d double> values as Spark does,
// written out independently of the engine: a NULL field first, then by
// a, then by d with -0.0 equal to 0.0 and NaN above every number.
func modelCmp(x, y []any) int {
	for f := range 2 {
		xv, yv := x[f], y[f]
		switch {
		case xv == nil && yv == nil:
			continue
		case xv == nil:
			return -1
		case yv == nil:
			return 1
		}
		var c int
		if f == 0 {
			a, b := xv.(int32), yv.(int32)
			c = map[bool]int{true: -1, false: 0}[a < b] + map[bool]int{true: 1, false: 0}[a > b]
		} else {
			a, b := xv.(float64), yv.(float64)
			switch {
			case math.IsNaN(a) && math.IsNaN(b):
			case math.IsNaN(a):
				c = 1
			case math.IsNaN(b):
				c = -1
			case a < b:
				c = -1
			case a > b:
				c = 1
			}
		}
		if c != 0 {
			return c
		}
	}
	return 0
}

// TestNestedMinMaxModel compares max and min of a struct column in
// complete and in partial-then-merged aggregation with a brute-force
// model on random rows (NULL rows and fields, signed zeros, NaN), in
// random batch sizes, on a checked allocator.
func TestNestedMinMaxModel(t *testing.T) {
	rng := rand.New(rand.NewSource(5))
	as := []any{nil, int32(-1), int32(0), int32(1)}
	ds := []any{nil, 0.0, math.Copysign(0, -1), 1.5, math.NaN()}
	spec := vector.AggregateSpec{GroupBy: byK(), Aggregates: []vector.AggregateCall{
		call(vector.AggMax, "mx", "s"), call(vector.AggMin, "mn", "s")}}
	for iter := 0; iter < 60; iter++ {
		var rows []vt.Row
		for i := rng.Intn(80); i > 0; i-- {
			var s any
			if rng.Intn(6) > 0 {
				s = []any{as[rng.Intn(len(as))], ds[rng.Intn(len(ds))]}
			}
			rows = append(rows, vt.Row{int64(rng.Intn(4)), s})
		}
		for _, mode := range []string{"complete", "merge"} {
			mem := vt.NewAllocator(t)
			in := vt.BuildRecords(mem, nestedMinMaxSchema, rows, vt.Shape{BatchSize: 1 + rng.Intn(9)})
			scan, err := vector.NewScan(nestedMinMaxSchema, in...)
			releaseRecords(in)
			if err != nil {
				t.Fatal(err)
			}
			var op vector.Operator
			if mode == "complete" {
				op, err = vector.NewHashAggregate(mem, scan, spec)
			} else {
				op, err = mergeBuild(spec)(mem, []vector.Operator{scan})
			}
			if err != nil {
				t.Fatal(err)
			}
			recs, err := vector.Drain(context.Background(), op)
			op.Close()
			if err != nil {
				t.Fatal(err)
			}
			seen := 0
			for _, rec := range recs {
				for i := 0; i < int(rec.NumRows()); i++ {
					k := rec.Column(0).(*array.Int64).Value(i)
					seen++
					var hi, lo []any
					for _, r := range rows {
						if r[0] != k || r[1] == nil {
							continue
						}
						v := r[1].([]any)
						if hi == nil || modelCmp(v, hi) > 0 {
							hi = v
						}
						if lo == nil || modelCmp(v, lo) < 0 {
							lo = v
						}
					}
					for c, want := range [][]any{hi, lo} {
						got := vector.ValueAt(rec.Column(1+c), i)
						switch {
						case want == nil && got != nil:
							t.Fatalf("%s k=%d col %d: got %v, want NULL", mode, k, c, got)
						case want != nil && got == nil:
							t.Fatalf("%s k=%d col %d: got NULL, want %v", mode, k, c, want)
						case want != nil && modelCmp(got.([]any), want) != 0:
							t.Fatalf("%s k=%d col %d: got %v, want %v", mode, k, c, got, want)
						}
					}
				}
			}
			releaseRecords(recs)
			mem.AssertSize(t, 0)
			if seen == 0 && len(rows) > 0 {
				t.Fatalf("%s: no groups out of %d rows", mode, len(rows))
			}
		}
	}
}
