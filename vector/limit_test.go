package vector_test

import (
	"math"
	"testing"

	"github.com/apache/arrow/go/v17/arrow/memory"

	"github.com/arrowstream/arrowstream/vector"
	vt "github.com/arrowstream/arrowstream/vector/vectortest"
)

func limitOf(n, offset int64) func(memory.Allocator, []vector.Operator) (vector.Operator, error) {
	return func(mem memory.Allocator, in []vector.Operator) (vector.Operator, error) {
		return vector.NewLimitOffset(mem, in[0], n, offset)
	}
}

func TestLimit(t *testing.T) {
	in := []vt.Input{{Schema: abSchema, Rows: abRows}}
	cases := []vt.OperatorCase{
		{Name: "zero", Inputs: in, Build: limitOf(0, 0)},
		{Name: "two", Inputs: in, Build: limitOf(2, 0), Want: abRows[:2], Ordered: true},
		{Name: "four", Inputs: in, Build: limitOf(4, 0), Want: abRows[:4], Ordered: true},
		{Name: "all", Inputs: in, Build: limitOf(5, 0), Want: abRows, Ordered: true},
		{Name: "more-than-input", Inputs: in, Build: limitOf(100, 0), Want: abRows, Ordered: true},
		{Name: "offset", Inputs: in, Build: limitOf(3, 1), Want: abRows[1:4], Ordered: true},
		{Name: "offset-4", Inputs: in, Build: limitOf(3, 4), Want: abRows[4:], Ordered: true},
		{Name: "offset-past-end", Inputs: in, Build: limitOf(3, 9)},
		// SQL's OFFSET without LIMIT: the largest n, which must not overflow
		// when added to the rows skipped in a batch.
		{Name: "offset-no-limit", Inputs: in, Build: limitOf(math.MaxInt64, 2), Want: abRows[2:], Ordered: true},
		{Name: "empty-input", Inputs: []vt.Input{{Schema: abSchema}}, Build: limitOf(3, 0)},
		{Name: "negative", Inputs: in, Build: limitOf(-1, 0), WantErr: "limit must not be negative, got -1"},
		{Name: "negative-offset", Inputs: in, Build: limitOf(1, -2), WantErr: "offset must not be negative, got -2"},
		{Name: "plain", Inputs: in, Ordered: true, Want: abRows[:1],
			Build: func(mem memory.Allocator, in []vector.Operator) (vector.Operator, error) {
				return vector.NewLimit(mem, in[0], 1)
			}},
	}
	for _, c := range cases {
		vt.RunOperator(t, c)
	}
}
