package vector_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/arrowstream/arrowstream/vector"
	vt "github.com/arrowstream/arrowstream/vector/vectortest"
)

// countsModel is a brute-force model of one group of countsAggs.
type countsModel struct {
	n, nv, sv, r1, nf int64
	sf                float64
	minv              int64
}

// countsAggs keep non-null counts in state (count, sum, avg, a masked
// sum) beside one that does not (min).
func countsAggs() []vector.AggregateCall {
	v := vector.Col("v")
	return []vector.AggregateCall{
		{Func: vector.AggCountStar, Name: "n"},
		call(vector.AggCount, "nv", "v"),
		call(vector.AggSum, "sv", "v"),
		call(vector.AggAvg, "avgv", "v"),
		{Func: vector.AggSum, Name: "r1", Args: []vector.Expr{vector.If(vector.Lt(v, vector.Lit(int64(0))), vector.Lit(int64(1)), vector.Lit(int64(0)))}},
		call(vector.AggAvg, "avgf", "f"),
		call(vector.AggMin, "minv", "v"),
	}
}

// TestLiveImpliedCountsMatchModel: a live aggregation fed input rows
// leaves the non-null counts of its counts, sums and averages implied by
// its row counts while no argument is null, spells out only those whose
// argument brings a null, and all of them when partial states are merged;
// through all of it, across the per-group arrays' growths (the groups go
// from none to some 6 K, in batches of new and old keys), deletes and
// compactions, every live group's final values are those of a
// brute-force model.
func TestLiveImpliedCountsMatchModel(t *testing.T) {
	mem := vt.NewAllocator(t)
	// Two key columns: the words grouper (q17's), which compacts in place
	// (a rebuild merges the live groups' states and so spells them out).
	groupBy := []vector.NamedExpr{vector.As(vector.Col("k"), "k"), vector.As(vector.Col("k"), "k2")}
	spec := vector.AggregateSpec{GroupBy: groupBy, Aggregates: countsAggs()}
	partial, err := vector.PartialSchema(liveRawSchema, spec)
	if err != nil {
		t.Fatal(err)
	}
	live, err := vector.NewLiveAggregate(mem, partial, 2, spec.Aggregates)
	if err != nil {
		t.Fatal(err)
	}
	defer live.Close()
	raw, ok, err := live.Raw(liveRawSchema, groupBy)
	if err != nil || !ok {
		t.Fatalf("Raw: %v, %v", ok, err)
	}
	ctx := context.Background()
	model := map[int64]*countsModel{}
	rng := rand.New(rand.NewPCG(30, 17))
	const steps = 70
	for step := range steps {
		// Nulls of v from step 20, of f from step 35; step 50 merges
		// partial states instead of folding rows.
		var rows []vt.Row
		keys := 64 + step*90
		for range 200 + rng.IntN(300) {
			k := rng.Int64N(int64(keys))
			var v any = rng.Int64N(2000) - 1000
			if step >= 20 && rng.IntN(5) == 0 {
				v = nil
			}
			var f any = float64(rng.IntN(100))
			if step >= 35 && rng.IntN(5) == 0 {
				f = nil
			}
			rows = append(rows, vt.Row{k, nil, v, f})
			m := model[k]
			if m == nil {
				m = &countsModel{}
				model[k] = m
			}
			m.n++
			if x, ok := v.(int64); ok {
				if m.nv == 0 || x < m.minv {
					m.minv = x
				}
				m.nv++
				m.sv += x
				if x < 0 {
					m.r1++
				}
			}
			if x, ok := f.(float64); ok {
				m.nf++
				m.sf += x
			}
		}
		if step == 50 {
			for _, rec := range partialOf(t, mem, spec, rows) {
				_, err := live.Merge(ctx, rec)
				rec.Release()
				if err != nil {
					t.Fatal(err)
				}
			}
		} else {
			updateLiveRaw(t, ctx, mem, raw, rows)
		}
		// Which counts are implied: all six while nothing is null, then
		// count(*), the masked sum (never null) and avg(f) until f has
		// nulls, then the two, and none once states were merged.
		want := 6
		switch {
		case step >= 50:
			want = 0
		case step >= 35:
			want = 2
		case step >= 20:
			want = 3
		}
		if got := vector.ImpliedCounts(live); got != want {
			t.Fatalf("step %d: %d counts implied, want %d", step, got, want)
		}
		gids := liveGroups(live)
		got := finalByKey(t, live, gids)
		if len(got) != len(model) {
			t.Fatalf("step %d: %d live groups, the model %d", step, len(got), len(model))
		}
		for k, m := range model {
			if g, w := got[k], m.row(k); g != w {
				t.Fatalf("step %d: key %d: %s, want %s", step, k, g, w)
			}
		}
		switch rng.IntN(5) {
		case 0:
			var del []int32
			for _, g := range gids {
				if rng.IntN(8) == 0 {
					del = append(del, g)
				}
			}
			fin, ok, err := live.Final(del)
			if err != nil || !ok {
				t.Fatalf("Final: %v, %v", ok, err)
			}
			for _, r := range vt.Rows[vt.Row](vt.Normalizer{}, fin) {
				delete(model, r[0].(int64))
			}
			fin.Release()
			live.Delete(del)
		case 1:
			if _, err := live.Compact(ctx); err != nil {
				t.Fatal(err)
			}
		}
	}
}

// row is the final row countsAggs give the group (key k) as text.
func (m *countsModel) row(k int64) string {
	var sv, avgv, avgf, minv any
	if m.nv > 0 {
		sv, avgv, minv = m.sv, float64(m.sv)/float64(m.nv), m.minv
	}
	if m.nf > 0 {
		avgf = m.sf / float64(m.nf)
	}
	return fmt.Sprint(vt.Row{k, k, m.n, m.nv, sv, avgv, m.r1, avgf, minv})
}

// liveGroups returns l's groups not deleted.
func liveGroups(l *vector.LiveAggregate) []int32 {
	var gids []int32
	for g := range int32(l.NumGroups()) {
		if !l.IsDead(g) {
			gids = append(gids, g)
		}
	}
	return gids
}

// finalByKey returns the final rows of groups gids as text, by key.
func finalByKey(t *testing.T, l *vector.LiveAggregate, gids []int32) map[int64]string {
	t.Helper()
	fin, ok, err := l.Final(gids)
	if err != nil || !ok {
		t.Fatalf("Final: %v, %v", ok, err)
	}
	defer fin.Release()
	out := map[int64]string{}
	for _, r := range vt.Rows[vt.Row](vt.Normalizer{}, fin) {
		out[r[0].(int64)] = fmt.Sprint(r)
	}
	return out
}
