package vector_test

import (
	"context"
	"errors"
	"math"
	"math/big"
	"strings"
	"testing"

	"github.com/apache/arrow/go/v17/arrow"
	"github.com/apache/arrow/go/v17/arrow/array"
	"github.com/apache/arrow/go/v17/arrow/memory"

	"github.com/arrowstream/arrowstream/vector"
	vt "github.com/arrowstream/arrowstream/vector/vectortest"
)

// exprSchema builds a schema of nullable fields from name, type pairs.
func exprSchema(nameTypes ...any) *arrow.Schema {
	var fs []arrow.Field
	for i := 0; i < len(nameTypes); i += 2 {
		fs = append(fs, arrow.Field{Name: nameTypes[i].(string), Type: nameTypes[i+1].(arrow.DataType), Nullable: true})
	}
	return arrow.NewSchema(fs, nil)
}

var (
	col = vector.Col
	lit = vector.Lit
)

func TestArithmeticIntegers(t *testing.T) {
	ab := exprSchema("a", vector.Int64, "b", vector.Int64)
	abRows := []vt.Row{{1, 2}, {-5, 3}, {math.MaxInt64 - 1, 1}, {math.MinInt64 + 3, -3}, {0, 7}, {100, -100}}
	ij := exprSchema("i", vector.Int32, "j", vector.Int32)
	ijRows := []vt.Row{{1, 2}, {-5, 3}, {math.MaxInt32 - 1, 1}, {7, -2}}
	ia := exprSchema("i", vector.Int32, "a", vector.Int64)
	a := exprSchema("a", vector.Int64)
	aRows := []vt.Row{{1}, {-5}, {40}, {math.MaxInt64}, {math.MinInt64 + 1}}
	vt.RunExpr(t,
		vt.ExprCase{Name: "add", Schema: ab, Rows: abRows, Expr: vector.Add(col("a"), col("b")), NullIntolerant: true,
			WantType: vector.Int64, Want: []any{3, -2, int64(math.MaxInt64), int64(math.MinInt64), 7, 0}},
		vt.ExprCase{Name: "sub", Schema: ab, Rows: abRows[:2], Expr: vector.Sub(col("a"), col("b")), NullIntolerant: true,
			Want: []any{-1, -8}},
		vt.ExprCase{Name: "mul", Schema: ab, Rows: []vt.Row{{3, 4}, {-3, 4}, {math.MaxInt64, 1}, {1 << 31, 1 << 31}, {-(1 << 31), 1 << 32}},
			Expr: vector.Mul(col("a"), col("b")), NullIntolerant: true,
			Want: []any{12, -12, int64(math.MaxInt64), int64(1 << 62), int64(math.MinInt64)}},
		vt.ExprCase{Name: "mod", Schema: ab, Rows: []vt.Row{{7, 3}, {-7, 3}, {7, -3}, {math.MinInt64, -1}},
			Expr: vector.Mod(col("a"), col("b")), NullIntolerant: true, WantType: vector.Int64,
			Want: []any{1, -1, 1, 0}},
		vt.ExprCase{Name: "div-is-double", Schema: ab, Rows: []vt.Row{{7, 2}, {-1, 4}}, Expr: vector.Div(col("a"), col("b")),
			NullIntolerant: true, WantType: vector.Float64, Want: []any{3.5, -0.25}},
		vt.ExprCase{Name: "int32", Schema: ij, Rows: ijRows, Expr: vector.Add(col("i"), col("j")), NullIntolerant: true,
			WantType: vector.Int32, Want: []any{3, -2, int32(math.MaxInt32), 5}},
		vt.ExprCase{Name: "int32-mul", Schema: ij, Rows: []vt.Row{{1 << 15, 1 << 15}, {-(1 << 16), 1 << 15}},
			Expr: vector.Mul(col("i"), col("j")), NullIntolerant: true, WantType: vector.Int32,
			Want: []any{1 << 30, int32(math.MinInt32)}},
		vt.ExprCase{Name: "widen-int-bigint", Schema: ia, Rows: []vt.Row{{1, math.MaxInt64 - 1}, {-2, 5}},
			Expr: vector.Add(col("i"), col("a")), NullIntolerant: true, WantType: vector.Int64,
			Want: []any{int64(math.MaxInt64), 3}},
		vt.ExprCase{Name: "plus-const", Schema: a, Rows: aRows[:3], Expr: vector.Add(col("a"), lit(1)), NullIntolerant: true,
			WantType: vector.Int64, Want: []any{2, -4, 41}},
		vt.ExprCase{Name: "const-minus", Schema: a, Rows: aRows[:3], Expr: vector.Sub(lit(10), col("a")), NullIntolerant: true,
			Want: []any{9, 15, -30}},
		vt.ExprCase{Name: "minus-const", Schema: a, Rows: aRows[:3], Expr: vector.Sub(col("a"), lit(int64(10))), NullIntolerant: true,
			Want: []any{-9, -15, 30}},
		vt.ExprCase{Name: "times-const", Schema: a, Rows: aRows[:3], Expr: vector.Mul(lit(3), col("a")), NullIntolerant: true,
			Want: []any{3, -15, 120}},
		vt.ExprCase{Name: "mod-const", Schema: a, Rows: aRows[:3], Expr: vector.Mod(col("a"), lit(3)), NullIntolerant: true,
			Want: []any{1, -2, 1}},
		vt.ExprCase{Name: "const-mod", Schema: a, Rows: aRows[:3], Expr: vector.Mod(lit(100), col("a")), NullIntolerant: true,
			Want: []any{0, 0, 20}},
		vt.ExprCase{Name: "div-const", Schema: a, Rows: aRows[:3], Expr: vector.Div(col("a"), lit(4)), NullIntolerant: true,
			Want: []any{0.25, -1.25, 10.0}},
		vt.ExprCase{Name: "negate", Schema: a, Rows: aRows, Expr: vector.Negate(col("a")), NullIntolerant: true,
			WantType: vector.Int64, Want: []any{-1, 5, -40, -math.MaxInt64, math.MaxInt64}},
		vt.ExprCase{Name: "plus-null", Schema: a, Rows: aRows[:2], Expr: vector.Add(col("a"), lit(nil)),
			WantType: vector.Int64, Want: []any{nil, nil}},
		vt.ExprCase{Name: "plus-typed-null", Schema: a, Rows: aRows[:2], Expr: vector.Add(col("a"), vector.TypedLit(vector.Float64, nil)),
			WantType: vector.Float64, Want: []any{nil, nil}},
		vt.ExprCase{Name: "folded", Schema: a, Rows: aRows[:2], Expr: vector.Add(vector.Mul(lit(2), lit(3)), col("a")), NullIntolerant: true,
			Want: []any{7, 1}},
	)
}

