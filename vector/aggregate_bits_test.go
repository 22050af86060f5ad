package vector_test

import (
	"testing"

	"github.com/apache/arrow/go/v17/arrow"

	"github.com/arrowstream/arrowstream/vector"
	vt "github.com/arrowstream/arrowstream/vector/vectortest"
)

// TestBitwiseAggregates runs bit_and, bit_or and bit_xor over INT and
// TINYINT columns in complete, partial → final and merged aggregation.
func TestBitwiseAggregates(t *testing.T) {
	schema := arrow.NewSchema([]arrow.Field{
		{Name: "k", Type: vector.Int64, Nullable: true},
		{Name: "b", Type: vector.Int32, Nullable: true},
		{Name: "t", Type: vector.Int8, Nullable: true},
	}, nil)
	rows := []vt.Row{
		{int64(1), int32(12), int8(-1)},
		{int64(1), int32(10), int8(3)},
		{int64(1), nil, nil},
		{int64(2), int32(7), int8(-128)},
		{int64(3), nil, nil},
		{int64(1), int32(6), int8(-2)},
	}
	runAggCase(t, aggCase{
		name: "bits", schema: schema, rows: rows, groupBy: byK(),
		aggs: []vector.AggregateCall{
			call(vector.AggBitAnd, "ba", "b"), call(vector.AggBitOr, "bo", "b"), call(vector.AggBitXor, "bx", "b"),
			call(vector.AggBitAnd, "ta", "t"), call(vector.AggBitOr, "to", "t"), call(vector.AggBitXor, "tx", "t"),
		},
		// k=1: 12&10&6 = 0, 12|10|6 = 14, 12^10^6 = 0; -1&3&-2 = 2,
		// -1|3|-2 = -1, -1^3^-2 = 2.
		want: []vt.Row{
			{int64(1), int32(0), int32(14), int32(0), int8(2), int8(-1), int8(2)},
			{int64(2), int32(7), int32(7), int32(7), int8(-128), int8(-128), int8(-128)},
			{int64(3), nil, nil, nil, nil, nil, nil},
		},
	})
	runAggCase(t, aggCase{
		name: "bits-type", schema: schema, rows: rows,
		aggs:    []vector.AggregateCall{call(vector.AggBitAnd, "x", "k"), {Func: vector.AggBitOr, Name: "y", Args: []vector.Expr{vector.Lit(1.5)}}},
		wantErr: "integral",
	})
}
