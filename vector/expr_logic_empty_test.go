package vector_test

import (
	"testing"

	"github.com/apache/arrow/go/v17/arrow"

	"github.com/arrowstream/arrowstream/vector"
	vt "github.com/arrowstream/arrowstream/vector/vectortest"
)

// TestExprsEmptyBatch evaluates every kind of expression over a record with
// no rows (as an operator may see after filtering): each must return an
// empty array, not panic.
func TestExprsEmptyBatch(t *testing.T) {
	mem := vt.NewAllocator(t)
	schema := exprSchema("a", vector.Int64, "b", vector.Int64, "d", vector.Float64, "x", vector.Decimal(5, 2),
		"s", vector.String, "e", dictStringType, "p", vector.Boolean, "w", vector.WindowType)
	rec := vt.BuildRecord(mem, schema, nil)
	defer rec.Release()
	for _, e := range []vector.Expr{
		vector.Add(col("a"), col("b")), vector.Mul(col("a"), lit(3)), vector.Mod(col("a"), col("b")), vector.Div(col("d"), lit(0.0)),
		vector.Add(col("x"), col("x")), vector.Div(col("x"), col("x")), vector.Negate(col("a")), vector.Negate(col("x")),
		vector.Gt(col("a"), lit(1)), vector.Eq(col("d"), col("d")), vector.Eq(col("s"), lit("v")), vector.Lt(col("s"), col("s")),
		vector.Eq(col("e"), lit("v")), vector.Eq(col("w"), col("w")), vector.EqualNullSafe(col("p"), col("p")), vector.Le(col("x"), lit(1)),
		vector.And(col("p"), vector.Gt(col("a"), lit(0))), vector.Or(col("p"), col("p")), vector.Not(col("p")), vector.IsNull(col("s")),
		vector.In(col("a"), lit(1), lit(2)), vector.In(col("e"), lit("v")), vector.In(col("s"), lit("v"), lit(nil)), vector.Between(col("a"), lit(1), col("b")),
		vector.If(col("p"), col("s"), lit("z")), vector.Case([]vector.When{{Cond: col("p"), Then: col("w")}}, nil), vector.Coalesce(col("a"), col("b"), lit(0)),
		vector.Eq(col("p"), lit(true)),
	} {
		got := evalOnce(t, mem, e, rec)
		if got.Len() != 0 {
			t.Errorf("%s: %d rows", e, got.Len())
		}
		got.Release()
	}
}

// checkEmptyBatch evaluates each expression over a record of schema with no
// rows, whose arrays have no value buffers (Arrow allows that for empty
// arrays): each must give an empty array of its declared type.
func checkEmptyBatch(t *testing.T, schema *arrow.Schema, exprs ...vector.Expr) {
	t.Helper()
	mem := vt.NewAllocator(t)
	rec := vt.BuildRecord(mem, schema, nil)
	defer rec.Release()
	for _, e := range exprs {
		got := evalOnce(t, mem, e, rec)
		if got.Len() != 0 {
			t.Errorf("%s: %d rows", e, got.Len())
		}
		got.Release()
	}
}
