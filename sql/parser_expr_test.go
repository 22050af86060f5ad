package sql

import (
	"reflect"
	"testing"
)

// exprShapes maps expressions to their tree, fully parenthesized.
var exprShapes = []struct{ in, shape string }{
	// A lambda parameter named by a reserved word is a variable in the
	// body (Spark's higher-order-functions.sql: transform(ys, all -> ...)).
	{"transform(ys, all -> all * all)", "transform(ys, `all` -> `all` * `all`)"},
	{"transform(ys, (all, i) -> all + i)", "transform(ys, (`all`, i) -> `all` + i)"},
	// Precedence, loosest to tightest.
	{"a OR b AND NOT c = d + e * f", "(a OR (b AND (NOT (c = (d + (e * f))))))"},
	{"a AND b OR c AND d", "((a AND b) OR (c AND d))"},
	{"NOT a AND b", "((NOT a) AND b)"},
	{"NOT NOT a", "(NOT (NOT a))"},
	{"NOT a = b", "(NOT (a = b))"},
	{"-a::int", "(-CAST(a AS INT))"},
	{"-1::string", "CAST(-1 AS STRING)"},
	{"- 1", "-1"},
	{"-(1)", "(-1)"},
	{"- -1", "(--1)"},
	{"-a.b", "(-a.b)"},
	{"+a - -b", "((+a) - (-b))"},
	{"~a & b", "((~a) & b)"},
	{"x BETWEEN 1 AND 2 AND y", "((x BETWEEN 1 AND 2) AND y)"},
	{"x NOT BETWEEN a + 1 AND b * 2", "(x NOT BETWEEN (a + 1) AND (b * 2))"},
	{"x BETWEEN 1 AND 2 = 3", "(x BETWEEN 1 AND (2 = 3))"},
	{"a = b IS NULL", "((a = b) IS NULL)"},
	{"a IS NOT NULL AND b IS NULL", "((a IS NOT NULL) AND (b IS NULL))"},
	{"a IS NULL IS NULL", "((a IS NULL) IS NULL)"},
	{"a IN (1, 2, 3)", "(a IN (1, 2, 3))"},
	{"a NOT IN (1 + 1, b)", "(a NOT IN ((1 + 1), b))"},
	{"a + 1 IN (2)", "((a + 1) IN (2))"},
	{"a LIKE 'x%' OR a NOT LIKE '%y'", "((a LIKE 'x%') OR (a NOT LIKE '%y'))"},
	{"a RLIKE 'x' AND a REGEXP 'y' AND a ILIKE 'z'", "(((a RLIKE 'x') AND (a RLIKE 'y')) AND (a ILIKE 'z'))"},
	{"a = b = c", "((a = b) = c)"},
	{"a < b <> c", "((a < b) <> c)"},
	{"a <=> b", "(a <=> b)"},
	{"a == b", "(a = b)"},
	{"a != b", "(a <> b)"},
	{"a | b ^ c & d", "(a | (b ^ (c & d)))"},
	{"a | b = c", "((a | b) = c)"},
	{"a & b + c", "(a & (b + c))"},
	{"a - b - c", "((a - b) - c)"},
	{"a - (b - c)", "(a - (b - c))"},
	{"a || b + c", "((a || b) + c)"},
	{"a * b / c % d DIV e", "((((a * b) / c) % d) DIV e)"},
	{"a / -b", "(a / (-b))"},
	{"2 * -1", "(2 * -1)"},
	{"a.b.c", "a.b.c"},
	{"(a).b", "(a).b"},
	{"f(x).start", "(f(x)).start"},
	{"a[0].b", "((a)[0]).b"},
	{"a[1 + 1][2]", "((a)[(1 + 1)])[2]"},
	{"a::int::string", "CAST(CAST(a AS INT) AS STRING)"},
	{"a.b::bigint + 1", "(CAST(a.b AS BIGINT) + 1)"},
	{"(a + b) * c", "((a + b) * c)"},
	{"count(DISTINCT a, b)", "count(DISTINCT a, b)"},
	{"count(ALL a)", "count(a)"},
	{"value >= CAST(current_timestamp() AS BIGINT) - 10", "(value >= (CAST(current_timestamp() AS BIGINT) - 10))"},
	{"timestamp + INTERVAL 1 HOUR - 5", "((`timestamp` + INTERVAL 1 HOUR) - 5)"},
	{"leftTime < rightTime - INTERVAL 5 SECONDS", "(leftTime < (rightTime - INTERVAL 5 SECONDS))"},
	{"a = (SELECT max(b) FROM t)", "(a = (SELECT max(b) FROM t))"},
	{"a IN (SELECT b FROM t)", "(a IN (SELECT b FROM t))"},
}

