package vector

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/apache/arrow/go/v17/arrow"
	"github.com/apache/arrow/go/v17/arrow/array"
	"github.com/apache/arrow/go/v17/arrow/memory"
)

// concatTypesSchema has a column of every type concatColumnContext copies
// itself: boolean, large string, dictionaries (shared and differing
// dictionaries, two index widths), struct, list, map, list of structs.
var concatTypesSchema = arrow.NewSchema([]arrow.Field{
	{Name: "b", Type: arrow.FixedWidthTypes.Boolean, Nullable: true},
	{Name: "ls", Type: arrow.BinaryTypes.LargeString, Nullable: true},
	{Name: "dsame", Type: &arrow.DictionaryType{IndexType: arrow.PrimitiveTypes.Int32, ValueType: arrow.BinaryTypes.String}, Nullable: true},
	{Name: "ddiff", Type: &arrow.DictionaryType{IndexType: arrow.PrimitiveTypes.Int8, ValueType: arrow.BinaryTypes.String}, Nullable: true},
	{Name: "st", Type: arrow.StructOf(arrow.Field{Name: "i", Type: arrow.PrimitiveTypes.Int64, Nullable: true},
		arrow.Field{Name: "s", Type: arrow.BinaryTypes.String, Nullable: true}), Nullable: true},
	{Name: "l", Type: arrow.ListOf(arrow.PrimitiveTypes.Int64), Nullable: true},
	{Name: "m", Type: arrow.MapOf(arrow.BinaryTypes.String, arrow.PrimitiveTypes.Int64), Nullable: true},
	{Name: "ll", Type: arrow.LargeListOf(arrow.StructOf(arrow.Field{Name: "x", Type: arrow.FixedWidthTypes.Boolean, Nullable: true})), Nullable: true},
}, nil)

// concatTypesRecord is a record of concatTypesSchema with n rows, nulls
// every nullEvery rows (0: none); part numbers its differing dictionary.
func concatTypesRecord(t *testing.T, mem memory.Allocator, r *rand.Rand, n, nullEvery, part int, shared arrow.Array) arrow.Record {
	t.Helper()
	null := func(i int) bool { return nullEvery > 0 && i%nullEvery == 0 }
	f := concatTypesSchema.Fields()
	bb := array.NewRecordBuilder(mem, arrow.NewSchema([]arrow.Field{f[0], f[1], f[4], f[5], f[6], f[7]}, nil))
	defer bb.Release()
	words := []string{"", "a", "bb", "ccc", "dddd", "eeeee"}
	for i := range n {
		if null(i) {
			for _, f := range bb.Fields()[:2] {
				f.AppendNull()
			}
		} else {
			bb.Field(0).(*array.BooleanBuilder).Append(r.IntN(2) == 0)
			bb.Field(1).(*array.LargeStringBuilder).Append(words[r.IntN(len(words))])
		}
		st := bb.Field(2).(*array.StructBuilder)
		if null(i + 1) {
			st.AppendNull()
		} else {
			st.Append(true)
			st.FieldBuilder(0).(*array.Int64Builder).Append(r.Int64N(1000))
			if null(i + 2) {
				st.FieldBuilder(1).AppendNull()
			} else {
				st.FieldBuilder(1).(*array.StringBuilder).Append(words[r.IntN(len(words))])
			}
		}
		lb := bb.Field(3).(*array.ListBuilder)
		mb := bb.Field(4).(*array.MapBuilder)
		llb := bb.Field(5).(*array.LargeListBuilder)
		if null(i + 3) {
			lb.AppendNull()
			mb.AppendNull()
			llb.AppendNull()
			continue
		}
		lb.Append(true)
		mb.Append(true)
		llb.Append(true)
		for k := range r.IntN(4) {
			lb.ValueBuilder().(*array.Int64Builder).Append(int64(k * i))
			mb.KeyBuilder().(*array.StringBuilder).Append(fmt.Sprint("k", k))
			mb.ItemBuilder().(*array.Int64Builder).Append(int64(i))
			sb := llb.ValueBuilder().(*array.StructBuilder)
			sb.Append(true)
			sb.FieldBuilder(0).(*array.BooleanBuilder).Append(k%2 == 0)
		}
	}
	rec := bb.NewRecord()
	defer rec.Release()
	cols := rec.Columns()
	// The dictionary columns: indices over a shared dictionary, and over
	// one of this part's own (a rotation of the words, so unifying them
	// transposes the indices).
	ib := array.NewInt32Builder(mem)
	i8 := array.NewInt8Builder(mem)
	defer ib.Release()
	defer i8.Release()
	for i := range n {
		if null(i + 4) {
			ib.AppendNull()
			i8.AppendNull()
			continue
		}
		ib.Append(int32(r.IntN(shared.Len())))
		i8.Append(int8(r.IntN(len(words))))
	}
	sb := array.NewStringBuilder(mem)
	defer sb.Release()
	for k := range words {
		sb.Append(words[(k+part)%len(words)] + "!")
	}
	own := sb.NewArray()
	defer own.Release()
	idx32, idx8 := ib.NewArray(), i8.NewArray()
	defer idx32.Release()
	defer idx8.Release()
	dsame := array.NewDictionaryArray(concatTypesSchema.Field(2).Type, idx32, shared)
	ddiff := array.NewDictionaryArray(concatTypesSchema.Field(3).Type, idx8, own)
	defer dsame.Release()
	defer ddiff.Release()
	all := []arrow.Array{cols[0], cols[1], dsame, ddiff, cols[2], cols[3], cols[4], cols[5]}
	return array.NewRecord(concatTypesSchema, all, int64(n))
}

