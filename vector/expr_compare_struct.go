package vector

import (
	"bytes"
	"fmt"

	"github.com/apache/arrow/go/v17/arrow"
	"github.com/apache/arrow/go/v17/arrow/array"
	"github.com/apache/arrow/go/v17/arrow/decimal128"
	"github.com/apache/arrow/go/v17/arrow/memory"
)

// Struct comparison (l.window = r.window). Structs compare field by field,
// in order, like Spark's interpreted ordering: within a struct, a null
// field sorts first and equals another null field, so two structs with the
// same fields, nulls included, are equal. The kernel folds the fields into
// a three-way result per row (-1, 0, 1), deciding each row at its first
// unequal field. It is not a hot path.

// checkOrderable reports whether values of dt can be compared.
func checkOrderable(dt arrow.DataType) error {
	switch dt.ID() {
	case arrow.BOOL, arrow.INT8, arrow.INT16, arrow.INT32, arrow.INT64, arrow.FLOAT32, arrow.FLOAT64,
		arrow.DECIMAL128, arrow.STRING, arrow.BINARY, arrow.DATE32, arrow.TIMESTAMP, arrow.NULL:
		return nil
	case arrow.DICTIONARY:
		return checkOrderable(Unwrap(dt))
	case arrow.STRUCT:
		for _, f := range dt.(*arrow.StructType).Fields() {
			if err := checkOrderable(f.Type); err != nil {
				return err
			}
		}
		return nil
	case arrow.LIST:
		return checkOrderable(dt.(*arrow.ListType).Elem())
	}
	return fmt.Errorf("values of type %s cannot be compared: %w", TypeName(dt), ErrType)
}

// cmpStruct compares two struct columns of the same type.
type cmpStruct struct {
	op  CompareOp
	mem memory.Allocator
	cmp []int8 // scratch
}

func (k *cmpStruct) compare(la, ra arrow.Array, n int, out []uint64) {
	if cap(k.cmp) < n {
		k.cmp = make([]int8, n)
	}
	cmp := k.cmp[:n]
	clear(cmp)
	// The structs' own nulls make the result null; only their fields are
	// compared here.
	if sa, ok := la.(*array.Struct); ok {
		sb := ra.(*array.Struct)
		for f := 0; f < sa.NumField(); f++ {
			compare3(k.mem, sa.Field(f), sb.Field(f), cmp)
		}
	} else {
		compareLists(k.mem, la.(*array.List), ra.(*array.List), cmp, false)
	}
	mask := cmpMask(k.op)
	for w := range out {
		var word uint64
		for j := range min(64, n-w*64) {
			word |= (mask >> uint(cmp[w*64+j]+1) & 1) << uint(j)
		}
		out[w] = word
	}
}

// decidedEqual marks, inside a nested struct's comparison, rows already
// decided as equal (both structs null), so that their fields are not
// compared.
const decidedEqual = 2