func TestArithmeticErrors(t *testing.T) {
	ab := exprSchema("a", vector.Int64, "b", vector.Int64)
	ij := exprSchema("i", vector.Int32, "j", vector.Int32)
	as := exprSchema("a", vector.Int64, "s", vector.String)
	d := exprSchema("d", vector.Float64, "e", vector.Float64)
	vt.RunExpr(t,
		vt.ExprCase{Name: "add-overflow", Schema: ab, Rows: []vt.Row{{math.MaxInt64, 1}, {1, 1}}, Expr: vector.Add(col("a"), col("b")),
			WantErr: "arithmetic overflow in (a + b) at row 0 (a=9223372036854775807, b=1)"},
		vt.ExprCase{Name: "sub-overflow", Schema: ab, Rows: []vt.Row{{math.MinInt64, 1}}, Expr: vector.Sub(col("a"), col("b")),
			WantErr: "arithmetic overflow in (a - b) at row 0 (a=-9223372036854775808, b=1)"},
		vt.ExprCase{Name: "mul-overflow", Schema: ab, Rows: []vt.Row{{1 << 32, 1 << 31}}, Expr: vector.Mul(col("a"), col("b")),
			WantErr: "arithmetic overflow in (a * b) at row 0 (a=4294967296, b=2147483648)"},
		vt.ExprCase{Name: "mul-overflow-min", Schema: ab, Rows: []vt.Row{{math.MinInt64, -1}}, Expr: vector.Mul(col("a"), col("b")),
			WantErr: "arithmetic overflow"},
		vt.ExprCase{Name: "const-overflow", Schema: ab, Rows: []vt.Row{{math.MaxInt64 - 1, 0}}, Expr: vector.Add(col("a"), lit(2)),
			WantErr: "arithmetic overflow in (a + 2) at row 0 (a=9223372036854775806)"},
		vt.ExprCase{Name: "int32-overflow", Schema: ij, Rows: []vt.Row{{math.MaxInt32, 1}}, Expr: vector.Add(col("i"), col("j")),
			WantErr: "arithmetic overflow in (i + j) at row 0 (i=2147483647, j=1)"},
		vt.ExprCase{Name: "int32-mul-overflow", Schema: ij, Rows: []vt.Row{{1 << 16, 1 << 15}}, Expr: vector.Mul(col("i"), col("j")),
			WantErr: "arithmetic overflow in (i * j)"},
		vt.ExprCase{Name: "negate-overflow", Schema: ab, Rows: []vt.Row{{math.MinInt64, 0}}, Expr: vector.Negate(col("a")),
			WantErr: "arithmetic overflow in (- a) at row 0 (a=-9223372036854775808)"},
		vt.ExprCase{Name: "negate-int32-overflow", Schema: ij, Rows: []vt.Row{{math.MinInt32, 0}}, Expr: vector.Negate(col("i")),
			WantErr: "arithmetic overflow in (- i) at row 0 (i=-2147483648)"},
		vt.ExprCase{Name: "sub-const-left-overflow", Schema: ab, Rows: []vt.Row{{1, 0}}, Expr: vector.Sub(lit(int64(math.MinInt64)), col("a")),
			WantErr: "arithmetic overflow in (-9223372036854775808L - a) at row 0 (a=1)"},
		vt.ExprCase{Name: "mul-const-overflow", Schema: ab, Rows: []vt.Row{{1, 0}, {1 << 40, 0}}, Expr: vector.Mul(col("a"), lit(int64(1<<30))),
			WantErr: "(a=1099511627776)"},
		vt.ExprCase{Name: "mod-zero", Schema: ab, Rows: []vt.Row{{5, 0}}, Expr: vector.Mod(col("a"), col("b")),
			WantErr: "division by zero in (a % b) at row 0 (a=5, b=0)"},
		vt.ExprCase{Name: "mod-zero-const", Schema: ab, Rows: []vt.Row{{5, 0}}, Expr: vector.Mod(col("a"), lit(0)),
			WantErr: "division by zero in (a % 0) at row 0 (a=5)"},
		vt.ExprCase{Name: "div-zero", Schema: ab, Rows: []vt.Row{{5, 0}}, Expr: vector.Div(col("a"), col("b")),
			WantErr: "division by zero in (a / b) at row 0 (a=5, b=0)"},
		vt.ExprCase{Name: "double-div-zero", Schema: d, Rows: []vt.Row{{1.0, 0.0}}, Expr: vector.Div(col("d"), col("e")),
			WantErr: "division by zero in (d / e) at row 0 (d=1, e=0)"},
		vt.ExprCase{Name: "double-div-negzero", Schema: d, Rows: []vt.Row{{1.0, math.Copysign(0, -1)}}, Expr: vector.Div(col("d"), col("e")),
			WantErr: "division by zero"},
		vt.ExprCase{Name: "folded-div-zero", Schema: ab, Rows: []vt.Row{{1, 1}}, Expr: vector.Div(lit(1), lit(0)),
			WantErr: "division by zero in (1 / 0) at row 0"},
		vt.ExprCase{Name: "int-plus-string", Schema: as, Rows: []vt.Row{{1, "x"}}, Expr: vector.Add(col("a"), col("s")),
			WantErr: "cannot bind (a + s): cannot apply + to bigint and string: type mismatch (available columns: a, s)"},
		vt.ExprCase{Name: "negate-string", Schema: as, Rows: []vt.Row{{1, "x"}}, Expr: vector.Negate(col("s")),
			WantErr: "cannot bind (- s): cannot apply - to string: type mismatch"},
		vt.ExprCase{Name: "unknown-column", Schema: as, Rows: []vt.Row{{1, "x"}}, Expr: vector.Add(col("a"), col("zz")),
			WantErr: "cannot bind zz: unknown column zz (available columns: a, s)"},
	)
	// A null divisor or dividend makes the row null before any zero check.
	vt.RunExpr(t, vt.ExprCase{Name: "null-before-zero", Schema: ab, Rows: []vt.Row{{nil, 0}, {5, nil}, {6, 3}},
		Expr: vector.Mod(col("a"), col("b")), Want: []any{nil, nil, 0}})
}

