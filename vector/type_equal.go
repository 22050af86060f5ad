package vector

import "github.com/apache/arrow/go/v17/arrow"

// TypesEqual reports whether a and b are equal as arrow.TypeEqual (without
// options) says, without allocating for the types a streaming epoch's key
// and column checks meet: arrow.TypeEqual compares a parameterless type
// (an int64) with reflect.DeepEqual and a struct's (a window's) name
// index with it too, which allocates, and those checks run for every key
// column of every batch of every epoch. A parameterless type equals any
// other of its ID, a timestamp compares unit and zone (as arrow does), a
// struct its fields (names, nullability, types: its name index follows
// from the names); the others are left to arrow.TypeEqual.
func TypesEqual(a, b arrow.DataType) bool {
	if a == nil || b == nil {
		return a == nil && b == nil
	}
	if a.ID() != b.ID() {
		return false
	}
	switch l := a.(type) {
	case *arrow.TimestampType:
		if r, ok := b.(*arrow.TimestampType); ok {
			return l == r || l.Unit == r.Unit && l.TimeZone == r.TimeZone
		}
	case *arrow.StructType:
		r, ok := b.(*arrow.StructType)
		if !ok {
			break
		}
		if l == r {
			return true
		}
		if l.NumFields() != r.NumFields() {
			return false
		}
		for i := range l.NumFields() {
			fl, fr := l.Field(i), r.Field(i)
			if fl.Name != fr.Name || fl.Nullable != fr.Nullable || !TypesEqual(fl.Type, fr.Type) {
				return false
			}
		}
		return true
	}
	if ParameterlessType(a.ID()) {
		return true
	}
	return arrow.TypeEqual(a, b)
}

// ParameterlessType reports whether every type of id is the same type
// (no unit, zone, width or children to compare).
func ParameterlessType(id arrow.Type) bool {
	switch id {
	case arrow.NULL, arrow.BOOL, arrow.INT8, arrow.INT16, arrow.INT32, arrow.INT64,
		arrow.UINT8, arrow.UINT16, arrow.UINT32, arrow.UINT64, arrow.FLOAT16, arrow.FLOAT32, arrow.FLOAT64,
		arrow.STRING, arrow.BINARY, arrow.LARGE_STRING, arrow.LARGE_BINARY, arrow.STRING_VIEW, arrow.BINARY_VIEW,
		arrow.DATE32, arrow.DATE64:
		return true
	}
	return false
}
