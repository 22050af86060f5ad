package server

import (
	"strings"
	"testing"

	"github.com/apache/arrow/go/v17/arrow"
	"github.com/apache/arrow/go/v17/arrow/array"
	"github.com/apache/arrow/go/v17/arrow/memory"

	"github.com/arrowstream/arrowstream/internal/testutil/poisonmem"
)

// TestValidateData builds array data whose buffers lie (arrow-go builds
// such data without complaint; arrays over it panic when read) and checks
// that validateData names the problem, and that well-formed data of every
// accepted layout, sliced too, passes.
func TestValidateData(t *testing.T) {
	mem := poisonmem.New()
	defer mem.AssertSize(t, 0)
	buf := func(b []byte) *memory.Buffer { return memory.NewBufferBytes(b) }
	i32 := func(v ...int32) *memory.Buffer { return buf(arrow.Int32Traits.CastToBytes(v)) }
	i64 := func(v ...int64) *memory.Buffer { return buf(arrow.Int64Traits.CastToBytes(v)) }
	data := func(dt arrow.DataType, n int, bufs []*memory.Buffer, children []arrow.ArrayData, nulls int) arrow.ArrayData {
		return array.NewData(dt, n, bufs, children, nulls, 0)
	}
	strs := data(arrow.BinaryTypes.String, 2, []*memory.Buffer{nil, i32(0, 1, 2), buf([]byte("ab"))}, nil, 0)
	defer strs.Release()
	dict := data(&arrow.DictionaryType{IndexType: arrow.PrimitiveTypes.Int32, ValueType: arrow.BinaryTypes.String}, 2,
		[]*memory.Buffer{nil, i32(0, 2)}, nil, 0)
	dict.(*array.Data).SetDictionary(strs)
	defer dict.Release()
	for _, tc := range []struct {
		name string
		d    arrow.ArrayData
		want string
	}{
		{"short int64 values", data(arrow.PrimitiveTypes.Int64, 3, []*memory.Buffer{nil, i64(1)}, nil, 0), "values buffer of 8 bytes, the array's length needs 24"},
		{"no values", data(arrow.PrimitiveTypes.Float64, 1, []*memory.Buffer{nil, nil}, nil, 0), "no values buffer"},
		{"short booleans", data(arrow.FixedWidthTypes.Boolean, 9, []*memory.Buffer{nil, buf([]byte{1})}, nil, 0), "values buffer of 1 bytes, the array's length needs 2"},
		{"short bitmap", data(arrow.PrimitiveTypes.Int64, 9, []*memory.Buffer{buf([]byte{0}), i64(make([]int64, 9)...)}, nil, 8), "validity bitmap of 1 bytes, 9 rows need 2"},
		{"nulls without bitmap", data(arrow.PrimitiveTypes.Int32, 1, []*memory.Buffer{nil, i32(1)}, nil, 1), "null count 1 without a validity bitmap"},
		{"short offsets", data(arrow.BinaryTypes.String, 3, []*memory.Buffer{nil, i32(0, 1), buf([]byte("a"))}, nil, 0), "offsets buffer of 8 bytes, the array's length needs 16"},
		{"offset past data", data(arrow.BinaryTypes.Binary, 1, []*memory.Buffer{nil, i32(0, 5), buf([]byte("a"))}, nil, 0), "offset 5 is beyond the data buffer's 1"},
		{"negative offset", data(arrow.BinaryTypes.LargeString, 1, []*memory.Buffer{nil, i64(-1, 0), nil}, nil, 0), "row 0: negative offset -1"},
		{"list past child", data(arrow.ListOf(arrow.PrimitiveTypes.Int64), 1, []*memory.Buffer{nil, i32(0, 4)},
			[]arrow.ArrayData{data(arrow.PrimitiveTypes.Int64, 2, []*memory.Buffer{nil, i64(1, 2)}, nil, 0)}, 0), "offset 4 is beyond the child's 2"},
		{"bad list element", data(arrow.ListOf(arrow.BinaryTypes.String), 1, []*memory.Buffer{nil, i32(0, 1)},
			[]arrow.ArrayData{data(arrow.BinaryTypes.String, 1, []*memory.Buffer{nil, i32(0, 1), buf([]byte{0xff})}, nil, 0)}, 0), "list element: row 0: invalid UTF-8"},
		{"short struct field", data(arrow.StructOf(arrow.Field{Name: "a", Type: arrow.PrimitiveTypes.Int64}), 2, []*memory.Buffer{nil},
			[]arrow.ArrayData{data(arrow.PrimitiveTypes.Int64, 1, []*memory.Buffer{nil, i64(1)}, nil, 0)}, 0), `field "a" has 1 rows, the struct 2`},
		{"dictionary index out of range", dict, "row 1: dictionary index 2 outside the dictionary's 2 values"},
		{"map", data(arrow.MapOf(arrow.BinaryTypes.String, arrow.PrimitiveTypes.Int64), 0, []*memory.Buffer{nil, nil}, nil, 0), "columns are not accepted from clients"},
	} {
		err := validateData(tc.d)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: %v, want %q", tc.name, err, tc.want)
		}
	}

	// Well-formed data of every accepted layout passes, whole and sliced.
	rec := allLayoutsRecord(t, mem)
	defer rec.Release()
	if err := validateRecord(rec); err != nil {
		t.Fatalf("well-formed record rejected: %v", err)
	}
	sl := rec.NewSlice(3, 8)
	defer sl.Release()
	if err := validateRecord(sl); err != nil {
		t.Fatalf("well-formed slice rejected: %v", err)
	}
}

