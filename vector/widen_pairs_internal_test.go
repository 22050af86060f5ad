package vector

import (
	"context"
	"testing"

	"github.com/apache/arrow/go/v17/arrow"
	"github.com/apache/arrow/go/v17/arrow/array"
	"github.com/apache/arrow/go/v17/arrow/decimal128"
	"github.com/apache/arrow/go/v17/arrow/memory"
)

// TestCommonTypeWidensEveryNumericPair checks, for every pair of numeric
// types, that CommonType picks Spark's wider type (TypeCoercion's
// findWiderTypeForTwo: byte < short < int < bigint < float < double; an
// integral next to a decimal becomes DecimalType.forType of it, then the
// wider decimal; a decimal next to a float or double is a double) and that
// both operands, as a column and as a constant, convert to it with their
// values kept. IF(true, 1Y, 2S) failed with "cannot convert tinyint to
// smallint" when tinyint did not widen to smallint.
func TestCommonTypeWidensEveryNumericPair(t *testing.T) {
	dec := Decimal(10, 2)
	types := []arrow.DataType{Int8, Int16, Int32, Int64, Float32, Float64, dec}
	// want[i][j] is Spark's common type of types[i] and types[j].
	want := [][]arrow.DataType{
		{Int8, Int16, Int32, Int64, Float32, Float64, dec},
		{Int16, Int16, Int32, Int64, Float32, Float64, dec},
		{Int32, Int32, Int32, Int64, Float32, Float64, Decimal(12, 2)},
		{Int64, Int64, Int64, Int64, Float32, Float64, Decimal(22, 2)},
		{Float32, Float32, Float32, Float32, Float32, Float64, Float64},
		{Float64, Float64, Float64, Float64, Float64, Float64, Float64},
		{dec, dec, Decimal(12, 2), Decimal(22, 2), Float64, Float64, dec},
	}
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	for i, a := range types {
		for j, b := range types {
			got, ok := CommonType(a, b)
			if !ok || !arrow.TypeEqual(got, want[i][j]) {
				t.Errorf("CommonType(%s, %s) = %v, %v; want %s", TypeName(a), TypeName(b), got, ok, TypeName(want[i][j]))
				continue
			}
			for _, from := range []arrow.DataType{a, b} {
				checkWidenKeepsValues(t, mem, from, got)
			}
		}
	}
}

// checkWidenKeepsValues converts a column [1, NULL, -2] of type from, and
// the constant -2, to type to and checks the values.
func checkWidenKeepsValues(t *testing.T, mem memory.Allocator, from, to arrow.DataType) {
	t.Helper()
	col := numericColumn(mem, from)
	defer col.Release()
	schema := arrow.NewSchema([]arrow.Field{{Name: "x", Type: from, Nullable: true}}, nil)
	rec := array.NewRecord(schema, []arrow.Array{col}, int64(col.Len()))
	defer rec.Release()
	ev, err := Col("x").Bind(schema, mem)
	if err != nil {
		t.Fatal(err)
	}
	w, err := numericWiden(ev, to, mem, sqlText{}, sqlText{})
	if err != nil {
		t.Errorf("widen %s column to %s: %v", TypeName(from), TypeName(to), err)
		return
	}
	out, err := w.Eval(context.Background(), rec)
	if err != nil {
		t.Errorf("widen %s column to %s: %v", TypeName(from), TypeName(to), err)
		return
	}
	defer out.Release()
	if !arrow.TypeEqual(out.DataType(), to) || out.Len() != 3 || !out.IsNull(1) ||
		asFloat(ValueAt(out, 0), to) != 1 || asFloat(ValueAt(out, 2), to) != -2 {
		t.Errorf("widen %s column to %s = %v", TypeName(from), TypeName(to), out)
	}
	c, err := numericWiden(newConst(from, ValueAt(col, 2), mem), to, mem, sqlText{}, sqlText{})
	if err != nil {
		t.Errorf("widen %s constant to %s: %v", TypeName(from), TypeName(to), err)
		return
	}
	one, err := c.Eval(context.Background(), rec)
	if err != nil {
		t.Fatal(err)
	}
	defer one.Release()
	if !arrow.TypeEqual(one.DataType(), to) || asFloat(ValueAt(one, 0), to) != -2 {
		t.Errorf("widen %s constant to %s = %v", TypeName(from), TypeName(to), one)
	}
}

func numericColumn(mem memory.Allocator, dt arrow.DataType) arrow.Array {
	b := array.NewBuilder(mem, dt)
	defer b.Release()
	for _, v := range []int64{1, 0, -2} {
		if v == 0 {
			b.AppendNull()
			continue
		}
		switch bb := b.(type) {
		case *array.Int8Builder:
			bb.Append(int8(v))
		case *array.Int16Builder:
			bb.Append(int16(v))
		case *array.Int32Builder:
			bb.Append(int32(v))
		case *array.Int64Builder:
			bb.Append(v)
		case *array.Float32Builder:
			bb.Append(float32(v))
		case *array.Float64Builder:
			bb.Append(float64(v))
		case *array.Decimal128Builder:
			bb.Append(decimal128.FromI64(v * 100)) // scale 2
		}
	}
	return b.NewArray()
}

func asFloat(v any, dt arrow.DataType) float64 {
	switch x := v.(type) {
	case decimal128.Num:
		return decimalToFloat64(x, dt.(*arrow.Decimal128Type).Scale)
	case float64:
		return x
	}
	i, _ := toInt64(v)
	return float64(i)
}