func TestArithmeticDoubles(t *testing.T) {
	d := exprSchema("d", vector.Float64, "e", vector.Float64)
	rows := []vt.Row{{1.5, 2.0}, {-3.0, 0.5}, {7.5, -2.0}}
	ad := exprSchema("a", vector.Int64, "d", vector.Float64)
	vt.RunExpr(t,
		vt.ExprCase{Name: "add", Schema: d, Rows: rows, Expr: vector.Add(col("d"), col("e")), NullIntolerant: true, Want: []any{3.5, -2.5, 5.5}},
		vt.ExprCase{Name: "sub", Schema: d, Rows: rows, Expr: vector.Sub(col("d"), col("e")), NullIntolerant: true, Want: []any{-0.5, -3.5, 9.5}},
		vt.ExprCase{Name: "mul", Schema: d, Rows: rows, Expr: vector.Mul(col("d"), col("e")), NullIntolerant: true, Want: []any{3.0, -1.5, -15.0}},
		vt.ExprCase{Name: "div", Schema: d, Rows: rows, Expr: vector.Div(col("d"), col("e")), NullIntolerant: true, Want: []any{0.75, -6.0, -3.75}},
		vt.ExprCase{Name: "mod", Schema: d, Rows: rows, Expr: vector.Mod(col("d"), col("e")), NullIntolerant: true, Want: []any{1.5, 0.0, 1.5}},
		vt.ExprCase{Name: "const-div", Schema: d, Rows: rows, Expr: vector.Div(lit(3.0), col("e")), Want: []any{1.5, 6.0, -1.5}},
		vt.ExprCase{Name: "mixed", Schema: ad, Rows: []vt.Row{{2, 0.5}, {-1, 1.25}}, Expr: vector.Mul(col("a"), col("d")), NullIntolerant: true,
			WantType: vector.Float64, Want: []any{1.0, -1.25}},
		vt.ExprCase{Name: "overflow-is-inf", Schema: d, Rows: []vt.Row{{math.MaxFloat64, 2.0}}, Expr: vector.Mul(col("d"), col("e")),
			Want: []any{math.Inf(1)}},
		vt.ExprCase{Name: "negate", Schema: d, Rows: rows, Expr: vector.Negate(col("d")), Want: []any{-1.5, 3.0, -7.5}},
	)
}

