package vector

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"testing"

	"github.com/apache/arrow/go/v17/arrow"
	"github.com/apache/arrow/go/v17/arrow/array"
	"github.com/apache/arrow/go/v17/arrow/memory"
)

// tagType is an extension type over strings, for the concatenation tests.
type tagType struct{ arrow.ExtensionBase }

type tagArray struct{ array.ExtensionArrayBase }

func (a tagArray) ValueStr(i int) string { return a.Storage().ValueStr(i) }

func newTagType() *tagType {
	return &tagType{ExtensionBase: arrow.ExtensionBase{Storage: arrow.BinaryTypes.String}}
}
func (*tagType) ArrayType() reflect.Type { return reflect.TypeOf(tagArray{}) }
func (*tagType) ExtensionName() string   { return "arrowstream.test.tag" }
func (*tagType) Serialize() string       { return "" }
func (t *tagType) ExtensionEquals(o arrow.ExtensionType) bool {
	return o.ExtensionName() == t.ExtensionName()
}
func (t *tagType) Deserialize(arrow.DataType, string) (arrow.ExtensionType, error) {
	return newTagType(), nil
}

// otherKindsParts makes, for each of n sizes, one array of each kind
// concatOtherChunked copies (extension, null, fixed-size list, sparse
// and dense union), sliced by 3 rows at the front, with nulls where the
// kind has them.
func otherKindsParts(t *testing.T, mem memory.Allocator, sizes []int) map[string][]arrow.Array {
	t.Helper()
	out := map[string][]arrow.Array{}
	add := func(name string, a arrow.Array) {
		out[name] = append(out[name], array.NewSlice(a, 3, int64(a.Len())))
		a.Release()
	}
	for k, size := range sizes {
		n := size + 3
		sb := array.NewStringBuilder(mem)
		ib := array.NewInt64Builder(mem)
		codes := array.NewInt8Builder(mem)
		offs := array.NewInt32Builder(mem)
		fl := array.NewFixedSizeListBuilder(mem, 3, arrow.PrimitiveTypes.Int64)
		var nInts, nStrs int32
		for i := range n {
			if (i+k)%5 == 0 {
				sb.AppendNull()
				fl.AppendNull() // appends three null values too
			} else {
				sb.Append(fmt.Sprint("v", i%17))
				fl.Append(true)
				for j := range 3 {
					fl.ValueBuilder().(*array.Int64Builder).Append(int64(i*3 + j))
				}
			}
			ib.Append(int64(i))
			codes.Append(int8(i % 2))
			if i%2 == 0 {
				offs.Append(nInts)
				nInts++
			} else {
				offs.Append(nStrs)
				nStrs++
			}
		}
		strs, ints := sb.NewArray(), ib.NewArray()
		add("ext", array.NewExtensionArrayWithStorage(newTagType(), strs))
		add("null", array.NewNull(n))
		fla := fl.NewArray()
		if fla.Len() != n {
			t.Fatalf("fixed-size list of %d rows, want %d", fla.Len(), n)
		}
		add("fsl", fla)
		cs, os := codes.NewArray(), offs.NewArray()
		su, err := array.NewSparseUnionFromArraysWithFields(cs, []arrow.Array{ints, strs}, []string{"i", "s"})
		if err != nil {
			t.Fatal(err)
		}
		add("sparse", su)
		di, ds := array.NewSlice(ints, 0, int64(nInts)), array.NewSlice(strs, 0, int64(nStrs))
		du, err := array.NewDenseUnionFromArraysWithFields(cs, os, []arrow.Array{di, ds}, []string{"i", "s"})
		if err != nil {
			t.Fatal(err)
		}
		add("dense", du)
		for _, a := range []arrow.Array{strs, ints, cs, os, di, ds} {
			a.Release()
		}
		for _, b := range []interface{ Release() }{sb, ib, codes, offs, fl} {
			b.Release()
		}
	}
	return out
}

// TestConcatOtherKinds: the chunked concatenation of extension, null,
// fixed-size list and (sparse and dense) union columns holds the parts'
// values in order (and equals array.Concatenate, which does not take
// unions) over sliced parts, and a cancel after a few context
// checks stops it (every kind but null, which copies nothing) and leaves
// nothing allocated.
func TestConcatOtherKinds(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	kinds := otherKindsParts(t, mem, []int{2 * cancelCheckRows, 17, cancelCheckRows + 5})
	defer func() {
		for _, parts := range kinds {
			releaseArrays(parts)
		}
	}()
	for _, name := range []string{"ext", "null", "fsl", "sparse", "dense"} {
		parts := kinds[name]
		n := 0
		for _, p := range parts {
			n += p.Len()
		}
		got, err := concatColumnContext(context.Background(), mem, parts[0].DataType(), parts, n)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		// The model: the parts' values one after the other (array.Concatenate
		// does not take unions).
		row := 0
		for _, p := range parts {
			for i := range p.Len() {
				if g, w := got.ValueStr(row), p.ValueStr(i); g != w || got.IsNull(row) != p.IsNull(i) {
					t.Fatalf("%s: row %d is %s, want %s", name, row, g, w)
				}
				row++
			}
		}
		if row != got.Len() {
			t.Errorf("%s: %d rows, want %d", name, got.Len(), row)
		}
		if name != "sparse" && name != "dense" {
			want, err := array.Concatenate(parts, mem)
			if err != nil {
				t.Fatalf("%s: %v", name, err)
			}
			if !array.Equal(got, want) {
				t.Errorf("%s: the chunked concatenation differs from array.Concatenate", name)
			}
			want.Release()
		}
		got.Release()
		if name == "null" {
			continue
		}
		col, err := concatColumnContext(newCountdownCtx(3), mem, parts[0].DataType(), parts, n)
		if err == nil {
			col.Release()
			t.Errorf("%s: a cancel after three context checks did not stop the concatenation", name)
		} else if !errors.Is(err, context.Canceled) {
			t.Errorf("%s: %v, want context.Canceled", name, err)
		}
	}
}
