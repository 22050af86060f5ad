package stateful

import (
	"context"
	"fmt"
	"math/rand"
	"slices"
	"testing"

	"github.com/apache/arrow/go/v17/arrow"
	"github.com/apache/arrow/go/v17/arrow/array"
	"github.com/apache/arrow/go/v17/arrow/memory"

	"github.com/arrowstream/arrowstream/plan"
	"github.com/arrowstream/arrowstream/vector"
)

// countingAlloc counts the bytes allocated through it.
type countingAlloc struct {
	memory.Allocator
	bytes int64
}

func (a *countingAlloc) Allocate(n int) []byte {
	a.bytes += int64(n)
	return a.Allocator.Allocate(n)
}

func (a *countingAlloc) Reallocate(n int, b []byte) []byte {
	a.bytes += int64(n)
	return a.Allocator.Reallocate(n, b)
}

// q4Join is an inner join of auction-like rows (id, category, expires,
// dateTime, name) and bid-like rows (auction, price, bdate, extra) on
// q4's condition.
func q4Join(t *testing.T, mem memory.Allocator) (*statefulJoin, *plan.Join) {
	t.Helper()
	cat := plan.NewMemoryCatalog()
	cat.Register("a", &plan.SourceTable{TableSchema: arrow.NewSchema([]arrow.Field{
		{Name: "id", Type: vector.Int64}, {Name: "category", Type: vector.Int64},
		{Name: "expires", Type: vector.Int64, Nullable: true}, {Name: "dateTime", Type: vector.Int64},
		{Name: "name", Type: vector.String, Nullable: true},
	}, nil)})
	cat.Register("b", &plan.SourceTable{TableSchema: arrow.NewSchema([]arrow.Field{
		{Name: "auction", Type: vector.Int64}, {Name: "price", Type: vector.Int64},
		{Name: "bdate", Type: vector.Int64, Nullable: true}, {Name: "extra", Type: vector.String},
	}, nil)})
	l, err := plan.Read(cat, "a")
	if err != nil {
		t.Fatal(err)
	}
	r, err := plan.Read(cat, "b")
	if err != nil {
		t.Fatal(err)
	}
	n, err := plan.JoinOn(l, r, "id = auction AND bdate BETWEEN dateTime AND expires", "inner")
	if err != nil {
		t.Fatal(err)
	}
	jn := n.(*plan.Join)
	j, err := newStatefulJoin(mem, 0, jn)
	if err != nil {
		t.Fatal(err)
	}
	return j, jn
}