// exprFormats maps expressions to their canonical text.
var exprFormats = []struct{ in, out string }{
	// Literals.
	{"1", "1"},
	{"2147483647", "2147483647"},
	{"2147483648", "2147483648L"},
	{"-2147483648", "-2147483648"},
	{"9223372036854775807", "9223372036854775807L"},
	{"9223372036854775808", "9223372036854775808BD"},
	{"10L", "10L"},
	{"10l", "10L"},
	{"-9223372036854775808L", "-9223372036854775808L"},
	{"7S", "7S"},
	{"7y", "7Y"},
	{"1.5", "1.5"},
	{"1.", "1."},
	{".5", ".5"},
	{"-.5", "-.5"},
	{"1.5D", "1.5D"},
	{"1.5d", "1.5D"},
	{"1e3", "1e3D"},
	{"1.5E-3", "1.5E-3D"},
	{"2F", "2F"},
	{"1BD", "1BD"},
	{"1.25bd", "1.25"},
	{"'it''s'", "'its'"},
	{"'a' \"b\" 'c'", "'abc'"},
	{`'tab\there\nline \'q\' \"dq\" back\\slash'`, `'tab\there\nline \'q\' "dq" back\\slash'`},
	{`'\u0041\101\0\%\_\Z\b\x'`, `'AA\u0000\\%\\_\u001A\u0008x'`},
	{`"double 'quoted'"`, `'double \'quoted\''`},
	{"X'0aFF'", "X'0aFF'"},
	{"x''", "X''"},
	{"TRUE", "TRUE"},
	{"false", "FALSE"},
	{"null", "NULL"},
	{"DATE '2026-01-01'", "DATE '2026-01-01'"},
	{"timestamp '2026-01-01 00:00:00'", "TIMESTAMP '2026-01-01 00:00:00'"},
	{"INTERVAL 10 SECONDS", "INTERVAL 10 SECONDS"},
	{"INTERVAL 1 second", "INTERVAL 1 SECOND"},
	{"INTERVAL '10' SECOND", "INTERVAL '10' SECONDS"},
	{"INTERVAL '1 minute'", "INTERVAL '1 minute'"},
	{"INTERVAL 1 HOUR 30 MINUTES", "INTERVAL 1 HOUR 30 MINUTES"},
	{"INTERVAL -5 DAYS", "INTERVAL -5 DAYS"},
	{"INTERVAL +1.5 seconds", "INTERVAL 1.5 SECONDS"},
	{"INTERVAL 1 YEAR 2 MONTHS 3 WEEKS 4 DAYS 5 MILLISECONDS 6 MICROSECONDS", "INTERVAL 1 YEAR 2 MONTHS 3 WEEKS 4 DAYS 5 MILLISECONDS 6 MICROSECONDS"},
	// Names.
	{"`my col`", "`my col`"},
	{"`a``b`", "`a``b`"},
	{"t.`select`", "t.select"},
	{"t.`a b`", "t.`a b`"},
	{"`select`.a", "`select`.a"},
	{"window.start", "window.start"},
	{"l.window.end", "l.window.end"},
	{"session_window.start", "session_window.start"},
	{"first + last + count + window + stream", "first + last + count + window + `stream`"},
	{"`timestamp`", "`timestamp`"},
	{"`interval` - 1", "`interval` - 1"},
	{"Value", "Value"},
	{"über", "über"},
	// Functions.
	{"count(*)", "count(*)"},
	{"COUNT(*)", "COUNT(*)"},
	{"count(DISTINCT x)", "count(DISTINCT x)"},
	{"window(ts, '10 seconds', '5 seconds')", "window(ts, '10 seconds', '5 seconds')"},
	{"first(value)", "first(value)"},
	{"last(value)", "last(value)"},
	{"current_timestamp", "current_timestamp"},
	{"CURRENT_TIMESTAMP()", "CURRENT_TIMESTAMP()"},
	{"current_date", "current_date"},
	{"left('abc', 2)", "left('abc', 2)"},
	{"`cast`(x)", "`cast`(x)"},
	{"f()", "f()"},
	{"explode(split(value, ' '))", "explode(split(value, ' '))"},
	// CASE and CAST.
	{"CASE WHEN a > 1 THEN 'x' WHEN a > 0 THEN 'y' ELSE 'z' END", "CASE WHEN a > 1 THEN 'x' WHEN a > 0 THEN 'y' ELSE 'z' END"},
	{"case a when 1 then 'one' end", "CASE a WHEN 1 THEN 'one' END"},
	{"CAST(a AS DECIMAL(10, 2))", "CAST(a AS DECIMAL(10, 2))"},
	{"CAST(a AS decimal(5))", "CAST(a AS DECIMAL(5))"},
	{"CAST(a AS long)", "CAST(a AS BIGINT)"},
	{"CAST(a AS integer)", "CAST(a AS INT)"},
	{"TRY_CAST(a AS INT)", "TRY_CAST(a AS INT)"},
	{"a::array<int>", "CAST(a AS ARRAY<INT>)"},
	{"a::map<string, array<bigint>>", "CAST(a AS MAP<STRING, ARRAY<BIGINT>>)"},
	{"a::struct<x: int, `y z` string>", "CAST(a AS STRUCT<x: INT, `y z`: STRING>)"},
	{"a::struct<>", "CAST(a AS STRUCT<>)"},
	{"a::varchar(10)", "CAST(a AS VARCHAR(10))"},
	// Parentheses that matter, and ones that do not.
	{"((a))", "a"},
	{"(a + b) * c", "(a + b) * c"},
	{"a * (b + c)", "a * (b + c)"},
	{"a - (b - c)", "a - (b - c)"},
	{"-(1)", "-(1)"},
	{"-(-1)", "-(-1)"},
	{"- - a", "-(-a)"},
	{"(NOT a) IS NULL", "(NOT a) IS NULL"},
	{"(a IS NULL) = b", "(a IS NULL) = b"},
	{"x BETWEEN (a AND b) AND c", "x BETWEEN (a AND b) AND c"},
	{"(1).a", "(1).a"},
	{"(-1)[0]", "-1[0]"},
	{"-(1[0])", "-(1[0])"},
	{"a LIKE 'x!%' ESCAPE '!'", "a LIKE 'x!%' ESCAPE '!'"},
}

