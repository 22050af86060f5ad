package vector

import (
	"fmt"
	"math/bits"

	"github.com/apache/arrow/go/v17/arrow"
	"github.com/apache/arrow/go/v17/arrow/memory"
)

// bindBitCount binds bit_count(x): the number of one bits of an integer
// widened with its sign to 64 bits (Spark's java.lang.Long.bitCount, so
// bit_count(-1) is 64 for every integer type), or 1 and 0 for a boolean.
// Other types (strings too: Spark does not cast them) are refused.
func bindBitCount(f *FuncExpr, in *arrow.Schema, mem memory.Allocator, args []Evaluator) (Evaluator, error) {
	dt := Unwrap(args[0].DataType())
	switch {
	case dt.ID() == arrow.BOOL:
		return bindRows(f, in, mem, args, []rowKind{rowBool}, Int32, rowKernels{
			num: func(a []rowArg, i int) (int64, bool, error) {
				if a[0].bool(i) {
					return 1, true, nil
				}
				return 0, true, nil
			},
		})
	case IsIntegral(dt), dt.ID() == arrow.NULL:
		return bindRows(f, in, mem, args, []rowKind{rowInt}, Int32, rowKernels{
			num: func(a []rowArg, i int) (int64, bool, error) {
				return int64(bits.OnesCount64(uint64(a[0].int(i)))), true, nil
			},
		})
	}
	return nil, fmt.Errorf("bit_count needs an integer or a boolean, not %s: %w", TypeName(dt), ErrType)
}

func init() {
	functions["bit_count"] = funcSpec{1, 1, rowBinder("bit_count", bindBitCount)}
}
