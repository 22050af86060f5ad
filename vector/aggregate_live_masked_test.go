package vector_test

import (
	"context"
	"errors"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/apache/arrow/go/v17/arrow/memory"
	"github.com/arrowstream/arrowstream/vector"
	vt "github.com/arrowstream/arrowstream/vector/vectortest"
)

// largestAlloc is an allocator that records its largest allocation while
// on is set.
type largestAlloc struct {
	memory.Allocator
	on      bool
	largest int
}

func (a *largestAlloc) Allocate(size int) []byte {
	if a.on {
		a.largest = max(a.largest, size)
	}
	return a.Allocator.Allocate(size)
}

// maskedAggs are q17's conditional counts and their kin: integer sums of
// a CASE with constant branches, conditions over nullable columns.
func maskedAggs() []vector.AggregateCall {
	caseSum := func(name string, cond vector.Expr, then, els any) vector.AggregateCall {
		return vector.AggregateCall{Func: vector.AggSum, Name: name,
			Args: []vector.Expr{vector.If(cond, vector.Lit(then), vector.Lit(els))}}
	}
	v, f := vector.Col("v"), vector.Col("f")
	return []vector.AggregateCall{
		{Func: vector.AggCountStar, Name: "n"},
		caseSum("r1", vector.Lt(v, vector.Lit(int64(0))), int32(1), int32(0)),
		caseSum("r2", vector.And(vector.Ge(v, vector.Lit(int64(0))), vector.Lt(v, vector.Lit(int64(300)))), int64(7), int64(-2)),
		caseSum("r3", vector.Gt(f, vector.Lit(50.0)), int32(-5), int32(3)),
		call(vector.AggSum, "sv", "v"),
	}
}

// TestLiveRawMaskedSum: sums of a CASE with constant branches fold raw
// rows by the condition's bits (a THEN for true, the ELSE for false and
// NULL) to the same state as partial aggregation and Merge, through
// deletes and compactions, and without building the CASE's column: no
// allocation of Update is as large as an int32 column of the batch (the
// old path made one per CASE).
func TestLiveRawMaskedSum(t *testing.T) {
	mem := &largestAlloc{Allocator: vt.NewAllocator(t)}
	groupBy := []vector.NamedExpr{vector.As(vector.Col("k"), "k")}
	spec := vector.AggregateSpec{GroupBy: groupBy, Aggregates: maskedAggs()}
	partial, err := vector.PartialSchema(liveRawSchema, spec)
	if err != nil {
		t.Fatal(err)
	}
	viaMerge, err := vector.NewLiveAggregate(mem, partial, 1, spec.Aggregates)
	if err != nil {
		t.Fatal(err)
	}
	defer viaMerge.Close()
	viaRaw, err := vector.NewLiveAggregate(mem, partial, 1, spec.Aggregates)
	if err != nil {
		t.Fatal(err)
	}
	defer viaRaw.Close()
	raw, ok, err := viaRaw.Raw(liveRawSchema, groupBy)
	if err != nil || !ok {
		t.Fatalf("Raw: %v, %v", ok, err)
	}
	rng := rand.New(rand.NewPCG(23, 17))
	ctx := context.Background()
	for step := 0; step < 80; step++ {
		nrows := 1 + rng.IntN(150)
		if step == 79 {
			nrows = 4096
		}
		var rows []vt.Row
		for range nrows {
			var k any = int64(rng.IntN(30))
			if rng.IntN(20) == 0 {
				k = nil
			}
			var v any = rng.Int64N(1000) - 500
			if rng.IntN(5) == 0 {
				v = nil
			}
			var f any = float64(rng.IntN(100))
			if rng.IntN(5) == 0 {
				f = nil
			}
			rows = append(rows, vt.Row{k, "s", v, f})
		}
		for _, rec := range partialOf(t, mem, spec, rows) {
			if _, err := viaMerge.Merge(ctx, rec); err != nil {
				t.Fatal(err)
			}
			rec.Release()
		}
		rec := vt.BuildRecord(mem, liveRawSchema, rows)
		keyCols, err := raw.Keys(ctx, rec)
		if err != nil {
			t.Fatal(err)
		}
		mem.on, mem.largest = true, 0
		_, err = raw.Update(ctx, rec, keyCols)
		mem.on = false
		for _, a := range keyCols {
			a.Release()
		}
		rec.Release()
		if err != nil {
			t.Fatal(err)
		}
		if nrows >= 1024 && mem.largest >= 4*nrows {
			t.Fatalf("step %d: Update of %d rows allocated %d bytes at once: a CASE column", step, nrows, mem.largest)
		}
		switch rng.IntN(5) {
		case 0:
			var del []int32
			for g := range int32(viaRaw.NumGroups()) {
				if !viaRaw.IsDead(g) && rng.IntN(3) == 0 {
					del = append(del, g)
				}
			}
			viaRaw.Delete(del)
			viaMerge.Delete(del)
		case 1:
			if _, err := viaRaw.Compact(ctx); err != nil {
				t.Fatal(err)
			}
			if _, err := viaMerge.Compact(ctx); err != nil {
				t.Fatal(err)
			}
		}
		requireSameState(t, step, viaRaw, viaMerge)
	}
}

// TestLiveRawMaskedSumOverflow: a masked add past int64 is the sum's
// overflow error, naming the CASE's value at the row.
func TestLiveRawMaskedSumOverflow(t *testing.T) {
	mem := vt.NewAllocator(t)
	groupBy := []vector.NamedExpr{vector.As(vector.Col("k"), "k")}
	aggs := []vector.AggregateCall{{Func: vector.AggSum, Name: "big",
		Args: []vector.Expr{vector.If(vector.Lt(vector.Col("v"), vector.Lit(int64(0))), vector.Lit(int64(math.MaxInt64)), vector.Lit(int64(1)))}}}
	spec := vector.AggregateSpec{GroupBy: groupBy, Aggregates: aggs}
	partial, err := vector.PartialSchema(liveRawSchema, spec)
	if err != nil {
		t.Fatal(err)
	}
	l, err := vector.NewLiveAggregate(mem, partial, 1, aggs)
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	raw, ok, err := l.Raw(liveRawSchema, groupBy)
	if err != nil || !ok {
		t.Fatalf("Raw: %v, %v", ok, err)
	}
	err = updateRows(t, mem, raw, []vt.Row{{int64(1), "s", int64(5), nil}, {int64(1), "s", nil, nil}, {int64(1), "s", int64(-1), nil}})
	var ee *vector.EvalError
	if !errors.Is(err, vector.ErrOverflow) || !errors.As(err, &ee) || ee.Row != 2 {
		t.Fatalf("Update: %v, want the overflow at row 2", err)
	}
	t.Log(err)
}
