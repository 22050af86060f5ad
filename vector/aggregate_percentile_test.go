package vector_test

import (
	"context"
	"math"
	"math/rand"
	"slices"
	"testing"

	"github.com/apache/arrow/go/v17/arrow"
	"github.com/apache/arrow/go/v17/arrow/array"

	"github.com/arrowstream/arrowstream/vector"
	vt "github.com/arrowstream/arrowstream/vector/vectortest"
)

var pctSchema = arrow.NewSchema([]arrow.Field{
	{Name: "k", Type: vector.Int64, Nullable: true},
	{Name: "v", Type: vector.Int32, Nullable: true},
	{Name: "f", Type: vector.Int64, Nullable: true},
	{Name: "x", Type: vector.Float64, Nullable: true},
}, nil)

// pctCalls are the percentiles checked against the model, at percentage p.
func pctCalls(p float64) []vector.AggregateCall {
	arr := vector.TypedLit(vector.ListOf(vector.Float64), []any{p, 0.0, 1.0})
	return []vector.AggregateCall{
		{Func: vector.AggPercentile, Name: "cont_v", Args: []vector.Expr{vector.Col("v"), vector.Lit(p)}},
		{Func: vector.AggPercentileDesc, Name: "cont_x_desc", Args: []vector.Expr{vector.Col("x"), arr}},
		{Func: vector.AggPercentile, Name: "cont_v_freq", Args: []vector.Expr{vector.Col("v"), vector.Lit(p), vector.Col("f")}},
		{Func: vector.AggPercentileDisc, Name: "disc_x", Args: []vector.Expr{vector.Col("x"), vector.Lit(p)}},
		{Func: vector.AggPercentileDiscDesc, Name: "disc_v_desc", Args: []vector.Expr{vector.Col("v"), arr}},
	}
}

// pctModel is the brute-force percentile: every value repeated by its
// frequency, sorted (NaN last, DESC reversed), read at (n-1)*p with linear
// interpolation between different neighbours unless discrete. ok is false
// for no values.
func pctModel(vals []float64, p float64, discrete, desc bool) (float64, bool) {
	if len(vals) == 0 {
		return 0, false
	}
	s := slices.Clone(vals)
	cmp := func(a, b float64) int {
		an, bn := math.IsNaN(a), math.IsNaN(b)
		switch {
		case an && bn:
			return 0
		case an:
			return 1
		case bn:
			return -1
		case a < b:
			return -1
		case a > b:
			return 1
		}
		return 0
	}
	if desc {
		slices.SortStableFunc(s, func(a, b float64) int { return cmp(b, a) })
	} else {
		slices.SortStableFunc(s, cmp)
	}
	pos := float64(len(s)-1) * p
	lo, hi := math.Floor(pos), math.Ceil(pos)
	lv, hv := s[int(lo)], s[int(hi)]
	if lo == hi || lv == hv || discrete {
		return lv, true
	}
	return (hi-pos)*lv + (pos-lo)*hv, true
}

