package vector_test

import (
	"context"
	"fmt"
	"math"
	"math/big"
	"math/rand/v2"
	"testing"

	"github.com/apache/arrow/go/v17/arrow"
	"github.com/apache/arrow/go/v17/arrow/memory"

	"github.com/arrowstream/arrowstream/vector"
	vt "github.com/arrowstream/arrowstream/vector/vectortest"
)

var statSchema = arrow.NewSchema([]arrow.Field{
	{Name: "k", Type: vector.Int64, Nullable: true},
	{Name: "y", Type: vector.Int32, Nullable: true},
	{Name: "x", Type: vector.Float64, Nullable: true},
}, nil)

var statCalls = []vector.AggregateCall{
	call(vector.AggVarPop, "var_pop", "x"), call(vector.AggVarSamp, "var_samp", "x"),
	call(vector.AggStddevPop, "stddev_pop", "x"), call(vector.AggStddev, "stddev", "y"),
	call(vector.AggSkewness, "skewness", "x"), call(vector.AggKurtosis, "kurtosis", "x"),
	call(vector.AggCovarPop, "covar_pop", "y", "x"), call(vector.AggCovarSamp, "covar_samp", "y", "x"),
	call(vector.AggCorr, "corr", "y", "x"), call(vector.AggRegrSXX, "regr_sxx", "y", "x"),
	call(vector.AggRegrSYY, "regr_syy", "y", "x"), call(vector.AggRegrSXY, "regr_sxy", "y", "x"),
	call(vector.AggRegrR2, "regr_r2", "y", "x"), call(vector.AggRegrSlope, "regr_slope", "y", "x"),
	call(vector.AggRegrIntercept, "regr_intercept", "y", "x"),
}

// statModel computes the statistics of one group exactly (big floats, two
// passes), with Spark's NULL rules; nil is NULL.
func statModel(ys []any, xs []any) map[string]any {
	const prec = 200
	f := func(v float64) *big.Float { return new(big.Float).SetPrec(prec).SetFloat64(v) }
	sum := func(vs []*big.Float) *big.Float {
		s := f(0)
		for _, v := range vs {
			s.Add(s, v)
		}
		return s
	}
	mean := func(vs []*big.Float) *big.Float {
		return new(big.Float).SetPrec(prec).Quo(sum(vs), f(float64(len(vs))))
	}
	// co-moment sum((a - mean a)^p (b - mean b)^q)
	co := func(a, b []*big.Float, p, q int) float64 {
		ma, mb := mean(a), mean(b)
		s := f(0)
		for i := range a {
			t := f(1)
			da := new(big.Float).SetPrec(prec).Sub(a[i], ma)
			db := new(big.Float).SetPrec(prec).Sub(b[i], mb)
			for j := 0; j < p; j++ {
				t.Mul(t, da)
			}
			for j := 0; j < q; j++ {
				t.Mul(t, db)
			}
			s.Add(s, t)
		}
		v, _ := s.Float64()
		return v
	}
	var xsOnly, pairY, pairX, xAny []*big.Float
	for i := range xs {
		if xs[i] != nil {
			xsOnly = append(xsOnly, f(xs[i].(float64)))
			xAny = append(xAny, f(xs[i].(float64)))
		}
		if xs[i] != nil && ys[i] != nil {
			pairY = append(pairY, f(float64(ys[i].(int32))))
			pairX = append(pairX, f(xs[i].(float64)))
		}
	}
	var yOnly []*big.Float
	for _, y := range ys {
		if y != nil {
			yOnly = append(yOnly, f(float64(y.(int32))))
		}
	}
	out := map[string]any{}
	n := float64(len(xsOnly))
	if n > 0 {
		m2 := co(xsOnly, xsOnly, 2, 0)
		out["var_pop"], out["stddev_pop"] = m2/n, math.Sqrt(m2/n)
		if n > 1 {
			out["var_samp"] = m2 / (n - 1)
		}
		if m2 != 0 {
			out["skewness"] = math.Sqrt(n) * co(xsOnly, xsOnly, 3, 0) / math.Pow(m2, 1.5)
			out["kurtosis"] = n*co(xsOnly, xsOnly, 4, 0)/(m2*m2) - 3
		}
	}
	if ny := float64(len(yOnly)); ny > 1 {
		out["stddev"] = math.Sqrt(co(yOnly, yOnly, 2, 0) / (ny - 1))
	}
	np := float64(len(pairY))
	if np > 0 {
		ck, sxx, syy := co(pairY, pairX, 1, 1), co(pairX, pairX, 2, 0), co(pairY, pairY, 2, 0)
		out["covar_pop"], out["regr_sxy"], out["regr_sxx"], out["regr_syy"] = ck/np, ck, sxx, syy
		if np > 1 {
			out["covar_samp"] = ck / (np - 1)
			if sxx*syy != 0 {
				out["corr"] = ck / math.Sqrt(syy*sxx)
			}
		}
		if syy != 0 {
			if sxx == 0 {
				out["regr_r2"] = 1.0
			} else {
				out["regr_r2"] = ck * ck / (sxx * syy)
			}
		}
		// regr_slope and regr_intercept: Spark divides by the variance
		// of x over every row where x is set.
		if vx := co(xAny, xAny, 2, 0); vx != 0 {
			slope := ck / vx
			out["regr_slope"] = slope
			my, _ := mean(pairY).Float64()
			mx, _ := mean(pairX).Float64()
			out["regr_intercept"] = my - slope*mx
		}
	}
	return out
}