// allLayoutsRecord builds 10 rows (every third all null) with a column of
// each layout the server accepts from clients: boolean, string, list,
// struct of decimal, timestamp, dictionary.
func allLayoutsRecord(t testing.TB, mem memory.Allocator) arrow.Record {
	b := array.NewRecordBuilder(mem, arrow.NewSchema([]arrow.Field{
		{Name: "b", Type: arrow.FixedWidthTypes.Boolean, Nullable: true},
		{Name: "s", Type: arrow.BinaryTypes.String, Nullable: true},
		{Name: "l", Type: arrow.ListOf(arrow.PrimitiveTypes.Int64), Nullable: true},
		{Name: "st", Type: arrow.StructOf(arrow.Field{Name: "d", Type: &arrow.Decimal128Type{Precision: 10, Scale: 2}, Nullable: true}), Nullable: true},
		{Name: "ts", Type: arrow.FixedWidthTypes.Timestamp_us, Nullable: true},
		{Name: "dict", Type: &arrow.DictionaryType{IndexType: arrow.PrimitiveTypes.Int16, ValueType: arrow.BinaryTypes.String}, Nullable: true},
	}, nil))
	defer b.Release()
	for i := range 10 {
		if i%3 == 0 {
			for _, f := range b.Fields() {
				f.AppendNull()
			}
			continue
		}
		b.Field(0).(*array.BooleanBuilder).Append(i%2 == 0)
		b.Field(1).(*array.StringBuilder).Append(strings.Repeat("ü", i))
		lb := b.Field(2).(*array.ListBuilder)
		lb.Append(true)
		lb.ValueBuilder().(*array.Int64Builder).AppendValues([]int64{1, 2}, nil)
		sb := b.Field(3).(*array.StructBuilder)
		sb.Append(true)
		sb.FieldBuilder(0).AppendNull()
		b.Field(4).(*array.TimestampBuilder).Append(arrow.Timestamp(i))
		if err := b.Field(5).(*array.BinaryDictionaryBuilder).AppendString([]string{"x", "y"}[i%2]); err != nil {
			t.Fatal(err)
		}
	}
	return b.NewRecord()
}
