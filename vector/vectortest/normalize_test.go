package vectortest

import (
	"math"
	"reflect"
	"testing"
	"time"

	"github.com/apache/arrow/go/v17/arrow"
	"github.com/apache/arrow/go/v17/arrow/array"
	"github.com/apache/arrow/go/v17/arrow/decimal128"
)

// normalizeRecord builds one row of every type the normalizer treats
// apart: int32, float32, timestamp, date32, decimal(4,2), list<int32>,
// struct<s: binary>.
func normalizeRecord(t *testing.T) arrow.Record {
	mem := NewAllocator(t)
	schema := arrow.NewSchema([]arrow.Field{
		{Name: "i", Type: arrow.PrimitiveTypes.Int32},
		{Name: "f", Type: arrow.PrimitiveTypes.Float32},
		{Name: "ts", Type: &arrow.TimestampType{Unit: arrow.Microsecond, TimeZone: "UTC"}},
		{Name: "d", Type: arrow.FixedWidthTypes.Date32},
		{Name: "dec", Type: &arrow.Decimal128Type{Precision: 4, Scale: 2}},
		{Name: "l", Type: arrow.ListOf(arrow.PrimitiveTypes.Int32)},
		{Name: "st", Type: arrow.StructOf(arrow.Field{Name: "s", Type: arrow.BinaryTypes.Binary, Nullable: true})},
	}, nil)
	b := array.NewRecordBuilder(mem, schema)
	defer b.Release()
	b.Field(0).(*array.Int32Builder).Append(7)
	b.Field(1).(*array.Float32Builder).Append(1.5)
	b.Field(2).(*array.TimestampBuilder).Append(arrow.Timestamp(1_500_000))
	b.Field(3).(*array.Date32Builder).Append(arrow.Date32(2))
	b.Field(4).(*array.Decimal128Builder).Append(decimal128.FromI64(1230))
	lb := b.Field(5).(*array.ListBuilder)
	lb.Append(true)
	lb.ValueBuilder().(*array.Int32Builder).AppendValues([]int32{1, 2}, nil)
	sb := b.Field(6).(*array.StructBuilder)
	sb.Append(true)
	sb.FieldBuilder(0).(*array.BinaryBuilder).Append([]byte("x"))
	return b.NewRecord()
}

func TestNormalizerForms(t *testing.T) {
	rec := normalizeRecord(t)
	defer rec.Release()
	common := []any{int64(7), float64(1.5)}
	tail := []any{"12.30", []any{int64(1), int64(2)}, []any{"x"}}

	counts := Rows[Row](Normalizer{}, rec)
	want := Row(append(append(append([]any{}, common...), int64(1_500_000), int64(2)), tail...))
	if len(counts) != 1 || !reflect.DeepEqual(counts[0], want) {
		t.Errorf("without times: %#v, want %#v", counts, want)
	}
	if got := RowsOf(rec); !reflect.DeepEqual(got, counts) {
		t.Errorf("RowsOf = %#v, want the Normalizer{} rows %#v", got, counts)
	}

	times := Rows[[]any](Normalizer{Times: true}, rec)
	wantTimes := append(append(append([]any{}, common...),
		time.Date(1970, 1, 1, 0, 0, 1, 500_000_000, time.UTC), time.Date(1970, 1, 3, 0, 0, 0, 0, time.UTC)), tail...)
	if len(times) != 1 || !reflect.DeepEqual(times[0], wantTimes) {
		t.Errorf("with times: %#v, want %#v", times, wantTimes)
	}
	if got := (Normalizer{Times: true}).Value(nil, rec.Schema().Field(2).Type); got != nil {
		t.Errorf("a null timestamp is %#v", got)
	}
}

func TestFloatsEqual(t *testing.T) {
	nan := math.NaN()
	cases := []struct {
		a, b float64
		want bool
	}{
		{1, 1, true},
		{0.1 + 0.2, 0.3, true},
		{1, 1.000001, false},
		{nan, nan, true},
		{nan, 1, false},
		{0, 1e-300, false},
	}
	for _, c := range cases {
		if got := FloatsEqual(c.a, c.b); got != c.want {
			t.Errorf("FloatsEqual(%v, %v) = %v, want %v", c.a, c.b, got, c.want)
		}
	}
}

func TestValueFormat(t *testing.T) {
	v := []any{nil, "a\"b", int64(3), time.Date(2024, 5, 1, 12, 0, 1, 500_000_000, time.UTC), []any{1.5, nil}}
	for _, c := range []struct {
		f    ValueFormat
		want string
	}{
		{ValueFormat{Open: "{", Close: "}"}, `{NULL, "a\"b", 3, 2024-05-01T12:00:01.5Z, {1.5, NULL}}`},
		{ValueFormat{Open: "[", Close: "]"}, `[NULL, "a\"b", 3, 2024-05-01T12:00:01.5Z, [1.5, NULL]]`},
	} {
		if got := c.f.Format(v); got != c.want {
			t.Errorf("%+v: %s, want %s", c.f, got, c.want)
		}
	}
}
