package vector_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/apache/arrow/go/v17/arrow"

	"github.com/arrowstream/arrowstream/vector"
	vt "github.com/arrowstream/arrowstream/vector/vectortest"
)

// TestFinalPassMatchesFinalRows: where the final pass applies (count, min
// and max of integral values) its rows are FinalRows' rows and schema, on
// partial-state rows with distinct keys (nulls in keys and states); it
// declines a record with a null state, and binds no pass for sum or for
// the min or max of a double or a string.
func TestFinalPassMatchesFinalRows(t *testing.T) {
	ctx := context.Background()
	countStar := vector.AggregateCall{Func: vector.AggCountStar, Name: "n"}
	cases := []struct {
		aggs   []vector.AggregateCall
		passes bool
	}{
		{[]vector.AggregateCall{countStar, call(vector.AggCount, "nv", "v"), call(vector.AggMin, "minv", "v"), call(vector.AggMax, "maxv", "v")}, true},
		{[]vector.AggregateCall{call(vector.AggMax, "maxv", "v"), countStar}, true},
		{[]vector.AggregateCall{countStar, call(vector.AggSum, "sv", "v")}, false},
		{[]vector.AggregateCall{call(vector.AggMax, "maxf", "f")}, false},
		{[]vector.AggregateCall{call(vector.AggMin, "mins", "s")}, false},
	}
	for ci, c := range cases {
		for _, keys := range [][]string{{"k"}, {"s", "k"}, nil} {
			mem := vt.NewAllocator(t)
			var groupBy []vector.NamedExpr
			for _, k := range keys {
				groupBy = append(groupBy, vector.As(vector.Col(k), k))
			}
			spec := vector.AggregateSpec{GroupBy: groupBy, Aggregates: c.aggs}
			parts := partialOf(t, mem, spec, []vt.Row{{int64(1), "a", int64(2), 3.0}})
			schema := parts[0].Schema()
			releaseRecords(parts)
			final := partialStateSpecOf(schema, len(keys), c.aggs, vector.AggFinal)
			pass, ok, err := vector.NewFinalPass(mem, schema, final)
			if err != nil || ok != c.passes {
				t.Fatalf("case %d %v: NewFinalPass: %v, %v, want %v", ci, keys, ok, err, c.passes)
			}
			if !ok {
				continue
			}
			rng := rand.New(rand.NewPCG(uint64(ci), uint64(len(keys))))
			passed, declined := 0, 0
			for step := range 60 {
				n := rng.IntN(60)
				if keys == nil {
					n = min(n, 1)
				}
				rows := make([]vt.Row, n)
				hasNull := false
				for i := range rows {
					row := make(vt.Row, schema.NumFields())
					for j := range row {
						isKey := j < len(keys)
						switch schema.Field(j).Type.ID() {
						case arrow.STRING:
							row[j] = []string{"a", "b", "c"}[rng.IntN(3)]
						case arrow.INT64:
							row[j] = rng.Int64N(1000) - 500
							if isKey {
								row[j] = int64(i) // distinct keys
							}
						default:
							t.Fatalf("unexpected column %v", schema.Field(j))
						}
						switch {
						case isKey && i == 0 && rng.IntN(4) == 0:
							row[j] = nil
						case !isKey && step%2 == 1 && rng.IntN(10) == 0:
							row[j] = nil
							hasNull = true
						}
					}
					rows[i] = row
				}
				rec := vt.BuildRecord(mem, schema, rows)
				want, ok, err := vector.FinalRows(ctx, mem, rec, final)
				if err != nil || !ok {
					t.Fatalf("case %d %v step %d: FinalRows: %v, %v", ci, keys, step, ok, err)
				}
				got, ok := pass.Rows(rec)
				switch {
				case hasNull && ok:
					t.Fatalf("case %d %v step %d: passed a null state", ci, keys, step)
				case hasNull:
					declined++
				case !ok:
					t.Fatalf("case %d %v step %d: declined rows without a null state", ci, keys, step)
				default:
					passed++
					if !got.Schema().Equal(want.Schema()) {
						t.Fatalf("case %d %v: schema %v, want %v", ci, keys, got.Schema(), want.Schema())
					}
					g := fmt.Sprint(vt.Rows[vt.Row](vt.Normalizer{}, got))
					w := fmt.Sprint(vt.Rows[vt.Row](vt.Normalizer{}, want))
					if g != w {
						t.Fatalf("case %d %v step %d: pass\n%v\nwant\n%v", ci, keys, step, g, w)
					}
					got.Release()
				}
				want.Release()
				rec.Release()
			}
			if passed == 0 || declined == 0 && keys != nil {
				t.Fatalf("case %d %v: %d records passed, %d declined", ci, keys, passed, declined)
			}
		}
	}
}