func TestExprShapes(t *testing.T) {
	for _, tc := range exprShapes {
		e, err := ParseExpr(tc.in)
		if err != nil {
			t.Errorf("ParseExpr(%q): %v", tc.in, err)
			continue
		}
		if got := paren(e); got != tc.shape {
			t.Errorf("ParseExpr(%q) shape\n got %s\nwant %s", tc.in, got, tc.shape)
		}
		checkPositions(t, tc.in, e)
		checkRoundTrip(t, tc.in, e, ParseExpr)
	}
}

func TestExprFormat(t *testing.T) {
	for _, tc := range exprFormats {
		e, err := ParseExpr(tc.in)
		if err != nil {
			t.Errorf("ParseExpr(%q): %v", tc.in, err)
			continue
		}
		if got := Format(e); got != tc.out {
			t.Errorf("Format(ParseExpr(%q))\n got %s\nwant %s", tc.in, got, tc.out)
		}
		checkPositions(t, tc.in, e)
		checkRoundTrip(t, tc.in, e, ParseExpr)
	}
}

func TestLiteralKinds(t *testing.T) {
	tests := []struct {
		in    string
		kind  LiteralKind
		value string
	}{
		{"1", LitInt, "1"},
		{"-1", LitInt, "-1"},
		{"2147483648", LitBigInt, "2147483648"},
		{"-2147483648", LitInt, "-2147483648"},
		{"-2147483649", LitBigInt, "-2147483649"},
		{"5L", LitBigInt, "5"},
		{"5S", LitSmallInt, "5"},
		{"5Y", LitTinyInt, "5"},
		{"99999999999999999999", LitDecimal, "99999999999999999999"},
		{"1.5", LitDecimal, "1.5"},
		{"1.5BD", LitDecimal, "1.5"},
		{"1.5D", LitDouble, "1.5"},
		{"1e3", LitDouble, "1e3"},
		{"1.5F", LitFloat, "1.5"},
		{"'x'", LitString, "x"},
		{"X'AB'", LitBinary, "AB"},
		{"DATE '2026-01-01'", LitDate, "2026-01-01"},
		{"TIMESTAMP '2026-01-01 00:00:00'", LitTimestamp, "2026-01-01 00:00:00"},
		{"TRUE", LitBool, "true"},
		{"NULL", LitNull, ""},
	}
	for _, tc := range tests {
		e, err := ParseExpr(tc.in)
		if err != nil {
			t.Errorf("ParseExpr(%q): %v", tc.in, err)
			continue
		}
		lit, ok := e.(*Literal)
		if !ok || lit.Kind != tc.kind || lit.Value != tc.value {
			t.Errorf("ParseExpr(%q) = %#v, want %v literal %q", tc.in, e, tc.kind, tc.value)
		}
	}
}

