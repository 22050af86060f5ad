package sql

import (
	"errors"
	"strings"
	"testing"
)

// syntaxErrors is the golden table of inputs and the exact error each
// gives (from ParseScript).
var syntaxErrors = []struct{ in, err string }{
	// Select lists.
	{"SELECT a, b, c, d, e, f, gg FORM t", "syntax error at 1:29: expected FROM or ',' after select item, found 'FORM'"},
	{"SELECT a FORM t", "syntax error at 1:10: expected FROM or ',' after select item, found 'FORM'"},
	{"SELECT a b c", "syntax error at 1:10: expected FROM or ',' after select item, found 'b'"},
	{"SELECT a AS b c", "syntax error at 1:15: expected FROM or ',' after select item, found 'c'"},
	{"SELECT FROM t", "syntax error at 1:8: expected a select item, found 'FROM'"},
	{"SELECT", "syntax error at 1:7: expected a select item, found end of input"},
	{"SELECT a AS FROM t", "syntax error at 1:13: expected an alias after AS, found 'FROM'"},
	{"SELECT (a AS x) FROM t", "syntax error at 1:15: expected ',' in the row value (a, b, ...), found ')'"},
	{"SELECT (a, b AS) FROM t", "syntax error at 1:14: expected ')' to close '(' at 1:8, found 'AS'"},
	// FROM.
	{"SELECT a FROM", "syntax error at 1:14: expected a table, STREAM or subquery after FROM, found end of input"},
	{"SELECT a FROM t WHER a = 1", "syntax error at 1:17: expected a join, ',', WHERE, GROUP BY, HAVING, ORDER BY, LIMIT or UNION after FROM item, found 'WHER'"},
	{"SELECT a FROM t, ", "syntax error at 1:18: expected a table, STREAM or subquery after ',', found end of input"},
	{"SELECT * FROM t AS", "syntax error at 1:19: expected an alias after AS, found end of input"},
	{"SELECT * FROM t.", "syntax error at 1:17: expected a name after '.', found end of input"},
	{"SELECT * FROM STREAM(input", "syntax error at 1:27: expected ')' to close '(' at 1:21, found end of input"},
	{"SELECT * FROM (a JOIN b", "syntax error at 1:24: expected ')' to close '(' at 1:15, found end of input"},
	{"SELECT * FROM (SELECT 1", "syntax error at 1:24: expected ')' to close '(' at 1:15, found end of input"},
	{"SELECT * FROM a JOIN", "syntax error at 1:21: expected a table, STREAM or subquery after JOIN, found end of input"},
	{"SELECT * FROM a LEFT OUTER JOIN", "syntax error at 1:32: expected a table, STREAM or subquery after LEFT OUTER JOIN, found end of input"},
	{"SELECT * FROM a LEFT b", "syntax error at 1:22: expected JOIN after LEFT, found 'b'"},
	{"SELECT * FROM a LEFT SEMI b", "syntax error at 1:27: expected JOIN after LEFT SEMI, found 'b'"},
	{"SELECT * FROM a NATURAL SEMI JOIN b", "syntax error at 1:15: NATURAL SEMI JOIN is not supported; NATURAL goes with INNER, LEFT, RIGHT or FULL joins"},
	{"SELECT * FROM a JOIN b USING k", "syntax error at 1:30: expected '(' after USING, found 'k'"},
	{"SELECT * FROM a JOIN b ON", "syntax error at 1:26: expected a join condition after ON, found end of input"},
	{"SELECT * FROM counts VERSION AS OF x", "syntax error at 1:36: expected an epoch number or string after VERSION AS OF, found 'x'"},
	{"SELECT * FROM counts VERSION AS OF 1.5", "syntax error at 1:36: expected an epoch number or string after VERSION AS OF, found '1.5'"},
	{"SELECT * FROM db.f(1)", "syntax error at 1:15: table-valued function names cannot be qualified"},
	// Watermarks.
	{"SELECT * FROM STREAM input WATERMARK ts DELAY 10 SECONDS", "syntax error at 1:47: expected OF after DELAY, found '10'"},
	{"SELECT * FROM STREAM input WATERMARK ts DELAY OF 10 SECONDS", "syntax error at 1:50: expected INTERVAL after DELAY OF, found '10'"},
	{"SELECT * FROM STREAM input WATERMARK ts OF INTERVAL 1 SECOND", "syntax error at 1:41: expected DELAY OF after the watermark expression, found 'OF'"},
	{"SELECT * FROM STREAM input WATERMARK ts AS e OF INTERVAL 1 SECOND", "syntax error at 1:46: expected DELAY OF after the watermark column name, found 'OF'"},
	{"SELECT * FROM STREAM input AS i WATERMARK ts DELAY OF INTERVAL 1 SECOND", "syntax error at 1:33: the WATERMARK clause must come before the alias 'i'"},
	{"SELECT * FROM STREAM input WATERMARK ts DELAY OF INTERVAL", "syntax error at 1:58: expected a number or string in INTERVAL, found end of input"},
	// Other clauses.
	{"SELECT a FROM t WHERE", "syntax error at 1:22: expected an expression after WHERE, found end of input"},
	{"SELECT a FROM t GROUP a", "syntax error at 1:23: expected BY after GROUP, found 'a'"},
	{"SELECT a FROM t GROUP BY", "syntax error at 1:25: expected an expression in GROUP BY, found end of input"},
	{"SELECT a FROM t HAVING", "syntax error at 1:23: expected an expression after HAVING, found end of input"},
	{"SELECT a FROM t ORDER a", "syntax error at 1:23: expected BY after ORDER, found 'a'"},
	{"SELECT a FROM t ORDER BY", "syntax error at 1:25: expected an expression in ORDER BY, found end of input"},
	{"SELECT a FROM t ORDER BY a NULLS", "syntax error at 1:33: expected FIRST or LAST after NULLS, found end of input"},
	{"SELECT a FROM t LIMIT", "syntax error at 1:22: expected an expression after LIMIT, found end of input"},
	{"SELECT a FROM t WHERE a = 1 b", "syntax error at 1:29: expected ';' or end of input after the statement, found 'b'"},
	{"SELECT 1 INTERSECT", "syntax error at 1:19: expected SELECT or '(' after INTERSECT, found end of input"},
	{"SELECT 1 FROM t MINUS", "syntax error at 1:22: expected SELECT or '(' after MINUS, found end of input"},
	{"SELECT 1 LIMIT 1 UNION SELECT 2", "syntax error at 1:18: expected end of query after ORDER BY, LIMIT or OFFSET, found 'UNION' (put the query before UNION in parentheses)"},
	{"SELECT 1 OFFSET 1 LIMIT 1", "syntax error at 1:19: expected ';' or end of input after the statement, found 'LIMIT'"},
	{"FROM t", "syntax error at 1:7: expected SELECT after the FROM clause, found end of input"},
	{"FROM t SELECT a FROM u", "syntax error at 1:8: a SELECT after a FROM clause cannot have its own FROM"},
	{"SELECT 1 UNION", "syntax error at 1:15: expected SELECT or '(' after UNION, found end of input"},
	{"WITH a AS SELECT 1", "syntax error at 1:11: expected AS and '(' before the query of common table expression 'a', found 'SELECT'"},
	{"WITH a AS (SELECT 1)", "syntax error at 1:21: expected ',' or a query after the common table expressions, found end of input"},
	// Expressions.
	{"SELECT (a + b FROM t", "syntax error at 1:15: expected ')' to close '(' at 1:8, found 'FROM'"},
	{"SELECT f(a, b FROM t", "syntax error at 1:15: expected ',' or ')' after the function argument, found 'FROM'"},
	{"SELECT 1 + FROM t", "syntax error at 1:12: expected an expression after '+', found 'FROM'"},
	{"SELECT 1 +", "syntax error at 1:11: expected an expression after '+', found end of input"},
	{"SELECT a ||", "syntax error at 1:12: expected an expression after '||', found end of input"},
	{"SELECT NOT", "syntax error at 1:11: expected an expression after 'NOT', found end of input"},
	{"SELECT TRUE AND", "syntax error at 1:16: expected an expression after 'AND', found end of input"},
	{"SELECT a IS 5", "syntax error at 1:13: expected NULL, TRUE, FALSE, UNKNOWN or DISTINCT FROM after IS, found '5'"},
	{"SELECT a IN 5", "syntax error at 1:13: expected '(' after IN, found '5'"},
	{"SELECT a IN (1, 2", "syntax error at 1:18: expected ',' or ')' in the IN list, found end of input"},
	{"SELECT a FROM t WHERE x IN ()", "syntax error at 1:29: expected an expression in the IN list, found ')'"},
	{"SELECT a BETWEEN 1", "syntax error at 1:19: expected AND after the lower bound of BETWEEN, found end of input"},
	{"SELECT a BETWEEN 1 AND", "syntax error at 1:23: expected an expression after 'AND', found end of input"},
	{"SELECT a NOT LIKE", "syntax error at 1:18: expected an expression after 'LIKE', found end of input"},
	{"SELECT CASE WHEN a THEN 1", "syntax error at 1:26: expected WHEN, ELSE or END to close CASE at 1:8, found end of input"},
	{"SELECT CASE WHEN a 1 END", "syntax error at 1:20: expected THEN after the WHEN expression, found '1'"},
	{"SELECT CASE a END", "syntax error at 1:15: expected WHEN after the CASE operand, found 'END'"},
	{"SELECT CASE WHEN a THEN 1 ELSE 2", "syntax error at 1:33: expected END to close CASE at 1:8, found end of input"},
	{"SELECT CAST(a INT)", "syntax error at 1:15: expected AS and a type in CAST, found 'INT'"},
	{"SELECT CAST a", "syntax error at 1:13: expected '(' after CAST, found 'a'"},
	{"SELECT count(DISTINCT) FROM t", "syntax error at 1:22: expected a function argument, found ')'"},
	{"SELECT a.", "syntax error at 1:10: expected a field name after '.', found end of input"},
	{"SELECT a.b(c)", "syntax error at 1:8: function names cannot be qualified"},
	{"SELECT a[1", "syntax error at 1:11: expected ']' to close '[' at 1:9, found end of input"},
	{"SELECT select FROM t", "syntax error at 1:8: expected a select item, found 'select'"},
	// Types.
	{"SELECT CAST(a AS foo)", "syntax error at 1:18: unknown type 'foo'"},
	{"SELECT a::", "syntax error at 1:11: expected a type, found end of input"},
	{"SELECT CAST(a AS DECIMAL(40, 2))", "syntax error at 1:25: DECIMAL precision must be between 1 and 38, found 40"},
	{"SELECT CAST(a AS DECIMAL(10, 12))", "syntax error at 1:25: DECIMAL scale 12 is larger than the precision 10"},
	{"SELECT CAST(a AS DECIMAL(x))", "syntax error at 1:26: expected an integer parameter of DECIMAL, found 'x'"},
	{"SELECT CAST(a AS ARRAY<INT)", "syntax error at 1:27: expected '>' to close '<' at 1:23, found ')'"},
	{"SELECT CAST(a AS MAP<INT>)", "syntax error at 1:25: expected ',' after the key type of MAP, found '>'"},
	{"SELECT CAST(a AS VARCHAR)", "syntax error at 1:25: expected '(' and a length after VARCHAR, found ')'"},
	// Literals.
	{"SELECT 99999999999999999999L", "syntax error at 1:8: BIGINT literal 99999999999999999999L is out of range"},
	{"SELECT -9223372036854775809L", "syntax error at 1:8: BIGINT literal -9223372036854775809L is out of range"},
	{"SELECT 128Y", "syntax error at 1:8: TINYINT literal 128Y is out of range"},
	{"SELECT 40000S", "syntax error at 1:8: SMALLINT literal 40000S is out of range"},
	{"SELECT 1e39F", "syntax error at 1:8: FLOAT literal 1e39F is out of range"},
	{"SELECT 1e999", "syntax error at 1:8: DOUBLE literal 1e999 is out of range"},
	{"SELECT 1.5L", "syntax error at 1:8: invalid numeric literal '1.5L': BIGINT needs an integer"},
	{"SELECT 1.2abc", "syntax error at 1:8: invalid numeric literal '1.2abc'"},
	{"SELECT 123456789012345678901234567890123456789", "syntax error at 1:8: DECIMAL literal 123456789012345678901234567890123456789 has more than 38 digits"},
	{"SELECT INTERVAL 10", "syntax error at 1:19: expected an interval unit (YEAR, MONTH, WEEK, DAY, HOUR, MINUTE, SECOND, MILLISECOND or MICROSECOND), found end of input"},
	{"SELECT INTERVAL 10 FOO", "syntax error at 1:20: expected an interval unit (YEAR, MONTH, WEEK, DAY, HOUR, MINUTE, SECOND, MILLISECOND or MICROSECOND), found 'FOO'"},
	{"SELECT INTERVAL 10L SECONDS", "syntax error at 1:17: invalid interval value '10L'"},
	// Lexical errors, reported where they start.
	{"SELECT 'abc", "syntax error at 1:8: unterminated string literal: no closing ' before end of input"},
	{`SELECT "abc`, `syntax error at 1:8: unterminated string literal: no closing " before end of input`},
	{`SELECT 'abc\'`, "syntax error at 1:8: unterminated string literal: no closing ' before end of input"},
	{"SELECT `abc", "syntax error at 1:8: unterminated quoted identifier: no closing ` before end of input"},
	{"SELECT a /* comment", "syntax error at 1:10: unterminated /* comment: no closing */ before end of input"},
	{"SELECT a /* outer /* inner */ ", "syntax error at 1:10: unterminated /* comment: no closing */ before end of input"},
	{"SELECT a\n  FROM t\n  WHERE a = 'x\n", "syntax error at 3:13: unterminated string literal: no closing ' before end of input"},
	{"SELECT X'0G'", "syntax error at 1:11: invalid binary literal: character 'G' is not a hex digit"},
	{"SELECT X'0A", "syntax error at 1:8: unterminated binary literal: no closing ' before end of input"},
	{"SELECT $", "syntax error at 1:8: unexpected character '$'"},
	{"SELECT ! a", "syntax error at 1:8: unexpected character '!'"},
	{"SELECT a FROM t WHERE a = 'é€𝄞' AND b = $", "syntax error at 1:41: unexpected character '$'"},
	{"SELECT a FROM t WHERE a = 'x'\n  AND b = ###", "syntax error at 2:11: unexpected character '#'"},
	{"SELECT a\tFROM t\tWHERE ?", "syntax error at 1:23: unexpected character '?'"},
	{"SELECT a, \x01", "syntax error at 1:11: unexpected character U+0001"},
	{"SELECT a, \xff", "syntax error at 1:11: unexpected byte 0xFF"},
	{"SELECT a,\u00a0b", "syntax error at 1:10: unexpected character U+00A0"},
	{"\uFEFFSELECT a FROM", "syntax error at 1:14: expected a table, STREAM or subquery after FROM, found end of input"},
	{"SELEC 'abc", "syntax error at 1:1: expected a statement (SELECT, WITH, CREATE, EXPLAIN, DROP, SHOW, DESCRIBE or SET), found 'SELEC'"},
	// Statements.
	{"SELEC 1", "syntax error at 1:1: expected a statement (SELECT, WITH, CREATE, EXPLAIN, DROP, SHOW, DESCRIBE or SET), found 'SELEC'"},
	{"'x'", "syntax error at 1:1: expected a statement (SELECT, WITH, CREATE, EXPLAIN, DROP, SHOW, DESCRIBE or SET), found string 'x'"},
	{"SELECT a FROM t; garbage", "syntax error at 1:18: expected a statement (SELECT, WITH, CREATE, EXPLAIN, DROP, SHOW, DESCRIBE or SET), found 'garbage'"},
	{"CREATE", "syntax error at 1:7: expected TABLE, STREAMING TABLE, TEMPORARY VIEW, DATABASE or OR REFRESH after CREATE, found end of input"},
	{"CREATE VIEW v", "syntax error at 1:14: expected AS and a query after the view name, found end of input"},
	{"CREATE OR REPLACE TABLE t", "syntax error at 1:26: expected a column list, USING or AS after the table name, found end of input"},
	{"CREATE OR REPLACE INDEX t", "syntax error at 1:19: expected TABLE, STREAMING TABLE or [TEMPORARY] VIEW after CREATE OR REPLACE, found 'INDEX'"},
	{"CREATE TABLE", "syntax error at 1:13: expected a table name after CREATE TABLE, found end of input"},
	{"CREATE TABLE t", "syntax error at 1:15: expected a column list, USING or AS after the table name, found end of input"},
	{"CREATE TABLE t (a INT", "syntax error at 1:22: expected ',' or ')' after the column definition, found end of input"},
	{"CREATE TABLE t (a INT) USING", "syntax error at 1:29: expected a data source format after USING, found end of input"},
	{"CREATE TABLE t (a INT) AS SELECT 1", "syntax error at 1:24: Operation not allowed: Schema may not be specified in a Create Table As Select (CTAS) statement."},
	{"CREATE TABLE t AS", "syntax error at 1:18: expected a query after AS, found end of input"},
	{"CREATE TABLE t (a) USING csv", "syntax error at 1:18: expected a type, found ')'"},
	{"CREATE TABLE t USING csv OPTIONS (a)", "syntax error at 1:36: expected a string, number or boolean value for 'a', found ')'"},
	{"CREATE TABLE t USING csv OPTIONS (a 'b'", "syntax error at 1:40: expected ',' or ')' in OPTIONS, found end of input"},
	{"CREATE TABLE t USING csv OPTIONS a 'b'", "syntax error at 1:34: expected '(' after OPTIONS, found 'a'"},
	{"CREATE STREAMING TABLE t SELECT 1", "syntax error at 1:26: expected TBLPROPERTIES or AS and a query after the table name, found 'SELECT'"},
	{"CREATE STREAMING TABLE t TBLPROPERTIES ('a' = 'b') SELECT 1", "syntax error at 1:52: expected AS and a query after TBLPROPERTIES, found 'SELECT'"},
	{"CREATE STREAMING TABLE t AS DROP TABLE x", "syntax error at 1:29: expected a query after AS, found 'DROP'"},
	{"EXPLAIN", "syntax error at 1:8: expected a statement after EXPLAIN, found end of input"},
	{"DROP t", "syntax error at 1:6: expected TABLE, VIEW or DATABASE after DROP, found 't'"},
	{"DROP TABLE", "syntax error at 1:11: expected a table or view name after DROP, found end of input"},
	{"SHOW TABLE", "syntax error at 1:6: expected TABLES, COLUMNS or [USER|SYSTEM|ALL] FUNCTIONS after SHOW, found 'TABLE'"},
	{"DESCRIBE", "syntax error at 1:9: expected a table name after DESCRIBE, found end of input"},
	// Nesting limits.
	{"SELECT " + strings.Repeat("(", 1200) + "1" + strings.Repeat(")", 1200), "syntax error at 1:1007: nesting too deep: more than 1000 levels"},
	{"SELECT " + strings.Repeat("- ", 1200) + "a", "syntax error at 1:2006: nesting too deep: more than 1000 levels"},
	{"SELECT " + strings.Repeat("NOT ", 1200) + "a", "syntax error at 1:4004: nesting too deep: more than 1000 levels"},
	{strings.Repeat("(", 1200) + "SELECT 1" + strings.Repeat(")", 1200), "syntax error at 1:1001: nesting too deep: more than 1000 levels"},
	{"SELECT * FROM " + strings.Repeat("(SELECT * FROM ", 1200) + "t" + strings.Repeat(")", 1200), "syntax error at 1:7501: nesting too deep: more than 1000 levels"},
	{"SELECT CAST(a AS " + strings.Repeat("ARRAY<", 1200) + "INT" + strings.Repeat(">", 1200) + ")", "syntax error at 1:6006: nesting too deep: more than 1000 levels"},
	{strings.Repeat("EXPLAIN ", 1200) + "SELECT 1", "syntax error at 1:8009: nesting too deep: more than 1000 levels"},
}

