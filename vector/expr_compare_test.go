package vector_test

import (
	"math"
	"testing"

	"github.com/apache/arrow/go/v17/arrow"
	"github.com/apache/arrow/go/v17/arrow/array"

	"github.com/arrowstream/arrowstream/vector"
	vt "github.com/arrowstream/arrowstream/vector/vectortest"
)

var dictStringType = &arrow.DictionaryType{IndexType: arrow.PrimitiveTypes.Int8, ValueType: arrow.BinaryTypes.String}

// allOps runs every comparison operator over l and r and expects the
// results in want, in the order = <> < <= > >= <=>.
func allOps(name string, schema *arrow.Schema, rows []vt.Row, l, r vector.Expr, want [7][]any) []vt.ExprCase {
	ctors := []func(l, r vector.Expr) vector.Expr{vector.Eq, vector.NotEq, vector.Lt, vector.Le, vector.Gt, vector.Ge, vector.EqualNullSafe}
	names := []string{"eq", "ne", "lt", "le", "gt", "ge", "eqns"}
	var cases []vt.ExprCase
	for i, ctor := range ctors {
		cases = append(cases, vt.ExprCase{
			Name: name + "/" + names[i], Schema: schema, Rows: rows, Expr: ctor(l, r),
			Want: want[i], WantType: vector.Boolean, NullIntolerant: i < 6 && schema.NumFields() > 0,
		})
	}
	return cases
}

func TestCompareNumbers(t *testing.T) {
	ab := exprSchema("a", vector.Int64, "b", vector.Int64)
	rows := []vt.Row{{1, 2}, {2, 2}, {3, 2}, {math.MinInt64, math.MaxInt64}}
	T, F := true, false
	vt.RunExpr(t, allOps("bigint", ab, rows, col("a"), col("b"), [7][]any{
		{F, T, F, F}, {T, F, T, T}, {T, F, F, T}, {T, T, F, T}, {F, F, T, F}, {F, T, T, F}, {F, T, F, F},
	})...)
	a := exprSchema("a", vector.Int64)
	arows := []vt.Row{{1}, {2}, {3}}
	vt.RunExpr(t, allOps("bigint-const", a, arows, col("a"), lit(2), [7][]any{
		{F, T, F}, {T, F, T}, {T, F, F}, {T, T, F}, {F, F, T}, {F, T, T}, {F, T, F},
	})...)
	vt.RunExpr(t, allOps("const-bigint", a, arows, lit(2), col("a"), [7][]any{
		{F, T, F}, {T, F, T}, {F, F, T}, {F, T, T}, {T, F, F}, {T, T, F}, {F, T, F},
	})...)
	ij := exprSchema("i", vector.Int32, "a", vector.Int64)
	vt.RunExpr(t, allOps("int-bigint", ij, []vt.Row{{1, 1 << 40}, {5, 5}, {-1, -2}}, col("i"), col("a"), [7][]any{
		{F, T, F}, {T, F, T}, {T, F, F}, {T, T, F}, {F, F, T}, {F, T, T}, {F, T, F},
	})...)
	id := exprSchema("i", vector.Int32, "d", vector.Float64)
	vt.RunExpr(t, allOps("int-double", id, []vt.Row{{1, 1.5}, {2, 2.0}, {3, math.NaN()}}, col("i"), col("d"), [7][]any{
		{F, T, F}, {T, F, T}, {T, F, T}, {T, T, T}, {F, F, F}, {F, T, F}, {F, T, F},
	})...)
	xy := exprSchema("x", vector.Decimal(5, 2), "y", vector.Decimal(10, 4))
	vt.RunExpr(t, allOps("decimal", xy, []vt.Row{{"1.50", "1.5000"}, {"1.50", "1.5001"}, {"-2.00", "-3.0000"}}, col("x"), col("y"), [7][]any{
		{T, F, F}, {F, T, T}, {F, T, F}, {T, T, F}, {F, F, T}, {T, F, T}, {T, F, F},
	})...)
	xi := exprSchema("x", vector.Decimal(5, 2))
	vt.RunExpr(t, allOps("decimal-int", xi, []vt.Row{{"1.00"}, {"1.01"}, {"0.99"}}, col("x"), lit(1), [7][]any{
		{T, F, F}, {F, T, T}, {F, F, T}, {T, F, T}, {F, T, F}, {T, T, F}, {T, F, F},
	})...)
}

