package stateful

import (
	"fmt"
	"math/rand"
	"testing"

	"github.com/apache/arrow/go/v17/arrow"
	"github.com/apache/arrow/go/v17/arrow/array"
	"github.com/apache/arrow/go/v17/arrow/memory"
)

// TestJoinReducePairsMatchesModel: reducePairs keeps, of the pairs of each
// row of the reduced side (a record and a row), exactly one pair of the
// input, whose value is the largest (smallest) non-null one of that row's
// pairs, or a null when they all are; against a model over random pair
// groups of several records of each side (sliced: their arrays have
// offsets), int64 and int32 values with nulls and ties, either side, max
// and min, and a scratch reused by calls of growing and shrinking sizes.
// With the old behaviour (every pair kept) the count check fails.
func TestJoinReducePairsMatchesModel(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	rng := rand.New(rand.NewSource(3))
	lSchema := arrow.NewSchema([]arrow.Field{{Name: "lv", Type: arrow.PrimitiveTypes.Int64, Nullable: true}}, nil)
	rSchema := arrow.NewSchema([]arrow.Field{
		{Name: "rv", Type: arrow.PrimitiveTypes.Int64, Nullable: true},
		{Name: "rq", Type: arrow.PrimitiveTypes.Int32, Nullable: true},
	}, nil)
	mk := func(schema *arrow.Schema, rows int) arrow.Record {
		b := array.NewRecordBuilder(mem, schema)
		defer b.Release()
		for i := 0; i < rows+3; i++ {
			for c := range schema.Fields() {
				if rng.Intn(5) == 0 {
					b.Field(c).AppendNull()
					continue
				}
				v := rng.Intn(9) - 4
				switch fb := b.Field(c).(type) {
				case *array.Int64Builder:
					fb.Append(int64(v) * 1_000_000_007)
				case *array.Int32Builder:
					fb.Append(int32(v))
				}
			}
		}
		whole := b.NewRecord()
		defer whole.Release()
		return whole.NewSlice(3, int64(rows+3)) // an offset of 3
	}
	s := &statefulJoin{}
	for trial := 0; trial < 300; trial++ {
		var recs [2][]arrow.Record
		for side, schema := range []*arrow.Schema{lSchema, rSchema} {
			for k := 0; k < 1+rng.Intn(3); k++ {
				recs[side] = append(recs[side], mk(schema, 1+rng.Intn(30)))
			}
		}
		r := &joinReduce{side: rng.Intn(2), col: rng.Intn(3), max: rng.Intn(2) == 0}
		s.reduce = r
		var pairs []joinOutPairs
		n := 0
		for g := 0; g < 1+rng.Intn(8); g++ {
			p := joinOutPairs{l: recs[0][rng.Intn(len(recs[0]))], r: recs[1][rng.Intn(len(recs[1]))]}
			for x := 0; x < rng.Intn(1+rng.Intn(200)); x++ {
				p.li = append(p.li, int32(rng.Intn(int(p.l.NumRows()))))
				p.ri = append(p.ri, int32(rng.Intn(int(p.r.NumRows()))))
			}
			n += len(p.li)
			pairs = append(pairs, p)
		}
		// The model: each reduced-side row's pairs' values.
		type rowID struct {
			rec arrow.Record
			row int32
		}
		value := func(p joinOutPairs, x int) (int64, bool) {
			a, row := valueColumn(p, r.col, 1), p.li[x]
			if r.col >= 1 {
				row = p.ri[x]
			}
			if a.IsNull(int(row)) {
				return 0, true
			}
			switch a := a.(type) {
			case *array.Int64:
				return a.Value(int(row)), false
			case *array.Int32:
				return int64(a.Value(int(row))), false
			}
			t.Fatalf("column %d is %s", r.col, a.DataType())
			return 0, false
		}
		id := func(p joinOutPairs, x int) rowID {
			if r.side == 0 {
				return rowID{p.l, p.li[x]}
			}
			return rowID{p.r, p.ri[x]}
		}
		type best struct {
			v    int64
			null bool
		}
		want := map[rowID]best{}
		inInput := map[string]bool{}
		for _, p := range pairs {
			for x := range p.li {
				k := id(p, x)
				v, null := value(p, x)
				inInput[fmt.Sprint(p.l, p.r, p.li[x], p.ri[x])] = true
				b, seen := want[k]
				switch {
				case !seen, b.null && !null:
					want[k] = best{v, null}
				case null || b.null:
				case r.max && v > b.v, !r.max && v < b.v:
					want[k] = best{v, false}
				}
			}
		}
		got := s.reducePairs(pairs)
		m := 0
		seen := map[rowID]bool{}
		for _, p := range got {
			for x := range p.li {
				m++
				k := id(p, x)
				if seen[k] {
					t.Fatalf("trial %d: row %d of a side-%d record kept twice", trial, k.row, r.side)
				}
				seen[k] = true
				if !inInput[fmt.Sprint(p.l, p.r, p.li[x], p.ri[x])] {
					t.Fatalf("trial %d: kept pair (%d, %d) is not an input pair", trial, p.li[x], p.ri[x])
				}
				v, null := value(p, x)
				if w := want[k]; w.null != null || (!null && w.v != v) {
					t.Fatalf("trial %d (%+v): row %d kept value %d (null %v), want %d (null %v)", trial, *r, k.row, v, null, w.v, w.null)
				}
			}
		}
		if m != len(want) {
			t.Fatalf("trial %d: %d pairs kept of %d, want one for each of the %d rows", trial, m, n, len(want))
		}
		for _, rs := range recs {
			for _, rec := range rs {
				rec.Release()
			}
		}
	}
}
