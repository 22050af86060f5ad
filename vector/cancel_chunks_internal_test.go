package vector

import (
	"context"
	"errors"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/apache/arrow/go/v17/arrow"
	"github.com/apache/arrow/go/v17/arrow/array"
	"github.com/apache/arrow/go/v17/arrow/memory"
)

// bigRows is above cancelCheckRows, so that the chunked paths run with a
// ragged last chunk.
const bigRows = 3*cancelCheckRows + 1234

func randInt64s(mem memory.Allocator, r *rand.Rand, n, distinct int, nullEvery int) arrow.Array {
	b := array.NewInt64Builder(mem)
	defer b.Release()
	for i := range n {
		if nullEvery > 0 && i%nullEvery == 0 {
			b.AppendNull()
			continue
		}
		b.Append(int64(r.IntN(distinct)) - int64(distinct/2))
	}
	return b.NewArray()
}

func randStrings(mem memory.Allocator, r *rand.Rand, n int, nullEvery int) arrow.Array {
	b := array.NewStringBuilder(mem)
	defer b.Release()
	words := []string{"", "a", "ab", "abcdefgh", "abcdefghi", "abcdefghijklmnopq", "zz", "b"}
	for i := range n {
		if nullEvery > 0 && i%nullEvery == 0 {
			b.AppendNull()
			continue
		}
		b.Append(words[r.IntN(len(words))] + string(rune('a'+r.IntN(3))))
	}
	return b.NewArray()
}

// TestSortByCmpChunkedMatchesStableSort: the block-and-merge comparator
// sort gives the order of a brute-force stable sort, for sizes around the
// block boundaries.
func TestSortByCmpChunkedMatchesStableSort(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	r := rand.New(rand.NewPCG(1, 2))
	for _, n := range []int{0, 1, cancelCheckRows, cancelCheckRows + 1, 2 * cancelCheckRows, bigRows} {
		a := randInt64s(mem, r, n, 50, 7)
		c := randInt64s(mem, r, n, 1000, 0)
		keys := []rowCmp{newRowCmp(a, true, true), newRowCmp(c, false, false)}
		rows := make([]int32, n)
		for i := range rows {
			rows[i] = int32(i)
		}
		want := slices.Clone(rows)
		slices.SortStableFunc(want, func(x, y int32) int {
			for _, k := range keys {
				if v := k.cmp(x, y); v != 0 {
					return v
				}
			}
			return 0
		})
		if err := sortByCmp(context.Background(), nil, rows, keys); err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(rows, want) {
			t.Fatalf("n=%d: chunked sort differs from the stable sort", n)
		}
		a.Release()
		c.Release()
	}
}

// TestLongLoopsStopOnCancel: every chunked loop returns the context's
// error when it is cancelled, rather than finishing the work.
func TestLongLoopsStopOnCancel(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	r := rand.New(rand.NewPCG(3, 4))
	ints := randInt64s(mem, r, bigRows, 1<<30, 0)
	defer ints.Release()
	strs := randStrings(mem, r, bigRows, 0)
	defer strs.Release()
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	rows := make([]int32, bigRows)
	for i := range rows {
		rows[i] = int32(i)
	}
	check := func(what string, err error) {
		t.Helper()
		if !errors.Is(err, context.Canceled) {
			t.Errorf("%s: %v, want context.Canceled", what, err)
		}
	}
	check("comparator sort", sortByCmp(ctx, nil, slices.Clone(rows), []rowCmp{newRowCmp(ints, false, false)}))
	check("byte-key sort", sortBytesKeys(ctx, nil, strs, slices.Clone(rows), false, nil))
	_, err := sortFixedKeys(ctx, nil, ints, slices.Clone(rows), false)
	check("radix sort", err)
	sorted := make([]keyRow, bigRows) // one run of equal keys
	check("runs sort", sortRunsByCmp(ctx, nil, sorted, slices.Clone(rows), []rowCmp{newRowCmp(ints, false, false)}))
	for _, col := range []arrow.Array{ints, strs} {
		enc, err := NewKeyEncoder(mem, []arrow.DataType{col.DataType()})
		if err != nil {
			t.Fatal(err)
		}
		check("key encoding of "+TypeName(col.DataType()), enc.EncodeContext(ctx, []arrow.Array{col}))
	}
	schema := arrow.NewSchema([]arrow.Field{{Name: "v", Type: ints.DataType(), Nullable: true}}, nil)
	recs := []arrow.Record{array.NewRecord(schema, []arrow.Array{ints}, int64(ints.Len())),
		array.NewRecord(schema, []arrow.Array{ints}, int64(ints.Len()))}
	defer ReleaseRecords(recs)
	_, err = ConcatRecordsContext(ctx, mem, schema, recs)
	check("concatenation", err)
	sschema := arrow.NewSchema([]arrow.Field{{Name: "s", Type: strs.DataType(), Nullable: true}}, nil)
	srecs := []arrow.Record{array.NewRecord(sschema, []arrow.Array{strs}, int64(strs.Len())),
		array.NewRecord(sschema, []arrow.Array{strs}, int64(strs.Len()))}
	defer ReleaseRecords(srecs)
	_, err = ConcatRecordsContext(ctx, mem, sschema, srecs)
	check("string concatenation", err)
}