func TestExprTree(t *testing.T) {
	// A few trees spelled out in full, positions included.
	e, err := ParseExpr("count(DISTINCT t.a) + 1")
	if err != nil {
		t.Fatal(err)
	}
	want := &BinaryExpr{Pos: Pos{1, 1}, Op: OpAdd,
		L: &FuncCall{Pos: Pos{1, 1}, Name: Ident{Pos: Pos{1, 1}, Name: "count"}, Distinct: true,
			Args: []Expr{&ColumnRef{Pos: Pos{1, 16}, Parts: []Ident{{Pos: Pos{1, 16}, Name: "t"}, {Pos: Pos{1, 18}, Name: "a"}}}}},
		R: &Literal{Pos: Pos{1, 23}, Kind: LitInt, Value: "1"},
	}
	if !reflect.DeepEqual(e, want) {
		t.Errorf("got %#v", e)
	}

	e, err = ParseExpr("CASE x WHEN 1 THEN 'a' ELSE NULL END")
	if err != nil {
		t.Fatal(err)
	}
	c := e.(*Case)
	if Format(c.Operand) != "x" || len(c.Whens) != 1 || Format(c.Whens[0].Cond) != "1" || Format(c.Else) != "NULL" {
		t.Errorf("CASE parsed as %#v", c)
	}

	e, err = ParseExpr("window(ts, '10 seconds').start")
	if err != nil {
		t.Fatal(err)
	}
	fa := e.(*FieldAccess)
	if fa.Field.Name != "start" || fa.X.(*FuncCall).Name.Name != "window" {
		t.Errorf("field access parsed as %#v", fa)
	}
}

func TestParseSelectAndOrderItems(t *testing.T) {
	items := []struct{ in, out string }{
		{"count(*) AS count", "count(*) AS count"},
		{"value + 1 value", "value + 1 AS value"},
		{"*", "*"},
		{"t.*", "t.*"},
		{"CAST(window.start AS BIGINT)", "CAST(window.start AS BIGINT)"},
		{"explode(split(value, ' ')) AS sessionId", "explode(split(value, ' ')) AS sessionId"},
		{"_2 AS `timestamp`", "_2 AS `timestamp`"},
		{"a AS from", "a AS `from`"},
	}
	for _, tc := range items {
		it, err := ParseSelectItem(tc.in)
		if err != nil {
			t.Errorf("ParseSelectItem(%q): %v", tc.in, err)
			continue
		}
		if got := Format(it); got != tc.out {
			t.Errorf("ParseSelectItem(%q) = %s, want %s", tc.in, got, tc.out)
		}
		checkRoundTrip(t, tc.in, it, ParseSelectItem)
	}
	orders := []struct{ in, out string }{
		{"count DESC", "count DESC"},
		{"a ASC", "a"},
		{"a desc nulls first", "a DESC NULLS FIRST"},
		{"a NULLS LAST", "a NULLS LAST"},
	}
	for _, tc := range orders {
		it, err := ParseOrderItem(tc.in)
		if err != nil {
			t.Errorf("ParseOrderItem(%q): %v", tc.in, err)
			continue
		}
		if got := Format(it); got != tc.out {
			t.Errorf("ParseOrderItem(%q) = %s, want %s", tc.in, got, tc.out)
		}
		checkRoundTrip(t, tc.in, it, ParseOrderItem)
	}
	types := []struct{ in, out string }{
		{"int", "INT"}, {"bigint", "BIGINT"}, {"Double", "DOUBLE"}, {"string", "STRING"},
		{"boolean", "BOOLEAN"}, {"timestamp", "TIMESTAMP"}, {"date", "DATE"}, {"binary", "BINARY"},
		{"float", "FLOAT"}, {"decimal", "DECIMAL"}, {"DECIMAL(38, 0)", "DECIMAL(38, 0)"},
	}
	for _, tc := range types {
		ty, err := ParseType(tc.in)
		if err != nil {
			t.Errorf("ParseType(%q): %v", tc.in, err)
			continue
		}
		if got := Format(ty); got != tc.out {
			t.Errorf("ParseType(%q) = %s, want %s", tc.in, got, tc.out)
		}
		checkRoundTrip(t, tc.in, ty, ParseType)
	}
}

