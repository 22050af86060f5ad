package plan

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/apache/arrow/go/v17/arrow"
)

// TestFoldIntArithMatchesVector: the fast fold of integer + - * gives the
// value and type vector's evaluation gives, and declines (nil) exactly
// where vector raises (ANSI overflow).
func TestFoldIntArithMatchesVector(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	edges32 := []int32{0, 1, -1, 2, -2, math.MaxInt32, math.MinInt32, math.MaxInt32 / 2, math.MinInt32 / 2, 46341, -46341}
	edges64 := []int64{0, 1, -1, 2, -2, math.MaxInt64, math.MinInt64, math.MaxInt64 / 2, math.MinInt64 / 2, 3037000500, -3037000500}
	pick32 := func() int32 {
		if r.IntN(2) == 0 {
			return edges32[r.IntN(len(edges32))]
		}
		return int32(r.Uint32())
	}
	pick64 := func() int64 {
		if r.IntN(2) == 0 {
			return edges64[r.IntN(len(edges64))]
		}
		return int64(r.Uint64())
	}
	for i := 0; i < 20000; i++ {
		fn := []string{"+", "-", "*"}[r.IntN(3)]
		var a, b *Literal
		if r.IntN(2) == 0 {
			a, b = &Literal{Value: pick32(), Type: arrow.PrimitiveTypes.Int32}, &Literal{Value: pick32(), Type: arrow.PrimitiveTypes.Int32}
		} else {
			a, b = &Literal{Value: pick64(), Type: arrow.PrimitiveTypes.Int64}, &Literal{Value: pick64(), Type: arrow.PrimitiveTypes.Int64}
		}
		fast := foldIntArith(fn, []Expr{a, b})
		slow, err := foldConstant(&Call{Func: fn, Args: []Expr{a, b}})
		switch {
		case err != nil && fast != nil:
			t.Fatalf("%v %s %v: fast fold %v, vector raises %v", a.Value, fn, b.Value, fast.Value, err)
		case err == nil && fast == nil:
			t.Fatalf("%v %s %v: fast fold declined, vector gives %v", a.Value, fn, b.Value, slow.Value)
		case err == nil && (fast.Value != slow.Value || !arrow.TypeEqual(fast.Type, slow.Type)):
			t.Fatalf("%v %s %v: fast fold %v (%s), vector %v (%s)", a.Value, fn, b.Value, fast.Value, fast.Type, slow.Value, slow.Type)
		}
	}
}
