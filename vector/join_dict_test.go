package vector_test

import (
	"context"
	"fmt"
	"slices"
	"testing"

	"github.com/apache/arrow/go/v17/arrow"
	"github.com/apache/arrow/go/v17/arrow/array"
	"github.com/apache/arrow/go/v17/arrow/memory"

	"github.com/arrowstream/arrowstream/internal/testutil/poisonmem"
	"github.com/arrowstream/arrowstream/vector"
)

// dictColumn builds a dictionary<int16, string> array of the given indices
// over dict (a nil entry of dict is a null value; a negative index is a
// null row).
func dictColumn(mem memory.Allocator, dict arrow.Array, idx []int16) arrow.Array {
	ib := array.NewInt16Builder(mem)
	defer ib.Release()
	for _, i := range idx {
		if i < 0 {
			ib.AppendNull()
		} else {
			ib.Append(i)
		}
	}
	ix := ib.NewArray()
	defer ix.Release()
	return array.NewDictionaryArray(dictType, ix, dict)
}

func stringArr(mem memory.Allocator, vals ...any) arrow.Array {
	b := array.NewStringBuilder(mem)
	defer b.Release()
	for _, v := range vals {
		if v == nil {
			b.AppendNull()
		} else {
			b.Append(v.(string))
		}
	}
	return b.NewArray()
}

func int64Arr(mem memory.Allocator, vals ...int64) arrow.Array {
	b := array.NewInt64Builder(mem)
	defer b.Release()
	b.AppendValues(vals, nil)
	return b.NewArray()
}

// joinRows runs the join of left (batches) with the right table and
// returns its output rows as strings, sorted.
func joinRows(t *testing.T, mem memory.Allocator, typ vector.JoinType, ls *arrow.Schema, left []arrow.Record, right arrow.Record) []string {
	t.Helper()
	l, err := vector.NewScan(ls, left...)
	if err != nil {
		t.Fatal(err)
	}
	r, err := vector.NewScan(right.Schema(), right)
	if err != nil {
		t.Fatal(err)
	}
	j, err := vector.NewHashJoin(mem, l, r, vector.JoinSpec{Type: typ, LeftKeys: cols("k"), RightKeys: cols("rk")})
	if err != nil {
		t.Fatal(err)
	}
	defer j.Close()
	return sortedRowStrings(t, j)
}

// sortedRowStrings drains op and returns its rows as "v1|v2|…|" strings,
// sorted, for comparing a shortcut's output with the general path's.
func sortedRowStrings(t *testing.T, op vector.Operator) []string {
	t.Helper()
	recs, err := vector.Drain(context.Background(), op)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, rec := range recs {
		for i := range int(rec.NumRows()) {
			row := ""
			for c := range int(rec.NumCols()) {
				row += fmt.Sprintf("%v|", vector.ValueAt(rec.Column(c), i))
			}
			out = append(out, row)
		}
		rec.Release()
	}
	slices.Sort(out)
	return out
}

// TestHashJoinDictionaryProbe checks the dictionary shortcut of the probe
// (one lookup per dictionary entry) against the same join on decoded
// strings: batches sharing a dictionary, a batch with another, a null
// dictionary value, keys with several and with no build rows.
func TestHashJoinDictionaryProbe(t *testing.T) {
	mem := poisonmem.New()
	defer mem.AssertSize(t, 0)
	rk := stringArr(mem, "view", "view", "click", "purchase", "zzz")
	rv := int64Arr(mem, 1, 2, 3, 4, 5)
	rs := joinSchema(field("rk", vector.String), field("rv", vector.Int64))
	right := array.NewRecord(rs, []arrow.Array{rk, rv}, 5)
	rk.Release()
	rv.Release()
	defer right.Release()

	dictA := stringArr(mem, "view", "click", nil, "nope", "purchase")
	dictB := stringArr(mem, "purchase", "zzz", "view")
	defer dictA.Release()
	defer dictB.Release()
	batches := []struct {
		dict arrow.Array
		idx  []int16
	}{
		{dictA, []int16{0, 1, 2, 3, 4, 1}},
		{dictA, []int16{4, 4, 0}},
		{dictB, []int16{2, 1, 0, 0}},
		{dictA, []int16{1, 1}}, // purchase only, exactly one match per row
	}
	dictType := &arrow.DictionaryType{IndexType: arrow.PrimitiveTypes.Int16, ValueType: vector.String}
	dls := joinSchema(field("k", dictType), field("n", vector.Int64))
	pls := joinSchema(field("k", vector.String), field("n", vector.Int64))
	var dictRecs, plainRecs []arrow.Record
	n := int64(0)
	for _, b := range batches {
		ns := make([]int64, len(b.idx))
		vals := make([]any, len(b.idx))
		for i, x := range b.idx {
			ns[i] = n
			n++
			vals[i] = vector.ValueAt(b.dict, int(x))
		}
		dc, pc, nc := dictColumn(mem, b.dict, b.idx), stringArr(mem, vals...), int64Arr(mem, ns...)
		dictRecs = append(dictRecs, array.NewRecord(dls, []arrow.Array{dc, nc}, int64(len(b.idx))))
		plainRecs = append(plainRecs, array.NewRecord(pls, []arrow.Array{pc, nc}, int64(len(b.idx))))
		dc.Release()
		pc.Release()
		nc.Release()
	}
	defer func() {
		for i := range dictRecs {
			dictRecs[i].Release()
			plainRecs[i].Release()
		}
	}()
	for _, typ := range []vector.JoinType{vector.InnerJoin, vector.LeftOuterJoin, vector.LeftSemiJoin, vector.LeftAntiJoin, vector.FullOuterJoin} {
		t.Run(typ.String(), func(t *testing.T) {
			got := joinRows(t, mem, typ, dls, dictRecs, right)
			want := joinRows(t, mem, typ, pls, plainRecs, right)
			if !slices.Equal(got, want) {
				t.Fatalf("dictionary probe:\n%v\nplain probe:\n%v", got, want)
			}
			if len(want) == 0 {
				t.Fatal("no rows: the test checks nothing")
			}
		})
	}
}
