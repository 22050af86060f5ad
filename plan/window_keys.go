package plan

import "github.com/apache/arrow/go/v17/arrow"

// windowKeyType reports whether the window operator can sort and split
// partitions by a key of type dt: arrays and structs are ordered
// element-wise and field-wise (as Spark orders them) when their elements
// and fields can be; maps cannot be ordered, in Spark either.
func windowKeyType(dt arrow.DataType) bool {
	if dt == nil {
		return true
	}
	switch t := dt.(type) {
	case *arrow.MapType, *arrow.LargeListType, *arrow.DurationType:
		return false
	case *arrow.ListType:
		return windowKeyType(t.Elem())
	case *arrow.StructType:
		for _, f := range t.Fields() {
			if !windowKeyType(f.Type) {
				return false
			}
		}
	}
	return true
}
