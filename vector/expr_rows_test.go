package vector_test

import (
	"strings"
	"testing"
	"time"

	"github.com/apache/arrow/go/v17/arrow"

	"github.com/arrowstream/arrowstream/vector"
	vt "github.com/arrowstream/arrowstream/vector/vectortest"
)

// call looks a function up as the SQL planner does.
func fnCall(t *testing.T, name string, args ...vector.Expr) vector.Expr {
	t.Helper()
	e, err := vector.LookupFunction(name, args)
	if err != nil {
		t.Fatal(err)
	}
	return e
}

// The row-kernel functions over columns (plain and dictionary), mixed
// with constants, with injected NULLs, on a checked allocator.
func TestRowStringFunctions(t *testing.T) {
	s := schemaOf("s", vector.String, "p", vector.String)
	d := schemaOf("s", dictString, "p", vector.String)
	rows := []vt.Row{{"Spark SQL", "SQL"}, {"héllo", "é"}, {"", ""}, {"abc", "abcd"}}
	one := schemaOf("s", vector.String)
	strs := column("Spark SQL", "héllo", "", "abc")
	col := vector.Col
	vt.RunExpr(t,
		vt.ExprCase{Name: "contains", Schema: s, Rows: rows, Expr: fnCall(t, "CONTAINS", col("s"), col("p")), Want: []any{true, true, true, false}, WantType: vector.Boolean, NullIntolerant: true},
		vt.ExprCase{Name: "contains-dict", Schema: d, Rows: rows, Expr: fnCall(t, "contains", col("s"), col("p")), Want: []any{true, true, true, false}, NullIntolerant: true},
		vt.ExprCase{Name: "startswith", Schema: s, Rows: rows, Expr: fnCall(t, "startsWith", col("s"), col("p")), Want: []any{false, false, true, false}, NullIntolerant: true},
		vt.ExprCase{Name: "endswith", Schema: s, Rows: rows, Expr: fnCall(t, "endswith", col("s"), col("p")), Want: []any{true, false, true, false}, NullIntolerant: true},
		vt.ExprCase{Name: "locate", Schema: s, Rows: rows, Expr: fnCall(t, "locate", col("p"), col("s")), Want: []any{7, 2, 1, 0}, WantType: vector.Int32, NullIntolerant: true},
		vt.ExprCase{Name: "replace", Schema: s, Rows: rows, Expr: fnCall(t, "replace", col("s"), col("p"), vector.Lit("_")), Want: []any{"Spark _", "h_llo", "", "abc"}, NullIntolerant: true},
		vt.ExprCase{Name: "left-const-len", Schema: d, Rows: rows, Expr: fnCall(t, "left", col("s"), vector.Lit(int32(2))), Want: []any{"Sp", "hé", "", "ab"}},
		vt.ExprCase{Name: "lpad", Schema: s, Rows: rows, Expr: fnCall(t, "lpad", col("s"), vector.Lit(int32(6)), col("p")), Want: []any{"Spark ", "éhéllo", "", "abcabc"}, NullIntolerant: true},
		vt.ExprCase{Name: "btrim", Schema: s, Rows: rows, Expr: fnCall(t, "btrim", col("s"), col("p")), Want: []any{"park ", "héllo", "", ""}, NullIntolerant: true},
		vt.ExprCase{Name: "split_part", Schema: s, Rows: rows, Expr: fnCall(t, "split_part", col("s"), col("p"), vector.Lit(int32(1))), Want: []any{"Spark ", "h", "", "abc"}, NullIntolerant: true},
		vt.ExprCase{Name: "split_part-zero", Schema: s, Rows: rows, Expr: fnCall(t, "split_part", col("s"), col("p"), vector.Lit(int32(0))), WantErr: "INVALID_INDEX_OF_ZERO"},
		vt.ExprCase{Name: "hex-unhex", Schema: one, Rows: strs, Expr: fnCall(t, "unhex", fnCall(t, "hex", col("s"))), Want: []any{"Spark SQL", "héllo", "", "abc"}, WantType: vector.Binary, NullIntolerant: true},
		vt.ExprCase{Name: "base64-roundtrip", Schema: one, Rows: strs, Expr: fnCall(t, "unbase64", fnCall(t, "base64", col("s"))), Want: []any{"Spark SQL", "héllo", "", "abc"}, NullIntolerant: true},
		vt.ExprCase{Name: "encode-decode", Schema: one, Rows: strs, Expr: fnCall(t, "decode", fnCall(t, "encode", col("s"), vector.Lit("UTF-16LE")), vector.Lit("utf-16le")), Want: []any{"Spark SQL", "héllo", "", "abc"}, NullIntolerant: true},
		vt.ExprCase{Name: "bad-charset", Schema: s, Rows: rows, Expr: fnCall(t, "encode", col("s"), vector.Lit("EBCDIC")), WantErr: "unsupported charset"},
		vt.ExprCase{Name: "octet_length", Schema: one, Rows: strs, Expr: fnCall(t, "octet_length", col("s")), Want: []any{9, 6, 0, 3}, WantType: vector.Int32, NullIntolerant: true},
	)
}