func TestCompareDoubles(t *testing.T) {
	de := exprSchema("d", vector.Float64, "e", vector.Float64)
	nan := math.NaN()
	rows := []vt.Row{{nan, nan}, {nan, 1.0}, {1.0, nan}, {math.Copysign(0, -1), 0.0}, {1.0, 2.0}, {math.Inf(1), nan}}
	T, F := true, false
	vt.RunExpr(t, allOps("vv", de, rows, col("d"), col("e"), [7][]any{
		{T, F, F, T, F, F},
		{F, T, T, F, T, T},
		{F, F, T, F, T, T},
		{T, F, T, T, T, T},
		{F, T, F, F, F, F},
		{T, T, F, T, F, F},
		{T, F, F, T, F, F},
	})...)
	d := exprSchema("d", vector.Float64)
	drows := []vt.Row{{nan}, {1.0}, {math.Inf(1)}}
	vt.RunExpr(t, allOps("vs-nan", d, drows, col("d"), lit(nan), [7][]any{
		{T, F, F}, {F, T, T}, {F, T, T}, {T, T, T}, {F, F, F}, {T, F, F}, {T, F, F},
	})...)
	vt.RunExpr(t, allOps("vs", d, drows, col("d"), lit(1.0), [7][]any{
		{F, T, F}, {T, F, T}, {F, F, F}, {F, T, F}, {T, F, T}, {T, T, T}, {F, T, F},
	})...)
}

func TestCompareStrings(t *testing.T) {
	st := exprSchema("s", vector.String, "t", vector.String)
	rows := []vt.Row{{"ab", "abc"}, {"b", "abc"}, {"", ""}, {"é", "z"}, {"same", "same"}}
	T, F := true, false
	vt.RunExpr(t, allOps("vv", st, rows, col("s"), col("t"), [7][]any{
		{F, F, T, F, T}, {T, T, F, T, F}, {T, F, F, F, F}, {T, F, T, F, T}, {F, T, F, T, F}, {F, T, T, T, T}, {F, F, T, F, T},
	})...)
	s := exprSchema("s", vector.String)
	srows := []vt.Row{{"view"}, {"click"}, {"viewer"}, {""}, {"zzz"}}
	want := [7][]any{
		{T, F, F, F, F}, {F, T, T, T, T}, {F, T, F, T, F}, {T, T, F, T, F}, {F, F, T, F, T}, {T, F, T, F, T}, {T, F, F, F, F},
	}
	vt.RunExpr(t, allOps("vs", s, srows, col("s"), lit("view"), want)...)
	dict := exprSchema("s", dictStringType)
	vt.RunExpr(t, allOps("dict-vs", dict, srows, col("s"), lit("view"), want)...)
	ds := exprSchema("s", dictStringType, "t", vector.String)
	vt.RunExpr(t, allOps("dict-vv", ds, rows, col("s"), col("t"), [7][]any{
		{F, F, T, F, T}, {T, T, F, T, F}, {T, F, F, F, F}, {T, F, T, F, T}, {F, T, F, T, F}, {F, T, T, T, T}, {F, F, T, F, T},
	})...)
	bin := exprSchema("x", vector.Binary, "y", vector.Binary)
	vt.RunExpr(t, allOps("binary", bin, []vt.Row{{[]byte{0, 1}, []byte{0, 1}}, {[]byte{0xff}, []byte{0, 1}}}, col("x"), col("y"), [7][]any{
		{T, F}, {F, T}, {F, F}, {T, F}, {F, T}, {T, T}, {T, F},
	})...)
}