func TestArithmeticDecimals(t *testing.T) {
	xy := exprSchema("x", vector.Decimal(5, 2), "y", vector.Decimal(7, 3))
	rows := []vt.Row{{"1.50", "2.125"}, {"-3.25", "0.400"}, {"999.99", "-9999.999"}}
	xi := exprSchema("x", vector.Decimal(5, 2), "i", vector.Int32)
	big := exprSchema("p", vector.Decimal(38, 0), "q", vector.Decimal(38, 0))
	frac := exprSchema("f", vector.Decimal(20, 10), "g", vector.Decimal(20, 10))
	xd := exprSchema("x", vector.Decimal(5, 2), "d", vector.Float64)
	vt.RunExpr(t,
		vt.ExprCase{Name: "add", Schema: xy, Rows: rows, Expr: vector.Add(col("x"), col("y")), NullIntolerant: true,
			WantType: vector.Decimal(8, 3), Want: []any{"3.625", "-2.850", "-9000.009"}},
		vt.ExprCase{Name: "sub", Schema: xy, Rows: rows, Expr: vector.Sub(col("x"), col("y")), NullIntolerant: true,
			WantType: vector.Decimal(8, 3), Want: []any{"-0.625", "-3.650", "10999.989"}},
		vt.ExprCase{Name: "mul", Schema: xy, Rows: rows, Expr: vector.Mul(col("x"), col("y")), NullIntolerant: true,
			WantType: vector.Decimal(13, 5), Want: []any{"3.18750", "-1.30000", "-9999899.00001"}},
		vt.ExprCase{Name: "div", Schema: xy, Rows: rows, Expr: vector.Div(col("x"), col("y")), NullIntolerant: true,
			WantType: vector.Decimal(16, 10), Want: []any{"0.7058823529", "-8.1250000000", "-0.0999990100"}},
		vt.ExprCase{Name: "mod", Schema: xy, Rows: rows, Expr: vector.Mod(col("x"), col("y")), NullIntolerant: true,
			WantType: vector.Decimal(6, 3), Want: []any{"1.500", "-0.050", "999.990"}},
		vt.ExprCase{Name: "plus-int", Schema: xi, Rows: []vt.Row{{"1.50", 2}, {"-0.01", -100}}, Expr: vector.Add(col("x"), col("i")),
			NullIntolerant: true, WantType: vector.Decimal(13, 2), Want: []any{"3.50", "-100.01"}},
		vt.ExprCase{Name: "plus-literal", Schema: xy, Rows: rows, Expr: vector.Add(col("x"), lit(1)),
			WantType: vector.Decimal(6, 2), Want: []any{"2.50", "-2.25", "1000.99"}},
		vt.ExprCase{Name: "times-literal", Schema: xy, Rows: rows, Expr: vector.Mul(lit(10), col("x")),
			WantType: vector.Decimal(8, 2), Want: []any{"15.00", "-32.50", "9999.90"}},
		vt.ExprCase{Name: "plus-double", Schema: xd, Rows: []vt.Row{{"1.10", 0.5}}, Expr: vector.Add(col("x"), col("d")),
			NullIntolerant: true, WantType: vector.Float64, Want: []any{1.6}},
		vt.ExprCase{Name: "capped-add", Schema: big, Rows: []vt.Row{{"1", "2"}}, Expr: vector.Add(col("p"), col("q")),
			NullIntolerant: true, WantType: vector.Decimal(38, 0), Want: []any{"3"}},
		vt.ExprCase{Name: "capped-mul", Schema: frac, Rows: []vt.Row{{"1.0000000001", "1.0000000001"}, {"-2.5", "0.0000000003"}},
			Expr: vector.Mul(col("f"), col("g")), NullIntolerant: true, WantType: vector.Decimal(38, 17),
			Want: []any{"1.00000000020000000", "-0.00000000075000000"}},
		vt.ExprCase{Name: "negate", Schema: xy, Rows: rows, Expr: vector.Negate(col("x")), Want: []any{"-1.50", "3.25", "-999.99"}},
		vt.ExprCase{Name: "overflow", Schema: big, Rows: []vt.Row{{"99999999999999999999999999999999999999", "1"}},
			Expr:    vector.Add(col("p"), col("q")),
			WantErr: "[NUMERIC_VALUE_OUT_OF_RANGE] The result of the decimal operation cannot be represented as Decimal(38, 0). If necessary set \"spark.sql.ansi.enabled\" to \"false\" to bypass this error. in (p + q) at row 0 (p=99999999999999999999999999999999999999, q=1)"},
		vt.ExprCase{Name: "div-zero", Schema: xy, Rows: []vt.Row{{"1.00", "0.000"}}, Expr: vector.Div(col("x"), col("y")),
			WantErr: "division by zero in (x / y) at row 0 (x=1.00, y=0.000)"},
		vt.ExprCase{Name: "mod-zero", Schema: xy, Rows: []vt.Row{{"1.00", "0.000"}}, Expr: vector.Mod(col("x"), col("y")),
			WantErr: "division by zero in (x % y)"},
	)
}

