package vector_test

import (
	"context"
	"fmt"
	"math"
	"math/rand"
	"testing"

	"github.com/arrowstream/arrowstream/vector"
	vt "github.com/arrowstream/arrowstream/vector/vectortest"

	"github.com/apache/arrow/go/v17/arrow/array"
)

var maxByCalls = []vector.AggregateCall{
	call(vector.AggMaxBy, "max_by_yx", "y", "x"), call(vector.AggMinBy, "min_by_yx", "y", "x"),
	call(vector.AggMaxBy, "max_by_xy", "x", "y"), call(vector.AggMinBy, "min_by_xy", "x", "y"),
}

// sparkDoubleLess is Spark's order of doubles: NaN above everything.
func sparkDoubleLess(a, b float64) bool { return a < b || math.IsNaN(b) && !math.IsNaN(a) }

// maxByModel is max_by/min_by by brute force over rows (k, y, x) in
// order: skip a NULL ordering; a row takes the lead unless the leader's
// ordering is strictly better (so the later of a tie wins).
func maxByModel(rows []vt.Row, k int64, val, ord int, isMax bool) any {
	less := func(a, b any) bool {
		switch a := a.(type) {
		case int32:
			return a < b.(int32)
		case float64:
			return sparkDoubleLess(a, b.(float64))
		}
		panic("type")
	}
	var lead vt.Row
	for _, r := range rows {
		if r[0] != k || r[ord] == nil {
			continue
		}
		if lead != nil && (isMax && less(r[ord], lead[ord]) || !isMax && less(lead[ord], r[ord])) {
			continue
		}
		lead = r
	}
	if lead == nil {
		return nil
	}
	return lead[val]
}

func sameValue(a, b any) bool {
	if x, ok := a.(float64); ok {
		y, ok := b.(float64)
		return ok && (math.Float64bits(x) == math.Float64bits(y) || math.IsNaN(x) && math.IsNaN(y))
	}
	return a == b
}

// checkMaxBy runs max_by/min_by over rows in complete and in merged
// partial aggregation (batches of batch rows) and compares both with the
// model.
func checkMaxBy(t *testing.T, rows []vt.Row, batch int) {
	t.Helper()
	spec := vector.AggregateSpec{GroupBy: byK(), Aggregates: maxByCalls}
	for _, mode := range []string{"complete", "merge"} {
		mem := vt.NewAllocator(t)
		in := vt.BuildRecords(mem, statSchema, rows, vt.Shape{BatchSize: batch})
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
		for _, r := range vt.Rows[vt.Row](vt.Normalizer{}, recs...) {
			k, _ := r[0].(int64)
			if r[0] == nil {
				continue
			}
			for i, want := range []any{
				maxByModel(rows, k, 1, 2, true), maxByModel(rows, k, 1, 2, false),
				maxByModel(rows, k, 2, 1, true), maxByModel(rows, k, 2, 1, false),
			} {
				got := r[1+i]
				if w, ok := want.(int32); ok {
					want = int64(w) // the normalizer widens integers
				}
				if !sameValue(got, want) {
					t.Errorf("%s k=%d %s: got %v, want %v", mode, k, maxByCalls[i].Name, got, want)
				}
			}
		}
		releaseRecords(recs)
		mem.AssertSize(t, 0)
	}
}

// TestMaxByMinByModel compares max_by/min_by with the brute-force model
// on random rows with many ties (few distinct orderings), NULLs on both
// sides, NaN and signed zeros.
func TestMaxByMinByModel(t *testing.T) {
	rng := rand.New(rand.NewSource(7))
	doubles := []any{nil, 0.0, math.Copysign(0, -1), 1.5, -2.0, math.NaN(), math.Inf(1), math.Inf(-1)}
	for iter := 0; iter < 50; iter++ {
		var rows []vt.Row
		for i := rng.Intn(60); i > 0; i-- {
			var y any
			if rng.Intn(4) > 0 {
				y = int32(rng.Intn(5) - 2)
			}
			rows = append(rows, vt.Row{int64(rng.Intn(3)), y, doubles[rng.Intn(len(doubles))]})
		}
		checkMaxBy(t, rows, 1+rng.Intn(8))
	}
}

// FuzzMaxByMinBy decodes rows (any doubles) from the fuzzer's bytes and
// checks max_by/min_by in complete and merged aggregation against the
// model, without leaks.
func FuzzMaxByMinBy(f *testing.F) {
	f.Add([]byte{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20}, uint8(3))
	f.Add([]byte{0, 0, 0, 0, 0, 0, 0, 0, 0xf8, 0x7f, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0x80}, uint8(1))
	f.Fuzz(func(t *testing.T, data []byte, batch uint8) {
		var rows []vt.Row
		for len(data) >= 10 && len(rows) < 200 {
			var y, x any
			if data[1]&1 == 0 {
				y = int32(int8(data[1]) >> 2)
			}
			if data[1]&2 == 0 {
				x = math.Float64frombits(uint64(data[2]) | uint64(data[3])<<8 | uint64(data[4])<<16 | uint64(data[5])<<24 |
					uint64(data[6])<<32 | uint64(data[7])<<40 | uint64(data[8])<<48 | uint64(data[9])<<56)
			}
			rows = append(rows, vt.Row{int64(data[0] % 3), y, x})
			data = data[10:]
		}
		checkMaxBy(t, rows, 1+int(batch%16))
	})
}

// TestCollectListModel: collect_list in complete and merged partial
// aggregation equals the non-null values of each group in input order.
func TestCollectListModel(t *testing.T) {
	rng := rand.New(rand.NewSource(11))
	spec := vector.AggregateSpec{GroupBy: byK(), Aggregates: []vector.AggregateCall{call(vector.AggCollectList, "l", "y")}}
	for iter := 0; iter < 30; iter++ {
		var rows []vt.Row
		for i := rng.Intn(50); i > 0; i-- {
			var y any
			if rng.Intn(4) > 0 {
				y = int32(rng.Intn(100))
			}
			rows = append(rows, vt.Row{int64(rng.Intn(3)), y, nil})
		}
		for _, mode := range []string{"complete", "merge"} {
			mem := vt.NewAllocator(t)
			in := vt.BuildRecords(mem, statSchema, rows, vt.Shape{BatchSize: 1 + rng.Intn(7)})
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
			for _, rec := range recs {
				keys := rec.Column(0)
				lists := rec.Column(1).(*array.List)
				vals := lists.ListValues().(*array.Int32)
				offs := lists.Offsets()
				for i := 0; i < int(rec.NumRows()); i++ {
					k := keys.(*array.Int64).Value(i)
					var want, got []int32
					for _, r := range rows {
						if r[0] == k && r[1] != nil {
							want = append(want, r[1].(int32))
						}
					}
					for j := offs[i]; j < offs[i+1]; j++ {
						got = append(got, vals.Value(int(j)))
					}
					if fmt.Sprint(got) != fmt.Sprint(want) {
						t.Errorf("%s k=%d: got %v, want %v", mode, k, got, want)
					}
				}
			}
			releaseRecords(recs)
			mem.AssertSize(t, 0)
		}
	}
}
