package server

import (
	"testing"

	"github.com/apache/arrow/go/v17/arrow"
	"github.com/apache/arrow/go/v17/arrow/array"
	"github.com/apache/arrow/go/v17/arrow/memory"
)

// TestTimestampsInSessionZone: a client session's time zone labels the
// timestamps it receives (the instant is unchanged), as Spark's Arrow
// results carry spark.sql.session.timeZone; another session keeps UTC.
func TestTimestampsInSessionZone(t *testing.T) {
	_, srv := startSessionServer(t)
	la := adbcConn(t, srv, nil)
	utc := adbcConn(t, srv, nil)
	execSQL(t, la, "SET spark.sql.session.timeZone = America/Los_Angeles")
	const q = "SELECT CAST(86400 AS TIMESTAMP) AS t, 1 AS n"
	for _, c := range []struct {
		name string
		recs []arrow.Record
		zone string
	}{
		{"Los Angeles session", mustQuery(t, la, q), "America/Los_Angeles"},
		{"UTC session", mustQuery(t, utc, q), "UTC"},
	} {
		if len(c.recs) == 0 || c.recs[0].NumRows() != 1 {
			t.Fatalf("%s: no row", c.name)
		}
		col, ok := c.recs[0].Column(0).(*array.Timestamp)
		if !ok {
			t.Fatalf("%s: column t is %s", c.name, c.recs[0].Column(0).DataType())
		}
		if got := col.DataType().(*arrow.TimestampType).TimeZone; got != c.zone {
			t.Errorf("%s: timestamp zone %q, want %q", c.name, got, c.zone)
		}
		if got := int64(col.Value(0)); got != 86400_000_000 {
			t.Errorf("%s: instant %d µs, want 86400000000 (relabelling must not move it)", c.name, got)
		}
	}
}

// TestRelabelNested relabels timestamps inside structs and lists without
// copying or leaking.
func TestRelabelNested(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	ts := &arrow.TimestampType{Unit: arrow.Microsecond, TimeZone: "UTC"}
	st := arrow.StructOf(arrow.Field{Name: "start", Type: ts, Nullable: true}, arrow.Field{Name: "n", Type: arrow.PrimitiveTypes.Int64})
	typ := arrow.ListOf(st)
	b := array.NewListBuilder(mem, st)
	defer b.Release()
	sb := b.ValueBuilder().(*array.StructBuilder)
	b.Append(true)
	sb.Append(true)
	sb.FieldBuilder(0).(*array.TimestampBuilder).Append(42)
	sb.FieldBuilder(1).(*array.Int64Builder).Append(7)
	b.AppendNull()
	arr := b.NewArray()
	defer arr.Release()

	want := displayType(typ, "Europe/Paris")
	if arrow.TypeEqual(want, typ) {
		t.Fatal("displayType left the nested timestamp in UTC")
	}
	if displayType(typ, "UTC") != typ {
		t.Error("displayType changed a type for UTC")
	}
	out := relabel(arr, want)
	defer out.Release()
	if !arrow.TypeEqual(out.DataType(), want) {
		t.Fatalf("relabelled type %s, want %s", out.DataType(), want)
	}
	inner := out.(*array.List).ListValues().(*array.Struct).Field(0).(*array.Timestamp)
	if inner.Value(0) != 42 || out.IsValid(1) || out.Len() != 2 {
		t.Errorf("relabelled values changed: %v", out)
	}
}