// TestParseShiftOperators checks that << >> >>> parse only when their
// characters touch, with Spark 4's precedence, and that the formatter
// writes them back so that they parse to the same tree.
func TestParseShiftOperators(t *testing.T) {
	for in, want := range map[string]string{
		"SELECT 1 << 2":           "SELECT 1 << 2",
		"SELECT a >> b >>> c":     "SELECT a >> b >>> c",
		"SELECT 1 + 2 << 3 & 4":   "SELECT 1 + 2 << 3 & 4",
		"SELECT 1 << (2 & 3)":     "SELECT 1 << (2 & 3)",
		"SELECT (1 << 2) + 3":     "SELECT (1 << 2) + 3",
		"SELECT a >>>b<<c FROM t": "SELECT a >>> b << c FROM t",
	} {
		stmt, err := Parse(in)
		if err != nil {
			t.Errorf("%s: %v", in, err)
			continue
		}
		if got := Format(stmt); got != want {
			t.Errorf("%s: formatted %q, want %q", in, got, want)
		}
	}
	for _, in := range []string{"SELECT 1 < < 2", "SELECT 1 > > 2", "SELECT 1 >> > 2", "SELECT 1 <<"} {
		if _, err := Parse(in); err == nil {
			t.Errorf("%s: parsed, want a syntax error", in)
		}
	}
}

// TestParseTableStatements: CTAS, CREATE TABLE without USING, INSERT with
// a column list or OVERWRITE, and SHOW FUNCTIONS parse and format back to
// text that parses to the same text.
func TestParseTableStatements(t *testing.T) {
	for in, want := range map[string]string{
		"CREATE TABLE t AS SELECT 1 AS a":                     "CREATE TABLE t AS SELECT 1 AS a",
		"create or replace table t using parquet as select 1": "CREATE OR REPLACE TABLE t USING parquet AS SELECT 1",
		"CREATE TABLE t (a INT)":                              "CREATE TABLE t (a INT)",
		"INSERT INTO TABLE t (b, a) VALUES (1, 2)":            "INSERT INTO t (b, a) VALUES (1, 2)",
		"INSERT OVERWRITE t SELECT 1":                         "INSERT OVERWRITE TABLE t SELECT 1",
		"SHOW FUNCTIONS":                                      "SHOW ALL FUNCTIONS",
		"show user functions like 'a*|b'":                     "SHOW USER FUNCTIONS LIKE 'a*|b'",
		"SHOW SYSTEM FUNCTIONS 'x'":                           "SHOW SYSTEM FUNCTIONS LIKE 'x'",
	} {
		stmt, err := Parse(in)
		if err != nil {
			t.Errorf("%s: %v", in, err)
			continue
		}
		got := Format(stmt)
		if got != want {
			t.Errorf("%s: formatted %q, want %q", in, got, want)
			continue
		}
		again, err := Parse(got)
		if err != nil || Format(again) != got {
			t.Errorf("%s: the formatted text does not read back: %v", got, err)
		}
	}
}
