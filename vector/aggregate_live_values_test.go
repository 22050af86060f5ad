package vector_test

import (
	"bytes"
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/apache/arrow/go/v17/arrow"

	"github.com/arrowstream/arrowstream/vector"
	vt "github.com/arrowstream/arrowstream/vector/vectortest"
)

// valueAggs are the aggregates EncodeValues writes: counts, sums and
// averages of integers, doubles and decimals, min and max of integers
// (64 and 32 bits), doubles and decimals.
func valueAggs() []vector.AggregateCall {
	dec := vector.Cast(vector.Col("v"), vector.Decimal(12, 2))
	i32 := vector.Cast(vector.Col("v"), vector.Int32)
	return []vector.AggregateCall{
		{Func: vector.AggCountStar, Name: "n"},
		call(vector.AggCount, "nv", "v"),
		{Func: vector.AggCount, Name: "nvf", Args: []vector.Expr{vector.Col("v"), vector.Col("f")}},
		call(vector.AggSum, "sv", "v"),
		call(vector.AggSum, "sf", "f"),
		call(vector.AggMin, "minv", "v"),
		call(vector.AggMax, "maxf", "f"),
		call(vector.AggMin, "minf", "f"),
		call(vector.AggAvg, "avgf", "f"),
		call(vector.AggAvg, "avgv", "v"),
		{Func: vector.AggSum, Name: "sd", Args: []vector.Expr{dec}},
		{Func: vector.AggAvg, Name: "ad", Args: []vector.Expr{dec}},
		{Func: vector.AggMin, Name: "mind", Args: []vector.Expr{dec}},
		{Func: vector.AggMax, Name: "max32", Args: []vector.Expr{i32}},
	}
}

// valueRows are random input rows: some nulls, doubles with -0.0 and NaN
// (whose bits a value encoder keeps).
func valueRows(rng *rand.Rand) []vt.Row {
	var rows []vt.Row
	for i := 0; i < rng.IntN(120); i++ {
		var k, s, v, f any = int64(rng.IntN(30)), []string{"a", "bb", "ccc"}[rng.IntN(3)], rng.Int64N(100000) - 50000, float64(rng.IntN(50)) - 20
		switch rng.IntN(12) {
		case 0:
			f = math.Copysign(0, -1)
		case 1:
			f = math.NaN()
		case 2:
			f = nil
		}
		if rng.IntN(10) == 0 {
			k = nil
		}
		if rng.IntN(4) == 0 {
			v = nil
		}
		rows = append(rows, vt.Row{k, s, v, f})
	}
	return rows
}

// TestEncodeValuesMatchesEncoder folds random batches into live
// aggregations (through Merge, and through LiveRaw as a streaming
// aggregation's fold does), deleting and compacting groups at random,
// and checks after every step that EncodeValues of a random list of
// groups (dead and repeated ids included) gives, row by row, the bytes a
// value encoder gives for Values of the same groups.
func TestEncodeValuesMatchesEncoder(t *testing.T) {
	ctx := context.Background()
	aggs := valueAggs()
	for _, keys := range [][]string{{"k"}, {"k", "s"}, nil} {
		for _, viaRaw := range []bool{false, true} {
			t.Run(fmt.Sprint(keys, viaRaw), func(t *testing.T) {
				mem := vt.NewAllocator(t)
				var groupBy []vector.NamedExpr
				for _, k := range keys {
					groupBy = append(groupBy, vector.As(vector.Col(k), k))
				}
				spec := vector.AggregateSpec{GroupBy: groupBy, Aggregates: aggs}
				partial, err := vector.PartialSchema(liveRawSchema, spec)
				if err != nil {
					t.Fatal(err)
				}
				live, err := vector.NewLiveAggregate(mem, partial, len(keys), aggs)
				if err != nil {
					t.Fatal(err)
				}
				defer live.Close()
				var raw *vector.LiveRaw
				if viaRaw {
					var ok bool
					if raw, ok, err = live.Raw(liveRawSchema, groupBy); err != nil || !ok {
						t.Fatalf("Raw: %v, %v", ok, err)
					}
				}
				var types []arrow.DataType
				for _, f := range partial.Fields()[len(keys):] {
					types = append(types, f.Type)
				}
				enc, err := vector.NewValueEncoder(mem, types)
				if err != nil {
					t.Fatal(err)
				}
				var out vector.GroupValues
				rng := rand.New(rand.NewPCG(17, uint64(len(keys))))
				for step := 0; step < 50; step++ {
					rows := valueRows(rng)
					if raw != nil {
						updateLiveRaw(t, ctx, mem, raw, rows)
					} else {
						for _, rec := range partialOf(t, mem, spec, rows) {
							if _, err := live.Merge(ctx, rec); err != nil {
								t.Fatal(err)
							}
							rec.Release()
						}
					}
					switch rng.IntN(4) {
					case 0:
						var del []int32
						for g := range live.NumGroups() {
							if rng.IntN(3) == 0 {
								del = append(del, int32(g))
							}
						}
						live.Delete(del)
					case 1:
						if _, err := live.Compact(ctx); err != nil {
							t.Fatal(err)
						}
					}
					var gids []int32
					for range rng.IntN(live.NumGroups() + 1) {
						gids = append(gids, int32(rng.IntN(live.NumGroups())))
					}
					ok, err := live.EncodeValues(enc, gids, &out)
					if err != nil || !ok {
						t.Fatalf("step %d: EncodeValues: %v, %v", step, ok, err)
					}
					vals, err := live.Values(gids)
					if err != nil {
						t.Fatal(err)
					}
					if len(gids) > 0 {
						if err := enc.Encode(vals); err != nil {
							t.Fatal(err)
						}
					}
					if out.Len() != len(gids) {
						t.Fatalf("step %d: %d rows, want %d", step, out.Len(), len(gids))
					}
					for i := range gids {
						if got, want := out.Row(i), enc.Key(i); !bytes.Equal(got, want) {
							t.Fatalf("step %d: row %d (group %d): %x, want %x", step, i, gids[i], got, want)
						}
					}
					for _, a := range vals {
						a.Release()
					}
				}
			})
		}
	}
}