// TestJoinNarrowResidualMatchesModel: the epoch's pairs filtered by a
// residual that reads three of nine columns equal a brute-force filter
// (the condition computed in Go, the passing pairs taken whole), over
// several records per side, null times and blocks of pairs; and the
// Arrow bytes allocated are fewer than one gather of every column of
// every candidate, which the whole-row filter did before its Take of the
// passing pairs.
func TestJoinNarrowResidualMatchesModel(t *testing.T) {
	checked := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer checked.AssertSize(t, 0)
	mem := &countingAlloc{Allocator: checked}
	j, jn := q4Join(t, mem)
	defer j.Close()
	if j.narrow == nil || len(j.narrow.cols) != 3 || !j.residualDeferred() {
		t.Fatalf("q4's residual is not narrowed: %+v", j.narrow)
	}
	rng := rand.New(rand.NewSource(5))
	mkRecs := func(schema *arrow.Schema, count, rows int) []arrow.Record {
		var out []arrow.Record
		for c := 0; c < count; c++ {
			b := array.NewRecordBuilder(checked, schema)
			for i := 0; i < rows; i++ {
				for f, fb := range b.Fields() {
					switch fb := fb.(type) {
					case *array.Int64Builder:
						if schema.Field(f).Nullable && rng.Intn(20) == 0 {
							fb.AppendNull()
						} else {
							fb.Append(rng.Int63n(1000))
						}
					case *array.StringBuilder:
						fb.Append(fmt.Sprintf("%s-%d-%0*d", schema.Field(f).Name, i, rng.Intn(30), 0))
					}
				}
			}
			out = append(out, b.NewRecord())
			b.Release()
		}
		return out
	}
	lrecs, rrecs := mkRecs(jn.Left.Schema(), 3, 400), mkRecs(jn.Right.Schema(), 4, 900)
	defer releaseRecords(lrecs)
	defer releaseRecords(rrecs)
	passes := func(l, r arrow.Record, li, ri int32) bool {
		e, d := l.Column(2).(*array.Int64), l.Column(3).(*array.Int64)
		bd := r.Column(2).(*array.Int64)
		if e.IsNull(int(li)) || bd.IsNull(int(ri)) {
			return false
		}
		t := bd.Value(int(ri))
		return d.Value(int(li)) <= t && t <= e.Value(int(li))
	}
	for _, groups := range []int{1, 7, 60, 400} {
		var pairs []joinOutPairs
		for g := 0; g < groups; g++ {
			l, r := lrecs[rng.Intn(len(lrecs))], rrecs[rng.Intn(len(rrecs))]
			l.Retain()
			r.Retain()
			n := rng.Intn(300)
			p := joinOutPairs{l: l, r: r, li: make([]int32, n), ri: make([]int32, n)}
			for k := range p.li {
				p.li[k], p.ri[k] = int32(rng.Intn(int(l.NumRows()))), int32(rng.Intn(int(r.NumRows())))
			}
			pairs = append(pairs, p)
		}
		// The model.
		var want []arrow.Record
		var wantLists [][2][]int32
		for _, p := range pairs {
			var li, ri []int32
			for k := range p.li {
				if passes(p.l, p.r, p.li[k], p.ri[k]) {
					li, ri = append(li, p.li[k]), append(ri, p.ri[k])
				}
			}
			wantLists = append(wantLists, [2][]int32{li, ri})
			if len(li) == 0 {
				continue
			}
			rec, err := j.pairs(p.l, p.r, li, ri, j.out)
			if err != nil {
				t.Fatal(err)
			}
			want = append(want, rec)
		}
		full, err := j.gatherPairs(pairs, j.joined)
		if err != nil {
			t.Fatal(err)
		}
		mem.bytes = 0
		full.Release()
		full, err = j.gatherPairs(pairs, j.joined)
		if err != nil {
			t.Fatal(err)
		}
		fullBytes := mem.bytes
		full.Release()
		mem.bytes = 0
		got, err := j.gatherOutPairs(context.Background(), pairs)
		if err != nil {
			t.Fatal(err)
		}
		gotBytes := mem.bytes
		// The passing pairs were filtered in place (no fresh lists of
		// them): each group's lists begin with its passing pairs. Not so
		// when every candidate of a block passes or none does (nothing
		// to filter): 7 groups and more have both kinds of pair.
		if groups > 1 {
			for g, p := range pairs {
				li, ri := wantLists[g][0], wantLists[g][1]
				if !slices.Equal(p.li[:len(li)], li) || !slices.Equal(p.ri[:len(ri)], ri) {
					t.Fatalf("%d groups: group %d's lists do not begin with its passing pairs", groups, g)
				}
			}
		}
		releaseOutPairs(pairs)
		var g, w arrow.Record
		if len(got) > 0 {
			if g, err = concatRecords(checked, j.out, got); err != nil {
				t.Fatal(err)
			}
		}
		if len(want) > 0 {
			if w, err = concatRecords(checked, j.out, want); err != nil {
				t.Fatal(err)
			}
		}
		switch {
		case (g == nil) != (w == nil):
			t.Fatalf("%d groups: output %v, model %v", groups, g != nil, w != nil)
		case g != nil && !array.RecordEqual(g, w):
			t.Fatalf("%d groups: %d rows filtered, the model %d (or they differ)", groups, g.NumRows(), w.NumRows())
		}
		if g != nil {
			t.Logf("%d groups: %d of the candidates pass; %d Arrow bytes, a whole gather %d", groups, g.NumRows(), gotBytes, fullBytes)
			g.Release()
			w.Release()
		}
		if fullBytes > 0 && gotBytes >= fullBytes {
			t.Errorf("%d groups: %d Arrow bytes to filter the pairs, a whole gather of the candidates alone is %d", groups, gotBytes, fullBytes)
		}
		releaseRecords(got)
		releaseRecords(want)
	}
}
