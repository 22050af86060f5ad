package sparksql

import (
	"math"
	"math/big"
	"testing"
	"time"

	"github.com/apache/arrow/go/v17/arrow"
	"github.com/apache/arrow/go/v17/arrow/array"
	"github.com/apache/arrow/go/v17/arrow/memory"
)

func TestJavaDouble(t *testing.T) {
	for _, c := range []struct {
		v    float64
		bits int
		want string
	}{
		{1, 64, "1.0"}, {100, 64, "100.0"}, {-2.5, 64, "-2.5"}, {0.001, 64, "0.001"},
		{0.0001, 64, "1.0E-4"}, {1e7, 64, "1.0E7"}, {9999999, 64, "9999999.0"},
		{12345678.9, 64, "1.23456789E7"}, {1.5e-300, 64, "1.5E-300"}, {1e21, 64, "1.0E21"},
		{math.NaN(), 64, "NaN"}, {math.Inf(1), 64, "Infinity"}, {math.Inf(-1), 64, "-Infinity"},
		{0, 64, "0.0"}, {math.Copysign(0, -1), 64, "-0.0"},
		{float64(float32(1.1)), 32, "1.1"}, {float64(float32(3.4e38)), 32, "3.4E38"},
		{math.Nextafter(0.3, 1), 64, "0.30000000000000004"},
	} {
		if got := JavaDouble(c.v, c.bits); got != c.want {
			t.Errorf("JavaDouble(%v, %d) = %s, want %s", c.v, c.bits, got, c.want)
		}
	}
}

func TestPlainDecimal(t *testing.T) {
	for _, c := range []struct {
		unscaled int64
		scale    int32
		want     string
	}{
		{123, 2, "1.23"}, {-5, 3, "-0.005"}, {0, 4, "0.0000"}, {12, -2, "1200"},
		{7, 0, "7"}, {-120, 1, "-12.0"},
	} {
		if got := PlainDecimal(big.NewInt(c.unscaled), c.scale); got != c.want {
			t.Errorf("PlainDecimal(%d, %d) = %s, want %s", c.unscaled, c.scale, got, c.want)
		}
	}
}

func TestDayTimeInterval(t *testing.T) {
	for _, c := range []struct {
		micros int64
		want   string
	}{
		{3 * 86400 * 1e6, "3 00:00:00.000000000"},
		{-(86400*1e6 + 3661*1e6 + 1), "-1 01:01:01.000001000"},
		{0, "0 00:00:00.000000000"},
		{math.MinInt64, "-106751991 04:00:54.775808000"},
	} {
		if got := DayTimeInterval(c.micros); got != c.want {
			t.Errorf("DayTimeInterval(%d) = %s, want %s", c.micros, got, c.want)
		}
	}
}