// TestEncodeContextMatchesEncode: chunked encoding gives the hashes, words
// and byte keys of one-shot encoding, with nulls, strings and structs,
// over sliced input.
func TestEncodeContextMatchesEncode(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	r := rand.New(rand.NewPCG(5, 6))
	n := bigRows + 10
	ints := randInt64s(mem, r, n, 1<<20, 5)
	defer ints.Release()
	strs := randStrings(mem, r, n, 3)
	defer strs.Release()
	st, err := array.NewStructArray([]arrow.Array{ints, strs}, []string{"i", "s"})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Release()
	slice := func(a arrow.Array) arrow.Array { return array.NewSlice(a, 7, int64(n)) }
	for _, cols := range [][]arrow.Array{{slice(ints)}, {slice(strs)}, {slice(ints), slice(strs)}, {slice(st)}} {
		types := make([]arrow.DataType, len(cols))
		for i, c := range cols {
			types[i] = c.DataType()
		}
		one, err := NewKeyEncoder(mem, types)
		if err != nil {
			t.Fatal(err)
		}
		chunked, err := NewKeyEncoder(mem, types)
		if err != nil {
			t.Fatal(err)
		}
		if err := one.Encode(cols); err != nil {
			t.Fatal(err)
		}
		if err := chunked.EncodeContext(context.Background(), cols); err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(one.Hashes(), chunked.Hashes()) {
			t.Fatalf("%v: hashes differ", types)
		}
		for i := range one.Len() {
			if one.IsFixed() && one.Fixed()[i] != chunked.Fixed()[i] ||
				!one.IsFixed() && string(one.Key(i)) != string(chunked.Key(i)) || one.HasNull(i) != chunked.HasNull(i) {
				t.Fatalf("%v: row %d differs", types, i)
			}
		}
		releaseArrays(cols)
	}
}

// TestConcatRecordsContextMatches: the chunked concatenation equals
// array.Concatenate for fixed-width columns with and without nulls, sliced
// parts, and leaves other types to it.
func TestConcatRecordsContextMatches(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	r := rand.New(rand.NewPCG(7, 8))
	schema := arrow.NewSchema([]arrow.Field{
		{Name: "i", Type: arrow.PrimitiveTypes.Int64, Nullable: true},
		{Name: "n", Type: arrow.PrimitiveTypes.Int64, Nullable: true},
		{Name: "s", Type: arrow.BinaryTypes.String, Nullable: true},
	}, nil)
	var recs []arrow.Record
	for k, size := range []int{cancelCheckRows - 3, 17, 2*cancelCheckRows + 5, 1} {
		nullEvery := 0
		if k%2 == 1 {
			nullEvery = 3
		}
		i := randInt64s(mem, r, size+10, 1<<30, 0)
		nn := randInt64s(mem, r, size+10, 100, nullEvery)
		s := randStrings(mem, r, size+10, 4)
		rec := array.NewRecord(schema, []arrow.Array{i, nn, s}, int64(size+10))
		recs = append(recs, rec.NewSlice(5, int64(size+5)))
		rec.Release()
		i.Release()
		nn.Release()
		s.Release()
	}
	defer ReleaseRecords(recs)
	want, err := ConcatRecords(mem, schema, recs)
	if err != nil {
		t.Fatal(err)
	}
	defer want.Release()
	got, err := ConcatRecordsContext(context.Background(), mem, schema, recs)
	if err != nil {
		t.Fatal(err)
	}
	defer got.Release()
	if !array.RecordEqual(want, got) {
		t.Fatal("chunked concatenation differs from array.Concatenate")
	}
	if got.Column(0).NullN() != 0 || got.Column(1).NullN() != want.Column(1).NullN() {
		t.Fatalf("null counts %d %d, want 0 %d", got.Column(0).NullN(), got.Column(1).NullN(), want.Column(1).NullN())
	}
}

// TestWidenInt32: the widened join key equals the int32 column value by
// value and null by null, over a sliced input of several chunks; a cancel
// after a few chunks stops it with nothing left allocated.
func TestWidenInt32(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	r := rand.New(rand.NewPCG(11, 12))
	b := array.NewInt32Builder(mem)
	for i := range bigRows + 9 {
		if i%7 == 0 {
			b.AppendNull()
			continue
		}
		b.Append(r.Int32() - 1<<30)
	}
	full := b.NewArray()
	b.Release()
	defer full.Release()
	in := array.NewSlice(full, 9, int64(full.Len())).(*array.Int32)
	defer in.Release()
	w, err := widenInt32(context.Background(), mem, in)
	if err != nil {
		t.Fatal(err)
	}
	got := w.(*array.Int64)
	if got.Len() != in.Len() || got.NullN() != in.NullN() {
		t.Fatalf("%d rows %d nulls, want %d %d", got.Len(), got.NullN(), in.Len(), in.NullN())
	}
	for i := range in.Len() {
		if in.IsNull(i) != got.IsNull(i) || !in.IsNull(i) && int64(in.Value(i)) != got.Value(i) {
			t.Fatalf("row %d: %v, want %v", i, got.ValueStr(i), in.ValueStr(i))
		}
	}
	w.Release()
	if _, err := widenInt32(newCountdownCtx(3), mem, in); !errors.Is(err, context.Canceled) {
		t.Fatalf("widening cancelled after 3 checks: %v", err)
	}
}
