package stateful

import (
	"context"
	"math/rand"
	"testing"

	"github.com/apache/arrow/go/v17/arrow"
	"github.com/apache/arrow/go/v17/arrow/array"
	"github.com/apache/arrow/go/v17/arrow/memory"

	"github.com/arrowstream/arrowstream/plan"
	"github.com/arrowstream/arrowstream/vector"
)

// cmpJoin is an inner join of a left side (id, t1, t2, i1, d1, name) and
// a right side (auction, bt, bi, bd, extra) on id = auction AND cond: the
// times are timestamps, i1 and bi int32, d1 and bd dates (int32 words),
// every one of them nullable.
func cmpJoin(t testing.TB, mem memory.Allocator, cond string) (*statefulJoin, *plan.Join) {
	t.Helper()
	cat := plan.NewMemoryCatalog()
	cat.Register("a", &plan.SourceTable{TableSchema: arrow.NewSchema([]arrow.Field{
		{Name: "id", Type: vector.Int64},
		{Name: "t1", Type: vector.Timestamp, Nullable: true}, {Name: "t2", Type: vector.Timestamp, Nullable: true},
		{Name: "i1", Type: vector.Int32, Nullable: true}, {Name: "d1", Type: vector.Date, Nullable: true},
		{Name: "name", Type: vector.String, Nullable: true},
	}, nil)})
	cat.Register("b", &plan.SourceTable{TableSchema: arrow.NewSchema([]arrow.Field{
		{Name: "auction", Type: vector.Int64},
		{Name: "bt", Type: vector.Timestamp, Nullable: true}, {Name: "bi", Type: vector.Int32, Nullable: true},
		{Name: "bd", Type: vector.Date, Nullable: true}, {Name: "extra", Type: vector.String},
	}, nil)})
	l, err := plan.Read(cat, "a")
	if err != nil {
		t.Fatal(err)
	}
	r, err := plan.Read(cat, "b")
	if err != nil {
		t.Fatal(err)
	}
	n, err := plan.JoinOn(l, r, "id = auction AND "+cond, "inner")
	if err != nil {
		t.Fatalf("%s: %v", cond, err)
	}
	jn := n.(*plan.Join)
	j, err := newStatefulJoin(mem, 0, jn)
	if err != nil {
		t.Fatal(err)
	}
	return j, jn
}

// cmpRecords makes count records of schema, each a slice (from row 3 on)
// of a record of rows+3 rows: small values (ties), a null in about one
// value of nullEvery of every nullable column (none when 0).
func cmpRecords(mem memory.Allocator, rng *rand.Rand, schema *arrow.Schema, count, rows, nullEvery int) []arrow.Record {
	var out []arrow.Record
	for c := 0; c < count; c++ {
		b := array.NewRecordBuilder(mem, schema)
		for i := 0; i < rows+3; i++ {
			for f, fb := range b.Fields() {
				if schema.Field(f).Nullable && nullEvery > 0 && rng.Intn(nullEvery) == 0 {
					fb.AppendNull()
					continue
				}
				v := rng.Intn(40)
				switch fb := fb.(type) {
				case *array.Int64Builder:
					fb.Append(int64(v))
				case *array.Int32Builder:
					fb.Append(int32(v - 20))
				case *array.TimestampBuilder:
					fb.Append(arrow.Timestamp(v) * 1_000_000)
				case *array.Date32Builder:
					fb.Append(arrow.Date32(v))
				case *array.StringBuilder:
					fb.Append("s")
				}
			}
		}
		rec := b.NewRecord()
		b.Release()
		out = append(out, rec.NewSlice(3, int64(rows+3)))
		rec.Release()
	}
	return out
}