// checkPercentiles runs pctCalls over rows, complete and through partial
// state, and compares every group with pctModel.
func checkPercentiles(t *testing.T, rows []vt.Row, p float64, batch int) {
	t.Helper()
	spec := vector.AggregateSpec{GroupBy: byK(), Aggregates: pctCalls(p)}
	for _, mode := range []string{"complete", "merge"} {
		mem := vt.NewAllocator(t)
		in := vt.BuildRecords(mem, pctSchema, rows, vt.Shape{BatchSize: batch})
		scan, err := vector.NewScan(pctSchema, in...)
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
		for _, rec := range recs {
			for i := 0; i < int(rec.NumRows()); i++ {
				var k any
				if rec.Column(0).IsValid(i) {
					k = rec.Column(0).(*array.Int64).Value(i)
				}
				var vs, vfs, xs []float64
				for _, r := range rows {
					if r[0] != k {
						continue
					}
					if r[1] != nil {
						vs = append(vs, float64(r[1].(int32)))
						if r[2] != nil {
							for n := r[2].(int64); n > 0; n-- {
								vfs = append(vfs, float64(r[1].(int32)))
							}
						}
					}
					if r[3] != nil {
						xs = append(xs, r[3].(float64))
					}
				}
				type want struct {
					vals     []float64
					discrete bool
					desc     bool
				}
				wants := []want{{vs, false, false}, {xs, false, true}, {vfs, false, false}, {xs, true, false}, {vs, true, true}}
				for c, w := range wants {
					col := rec.Column(1 + c)
					var got []float64
					var valid bool
					if l, ok := col.(*array.List); ok {
						valid = l.IsValid(i)
						if valid {
							s, e := l.ValueOffsets(i)
							got = l.ListValues().(*array.Float64).Float64Values()[s:e]
						}
					} else {
						valid = col.IsValid(i)
						if valid {
							got = []float64{col.(*array.Float64).Value(i)}
						}
					}
					ps := []float64{p}
					if c == 1 || c == 4 {
						ps = []float64{p, 0, 1}
					}
					for j, q := range ps {
						m, ok := pctModel(w.vals, q, w.discrete, w.desc)
						if ok != valid || ok && math.Float64bits(m) != math.Float64bits(got[j]) && !(math.IsNaN(m) && math.IsNaN(got[j])) {
							t.Errorf("%s %s k=%v p=%v: got %v (valid %v), want %v (valid %v) of %v", mode, spec.Aggregates[c].Name, k, q, got, valid, m, ok, w.vals)
						}
					}
				}
			}
		}
		releaseRecords(recs)
		mem.AssertSize(t, 0)
	}
}

// TestPercentileModel: the exact percentiles equal the brute-force model
// on random groups with ties, NULLs, NaN and frequencies.
func TestPercentileModel(t *testing.T) {
	rng := rand.New(rand.NewSource(20))
	for iter := 0; iter < 60; iter++ {
		var rows []vt.Row
		for i := rng.Intn(60); i > 0; i-- {
			r := vt.Row{int64(rng.Intn(4)), nil, nil, nil}
			if rng.Intn(5) > 0 {
				r[1] = int32(rng.Intn(20) - 10)
			}
			if rng.Intn(5) > 0 {
				r[2] = int64(rng.Intn(4))
			}
			switch rng.Intn(8) {
			case 0:
			case 1:
				r[3] = math.NaN()
			default:
				r[3] = rng.NormFloat64() * 100
			}
			if rng.Intn(10) == 0 {
				r[0] = nil
			}
			rows = append(rows, r)
		}
		p := []float64{0, 0.25, 0.5, 1, rng.Float64()}[rng.Intn(5)]
		checkPercentiles(t, rows, p, 1+rng.Intn(9))
	}
}

// FuzzPercentile checks the exact percentiles against the model on
// arbitrary values.
func FuzzPercentile(f *testing.F) {
	f.Add([]byte{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20, 21, 22}, uint8(3), uint16(16384))
	f.Add([]byte{0, 0, 0, 0, 0, 0, 0, 0, 0, 0xf8, 0x7f, 0, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0x80}, uint8(1), uint16(65535))
	f.Fuzz(func(t *testing.T, data []byte, batch uint8, pq uint16) {
		var rows []vt.Row
		for len(data) >= 11 && len(rows) < 200 {
			r := vt.Row{int64(data[0] % 3), nil, nil, nil}
			if data[1]&1 == 0 {
				r[1] = int32(int8(data[1]) >> 2)
			}
			if data[1]&2 == 0 {
				r[2] = int64(data[1] >> 6)
			}
			if data[1]&4 == 0 {
				r[3] = math.Float64frombits(uint64(data[3]) | uint64(data[4])<<8 | uint64(data[5])<<16 | uint64(data[6])<<24 |
					uint64(data[7])<<32 | uint64(data[8])<<40 | uint64(data[9])<<48 | uint64(data[10])<<56)
			}
			rows = append(rows, r)
			data = data[11:]
		}
		checkPercentiles(t, rows, float64(pq)/65535, 1+int(batch%16))
	})
}
