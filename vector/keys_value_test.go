package vector_test

import (
	"bytes"
	"fmt"
	"math"
	"testing"

	"github.com/apache/arrow/go/v17/arrow"
	"github.com/apache/arrow/go/v17/arrow/array"
	"github.com/apache/arrow/go/v17/arrow/memory"

	"github.com/arrowstream/arrowstream/vector"
)

// A value encoder keeps every float's bits through encode and decode (-0.0,
// NaN payloads, FLOAT, inside structs and arrays), where the key encoder
// folds them for grouping; both have one layout, so either decodes the
// other's bytes.
func TestValueEncoderKeepsFloatBits(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	negZero, nan := math.Copysign(0, -1), math.Float64frombits(0x7ff8000000000123)
	f32 := math.Float32frombits(0xffc00042)
	elem := arrow.StructOf(arrow.Field{Name: "d", Type: arrow.PrimitiveTypes.Float64, Nullable: true},
		arrow.Field{Name: "f", Type: arrow.PrimitiveTypes.Float32, Nullable: true})
	types := []arrow.DataType{arrow.PrimitiveTypes.Float64, arrow.ListOf(elem)}
	db := array.NewFloat64Builder(mem)
	db.AppendValues([]float64{negZero, nan, math.Inf(-1)}, nil)
	lb := array.NewListBuilder(mem, elem)
	sb := lb.ValueBuilder().(*array.StructBuilder)
	for _, row := range [][]float64{{negZero, nan}, {}, {math.Inf(1)}} {
		lb.Append(true)
		for _, v := range row {
			sb.Append(true)
			sb.FieldBuilder(0).(*array.Float64Builder).Append(v)
			sb.FieldBuilder(1).(*array.Float32Builder).Append(f32)
		}
	}
	cols := []arrow.Array{db.NewArray(), lb.NewArray()}
	db.Release()
	lb.Release()
	defer cols[0].Release()
	defer cols[1].Release()
	for _, exact := range []bool{true, false} {
		newEnc := vector.NewKeyEncoder
		if exact {
			newEnc = vector.NewValueEncoder
		}
		enc, err := newEnc(mem, types)
		if err != nil {
			t.Fatal(err)
		}
		if err := enc.Encode(cols); err != nil {
			t.Fatal(err)
		}
		keys := make([][]byte, enc.Len())
		for i := range keys {
			keys[i] = append([]byte(nil), enc.Key(i)...)
		}
		if exact == bytes.Equal(keys[0][:9], []byte{1, 0, 0, 0, 0, 0, 0, 0, 0}) {
			t.Errorf("exact=%v: -0.0 encodes as %x", exact, keys[0][:9])
		}
		back, err := enc.DecodeKeys(mem, keys)
		enc.Release()
		if err != nil {
			t.Fatal(err)
		}
		got := fmt.Sprint(floatBits(back[0]), floatBits(back[1].(*array.List).ListValues().(*array.Struct).Field(0)),
			floatBits(back[1].(*array.List).ListValues().(*array.Struct).Field(1)))
		want := fmt.Sprint(floatBits(cols[0]), floatBits(cols[1].(*array.List).ListValues().(*array.Struct).Field(0)),
			floatBits(cols[1].(*array.List).ListValues().(*array.Struct).Field(1)))
		if exact && got != want {
			t.Errorf("value encoder changed bits: got %s, want %s", got, want)
		}
		if !exact && got == want {
			t.Errorf("key encoder kept -0.0 and NaN payloads: %s", got)
		}
		for _, a := range back {
			a.Release()
		}
	}
}

func floatBits(a arrow.Array) []string {
	var out []string
	switch x := a.(type) {
	case *array.Float64:
		for _, v := range x.Float64Values() {
			out = append(out, fmt.Sprintf("%016x", math.Float64bits(v)))
		}
	case *array.Float32:
		for _, v := range x.Float32Values() {
			out = append(out, fmt.Sprintf("%08x", math.Float32bits(v)))
		}
	}
	return out
}