// TestJoinPairCondMatchesExpression: a deferred residual of column
// comparisons evaluated on the pairs in place (pairCond) keeps exactly
// the pairs the condition's expression keeps, over the pairs of several
// sliced records per side, null values, ties, int64 (timestamp) and
// int32 (int, date) columns, each side on either hand of a comparison.
// The same join with the in-place condition taken away (the narrow
// residual, the path before it) is the oracle: the same rows in the same
// order (the passing pairs are the output's rows, group by group).
func TestJoinPairCondMatchesExpression(t *testing.T) {
	conds := []string{
		"bt BETWEEN t1 AND t2",
		"bt > t1 AND bi <= i1",
		"t2 >= bt AND t1 < bt AND bi <> i1",
		"bi <> i1",
		"bd BETWEEN d1 AND d1 AND bt < t2",
		"i1 < bi AND d1 >= bd AND t1 <> bt",
	}
	checked := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer checked.AssertSize(t, 0)
	rng := rand.New(rand.NewSource(7))
	for _, cond := range conds {
		j, jn := cmpJoin(t, checked, cond)
		if j.inPlace == nil || !j.residualDeferred() {
			t.Fatalf("%s: not evaluated in place", cond)
		}
		for trial := 0; trial < 40; trial++ {
			nullEvery := []int{0, 3, 10}[trial%3]
			lrecs := cmpRecords(checked, rng, jn.Left.Schema(), 1+rng.Intn(3), 1+rng.Intn(60), nullEvery)
			rrecs := cmpRecords(checked, rng, jn.Right.Schema(), 1+rng.Intn(3), 1+rng.Intn(90), nullEvery)
			mk := func() []joinOutPairs {
				var pairs []joinOutPairs
				r2 := rand.New(rand.NewSource(int64(trial)))
				for g := 0; g < 1+r2.Intn(20); g++ {
					l, r := lrecs[r2.Intn(len(lrecs))], rrecs[r2.Intn(len(rrecs))]
					l.Retain()
					r.Retain()
					n := r2.Intn(200)
					p := joinOutPairs{l: l, r: r, li: make([]int32, n), ri: make([]int32, n)}
					for k := range p.li {
						p.li[k], p.ri[k] = int32(r2.Intn(int(l.NumRows()))), int32(r2.Intn(int(r.NumRows())))
					}
					pairs = append(pairs, p)
				}
				return pairs
			}
			run := func(inPlace *pairCond) (arrow.Record, []joinOutPairs) {
				j.inPlace = inPlace
				pairs := mk()
				recs, err := j.gatherOutPairs(context.Background(), pairs)
				if err != nil {
					t.Fatal(err)
				}
				defer releaseRecords(recs)
				if len(recs) == 0 {
					return nil, pairs
				}
				rec, err := concatRecords(checked, j.out, recs)
				if err != nil {
					t.Fatal(err)
				}
				return rec, pairs
			}
			pc := j.inPlace
			want, wantPairs := run(nil)
			got, gotPairs := run(pc)
			j.inPlace = pc
			switch {
			case (got == nil) != (want == nil):
				t.Fatalf("%s, trial %d: output %v, expression's %v", cond, trial, got != nil, want != nil)
			case got != nil && !array.RecordEqual(got, want):
				t.Fatalf("%s, trial %d: %d rows pass in place, %d by the expression (or they differ)", cond, trial, got.NumRows(), want.NumRows())
			}
			if got != nil {
				got.Release()
				want.Release()
			}
			releaseOutPairs(wantPairs)
			releaseOutPairs(gotPairs)
			releaseRecords(lrecs)
			releaseRecords(rrecs)
		}
		if err := j.Close(); err != nil {
			t.Fatal(err)
		}
	}
}

// TestJoinPairCondForms: only a conjunction of comparisons between two
// columns of one integral type is evaluated in place; the rest is left
// to the expression.
func TestJoinPairCondForms(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	for cond, want := range map[string]int{
		"bt BETWEEN t1 AND t2":                          2,
		"bt >= t1 AND bt <= t2 AND bi < i1":             3,
		"(bt BETWEEN t1 AND t2 OR bi < i1)":             0,
		"NOT (bt < t1)":                                 0,
		"bt < t1 + INTERVAL 1 SECOND":                   0,
		"bi < 3 AND bt < t1":                            0,
		"bi < id AND bt < t1":                           0, // int32 against int64: a cast
		"bt <=> t1":                                     0,
		"extra < name":                                  0,
		"bt BETWEEN t1 AND t2 AND bd BETWEEN d1 AND d1": 4,
	} {
		j, _ := cmpJoin(t, mem, cond)
		got := 0
		if j.inPlace != nil {
			got = len(j.inPlace.cmps)
		}
		if got != want {
			t.Errorf("%s: %d comparisons in place, want %d", cond, got, want)
		}
		if err := j.Close(); err != nil {
			t.Fatal(err)
		}
	}
}

// BenchmarkJoinResidualPairs filters 64 K candidate pairs (q4's shape:
// 40 groups of a record per side, `bt BETWEEN t1 AND t2`, about half
// passing) through the deferred residual: in place (pairCond) and by the
// narrow residual's gather and expression. The pairs' lists are copied
// back before each filter (both cases pay it).
func BenchmarkJoinResidualPairs(b *testing.B) {
	mem := memory.NewGoAllocator()
	for _, c := range []struct {
		name    string
		inPlace bool
	}{{"in-place", true}, {"narrow", false}} {
		b.Run(c.name, func(b *testing.B) {
			j, jn := cmpJoin(b, mem, "bt BETWEEN t1 AND t2")
			defer j.Close()
			if !c.inPlace {
				j.inPlace = nil
			}
			rng := rand.New(rand.NewSource(1))
			lrecs := cmpRecords(mem, rng, jn.Left.Schema(), 4, 4000, 50)
			rrecs := cmpRecords(mem, rng, jn.Right.Schema(), 4, 16000, 50)
			defer releaseRecords(lrecs)
			defer releaseRecords(rrecs)
			var master, pairs []joinOutPairs
			for g := 0; g < 40; g++ {
				l, r := lrecs[g%4], rrecs[(g/4)%4]
				n := 1600
				m := joinOutPairs{l: l, r: r, li: make([]int32, n), ri: make([]int32, n)}
				for k := range m.li {
					m.li[k], m.ri[k] = int32(rng.Intn(int(l.NumRows()))), int32(rng.Intn(int(r.NumRows())))
				}
				master = append(master, m)
				pairs = append(pairs, joinOutPairs{l: l, r: r, li: make([]int32, n), ri: make([]int32, n)})
			}
			b.ReportAllocs()
			b.ResetTimer()
			for b.Loop() {
				for g := range pairs {
					copy(pairs[g].li, master[g].li)
					copy(pairs[g].ri, master[g].ri)
				}
				recs, err := j.gatherOutPairs(context.Background(), pairs)
				if err != nil {
					b.Fatal(err)
				}
				releaseRecords(recs)
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*40*1600), "ns/pair")
		})
	}
}
