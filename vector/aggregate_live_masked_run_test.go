package vector_test

import (
	"context"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"reflect"
	"testing"

	"github.com/apache/arrow/go/v17/arrow"
	"github.com/apache/arrow/go/v17/arrow/memory"

	"github.com/arrowstream/arrowstream/vector"
	vt "github.com/arrowstream/arrowstream/vector/vectortest"
)

// caseSumCall is sum(CASE WHEN cond THEN then ELSE els END).
func caseSumCall(name string, cond vector.Expr, then, els any) vector.AggregateCall {
	return vector.AggregateCall{Func: vector.AggSum, Name: name,
		Args: []vector.Expr{vector.If(cond, vector.Lit(then), vector.Lit(els))}}
}

// rawOf binds a fresh LiveAggregate of aggs grouped by k to raw rows.
func rawOf(t testing.TB, mem memory.Allocator, aggs []vector.AggregateCall) (*vector.LiveAggregate, *vector.LiveRaw) {
	t.Helper()
	groupBy := []vector.NamedExpr{vector.As(vector.Col("k"), "k")}
	partial, err := vector.PartialSchema(liveRawSchema, vector.AggregateSpec{GroupBy: groupBy, Aggregates: aggs})
	if err != nil {
		t.Fatal(err)
	}
	l, err := vector.NewLiveAggregate(mem, partial, 1, aggs)
	if err != nil {
		t.Fatal(err)
	}
	raw, ok, err := l.Raw(liveRawSchema, groupBy)
	if err != nil || !ok {
		l.Close()
		t.Fatalf("Raw: %v, %v", ok, err)
	}
	return l, raw
}

// updateRows folds rows into raw and returns Update's error.
func updateRows(t testing.TB, mem memory.Allocator, raw *vector.LiveRaw, rows []vt.Row) error {
	t.Helper()
	ctx := context.Background()
	rec := vt.BuildRecord(mem, liveRawSchema, rows)
	defer rec.Release()
	keys, err := raw.Keys(ctx, rec)
	if err != nil {
		t.Fatal(err)
	}
	defer func() {
		for _, a := range keys {
			a.Release()
		}
	}()
	_, err = raw.Update(ctx, rec, keys)
	return err
}

// TestMaskedRunFoldsQ17CountsTogether: q17's three rank counts, masked
// sums in a row, are folded as one run (one pass over the batch), and a
// masked sum with another call between is not part of a run.
func TestMaskedRunFoldsQ17CountsTogether(t *testing.T) {
	mem := vt.NewAllocator(t)
	v := vector.Col("v")
	aggs := []vector.AggregateCall{
		{Func: vector.AggCountStar, Name: "total"},
		caseSumCall("rank1", vector.Lt(v, vector.Lit(int64(10000))), int32(1), int32(0)),
		caseSumCall("rank2", vector.And(vector.Ge(v, vector.Lit(int64(10000))), vector.Lt(v, vector.Lit(int64(1000000)))), int32(1), int32(0)),
		caseSumCall("rank3", vector.Ge(v, vector.Lit(int64(1000000))), int32(1), int32(0)),
		call(vector.AggMin, "mn", "v"),
		caseSumCall("lone", vector.Lt(v, vector.Lit(int64(5))), int32(1), int32(0)),
		call(vector.AggSum, "sv", "v"),
	}
	l, raw := rawOf(t, mem, aggs)
	defer l.Close()
	if got, want := vector.MaskedRuns(raw), [][2]int{{1, 4}}; !reflect.DeepEqual(got, want) {
		t.Fatalf("runs folded together %v, want %v", got, want)
	}
}

// TestMaskedRunOverflowIsCallByCalls: a run whose sums overflow gives
// the error the call-by-call fold gives (the first call of the run that
// overflows, at its first overflowing row, naming the sum reached there),
// even when a later call of the run overflows at an earlier row; and a
// batch without overflow leaves both with the same state. The reference
// is the same calls with a count between each two, so that none is in a
// run.
func TestMaskedRunOverflowIsCallByCall(t *testing.T) {
	mem := vt.NewAllocator(t)
	v := vector.Col("v")
	big := int64(math.MaxInt64 / 4)
	calls := []vector.AggregateCall{
		// Overflows at the fifth row of v >= 10 in a group.
		caseSumCall("late", vector.Ge(v, vector.Lit(int64(10))), big, int64(1)),
		// Overflows at the fourth row of v >= 20 in a group.
		caseSumCall("early", vector.Ge(v, vector.Lit(int64(20))), big+1, int64(-3)),
		caseSumCall("never", vector.Lt(v, vector.Lit(int64(0))), int32(7), int32(-1)),
	}
	var sep []vector.AggregateCall
	for i, c := range calls {
		if i > 0 {
			sep = append(sep, vector.AggregateCall{Func: vector.AggCountStar, Name: "n" + c.Name})
		}
		sep = append(sep, c)
	}
	run, runRaw := rawOf(t, mem, calls)
	defer run.Close()
	ref, refRaw := rawOf(t, mem, sep)
	defer ref.Close()
	if got := vector.MaskedRuns(runRaw); !reflect.DeepEqual(got, [][2]int{{0, 3}}) {
		t.Fatalf("runs %v, want one of the three calls", got)
	}
	if got := vector.MaskedRuns(refRaw); len(got) != 0 {
		t.Fatalf("reference runs %v, want none", got)
	}
	rng := rand.New(rand.NewPCG(38, 17))
	// Small values first: no overflow, and the states must agree.
	for step := range 20 {
		var rows []vt.Row
		for range 1 + rng.IntN(200) {
			var val any = rng.Int64N(9) - 4
			if rng.IntN(6) == 0 {
				val = nil
			}
			rows = append(rows, vt.Row{int64(rng.IntN(40)), "s", val, nil})
		}
		if err := updateRows(t, mem, runRaw, rows); err != nil {
			t.Fatalf("step %d: %v", step, err)
		}
		if err := updateRows(t, mem, refRaw, rows); err != nil {
			t.Fatalf("step %d: reference: %v", step, err)
		}
		requireSameColumns(t, step, run, ref)
	}
	// Then a batch where "early" overflows first by row, "late" first by
	// call.
	var rows []vt.Row
	for i := range 40 {
		rows = append(rows, vt.Row{int64(100 + i%2), "s", int64(25), nil})
	}
	errRun := updateRows(t, mem, runRaw, rows)
	errRef := updateRows(t, mem, refRaw, rows)
	var ee *vector.EvalError
	if !errors.Is(errRef, vector.ErrOverflow) || !errors.As(errRef, &ee) {
		t.Fatalf("reference: %v, want an overflow", errRef)
	}
	if errRun == nil || errRun.Error() != errRef.Error() {
		t.Fatalf("run: %v\nwant the call-by-call error: %v", errRun, errRef)
	}
	t.Log(errRun)
}