func TestCompareOthers(t *testing.T) {
	T, F := true, false
	pq := exprSchema("p", vector.Boolean, "q", vector.Boolean)
	vt.RunExpr(t, allOps("bool", pq, []vt.Row{{F, F}, {F, T}, {T, F}, {T, T}}, col("p"), col("q"), [7][]any{
		{T, F, F, T}, {F, T, T, F}, {F, T, F, F}, {T, T, F, T}, {F, F, T, F}, {T, F, T, T}, {T, F, F, T},
	})...)
	p := exprSchema("p", vector.Boolean)
	vt.RunExpr(t, allOps("bool-const", p, []vt.Row{{F}, {T}}, col("p"), lit(true), [7][]any{
		{F, T}, {T, F}, {T, F}, {T, T}, {F, F}, {F, T}, {F, T},
	})...)
	ts := exprSchema("ts", vector.Timestamp, "dt", vector.Date)
	day := int64(86_400_000_000)
	vt.RunExpr(t, allOps("date-timestamp", ts, []vt.Row{{arrow.Timestamp(day), arrow.Date32(1)}, {arrow.Timestamp(day + 1), arrow.Date32(1)}},
		col("ts"), col("dt"), [7][]any{
			{T, F}, {F, T}, {F, F}, {T, F}, {F, T}, {T, T}, {T, F},
		})...)
	d := exprSchema("dt", vector.Date)
	vt.RunExpr(t, allOps("date-const", d, []vt.Row{{arrow.Date32(3)}, {arrow.Date32(5)}}, col("dt"), lit(arrow.Date32(4)), [7][]any{
		{F, F}, {T, T}, {T, F}, {T, F}, {F, T}, {F, T}, {F, F},
	})...)
	lr := exprSchema("l", vector.WindowType, "r", vector.WindowType)
	rows := []vt.Row{
		{[]any{10, 20}, []any{10, 20}},
		{[]any{10, 20}, []any{10, 30}},
		{[]any{10, nil}, []any{10, nil}},
		{[]any{nil, 20}, []any{5, 20}},
		{[]any{30, 0}, []any{20, 40}},
	}
	vt.RunExpr(t, allOps("struct", lr, rows, col("l"), col("r"), [7][]any{
		{T, F, T, F, F}, {F, T, F, T, T}, {F, T, F, T, F}, {T, T, T, T, F}, {F, F, F, F, T}, {T, F, T, F, T}, {T, F, T, F, F},
	})...)
}

func TestCompareNullsAndErrors(t *testing.T) {
	ab := exprSchema("a", vector.Int64, "b", vector.Int64)
	as := exprSchema("a", vector.Int64, "s", vector.String)
	lr := exprSchema("l", vector.WindowType, "a", vector.Int64)
	rows := []vt.Row{{1, 1}, {nil, nil}, {1, nil}, {nil, 1}}
	vt.RunExpr(t,
		vt.ExprCase{Name: "eqns", Schema: ab, Rows: rows, Expr: vector.EqualNullSafe(col("a"), col("b")), Want: []any{true, true, false, false}},
		vt.ExprCase{Name: "eq", Schema: ab, Rows: rows, Expr: vector.Eq(col("a"), col("b")), Want: []any{true, nil, nil, nil}},
		vt.ExprCase{Name: "eqns-null-lit", Schema: ab, Rows: rows, Expr: vector.EqualNullSafe(col("a"), lit(nil)), Want: []any{false, true, false, true}},
		vt.ExprCase{Name: "null-lit-eqns", Schema: ab, Rows: rows, Expr: vector.EqualNullSafe(lit(nil), col("b")), Want: []any{false, true, true, false}},
		vt.ExprCase{Name: "eq-null-lit", Schema: ab, Rows: rows, Expr: vector.Eq(col("a"), lit(nil)), Want: []any{nil, nil, nil, nil}},
		vt.ExprCase{Name: "null-null", Schema: ab, Rows: rows[:1], Expr: vector.EqualNullSafe(lit(nil), lit(nil)), Want: []any{true}},
		vt.ExprCase{Name: "folded", Schema: ab, Rows: rows[:1], Expr: vector.Lt(lit(1), lit(int64(2))), Want: []any{true}},
		vt.ExprCase{Name: "int-string", Schema: as, Rows: []vt.Row{{1, "1"}}, Expr: vector.Eq(col("a"), col("s")),
			WantErr: "cannot bind (a = s): cannot apply = to bigint and string: type mismatch (available columns: a, s)"},
		vt.ExprCase{Name: "int-string-lit", Schema: as, Rows: []vt.Row{{1, "1"}}, Expr: vector.Lt(col("a"), lit("x")),
			WantErr: "cannot bind (a < 'x'): cannot apply < to bigint and string"},
		vt.ExprCase{Name: "typed-null-mismatch", Schema: as, Rows: []vt.Row{{1, "1"}}, Expr: vector.Eq(col("a"), vector.TypedLit(vector.String, nil)),
			WantErr: "cannot apply = to bigint and string"},
		vt.ExprCase{Name: "decimal-widen-overflow", Schema: exprSchema("p", vector.Decimal(38, 0), "q", vector.Decimal(38, 20)),
			Rows: []vt.Row{{"100000000000000000000", "1"}}, Expr: vector.Eq(col("p"), col("q")),
			WantErr: "value does not fit decimal(38,20): arithmetic overflow in (p = q) at row 0 (p=100000000000000000000)"},
		vt.ExprCase{Name: "struct-int", Schema: lr, Rows: []vt.Row{{nil, 1}}, Expr: vector.Eq(col("l"), col("a")),
			WantErr: "cannot apply = to struct<start:timestamp,end:timestamp> and bigint"},
	)
}

