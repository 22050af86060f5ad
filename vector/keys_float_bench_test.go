package vector_test

import (
	"math"
	"testing"

	"github.com/apache/arrow/go/v17/arrow"
	"github.com/apache/arrow/go/v17/arrow/array"
	"github.com/apache/arrow/go/v17/arrow/memory"

	"github.com/arrowstream/arrowstream/vector"
)

// BenchmarkFloatKeyEncode encodes 64Ki rows of (DOUBLE, BIGINT) keys, a
// tenth of the doubles -0.0 or NaN, on the bytes path (the state row
// codec's; floats normalized for grouping).
func BenchmarkFloatKeyEncode(b *testing.B) {
	const n = 1 << 16
	mem := memory.NewGoAllocator()
	fb, ib := array.NewFloat64Builder(mem), array.NewInt64Builder(mem)
	for i := range n {
		switch i % 10 {
		case 3:
			fb.Append(math.Copysign(0, -1))
		case 7:
			fb.Append(math.Float64frombits(0x7ff8000000000000 | uint64(i)))
		default:
			fb.Append(float64(i) * 0.25)
		}
		ib.Append(int64(i))
	}
	cols := []arrow.Array{fb.NewArray(), ib.NewArray()}
	enc, err := vector.NewKeyEncoder(mem, []arrow.DataType{vector.Float64, vector.Int64})
	if err != nil {
		b.Fatal(err)
	}
	b.SetBytes(n * 16)
	b.ResetTimer()
	for range b.N {
		if err := enc.Encode(cols); err != nil {
			b.Fatal(err)
		}
	}
}