func TestFormatterRow(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	la, err := time.LoadLocation("America/Los_Angeles")
	if err != nil {
		t.Skip("no time zone database:", err)
	}
	schema := arrow.NewSchema([]arrow.Field{
		{Name: "s", Type: arrow.BinaryTypes.String, Nullable: true},
		{Name: "l", Type: arrow.ListOf(arrow.BinaryTypes.String), Nullable: true},
		{Name: "m", Type: arrow.MapOf(arrow.PrimitiveTypes.Int32, arrow.BinaryTypes.String), Nullable: true},
		{Name: "st", Type: arrow.StructOf(arrow.Field{Name: "a", Type: arrow.PrimitiveTypes.Int64, Nullable: true}, arrow.Field{Name: "b", Type: arrow.FixedWidthTypes.Boolean, Nullable: true}), Nullable: true},
		{Name: "ts", Type: &arrow.TimestampType{Unit: arrow.Microsecond, TimeZone: "UTC"}, Nullable: true},
		{Name: "d", Type: arrow.FixedWidthTypes.Date32, Nullable: true},
		{Name: "bin", Type: arrow.BinaryTypes.Binary, Nullable: true},
	}, nil)
	b := array.NewRecordBuilder(mem, schema)
	defer b.Release()
	b.Field(0).(*array.StringBuilder).Append("top")
	lb := b.Field(1).(*array.ListBuilder)
	lb.Append(true)
	lb.ValueBuilder().(*array.StringBuilder).Append("x")
	lb.ValueBuilder().(*array.StringBuilder).AppendNull()
	mb := b.Field(2).(*array.MapBuilder)
	mb.Append(true)
	mb.KeyBuilder().(*array.Int32Builder).AppendValues([]int32{2, 1}, nil)
	mb.ItemBuilder().(*array.StringBuilder).AppendValues([]string{"b", "a"}, nil)
	sb := b.Field(3).(*array.StructBuilder)
	sb.Append(true)
	sb.FieldBuilder(0).(*array.Int64Builder).Append(7)
	sb.FieldBuilder(1).(*array.BooleanBuilder).AppendNull()
	// 2019-01-01 08:00:00.1 UTC is midnight and a tenth in Los Angeles.
	b.Field(4).(*array.TimestampBuilder).Append(arrow.Timestamp(time.Date(2019, 1, 1, 8, 0, 0, 100_000_000, time.UTC).UnixMicro()))
	b.Field(5).(*array.Date32Builder).Append(arrow.Date32(365))
	b.Field(6).(*array.BinaryBuilder).Append([]byte{0x23, 0x79, 0xAC, 0xFE})
	for i := 0; i < 7; i++ {
		b.Field(i).AppendNull()
	}
	rec := b.NewRecord()
	defer rec.Release()
	f := Formatter{Loc: la}
	want := "top\t[\"x\",null]\t{1:\"a\",2:\"b\"}\t{\"a\":7,\"b\":null}\t2019-01-01 00:00:00.1\t1971-01-01\t#y\uFFFD\uFFFD"
	if got := f.Row(rec, 0); got != want {
		t.Errorf("row 0:\n got %q\nwant %q", got, want)
	}
	if got, want := f.Row(rec, 1), "NULL\tNULL\tNULL\tNULL\tNULL\tNULL\tNULL"; got != want {
		t.Errorf("row 1: got %q, want %q", got, want)
	}
}

func TestSchemaMatches(t *testing.T) {
	schema := arrow.NewSchema([]arrow.Field{
		{Name: "x", Type: arrow.PrimitiveTypes.Int32},
		{Name: "y", Type: &arrow.DurationType{Unit: arrow.Microsecond}},
		{Name: "z", Type: arrow.ListOf(arrow.PrimitiveTypes.Float64)},
	}, nil)
	for _, c := range []struct {
		line string
		want bool
	}{
		{"struct<x:int,y:interval day,z:array<double>>", true},
		{"struct<concat(a, b:c):int,(d - e):interval hour to second,z:array<double>>", true},
		{"struct<x:bigint,y:interval day,z:array<double>>", false},
		{"struct<x:int,y:interval year to month,z:array<double>>", false},
		{"struct<x:int,y:interval day>", false},
	} {
		if got := SchemaMatches(c.line, schema); got != c.want {
			t.Errorf("SchemaMatches(%q) = %v, want %v", c.line, got, c.want)
		}
	}
}

// TestFormatYearsBeyondFourDigits: dates and timestamps whose year has
// more than four digits print with Java's leading + (Spark's golden
// files: datetime-special.sql); negative and four-digit years as before.
func TestFormatYearsBeyondFourDigits(t *testing.T) {
	for _, c := range []struct {
		days int64
		want string
	}{
		{0, "1970-01-01"},
		{2932896, "9999-12-31"},
		{2932897, "+10000-01-01"},
		{time.Date(999999, 3, 18, 0, 0, 0, 0, time.UTC).Unix() / 86400, "+999999-03-18"},
		{time.Date(-1, 1, 28, 0, 0, 0, 0, time.UTC).Unix() / 86400, "-0001-01-28"},
	} {
		if got := formatDate(c.days); got != c.want {
			t.Errorf("formatDate(%d) = %s, want %s", c.days, got, c.want)
		}
	}
	f := Formatter{}
	if got := f.timestamp(2932897 * 86400 * 1e6); got != "+10000-01-01 00:00:00" {
		t.Errorf("timestamp of year 10000: %s", got)
	}
}
