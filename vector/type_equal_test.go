package vector

import (
	"testing"

	"github.com/apache/arrow/go/v17/arrow"
	"github.com/apache/arrow/go/v17/arrow/array"
	"github.com/apache/arrow/go/v17/arrow/memory"
)

// typesEqualCases are types TypesEqual must judge as arrow.TypeEqual does:
// each against every other, fresh instances of the same, and nesting.
func typesEqualCases() []arrow.DataType {
	ts := func(u arrow.TimeUnit, tz string) arrow.DataType { return &arrow.TimestampType{Unit: u, TimeZone: tz} }
	st := func(fs ...arrow.Field) arrow.DataType { return arrow.StructOf(fs...) }
	return []arrow.DataType{
		nil,
		arrow.Null, arrow.FixedWidthTypes.Boolean, arrow.PrimitiveTypes.Int8, arrow.PrimitiveTypes.Int32,
		arrow.PrimitiveTypes.Int64, &arrow.Int64Type{}, arrow.PrimitiveTypes.Uint64, arrow.PrimitiveTypes.Float64,
		arrow.BinaryTypes.String, &arrow.StringType{}, arrow.BinaryTypes.Binary, arrow.BinaryTypes.LargeString,
		arrow.FixedWidthTypes.Date32, arrow.FixedWidthTypes.Date64,
		ts(arrow.Microsecond, "UTC"), ts(arrow.Microsecond, "UTC"), ts(arrow.Microsecond, ""), ts(arrow.Millisecond, "UTC"),
		ts(arrow.Microsecond, "Europe/Paris"), Timestamp, TimestampNTZ,
		&arrow.Decimal128Type{Precision: 10, Scale: 2}, &arrow.Decimal128Type{Precision: 10, Scale: 3},
		&arrow.FixedSizeBinaryType{ByteWidth: 4}, &arrow.FixedSizeBinaryType{ByteWidth: 8},
		arrow.ListOf(arrow.PrimitiveTypes.Int64), arrow.ListOf(arrow.PrimitiveTypes.Int32),
		arrow.MapOf(arrow.BinaryTypes.String, arrow.PrimitiveTypes.Int64),
		WindowType,
		st(arrow.Field{Name: "start", Type: ts(arrow.Microsecond, "UTC"), Nullable: true}, arrow.Field{Name: "end", Type: ts(arrow.Microsecond, "UTC"), Nullable: true}),
		st(arrow.Field{Name: "start", Type: ts(arrow.Microsecond, "UTC")}, arrow.Field{Name: "end", Type: ts(arrow.Microsecond, "UTC"), Nullable: true}),
		st(arrow.Field{Name: "start", Type: ts(arrow.Microsecond, "")}, arrow.Field{Name: "end", Type: ts(arrow.Microsecond, "UTC"), Nullable: true}),
		st(arrow.Field{Name: "end", Type: ts(arrow.Microsecond, "UTC"), Nullable: true}, arrow.Field{Name: "start", Type: ts(arrow.Microsecond, "UTC"), Nullable: true}),
		st(arrow.Field{Name: "a", Type: arrow.PrimitiveTypes.Int64}),
		st(arrow.Field{Name: "a", Type: arrow.PrimitiveTypes.Int64, Metadata: arrow.NewMetadata([]string{"k"}, []string{"v"})}),
		st(arrow.Field{Name: "a", Type: arrow.PrimitiveTypes.Int64}, arrow.Field{Name: "a", Type: arrow.PrimitiveTypes.Int64}),
		st(arrow.Field{Name: "a", Type: st(arrow.Field{Name: "b", Type: arrow.BinaryTypes.String})}),
		st(arrow.Field{Name: "a", Type: st(arrow.Field{Name: "b", Type: arrow.BinaryTypes.Binary})}),
		st(),
		&arrow.DictionaryType{IndexType: arrow.PrimitiveTypes.Int32, ValueType: arrow.BinaryTypes.String},
		&arrow.DictionaryType{IndexType: arrow.PrimitiveTypes.Int8, ValueType: arrow.BinaryTypes.String},
	}
}

// TestTypesEqualMatchesArrow checks TypesEqual against arrow.TypeEqual
// (the oracle) on every pair of typesEqualCases, both ways.
func TestTypesEqualMatchesArrow(t *testing.T) {
	cases := typesEqualCases()
	for i, a := range cases {
		for j, b := range cases {
			if got, want := TypesEqual(a, b), arrow.TypeEqual(a, b); got != want {
				t.Errorf("TypesEqual(#%d %v, #%d %v) = %v, arrow.TypeEqual says %v", i, a, j, b, got, want)
			}
		}
	}
}

// TestKeyEncoderCheckAllocatesNothing encodes an epoch's keys shaped as
// a windowed aggregation's (an int64 and a window struct of timestamps)
// and checks that the encoder's check of the columns' types allocates
// nothing: with arrow.TypeEqual it compared the int64 and the window's
// name index with reflect.DeepEqual, a few allocations per key column
// per batch.
func TestKeyEncoderCheckAllocatesNothing(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	win := arrow.StructOf(WindowType.Fields()...) // another instance, as a fresh epoch's
	enc, err := NewKeyEncoder(mem, []arrow.DataType{arrow.PrimitiveTypes.Int64, WindowType, Timestamp, arrow.BinaryTypes.String})
	if err != nil {
		t.Fatal(err)
	}
	defer enc.Release()
	ib := array.NewInt64Builder(mem)
	defer ib.Release()
	sb := array.NewStructBuilder(mem, win)
	defer sb.Release()
	tb := array.NewTimestampBuilder(mem, Timestamp.(*arrow.TimestampType))
	defer tb.Release()
	strb := array.NewStringBuilder(mem)
	defer strb.Release()
	for i := range int64(8) {
		ib.Append(i)
		sb.Append(true)
		sb.FieldBuilder(0).(*array.TimestampBuilder).Append(arrow.Timestamp(i))
		sb.FieldBuilder(1).(*array.TimestampBuilder).Append(arrow.Timestamp(i + 10))
		tb.Append(arrow.Timestamp(i))
		strb.Append("k")
	}
	cols := []arrow.Array{ib.NewArray(), sb.NewArray(), tb.NewArray(), strb.NewArray()}
	defer func() {
		for _, c := range cols {
			c.Release()
		}
	}()
	if err := enc.Encode(cols); err != nil {
		t.Fatal(err)
	}
	if n := testing.AllocsPerRun(20, func() {
		if _, err := enc.check(cols); err != nil {
			t.Fatal(err)
		}
	}); n != 0 {
		t.Fatalf("KeyEncoder.check allocated %.0f times per batch, want 0", n)
	}
}