// TestCompareDictionaryWithNullValues covers dictionaries whose values (not
// only indices) hold nulls: the dictionary kernels decode those batches.
func TestCompareDictionaryWithNullValues(t *testing.T) {
	mem := vt.NewAllocator(t)
	sb := array.NewStringBuilder(mem)
	sb.AppendValues([]string{"view", "", "click"}, []bool{true, false, true})
	dict := sb.NewArray()
	sb.Release()
	ib := array.NewInt8Builder(mem)
	ib.AppendValues([]int8{0, 1, 2, 1, 0}, []bool{true, true, true, true, false})
	idx := ib.NewArray()
	ib.Release()
	d := array.NewDictionaryArray(dictStringType, idx, dict)
	idx.Release()
	dict.Release()
	schema := exprSchema("s", dictStringType)
	rec := array.NewRecord(schema, []arrow.Array{d}, 5)
	d.Release()
	defer rec.Release()
	for e, want := range map[vector.Expr][]any{
		vector.Eq(col("s"), lit("view")):               {true, nil, false, nil, nil},
		vector.NotEq(col("s"), lit("view")):            {false, nil, true, nil, nil},
		vector.In(col("s"), lit("view"), lit("click")): {true, nil, true, nil, nil},
		vector.EqualNullSafe(col("s"), lit("click")):   {false, false, true, false, false},
		vector.Between(col("s"), lit("a"), lit("d")):   {false, nil, true, nil, nil},
	} {
		got := evalOnce(t, mem, e, rec)
		if vals := vt.ValuesOf(got); !vt.ValueEqual(want, vals) {
			t.Errorf("%s: want %v, got %v", e, want, vals)
		}
		got.Release()
	}
}

