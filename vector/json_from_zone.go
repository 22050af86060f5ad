package vector

import (
	"strings"
	"time"

	"github.com/apache/arrow/go/v17/arrow"
	"github.com/apache/arrow/go/v17/arrow/array"
	"github.com/apache/arrow/go/v17/arrow/memory"
)

// from_json reads a timestamp written without a zone ("2012-12-15
// 15:15:15") in the session time zone, as Spark does; Arrow's decoder
// reads it as UTC, so the top-level TIMESTAMP fields are corrected from
// each row's text afterwards.

// nestedTimestamp reports whether a TIMESTAMP (with zone) sits below the
// top level of dt.
func nestedTimestamp(dt arrow.DataType, depth int) bool {
	switch t := dt.(type) {
	case *arrow.TimestampType:
		return depth > 1 && t.TimeZone != ""
	case *arrow.StructType:
		for _, f := range t.Fields() {
			if nestedTimestamp(f.Type, depth+1) {
				return true
			}
		}
	case *arrow.ListType:
		return nestedTimestamp(t.Elem(), depth+2)
	}
	return false
}

// zonedJSONTimestamps returns st with its top-level TIMESTAMP fields read
// in loc where the row's text has no zone.
func zonedJSONTimestamps(mem memory.Allocator, st *array.Struct, rows [][]byte, loc *time.Location) (arrow.Array, error) {
	dt := st.DataType().(*arrow.StructType)
	children := make([]arrow.ArrayData, st.NumField())
	var made []arrow.Array
	defer func() { releaseArrays(made) }()
	for k, f := range dt.Fields() {
		col := st.Field(k)
		children[k] = col.Data()
		ts, ok := col.(*array.Timestamp)
		if !ok || f.Type.(*arrow.TimestampType).TimeZone == "" {
			continue
		}
		b := array.NewTimestampBuilder(mem, f.Type.(*arrow.TimestampType))
		path := []jsonPathStep{{name: f.Name, index: -1}}
		for i := 0; i < ts.Len(); i++ {
			if ts.IsNull(i) {
				b.AppendNull()
				continue
			}
			v := int64(ts.Value(i))
			if s, e, ok := jsonAt(rows[i], path); ok && rows[i][s] == '"' && !hasZone(string(rows[i][s+1:e-1])) {
				w := time.UnixMicro(v).UTC()
				v = time.Date(w.Year(), w.Month(), w.Day(), w.Hour(), w.Minute(), w.Second(), w.Nanosecond(), loc).UnixMicro()
			}
			b.Append(arrow.Timestamp(v))
		}
		a := b.NewArray()
		b.Release()
		made = append(made, a)
		children[k] = a.Data()
	}
	return withChildren(dt, st, children), nil
}

// hasZone reports whether timestamp text names its zone or offset (Z,
// +01:00, -0800, UTC, a region) after the date.
func hasZone(s string) bool {
	s = strings.TrimSpace(s)
	if len(s) <= 10 {
		return false
	}
	rest := s[10:]
	if strings.ContainsAny(rest, "+-Zz") {
		return true
	}
	for _, c := range rest[1:] {
		if c >= 'A' && c <= 'Z' || c >= 'a' && c <= 'z' {
			return true
		}
	}
	return false
}