func TestSyntaxErrors(t *testing.T) {
	for _, tc := range syntaxErrors {
		_, err := ParseScript(tc.in)
		name := tc.in
		if len(name) > 60 {
			name = name[:60] + "..."
		}
		if err == nil {
			t.Errorf("ParseScript(%q) succeeded, want %s", name, tc.err)
			continue
		}
		if err.Error() != tc.err {
			t.Errorf("ParseScript(%q)\n got %s\nwant %s", name, err, tc.err)
		}
		var se *SyntaxError
		if !errors.As(err, &se) {
			t.Errorf("ParseScript(%q) error is %T, want *SyntaxError", name, err)
		}
	}
}

func TestParseErrorsPerEntryPoint(t *testing.T) {
	tests := []struct {
		parse func(string) error
		in    string
		err   string
	}{
		{func(s string) error { _, err := Parse(s); return err }, "SELECT 1; SELECT 2",
			"syntax error at 1:11: expected end of input after the statement, found 'SELECT'"},
		{func(s string) error { _, err := Parse(s); return err }, "",
			"syntax error at 1:1: expected a statement (SELECT, WITH, CREATE, EXPLAIN, DROP, SHOW, DESCRIBE or SET), found end of input"},
		{func(s string) error { _, err := ParseExpr(s); return err }, "a + 1 AS b",
			"syntax error at 1:7: expected end of input after the expression, found 'AS'"},
		{func(s string) error { _, err := ParseExpr(s); return err }, "",
			"syntax error at 1:1: expected an expression, found end of input"},
		{func(s string) error { _, err := ParseSelectItem(s); return err }, "a AS b c",
			"syntax error at 1:8: expected end of input after the select item, found 'c'"},
		{func(s string) error { _, err := ParseOrderItem(s); return err }, "a DESC ASC",
			"syntax error at 1:8: expected end of input after the ORDER BY item, found 'ASC'"},
		{func(s string) error { _, err := ParseType(s); return err }, "INT INT",
			"syntax error at 1:5: expected end of input after the type, found 'INT'"},
	}
	for _, tc := range tests {
		err := tc.parse(tc.in)
		if err == nil || err.Error() != tc.err {
			t.Errorf("%q: got %v, want %s", tc.in, err, tc.err)
		}
	}
}

func TestSyntaxErrorContext(t *testing.T) {
	src := "SELECT a\n\tFROM t WHER x"
	_, err := Parse(src)
	var se *SyntaxError
	if !errors.As(err, &se) {
		t.Fatalf("got %v", err)
	}
	want := "\tFROM t WHER x\n\t       ^"
	if got := se.Context(src); got != want {
		t.Errorf("Context:\n%s\nwant:\n%s", got, want)
	}
	if got := (&SyntaxError{Line: 9, Col: 1}).Context(src); got != "" {
		t.Errorf("Context of a line past the end = %q", got)
	}
}