// TestArithmeticGarbageUnderNulls builds operands whose null slots hold
// values that would overflow or divide by zero: no error may come of them.
func TestArithmeticGarbageUnderNulls(t *testing.T) {
	mem := vt.NewAllocator(t)
	ints := func(vals []int64, valid []bool) arrow.Array {
		b := array.NewInt64Builder(mem)
		defer b.Release()
		b.AppendValues(vals, valid)
		return b.NewArray()
	}
	a := ints([]int64{math.MaxInt64, 1, math.MinInt64}, []bool{false, true, false})
	b := ints([]int64{1, 2, 0}, []bool{true, true, true})
	defer a.Release()
	defer b.Release()
	schema := exprSchema("a", vector.Int64, "b", vector.Int64)
	rec := array.NewRecord(schema, []arrow.Array{a, b}, 3)
	defer rec.Release()
	for _, e := range []vector.Expr{
		vector.Add(col("a"), col("b")), vector.Sub(col("a"), col("b")), vector.Mul(col("a"), col("b")),
		vector.Mod(col("a"), col("b")), vector.Mod(col("b"), col("a")), vector.Div(col("b"), col("a")),
		vector.Negate(col("a")), vector.Add(col("a"), lit(1)), vector.Mul(col("a"), lit(int64(math.MaxInt64))),
	} {
		got := evalOnce(t, mem, e, rec)
		if got.IsValid(0) || !got.IsValid(1) || got.IsValid(2) {
			t.Errorf("%s: validity wrong: %v", e, got)
		}
		got.Release()
	}
}

