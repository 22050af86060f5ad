package vector

import (
	"bytes"

	"github.com/apache/arrow/go/v17/arrow"
	"github.com/apache/arrow/go/v17/arrow/array"
)

// Sorting by ARRAY and STRUCT keys (ORDER BY, window and top-N orders):
// Spark orders arrays element by element, then the shorter first, and
// structs field by field; a null element or field sorts first. The key's
// rows are compared by a comparator over the nested values, which is not
// a hot path (nested sort keys are rare).

// nestedCmp compares rows of an ARRAY or STRUCT key column.
type nestedCmp struct {
	nullOrder
	arr arrow.Array
}

func (k *nestedCmp) cmp(a, b int32) int {
	if c, done := k.nulls(a, b); done {
		return c
	}
	return k.dir(int(cmpValueAt(k.arr, int(a), k.arr, int(b))))
}

// cmpValueAt is the three-way comparison of x[i] and y[j] (same type),
// nulls first and equal to each other.
func cmpValueAt(x arrow.Array, i int, y arrow.Array, j int) int8 {
	xv, yv := x.IsValid(i), y.IsValid(j)
	if !xv || !yv {
		return int8(b2u(xv)) - int8(b2u(yv))
	}
	switch a := x.(type) {
	case *array.List:
		b := y.(*array.List)
		as, ae := a.ValueOffsets(i)
		bs, be := b.ValueOffsets(j)
		av, bv := a.ListValues(), b.ListValues()
		for k := int64(0); as+k < ae && bs+k < be; k++ {
			if c := cmpValueAt(av, int(as+k), bv, int(bs+k)); c != 0 {
				return c
			}
		}
		la, lb := ae-as, be-bs
		return int8(b2u(la > lb)) - int8(b2u(la < lb))
	case *array.Struct:
		b := y.(*array.Struct)
		for f := 0; f < a.NumField(); f++ {
			if c := cmpValueAt(a.Field(f), i, b.Field(f), j); c != 0 {
				return c
			}
		}
		return 0
	case *array.Boolean:
		return int8(b2u(a.Value(i))) - int8(b2u(y.(*array.Boolean).Value(j)))
	case *array.Int8:
		return cmpOrdered(a.Value(i), y.(*array.Int8).Value(j))
	case *array.Int16:
		return cmpOrdered(a.Value(i), y.(*array.Int16).Value(j))
	case *array.Int32:
		return cmpOrdered(a.Value(i), y.(*array.Int32).Value(j))
	case *array.Int64:
		return cmpOrdered(a.Value(i), y.(*array.Int64).Value(j))
	case *array.Date32:
		return cmpOrdered(a.Value(i), y.(*array.Date32).Value(j))
	case *array.Timestamp:
		return cmpOrdered(a.Value(i), y.(*array.Timestamp).Value(j))
	case *array.Float32:
		return compareFloat(float64(a.Value(i)), float64(y.(*array.Float32).Value(j)))
	case *array.Float64:
		return compareFloat(a.Value(i), y.(*array.Float64).Value(j))
	case *array.Decimal128:
		return int8(a.Value(i).Cmp(y.(*array.Decimal128).Value(j)))
	case *array.String:
		return int8(bytes.Compare([]byte(a.Value(i)), []byte(y.(*array.String).Value(j))))
	case *array.Binary:
		return int8(bytes.Compare(a.Value(i), y.(*array.Binary).Value(j)))
	}
	return 0 // NULL type: every row equal
}

func cmpOrdered[T int8 | int16 | int32 | int64 | arrow.Date32 | arrow.Timestamp](a, b T) int8 {
	return int8(b2u(a > b)) - int8(b2u(a < b))
}