func TestRowMathAndDateFunctions(t *testing.T) {
	n := schemaOf("a", vector.Int64, "b", vector.Int32)
	rows := []vt.Row{{int64(7), int32(2)}, {int64(-7), int32(2)}, {int64(5), int32(-3)}}
	col := vector.Col
	dates := schemaOf("d", vector.Date)
	drows := column(dateOf("2022-02-25"), dateOf("2020-02-29"), dateOf("1970-01-01"))
	vt.RunExpr(t,
		vt.ExprCase{Name: "div", Schema: n, Rows: rows, Expr: fnCall(t, "div", col("a"), col("b")), Want: []any{int64(3), int64(-3), int64(-1)}, WantType: vector.Int64, NullIntolerant: true},
		vt.ExprCase{Name: "bitand", Schema: n, Rows: rows, Expr: fnCall(t, "&", col("a"), col("b")), Want: []any{int64(2), int64(0), int64(5)}, WantType: vector.Int64, NullIntolerant: true},
		vt.ExprCase{Name: "width_bucket", Schema: n, Rows: rows, Expr: fnCall(t, "width_bucket", col("a"), vector.Lit(0.0), vector.Lit(10.0), col("b")), Want: []any{int64(2), int64(0), nil}},
		vt.ExprCase{Name: "pow", Schema: n, Rows: rows, Expr: fnCall(t, "pow", col("a"), col("b")), Want: []any{49.0, 49.0, 1.0 / 125}, WantType: vector.Float64, NullIntolerant: true},
		vt.ExprCase{Name: "ln-null-domain", Schema: n, Rows: rows, Expr: fnCall(t, "ln", col("b")), Want: []any{0.6931471805599453, 0.6931471805599453, nil}},
		vt.ExprCase{Name: "year", Schema: dates, Rows: drows, Expr: fnCall(t, "year", col("d")), Want: []any{2022, 2020, 1970}, WantType: vector.Int32, NullIntolerant: true},
		vt.ExprCase{Name: "dayofweek", Schema: dates, Rows: drows, Expr: fnCall(t, "dayofweek", col("d")), Want: []any{6, 7, 5}, NullIntolerant: true},
		vt.ExprCase{Name: "add_months", Schema: dates, Rows: drows, Expr: fnCall(t, "add_months", col("d"), vector.Lit(int32(12))),
			Want: []any{dateOf("2023-02-25"), dateOf("2021-02-28"), dateOf("1971-01-01")}, WantType: vector.Date, NullIntolerant: true},
		vt.ExprCase{Name: "next_day", Schema: dates, Rows: drows, Expr: fnCall(t, "next_day", col("d"), vector.Lit("friday")),
			Want: []any{dateOf("2022-03-04"), dateOf("2020-03-06"), dateOf("1970-01-02")}},
		vt.ExprCase{Name: "timestampdiff-month", Schema: dates, Rows: drows, Expr: fnCall(t, "timestampdiff", vector.Lit("MONTH"), vector.Lit(dateOf("2020-01-31")), col("d")),
			Want: []any{int64(24), int64(0), int64(-600)}, WantType: vector.Int64, NullIntolerant: true},
		vt.ExprCase{Name: "timestampadd-bad-unit", Schema: dates, Rows: drows, Expr: fnCall(t, "timestampadd", vector.Lit("FORTNIGHT"), vector.Lit(int32(1)), col("d")), WantErr: "invalid unit"},
	)
}

// Function lookup is case-insensitive and every new name is registered.
func TestRowFunctionNames(t *testing.T) {
	names := map[string]bool{}
	for _, n := range vector.FunctionNames() {
		names[n] = true
	}
	for _, n := range strings.Fields("contains startswith endswith left right lpad rpad trim btrim ltrim rtrim locate position instr split_part replace repeat reverse octet_length bit_length ascii hex unhex base64 unbase64 encode decode to_binary try_to_binary width_bucket div shiftleft shiftright shiftrightunsigned factorial sqrt cbrt exp expm1 ln log10 log2 log1p log pow power atan2 hypot sin cos tan asin acos atan sinh cosh tanh asinh acosh atanh sec csc cot degrees radians sign signum rint pi e uuid date_add date_sub next_day make_date timestampadd timestampdiff unix_date date_from_unix_date datediff add_months last_day year month day dayofmonth quarter dayofweek weekday dayofyear weekofyear date_format to_char") {
		if !names[n] {
			t.Errorf("%s is not registered", n)
		}
		if _, err := vector.LookupFunction(strings.ToUpper(n), make([]vector.Expr, 0)); err != nil && strings.Contains(err.Error(), "unknown function") {
			t.Errorf("%s: upper-case lookup: %v", n, err)
		}
	}
}

// dateOf is the DATE value of "yyyy-mm-dd".
func dateOf(s string) arrow.Date32 {
	tm, err := time.Parse("2006-01-02", s)
	if err != nil {
		panic(err)
	}
	return arrow.Date32FromTime(tm)
}
