package stateful

import (
	"fmt"
	"math/rand"
	"slices"
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
	dense := 0
	defer func() {
		if dense < 100 {
			t.Errorf("%d trials of 300 took the dense numbering, want 100 or more", dense)
		}
	}()
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
		// The dense numbering against the hash table: the same pairs in
		// the same groups and order, each checked against the model.
		r.hashed = true
		hashed := copyOutPairs(s.reducePairs(pairs))
		r.hashed = false
		got := s.reducePairs(pairs)
		if !sameOutPairs(got, hashed) {
			t.Fatalf("trial %d (%+v): the dense reduction kept %v, the hashed %v", trial, *r, outPairRows(got), outPairRows(hashed))
		}
		rows := 0
		for _, rec := range recs[r.side] {
			rows += int(rec.NumRows())
		}
		if rows <= reduceDenseRows*n {
			dense++
		}
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

// copyOutPairs copies the row lists of ps (the reduction's are scratch).
func copyOutPairs(ps []joinOutPairs) []joinOutPairs {
	out := make([]joinOutPairs, len(ps))
	for i, p := range ps {
		out[i] = joinOutPairs{l: p.l, r: p.r, li: slices.Clone(p.li), ri: slices.Clone(p.ri)}
	}
	return out
}

// sameOutPairs: the same records and rows in the same groups and order.
func sameOutPairs(a, b []joinOutPairs) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i].l != b[i].l || a[i].r != b[i].r || !slices.Equal(a[i].li, b[i].li) || !slices.Equal(a[i].ri, b[i].ri) {
			return false
		}
	}
	return true
}

func outPairRows(ps []joinOutPairs) [][2][]int32 {
	out := make([][2][]int32, len(ps))
	for i, p := range ps {
		out[i] = [2][]int32{p.li, p.ri}
	}
	return out
}

// BenchmarkJoinReducePairs: q4's shape of a reduction, 6.4 K pairs of one
// epoch in 8 groups over 3 reduced-side records of 300 rows (the live
// auctions) and 2 of 4 K (the bids), max of an int64 of the other side;
// the dense numbering against the hash table. CPU per pair is the figure
// (ns/pair from the benchmark's wall time: alternate and compare).
func BenchmarkJoinReducePairs(b *testing.B) {
	mem := memory.NewGoAllocator()
	lSchema := arrow.NewSchema([]arrow.Field{{Name: "id", Type: arrow.PrimitiveTypes.Int64}}, nil)
	rSchema := arrow.NewSchema([]arrow.Field{{Name: "price", Type: arrow.PrimitiveTypes.Int64}}, nil)
	rng := rand.New(rand.NewSource(1))
	mk := func(schema *arrow.Schema, rows int) arrow.Record {
		bld := array.NewRecordBuilder(mem, schema)
		defer bld.Release()
		for i := 0; i < rows; i++ {
			bld.Field(0).(*array.Int64Builder).Append(rng.Int63n(1e9))
		}
		return bld.NewRecord()
	}
	var lrecs, rrecs []arrow.Record
	for k := 0; k < 3; k++ {
		lrecs = append(lrecs, mk(lSchema, 300))
	}
	for k := 0; k < 2; k++ {
		rrecs = append(rrecs, mk(rSchema, 4000))
	}
	defer releaseRecords(lrecs)
	defer releaseRecords(rrecs)
	var pairs []joinOutPairs
	for g := 0; g < 8; g++ {
		p := joinOutPairs{l: lrecs[g%3], r: rrecs[g%2]}
		for k := 0; k < 800; k++ {
			p.li = append(p.li, int32(rng.Intn(300)))
			p.ri = append(p.ri, int32(rng.Intn(4000)))
		}
		pairs = append(pairs, p)
	}
	for _, hashed := range []bool{false, true} {
		name := "dense"
		if hashed {
			name = "hashed"
		}
		b.Run(name, func(b *testing.B) {
			s := &statefulJoin{reduce: &joinReduce{side: 0, col: 1, max: true, hashed: hashed}}
			b.ReportAllocs()
			for b.Loop() {
				if got := s.reducePairs(pairs); len(got) == 0 {
					b.Fatal("nothing kept")
				}
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*8*800), "ns/pair")
		})
	}
}