// TestArithmeticErrorRow checks the row and the sentinel of a runtime
// error deep in a batch.
func TestArithmeticErrorRow(t *testing.T) {
	mem := vt.NewAllocator(t)
	schema := exprSchema("a", vector.Int64)
	rows := make([]vt.Row, 100)
	for i := range rows {
		rows[i] = vt.Row{int64(i)}
	}
	rows[77] = vt.Row{int64(math.MaxInt64)}
	rec := vt.BuildRecord(mem, schema, rows)
	defer rec.Release()
	ev, err := vector.Add(col("a"), lit(int64(1))).Bind(schema, mem)
	if err != nil {
		t.Fatal(err)
	}
	_, err = ev.Eval(context.Background(), rec)
	var ee *vector.EvalError
	if !errors.As(err, &ee) || ee.Row != 77 || !errors.Is(err, vector.ErrOverflow) {
		t.Fatalf("got %v", err)
	}
	if !strings.Contains(err.Error(), "a=9223372036854775807") {
		t.Errorf("message %q", err)
	}
}

func TestArithmeticString(t *testing.T) {
	for e, want := range map[vector.Expr]string{
		vector.Add(col("a"), lit(1)):                            "(a + 1)",
		vector.Sub(col("a"), vector.Mul(col("b"), lit(2.5))):    "(a - (b * 2.5))",
		vector.Div(col("a"), lit(int64(2))):                     "(a / 2L)",
		vector.Mod(col("a"), col("b")):                          "(a % b)",
		vector.Negate(col("a")):                                 "(- a)",
		vector.Add(col("my col"), vector.Negate(lit(int64(1)))): "(`my col` + (- 1L))",
	} {
		if got := e.String(); got != want {
			t.Errorf("String = %q, want %q", got, want)
		}
	}
}

// evalOnce binds e against rec's schema and evaluates it.
func evalOnce(t *testing.T, mem memory.Allocator, e vector.Expr, rec arrow.Record) arrow.Array {
	t.Helper()
	ev, err := e.Bind(rec.Schema(), mem)
	if err != nil {
		t.Fatalf("Bind(%s): %v", e, err)
	}
	arr, err := ev.Eval(context.Background(), rec)
	if err != nil {
		t.Fatalf("Eval(%s): %v", e, err)
	}
	return arr
}