func near(got, want float64) bool {
	if got == want {
		return true
	}
	return math.Abs(got-want) <= 1e-9*math.Max(1, math.Max(math.Abs(got), math.Abs(want)))
}

// TestStatisticalAggregatesModel checks every statistical aggregate over
// random groups against the exact model, in complete aggregation, in
// partial → final, and in per-batch partial → pairwise merge → final (the
// streaming shape), on a checked allocator.
func TestStatisticalAggregatesModel(t *testing.T) {
	for seed := uint64(1); seed <= 4; seed++ {
		rng := rand.New(rand.NewPCG(seed, 7))
		var rows []vt.Row
		byKey := map[int64][2][]any{}
		for i := rng.IntN(60) + 1; i > 0; i-- {
			k := int64(rng.IntN(5))
			var y, x any
			if rng.IntN(6) > 0 {
				y = int32(rng.IntN(40) - 10)
			}
			if rng.IntN(6) > 0 {
				x = float64(rng.IntN(1000))/8 - 20
			}
			if k == 4 {
				x = 3.5 // a constant side: no spread
			}
			rows = append(rows, vt.Row{k, y, x})
			g := byKey[k]
			g[0], g[1] = append(g[0], y), append(g[1], x)
			byKey[k] = g
		}
		spec := vector.AggregateSpec{GroupBy: byK(), Aggregates: statCalls}
		for _, mode := range []string{"complete", "partial-final", "merge"} {
			t.Run(fmt.Sprint(seed, mode), func(t *testing.T) {
				mem := vt.NewAllocator(t)
				in := vt.BuildRecords(mem, statSchema, rows, vt.Shape{BatchSize: 1 + int(seed)*3, Sliced: seed%2 == 0, GarbageUnderNulls: true})
				scan, err := vector.NewScan(statSchema, in...)
				releaseRecords(in)
				if err != nil {
					t.Fatal(err)
				}
				var op vector.Operator
				switch mode {
				case "complete":
					op, err = vector.NewHashAggregate(mem, scan, spec)
				case "partial-final":
					op, err = completeBuildPartialFinal(mem, scan, spec)
				default:
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
				defer releaseRecords(recs)
				got := vt.Rows[vt.Row](vt.Normalizer{}, recs...)
				if len(got) != len(byKey) {
					t.Fatalf("%d groups, want %d", len(got), len(byKey))
				}
				for _, r := range got {
					g := byKey[r[0].(int64)]
					want := statModel(g[0], g[1])
					for i, c := range statCalls {
						w, wok := want[c.Name]
						v := r[i+1]
						if !wok || v == nil {
							if wok != (v != nil) {
								t.Errorf("k=%v %s = %v, want %v", r[0], c.Name, v, w)
							}
							continue
						}
						if !near(v.(float64), w.(float64)) {
							t.Errorf("k=%v %s = %v, want %v", r[0], c.Name, v, w)
						}
					}
				}
			})
		}
	}
}

func completeBuildPartialFinal(mem memory.Allocator, in vector.Operator, spec vector.AggregateSpec) (vector.Operator, error) {
	partial, err := vector.NewHashAggregate(mem, in, withMode(spec, vector.AggPartial))
	if err != nil {
		return nil, err
	}
	final, err := vector.NewHashAggregate(mem, partial, finalSpec(spec, vector.AggFinal))
	if err != nil {
		partial.Close()
		return nil, err
	}
	return final, nil
}

// TestStatisticalAggregateSparkOrder pins the doubles that Spark's
// update and merge order gives where the exact answer differs: var_pop of
// 100000003, 100000004, 100000006, 100000007 is 2.5 from two halves
// merged (Spark over a local relation), where one Welford pass gives
// 2.5000000049670534; as a window function (one pass, no merge) the
// latter.
func TestStatisticalAggregateSparkOrder(t *testing.T) {
	schema := arrow.NewSchema([]arrow.Field{{Name: "x", Type: vector.Float64, Nullable: true}}, nil)
	rows := []vt.Row{{100000003.0}, {100000004.0}, {100000006.0}, {100000007.0}}
	mem := vt.NewAllocator(t)
	rec := vt.BuildRecord(mem, schema, rows)
	scan, err := vector.NewScan(schema, rec)
	rec.Release()
	if err != nil {
		t.Fatal(err)
	}
	op, err := vector.NewHashAggregate(mem, scan, vector.AggregateSpec{Aggregates: []vector.AggregateCall{call(vector.AggVarPop, "v", "x")}})
	if err != nil {
		t.Fatal(err)
	}
	recs, err := vector.Drain(context.Background(), op)
	op.Close()
	if err != nil {
		t.Fatal(err)
	}
	defer releaseRecords(recs)
	if got := vt.Rows[vt.Row](vt.Normalizer{}, recs...); len(got) != 1 || got[0][0] != 2.5 {
		t.Fatalf("var_pop = %v, want [[2.5]]", got)
	}
}

// TestStatisticalAggregateBindErrors: wrong arity and non-numeric
// arguments are bind errors naming the call.
func TestStatisticalAggregateBindErrors(t *testing.T) {
	schema := arrow.NewSchema([]arrow.Field{{Name: "s", Type: vector.String}, {Name: "x", Type: vector.Float64}}, nil)
	for _, c := range []vector.AggregateCall{
		call(vector.AggVarPop, "a", "x", "x"),
		call(vector.AggCorr, "a", "x"),
		call(vector.AggSkewness, "a", "s"),
	} {
		if _, err := vector.PartialSchema(schema, vector.AggregateSpec{Aggregates: []vector.AggregateCall{c}}); err == nil {
			t.Errorf("%s: no error", c)
		}
	}
}

// FuzzStatisticalAggregates decodes rows from the fuzzer's bytes (any
// doubles, NaN and infinities included) and checks that every statistical
// aggregate runs without error or leak in complete and in merged partial
// aggregation, that NULL results agree between the two, and that finite
// results agree to 1e-6 (the merge order differs) unless an input is so
// small that its moments underflow or a group's values are so close that
// their differences from the mean lose all but a few digits.
func FuzzStatisticalAggregates(f *testing.F) {
	f.Add([]byte{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20}, uint8(3))
	f.Add([]byte{0xff, 0xf0, 0, 0, 0, 0, 0, 0, 0x7f, 0xf0, 0, 0, 0, 0, 0, 0, 9}, uint8(1))
	f.Fuzz(func(t *testing.T, data []byte, batch uint8) {
		var rows []vt.Row
		tiny := false
		spread := map[int64][2]float64{} // per group: min and max of x
		// per group: whether x, and y and x over the rows where both are
		// non-NULL, hold one value repeated
		constX := map[int64]constRun{}
		constPair := map[int64][2]constRun{}
		for len(data) >= 10 && len(rows) < 200 {
			k := int64(data[0] % 3)
			var y, x any
			if data[1]&1 == 0 {
				y = int32(int8(data[1]))
			}
			if data[1]&2 == 0 {
				x = math.Float64frombits(uint64(data[2]) | uint64(data[3])<<8 | uint64(data[4])<<16 | uint64(data[5])<<24 |
					uint64(data[6])<<32 | uint64(data[7])<<40 | uint64(data[8])<<48 | uint64(data[9])<<56)
			}
			if f, ok := x.(float64); ok && f != 0 && math.Abs(f) < 1e-50 {
				// The fourth power of differences between such values
				// underflows to subnormals or zero, where the two fold
				// orders legitimately disagree (as Spark's do).
				tiny = true
			}
			if f, ok := x.(float64); ok && !math.IsNaN(f) && !math.IsInf(f, 0) {
				r, seen := spread[k]
				if !seen {
					r = [2]float64{f, f}
				}
				spread[k] = [2]float64{math.Min(r[0], f), math.Max(r[1], f)}
			}
			xf, xok := x.(float64)
			if xok {
				constX[k] = constX[k].see(xf)
			}
			if yi, ok := y.(int32); ok && xok {
				constPair[k] = [2]constRun{constPair[k][0].see(float64(yi)), constPair[k][1].see(xf)}
			}
			rows = append(rows, vt.Row{k, y, x})
			data = data[10:]
		}
		spec := vector.AggregateSpec{GroupBy: byK(), Aggregates: statCalls}
		results := map[string]map[int64]vt.Row{}
		for _, mode := range []string{"complete", "merge"} {
			mem := vt.NewAllocator(t)
			in := vt.BuildRecords(mem, statSchema, rows, vt.Shape{BatchSize: 1 + int(batch%16)})
			scan, err := vector.NewScan(statSchema, in...)
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
			results[mode] = map[int64]vt.Row{}
			for _, r := range vt.Rows[vt.Row](vt.Normalizer{}, recs...) {
				results[mode][r[0].(int64)] = r
			}
			releaseRecords(recs)
			mem.AssertSize(t, 0)
		}
		for k, a := range results["complete"] {
			b := results["merge"][k]
			if r := spread[k]; r[1] > r[0] && r[1]-r[0] < 1e-6*math.Max(math.Abs(r[0]), math.Abs(r[1])) {
				// Values that agree in their first six digits: their
				// differences from the mean keep only the last digits, so
				// the moments (skewness most) carry a relative error far
				// above 1e-6 in either fold order, as Spark's do.
				continue
			}
			for i := 1; i < len(a); i++ {
				if (a[i] == nil) != (b[i] == nil) {
					if constX[k].repeated() || constPair[k][0].repeated() || constPair[k][1].repeated() {
						// A moment of one value repeated is exactly 0 in one
						// fold order and a rounding residue in another:
						// Spark's merge into an empty buffer sets the mean
						// to 0 + (avg/n)*n, which need not be avg, and the
						// next merge's delta is then that residue. Spark
						// turns the same zero/non-zero test into NULL or a
						// value, so the two orders may differ here as its do.
						continue
					}
					t.Errorf("k=%d %s: complete %v, merged %v", k, statCalls[i-1].Name, a[i], b[i])
					continue
				}
				if a[i] == nil {
					continue
				}
				x, y := a[i].(float64), b[i].(float64)
				if math.IsNaN(x) || math.IsNaN(y) || math.IsInf(x, 0) || math.IsInf(y, 0) || tiny {
					continue
				}
				if math.Abs(x-y) > 1e-6*math.Max(1, math.Max(math.Abs(x), math.Abs(y))) && math.Max(math.Abs(x), math.Abs(y)) < 1e100 {
					t.Errorf("k=%d %s: complete %v, merged %v", k, statCalls[i-1].Name, x, y)
				}
			}
		}
	})
}

// constRun tracks whether the values seen are one value repeated.
type constRun struct {
	n     int
	v     float64
	mixed bool
}

func (c constRun) see(v float64) constRun {
	if c.n > 0 && v != c.v {
		c.mixed = true
	}
	c.n++
	c.v = v
	return c
}

// repeated: two or more values, all equal.
func (c constRun) repeated() bool { return c.n >= 2 && !c.mixed }

// TestStatisticalAggregateLargeInputFoldsInOnePass: a complete
// aggregation holds its input for Spark's two-slice fold only up to a
// bound; past it the rows held are folded and the rest follow, so a large
// input is not kept whole. The answer must still be the population
// variance of every row of each group (checked against a two-pass model).
func TestStatisticalAggregateLargeInputFoldsInOnePass(t *testing.T) {
	schema := arrow.NewSchema([]arrow.Field{{Name: "k", Type: vector.Int64}, {Name: "x", Type: vector.Float64, Nullable: true}}, nil)
	const n, batch = 200_000, 50_000
	mem := vt.NewAllocator(t)
	var recs []arrow.Record
	sum := [3]float64{}
	cnt := [3]float64{}
	val := func(i int) (int64, float64) { return int64(i % 3), float64((i*7919)%1000) / 7 }
	for lo := 0; lo < n; lo += batch {
		rows := make([]vt.Row, 0, batch)
		for i := lo; i < lo+batch; i++ {
			k, x := val(i)
			if i%11 == 0 {
				rows = append(rows, vt.Row{k, nil})
				continue
			}
			rows = append(rows, vt.Row{k, x})
			sum[k] += x
			cnt[k]++
		}
		recs = append(recs, vt.BuildRecord(mem, schema, rows))
	}
	var m2 [3]float64
	for i := 0; i < n; i++ {
		if i%11 == 0 {
			continue
		}
		k, x := val(i)
		d := x - sum[k]/cnt[k]
		m2[k] += d * d
	}
	scan, err := vector.NewScan(schema, recs...)
	releaseRecords(recs)
	if err != nil {
		t.Fatal(err)
	}
	op, err := vector.NewHashAggregate(mem, scan, vector.AggregateSpec{
		GroupBy:    []vector.NamedExpr{vector.As(vector.Col("k"), "k")},
		Aggregates: []vector.AggregateCall{call(vector.AggVarPop, "v", "x")},
	})
	if err != nil {
		t.Fatal(err)
	}
	out, err := vector.Drain(context.Background(), op)
	op.Close()
	if err != nil {
		t.Fatal(err)
	}
	defer releaseRecords(out)
	got := vt.Rows[vt.Row](vt.Normalizer{}, out...)
	if len(got) != 3 {
		t.Fatalf("got %d groups, want 3: %v", len(got), got)
	}
	for _, r := range got {
		k := r[0].(int64)
		want := m2[k] / cnt[k]
		if v := r[1].(float64); math.Abs(v-want) > 1e-9*math.Abs(want) {
			t.Errorf("group %d: var_pop = %v, want %v", k, v, want)
		}
	}
}