// TestDateWidenedToTimestampOverflow: a date compared with (or merged with)
// a timestamp is widened to one; dates past the timestamp range wrapped
// around silently (a date of year 5.8 million compared as a timestamp of
// 1970 + 34000 years). Now they are an overflow error, as CAST(date AS
// TIMESTAMP) is.
func TestDateWidenedToTimestampOverflow(t *testing.T) {
	s := exprSchema("d", vector.Date, "t", vector.Timestamp)
	big := []vt.Row{{arrow.Date32(math.MaxInt32), arrow.Timestamp(0)}}
	small := []vt.Row{{arrow.Date32(math.MinInt32), arrow.Timestamp(0)}}
	edge := []vt.Row{{arrow.Date32(106751991), arrow.Timestamp(math.MaxInt64)}, {arrow.Date32(-106751991), arrow.Timestamp(math.MinInt64)}}
	overflow := "value does not fit timestamp: arithmetic overflow"
	vt.RunExpr(t,
		vt.ExprCase{Name: "lt", Schema: s, Rows: big, Expr: vector.Lt(col("d"), col("t")), WantErr: overflow + " in (d < t) at row 0 (d=DATE '5881580-07-11')"},
		vt.ExprCase{Name: "eq-constant", Schema: s, Rows: small, Expr: vector.Eq(col("d"), lit(arrow.Timestamp(0))), WantErr: overflow},
		vt.ExprCase{Name: "case", Schema: s, Rows: big, Expr: vector.If(lit(true), col("d"), col("t")), WantErr: overflow},
		vt.ExprCase{Name: "coalesce", Schema: s, Rows: small, Expr: vector.Coalesce(col("d"), col("t")), WantErr: overflow},
		vt.ExprCase{Name: "in", Schema: s, Rows: big, Expr: vector.In(col("d"), lit(arrow.Timestamp(0))), WantErr: overflow},
		vt.ExprCase{Name: "between", Schema: s, Rows: small, Expr: vector.Between(col("d"), col("t"), col("t")), WantErr: overflow},
		vt.ExprCase{Name: "date-literal", Schema: s, Rows: small, Expr: vector.Eq(lit(arrow.Date32(math.MaxInt32)), col("t")),
			WantErr: "cannot bind (DATE '5881580-07-11' = t): DATE '5881580-07-11': does not fit timestamp: arithmetic overflow"},
		vt.ExprCase{Name: "edge", Schema: s, Rows: edge, Expr: vector.Lt(col("d"), col("t")), Want: []any{true, false}, NullIntolerant: true},
		vt.ExprCase{Name: "edge-case", Schema: s, Rows: edge, Expr: vector.If(lit(true), col("d"), col("t")),
			Want: []any{int64(106751991 * 86_400_000_000), int64(-106751991 * 86_400_000_000)}},
	)
}

// TestNullSafeTypedNull: a typed NULL <=> x is x IS NULL, but x still
// converts to the common type as it does against a NULL column, so a date
// past the timestamp range fails the same way whether the NULL is a
// literal or not (found by FuzzExprEvalWide's literal-as-column twins).
func TestNullSafeTypedNull(t *testing.T) {
	s := exprSchema("d", vector.Date, "t", vector.Timestamp)
	T, F := true, false
	nullTS := vector.TypedLit(vector.Timestamp, nil)
	vt.RunExpr(t,
		vt.ExprCase{Name: "values", Schema: s, Rows: []vt.Row{{arrow.Date32(1), nil}, {nil, nil}}, Expr: vector.EqualNullSafe(nullTS, col("d")),
			Want: []any{F, T}, WantType: vector.Boolean},
		vt.ExprCase{Name: "right-null", Schema: s, Rows: []vt.Row{{arrow.Date32(1), nil}, {nil, nil}}, Expr: vector.EqualNullSafe(col("d"), nullTS),
			Want: []any{F, T}},
		vt.ExprCase{Name: "untyped-null", Schema: s, Rows: []vt.Row{{arrow.Date32(math.MaxInt32), nil}}, Expr: vector.EqualNullSafe(lit(nil), col("d")),
			Want: []any{F}},
		vt.ExprCase{Name: "literal", Schema: s, Rows: []vt.Row{{arrow.Date32(math.MaxInt32), nil}}, Expr: vector.EqualNullSafe(nullTS, col("d")),
			WantErr: "value does not fit timestamp: arithmetic overflow"},
		vt.ExprCase{Name: "column", Schema: s, Rows: []vt.Row{{arrow.Date32(math.MaxInt32), nil}}, Expr: vector.EqualNullSafe(col("t"), col("d")),
			WantErr: "value does not fit timestamp: arithmetic overflow"},
	)
}