// concatTypesParts makes sliced parts of concatTypesSchema of the given
// sizes, alternately with and without nulls.
func concatTypesParts(t *testing.T, mem memory.Allocator, sizes []int) []arrow.Record {
	r := rand.New(rand.NewPCG(9, 10))
	sb := array.NewStringBuilder(mem)
	for _, w := range []string{"x", "y", "z"} {
		sb.Append(w)
	}
	shared := sb.NewArray()
	sb.Release()
	defer shared.Release()
	var recs []arrow.Record
	for k, size := range sizes {
		nullEvery := 0
		if k%2 == 0 {
			nullEvery = 5
		}
		rec := concatTypesRecord(t, mem, r, size+10, nullEvery, k, shared)
		recs = append(recs, rec.NewSlice(3, int64(size+3)))
		rec.Release()
	}
	return recs
}

// TestConcatRecordsContextAllTypes: the chunked concatenation of every
// type it copies itself equals ConcatRecords (array.Concatenate), over
// sliced parts with and without nulls, and releases everything.
func TestConcatRecordsContextAllTypes(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	recs := concatTypesParts(t, mem, []int{cancelCheckRows - 3, 17, cancelCheckRows + 5, 1, 0})
	defer ReleaseRecords(recs)
	want, err := ConcatRecords(mem, concatTypesSchema, recs)
	if err != nil {
		t.Fatal(err)
	}
	defer want.Release()
	got, err := ConcatRecordsContext(context.Background(), mem, concatTypesSchema, recs)
	if err != nil {
		t.Fatal(err)
	}
	defer got.Release()
	if got.NumRows() != want.NumRows() {
		t.Fatalf("%d rows, want %d", got.NumRows(), want.NumRows())
	}
	for c := range want.NumCols() {
		w, g := want.Column(int(c)), got.Column(int(c))
		if g.NullN() != w.NullN() {
			t.Fatalf("column %s: %d nulls, want %d", concatTypesSchema.Field(int(c)).Name, g.NullN(), w.NullN())
		}
		if !array.Equal(w, g) {
			// Dictionaries may differ in layout: compare the values.
			if wd, ok := w.(*array.Dictionary); ok {
				gd := g.(*array.Dictionary)
				for i := range wd.Len() {
					if wd.IsNull(i) != gd.IsNull(i) || !wd.IsNull(i) &&
						wd.Dictionary().(*array.String).Value(wd.GetValueIndex(i)) != gd.Dictionary().(*array.String).Value(gd.GetValueIndex(i)) {
						t.Fatalf("column %s row %d differs", concatTypesSchema.Field(int(c)).Name, i)
					}
				}
				continue
			}
			t.Fatalf("column %s differs from array.Concatenate", concatTypesSchema.Field(int(c)).Name)
		}
	}
}

// TestConcatAllTypesStopOnCancel: a cancel in the middle of concatenating
// each type (after a few context checks) stops it with context.Canceled
// and leaves nothing allocated.
func TestConcatAllTypesStopOnCancel(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	recs := concatTypesParts(t, mem, []int{2 * cancelCheckRows, cancelCheckRows, 2 * cancelCheckRows})
	defer ReleaseRecords(recs)
	parts := make([]arrow.Array, len(recs))
	n := 0
	for _, r := range recs {
		n += int(r.NumRows())
	}
	for c, f := range concatTypesSchema.Fields() {
		for i, r := range recs {
			parts[i] = r.Column(c)
		}
		stopped := false
		for checks := int64(0); checks < 64; checks++ {
			col, err := concatColumnContext(newCountdownCtx(checks), mem, f.Type, parts, n)
			if err == nil {
				col.Release()
				break
			}
			if !errors.Is(err, context.Canceled) {
				t.Fatalf("%s: %v, want context.Canceled", f.Name, err)
			}
			stopped = checks > 1
		}
		if !stopped {
			t.Errorf("%s: no cancel after the first two context checks stopped the concatenation", f.Name)
		}
	}
}