// TestEncodeValuesDeclines: an aggregate whose state EncodeValues does not
// write (max of a string, min of a narrow integer), a lone 32-bit state
// column (its encoder's fixed path is framed in 64-bit words), a key encoder (not
// exact) or an encoder of other types make it decline, leaving out alone;
// a group id out of range is an error naming it.
func TestEncodeValuesDeclines(t *testing.T) {
	mem := vt.NewAllocator(t)
	open := func(aggs []vector.AggregateCall) (*vector.LiveAggregate, []arrow.DataType) {
		t.Helper()
		spec := vector.AggregateSpec{GroupBy: byK(), Aggregates: aggs}
		partial, err := vector.PartialSchema(liveRawSchema, spec)
		if err != nil {
			t.Fatal(err)
		}
		live, err := vector.NewLiveAggregate(mem, partial, 1, aggs)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(live.Close)
		for _, rec := range partialOf(t, mem, spec, []vt.Row{{int64(1), "a", int64(2), 3.0}}) {
			if _, err := live.Merge(context.Background(), rec); err != nil {
				t.Fatal(err)
			}
			rec.Release()
		}
		var types []arrow.DataType
		for _, f := range partial.Fields()[1:] {
			types = append(types, f.Type)
		}
		return live, types
	}
	i16 := vector.Cast(vector.Col("v"), vector.Int16)
	for name, aggs := range map[string][]vector.AggregateCall{
		"max string": {call(vector.AggCount, "nv", "v"), call(vector.AggMax, "maxs", "s")},
		"min int16":  {{Func: vector.AggMin, Name: "m16", Args: []vector.Expr{i16}}},
		"first":      {call(vector.AggFirst, "fv", "v")},
		// One 32-bit column: its value encoder is on the fixed path, whose
		// rows the store frames as a flag byte and a 64-bit word.
		"min int32 alone": {{Func: vector.AggMin, Name: "m32", Args: []vector.Expr{vector.Cast(vector.Col("v"), vector.Int32)}}},
	} {
		live, types := open(aggs)
		enc, err := vector.NewValueEncoder(mem, types)
		if err != nil {
			t.Fatal(err)
		}
		var out vector.GroupValues
		if ok, err := live.EncodeValues(enc, []int32{0}, &out); ok || err != nil || out.Len() != 0 {
			t.Errorf("%s: EncodeValues %v, %v, %d rows; want a decline", name, ok, err, out.Len())
		}
	}
	live, types := open([]vector.AggregateCall{call(vector.AggSum, "sv", "v")})
	keyEnc, err := vector.NewKeyEncoder(mem, types)
	if err != nil {
		t.Fatal(err)
	}
	var out vector.GroupValues
	if ok, err := live.EncodeValues(keyEnc, []int32{0}, &out); ok || err != nil {
		t.Errorf("with a key encoder: %v, %v; want a decline", ok, err)
	}
	other, err := vector.NewValueEncoder(mem, []arrow.DataType{vector.Float64, vector.Int64})
	if err != nil {
		t.Fatal(err)
	}
	if ok, err := live.EncodeValues(other, []int32{0}, &out); ok || err != nil {
		t.Errorf("with an encoder of other types: %v, %v; want a decline", ok, err)
	}
	enc, err := vector.NewValueEncoder(mem, types)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := live.EncodeValues(enc, []int32{3}, &out); err == nil {
		t.Error("EncodeValues of group 3 of 1: no error")
	}
}
