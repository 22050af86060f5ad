package server

import (
	"github.com/apache/arrow/go/v17/arrow"
	"github.com/apache/arrow/go/v17/arrow/array"
)

// Timestamps leave the server in the client session's time zone, as
// Spark's Arrow results do (their schemas carry
// spark.sql.session.timeZone): a TIMESTAMP value is an instant, stored as
// microseconds since the epoch in UTC whatever the zone, and the zone in
// its Arrow type only tells clients (pandas, polars, DBeaver through ADBC)
// how to show it. So relabelling a column is zero-copy and never changes a
// value; TIMESTAMP_NTZ columns (no zone in their type) are left alone.

// displayType is t with every zoned timestamp, also inside structs, lists
// and maps, labelled with zone. zone "" or "UTC" leaves t as it is.
func displayType(t arrow.DataType, zone string) arrow.DataType {
	if zone == "" || zone == "UTC" {
		return t
	}
	switch x := t.(type) {
	case *arrow.TimestampType:
		if x.TimeZone == "" || x.TimeZone == zone {
			return t
		}
		return &arrow.TimestampType{Unit: x.Unit, TimeZone: zone}
	case *arrow.StructType:
		fields := x.Fields()
		changed := false
		for i, f := range fields {
			if nt := displayType(f.Type, zone); nt != f.Type {
				fields[i].Type, changed = nt, true
			}
		}
		if changed {
			return arrow.StructOf(fields...)
		}
	case *arrow.ListType:
		if nt := displayType(x.Elem(), zone); nt != x.Elem() {
			f := x.ElemField()
			f.Type = nt
			return arrow.ListOfField(f)
		}
	}
	return t
}

// relabel returns arr as an array of type typ, which must differ from
// arr's type at most in timestamp zones (displayType): the same buffers,
// another type. The caller releases the result.
func relabel(arr arrow.Array, typ arrow.DataType) arrow.Array {
	if arrow.TypeEqual(arr.DataType(), typ) {
		arr.Retain()
		return arr
	}
	d := relabelData(arr.Data(), typ)
	defer d.Release()
	return array.MakeFromData(d)
}

func relabelData(d arrow.ArrayData, typ arrow.DataType) arrow.ArrayData {
	children := d.Children()
	var elems []arrow.DataType
	switch x := typ.(type) {
	case *arrow.StructType:
		for _, f := range x.Fields() {
			elems = append(elems, f.Type)
		}
	case *arrow.ListType:
		elems = []arrow.DataType{x.Elem()}
	}
	if len(elems) != len(children) {
		return array.NewData(typ, d.Len(), d.Buffers(), children, d.NullN(), d.Offset())
	}
	made := make([]arrow.ArrayData, len(children))
	for i, c := range children {
		made[i] = relabelData(c, elems[i])
	}
	out := array.NewData(typ, d.Len(), d.Buffers(), made, d.NullN(), d.Offset())
	for _, c := range made {
		c.Release() // NewData holds its own reference
	}
	return out
}