// compare3 sets out[i] to the three-way comparison of a[i] and b[i] for
// the rows still undecided (out[i] == 0), nulls first.
func compare3(mem memory.Allocator, a, b arrow.Array, out []int8) {
	switch a.DataType().ID() {
	case arrow.NULL:
		// Two nulls are equal.
	case arrow.BOOL:
		x, y := a.(*array.Boolean), b.(*array.Boolean)
		for i := range out {
			if undecided(a, b, out, i) {
				out[i] = int8(b2u(x.Value(i))) - int8(b2u(y.Value(i)))
			}
		}
	case arrow.INT8:
		compare3Ordered(fixedSlice[int8](a), fixedSlice[int8](b), a, b, out)
	case arrow.INT16:
		compare3Ordered(fixedSlice[int16](a), fixedSlice[int16](b), a, b, out)
	case arrow.INT32, arrow.DATE32:
		compare3Ordered(fixedSlice[int32](a), fixedSlice[int32](b), a, b, out)
	case arrow.INT64, arrow.TIMESTAMP:
		compare3Ordered(fixedSlice[int64](a), fixedSlice[int64](b), a, b, out)
	case arrow.FLOAT32:
		x, y := fixedSlice[float32](a), fixedSlice[float32](b)
		for i := range out {
			if undecided(a, b, out, i) {
				out[i] = compareFloat(float64(x[i]), float64(y[i]))
			}
		}
	case arrow.FLOAT64:
		x, y := fixedSlice[float64](a), fixedSlice[float64](b)
		for i := range out {
			if undecided(a, b, out, i) {
				out[i] = compareFloat(x[i], y[i])
			}
		}
	case arrow.DECIMAL128:
		x, y := fixedSlice[decimal128.Num](a), fixedSlice[decimal128.Num](b)
		for i := range out {
			if undecided(a, b, out, i) {
				out[i] = int8(x[i].Cmp(y[i]))
			}
		}
	case arrow.STRING, arrow.BINARY:
		ao, ad := binaryValues(a)
		bo, bd := binaryValues(b)
		for i := range out {
			if undecided(a, b, out, i) {
				out[i] = int8(bytes.Compare(ad[ao[i]:ao[i+1]], bd[bo[i]:bo[i+1]]))
			}
		}
	case arrow.DICTIONARY:
		pa, err := DecodeDictionary(mem, a)
		if err != nil {
			return
		}
		defer pa.Release()
		pb, err := DecodeDictionary(mem, b)
		if err != nil {
			return
		}
		defer pb.Release()
		compare3(mem, pa, pb, out)
	case arrow.LIST:
		compareLists(mem, a.(*array.List), b.(*array.List), out, true)
	case arrow.STRUCT:
		sa, sb := a.(*array.Struct), b.(*array.Struct)
		sub := make([]int8, len(out))
		for i := range sub {
			switch {
			case out[i] != 0:
				sub[i] = decidedEqual // already decided: skip
			case !rowValid(a, i) && !rowValid(b, i):
				sub[i] = decidedEqual
			case !rowValid(a, i):
				sub[i] = -1
			case !rowValid(b, i):
				sub[i] = 1
			}
		}
		for f := 0; f < sa.NumField(); f++ {
			compare3(mem, sa.Field(f), sb.Field(f), sub)
		}
		for i, c := range sub {
			if out[i] == 0 && c != decidedEqual {
				out[i] = c
			}
		}
	}
}

// compareLists sets out[i] for the undecided rows to the three-way
// comparison of the arrays a[i] and b[i] as Spark orders arrays: element
// by element (a null element first), then the shorter first. withNulls
// also decides rows where an array itself is null (nulls first), for
// arrays nested in other values; the top-level arrays' nulls are the
// comparison's. Each row's elements are compared as two slices by
// compare3, so nested arrays and structs follow the same rules.
func compareLists(mem memory.Allocator, a, b *array.List, out []int8, withNulls bool) {
	av, bv := a.ListValues(), b.ListValues()
	for i := range out {
		if out[i] != 0 {
			continue
		}
		if withNulls {
			if !undecided(a, b, out, i) {
				continue
			}
		} else if a.IsNull(i) || b.IsNull(i) {
			continue
		}
		as, ae := a.ValueOffsets(i)
		bs, be := b.ValueOffsets(i)
		n := int(min(ae-as, be-bs))
		if n > 0 {
			x := array.NewSlice(av, as, as+int64(n))
			y := array.NewSlice(bv, bs, bs+int64(n))
			sub := make([]int8, n)
			compare3(mem, x, y, sub)
			x.Release()
			y.Release()
			for _, c := range sub {
				if c != 0 {
					out[i] = c
					break
				}
			}
		}
		if out[i] == 0 {
			la, lb := ae-as, be-bs
			out[i] = int8(b2u(la > lb)) - int8(b2u(la < lb))
		}
	}
}

// undecided reports whether row i still needs its values compared; it
// decides the rows where a side is null (nulls first, equal to each
// other), marking two nulls as decided-equal only by leaving out[i] at 0
// and returning false.
func undecided(a, b arrow.Array, out []int8, i int) bool {
	if out[i] != 0 {
		return false
	}
	av, bv := rowValid(a, i), rowValid(b, i)
	if av && bv {
		return true
	}
	out[i] = int8(b2u(av)) - int8(b2u(bv))
	return false
}

func compare3Ordered[T int8 | int16 | int32 | int64](x, y []T, a, b arrow.Array, out []int8) {
	for i := range out {
		if undecided(a, b, out, i) {
			out[i] = int8(b2u(x[i] > y[i])) - int8(b2u(x[i] < y[i]))
		}
	}
}

// compareFloat orders doubles as Spark: -0.0 = 0.0, NaN = NaN, NaN above
// everything.
func compareFloat(x, y float64) int8 {
	switch {
	case x == y:
		return 0
	case x != x && y != y:
		return 0
	case x != x:
		return 1
	case y != y:
		return -1
	case x < y:
		return -1
	}
	return 1
}
