package vector

import (
	"fmt"

	"github.com/apache/arrow/go/v17/arrow"
	"github.com/apache/arrow/go/v17/arrow/array"
)

// HashRows sets out[i] to Spark's hash(cols...) of row i: Murmur3 with
// seed 42 chained over the columns, exactly as Hash evaluates it, and for
// struct columns (a window key) chained over the fields in order, as
// Spark hashes a struct (a NULL struct or field leaves the hash as it
// was). It is what Spark's HashPartitioning computes before taking
// pmod(hash, numPartitions). out must hold at least as many entries as
// the columns have rows. A column of a type Spark's hash does not take
// (lists, maps) is an error naming it.
func HashRows(cols []arrow.Array, out []int32) error {
	for i := range out {
		out[i] = hashSeed
	}
	for k, c := range cols {
		if err := hashRowsColumn(c, out[:c.Len()]); err != nil {
			return fmt.Errorf("vector: hash of key column %d: %w", k, err)
		}
	}
	return nil
}

// HashRowsSupported reports whether HashRows takes columns of type dt.
func HashRowsSupported(dt arrow.DataType) bool {
	if st, ok := dt.(*arrow.StructType); ok {
		for _, f := range st.Fields() {
			if !HashRowsSupported(f.Type) {
				return false
			}
		}
		return true
	}
	if d, ok := dt.(*arrow.DictionaryType); ok {
		return IsStringLike(d)
	}
	return hashable(dt)
}

func hashRowsColumn(arr arrow.Array, out []int32) error {
	switch a := arr.(type) {
	case *array.Struct:
		if a.NullN() == 0 {
			for f := 0; f < a.NumField(); f++ {
				if err := hashRowsColumn(a.Field(f), out); err != nil {
					return err
				}
			}
			return nil
		}
		// Hash every row, then keep the result of the valid ones only: the
		// fields of a NULL struct may hold anything.
		tmp := append([]int32(nil), out...)
		for f := 0; f < a.NumField(); f++ {
			if err := hashRowsColumn(a.Field(f), tmp); err != nil {
				return err
			}
		}
		for i := range out {
			if a.IsValid(i) {
				out[i] = tmp[i]
			}
		}
		return nil
	case *array.Dictionary:
		if !IsStringLike(a.DataType()) {
			return fmt.Errorf("dictionary of %s is not hashable", TypeName(a.DataType()))
		}
	default:
		if !hashable(arr.DataType()) {
			return fmt.Errorf("%s is not hashable", TypeName(arr.DataType()))
		}
	}
	hashColumn(arr, out)
	return nil
}