// requireSameColumns: every state column of got is the column of the
// same name of want's state, group by group.
func requireSameColumns(t *testing.T, step int, got, want *vector.LiveAggregate) {
	t.Helper()
	all := make([]int32, got.NumGroups())
	for i := range all {
		all[i] = int32(i)
	}
	g, err := got.State(all)
	if err != nil {
		t.Fatal(err)
	}
	defer g.Release()
	w, err := want.State(all)
	if err != nil {
		t.Fatal(err)
	}
	defer w.Release()
	for i, f := range g.Schema().Fields() {
		j := w.Schema().FieldIndices(f.Name)
		if len(j) != 1 {
			t.Fatalf("state column %s: %d of that name in the reference", f.Name, len(j))
		}
		if a, b := fmt.Sprint(g.Column(i)), fmt.Sprint(w.Column(j[0])); a != b {
			t.Fatalf("step %d: state column %s\n%s\ncall by call\n%s", step, f.Name, a, b)
		}
	}
}

// BenchmarkMaskedSumsFold folds batches of 4096 rows over 6K groups (the
// groups already live) into q17's three rank counts: "run" as q17 has
// them, consecutive and so folded in one pass; "call-by-call" the same
// calls with a count(*) between each two (its counts are the row counts:
// no work), so that each is folded on its own. Compare the two in one run:
//
//	go test -run '^$' -bench 'MaskedSumsFold' ./vector/
func BenchmarkMaskedSumsFold(b *testing.B) {
	v := vector.Col("v")
	ranks := []vector.AggregateCall{
		caseSumCall("rank1", vector.Lt(v, vector.Lit(int64(10000))), int32(1), int32(0)),
		caseSumCall("rank2", vector.And(vector.Ge(v, vector.Lit(int64(10000))), vector.Lt(v, vector.Lit(int64(1000000)))), int32(1), int32(0)),
		caseSumCall("rank3", vector.Ge(v, vector.Lit(int64(1000000))), int32(1), int32(0)),
	}
	var sep []vector.AggregateCall
	for i, c := range ranks {
		if i > 0 {
			sep = append(sep, vector.AggregateCall{Func: vector.AggCountStar, Name: fmt.Sprint("n", i)})
		}
		sep = append(sep, c)
	}
	mem := memory.NewGoAllocator()
	rng := rand.New(rand.NewPCG(38, 3))
	batches := make([][]vt.Row, 8)
	for i := range batches {
		for range 4096 {
			// Prices spread over the three ranks, as Nexmark's are.
			batches[i] = append(batches[i], vt.Row{int64(rng.IntN(6000)), "s", int64(math.Exp(rng.Float64() * 16)), nil})
		}
	}
	for _, shape := range []struct {
		name  string
		calls []vector.AggregateCall
	}{{"run", ranks}, {"call-by-call", sep}} {
		b.Run(shape.name, func(b *testing.B) {
			l, raw := rawOf(b, mem, shape.calls)
			defer l.Close()
			ctx := context.Background()
			recs := make([]arrowRecord, len(batches))
			for i, rows := range batches {
				recs[i].rec = vt.BuildRecord(mem, liveRawSchema, rows)
				keys, err := raw.Keys(ctx, recs[i].rec)
				if err != nil {
					b.Fatal(err)
				}
				recs[i].keys = keys
				if _, err := raw.Update(ctx, recs[i].rec, keys); err != nil {
					b.Fatal(err)
				}
			}
			defer func() {
				for _, r := range recs {
					r.release()
				}
			}()
			i := 0
			for b.Loop() {
				r := recs[i%len(recs)]
				if _, err := raw.Update(ctx, r.rec, r.keys); err != nil {
					b.Fatal(err)
				}
				i++
			}
		})
	}
}

// arrowRecord is a batch with its evaluated keys.
type arrowRecord struct {
	rec  arrow.Record
	keys []arrow.Array
}

func (r arrowRecord) release() {
	r.rec.Release()
	for _, a := range r.keys {
		a.Release()
	}
}