// FuzzInt64Arith checks + - * on bigint columns and with a constant
// operand against math/big: the value when it fits, else an overflow error
// naming the first row that does not.
func FuzzInt64Arith(f *testing.F) {
	f.Add(int64(1), int64(2), int64(3), uint8(0))
	f.Add(int64(math.MaxInt64), int64(1), int64(-1), uint8(0))
	f.Add(int64(math.MinInt64), int64(-1), int64(2), uint8(2))
	f.Add(int64(1<<32), int64(1<<31), int64(-(1 << 31)), uint8(2))
	f.Fuzz(func(t *testing.T, x, y, c int64, op uint8) {
		ctors := []func(l, r vector.Expr) vector.Expr{vector.Add, vector.Sub, vector.Mul}
		bigOps := []func(z, a, b *big.Int) *big.Int{(*big.Int).Add, (*big.Int).Sub, (*big.Int).Mul}
		k := int(op) % 3
		mem := vt.NewAllocator(t)
		schema := exprSchema("a", vector.Int64, "b", vector.Int64)
		rec := vt.BuildRecord(mem, schema, []vt.Row{{x, y}, {y, x}, {c, y}})
		defer rec.Release()
		check := func(e vector.Expr, pairs [][2]int64) {
			firstBad := -1
			want := make([]int64, len(pairs))
			for i, p := range pairs {
				z := bigOps[k](new(big.Int), big.NewInt(p[0]), big.NewInt(p[1]))
				if !z.IsInt64() {
					if firstBad < 0 {
						firstBad = i
					}
					continue
				}
				want[i] = z.Int64()
			}
			ev, err := e.Bind(schema, mem)
			if err != nil {
				t.Fatal(err)
			}
			got, err := ev.Eval(context.Background(), rec)
			var ee *vector.EvalError
			if firstBad >= 0 {
				if !errors.As(err, &ee) || ee.Row != firstBad || !errors.Is(err, vector.ErrOverflow) {
					t.Fatalf("%s over %v: want overflow at row %d, got %v", e, pairs, firstBad, err)
				}
				return
			}
			if err != nil {
				t.Fatalf("%s over %v: %v", e, pairs, err)
			}
			defer got.Release()
			for i, w := range want {
				if g := got.(*array.Int64).Value(i); g != w {
					t.Fatalf("%s row %d: want %d, got %d", e, i, w, g)
				}
			}
		}
		check(ctors[k](col("a"), col("b")), [][2]int64{{x, y}, {y, x}, {c, y}})
		check(ctors[k](col("a"), lit(c)), [][2]int64{{x, c}, {y, c}, {c, c}})
		check(ctors[k](lit(c), col("b")), [][2]int64{{c, y}, {c, x}, {c, y}})
	})
}

// TestRightOperandWhereLeftNull: Spark evaluates a binary operator row by
// row, the left operand first, and skips the right one where the left is
// null; so the right operand's errors on those rows do not count, while
// the left operand's always do, and <=> (which needs both sides on every
// row) keeps every error. The kernels evaluated the right operand for
// every row (found by FuzzExprEvalWide: a NULL-valued column compared with
// a date past the timestamp range failed where NULL < that date folded to
// NULL).
func TestRightOperandWhereLeftNull(t *testing.T) {
	s := exprSchema("a", vector.Int64, "b", vector.Int64, "t", vector.Timestamp, "d", vector.Date)
	far := arrow.Date32(math.MaxInt32)
	rows := []vt.Row{{nil, math.MaxInt64, nil, far}, {1, 2, 0, arrow.Date32(1)}}
	vt.RunExpr(t,
		vt.ExprCase{Name: "arith", Schema: s, Rows: rows, Expr: vector.Add(col("a"), vector.Mul(col("b"), lit(int64(2)))), Want: []any{nil, int64(5)}},
		vt.ExprCase{Name: "compare", Schema: s, Rows: rows, Expr: vector.Lt(col("t"), col("d")), Want: []any{nil, true}},
		vt.ExprCase{Name: "decimal", Schema: s, Rows: rows, Expr: vector.Add(vector.Cast(col("a"), vector.Decimal(5, 0)), vector.Cast(col("b"), vector.Decimal(3, 0))),
			Want: []any{nil, "3"}},
		vt.ExprCase{Name: "left-error-counts", Schema: s, Rows: rows, Expr: vector.Add(vector.Mul(col("b"), lit(int64(2))), col("a")),
			WantErr: "arithmetic overflow in (b * 2L) at row 0 (b=9223372036854775807)"},
		vt.ExprCase{Name: "right-error-where-left-valid", Schema: s, Rows: []vt.Row{{1, math.MaxInt64, 0, far}}, Expr: vector.Lt(col("t"), col("d")),
			WantErr: "value does not fit timestamp: arithmetic overflow"},
		vt.ExprCase{Name: "null-safe-needs-both", Schema: s, Rows: rows, Expr: vector.EqualNullSafe(col("t"), col("d")),
			WantErr: "value does not fit timestamp: arithmetic overflow"},
	)
}
