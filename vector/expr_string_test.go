package vector_test

import (
	"testing"

	"github.com/arrowstream/arrowstream/vector"
	vt "github.com/arrowstream/arrowstream/vector/vectortest"
)

func TestCaseAndLength(t *testing.T) {
	s := schemaOf("s", vector.String)
	d := schemaOf("s", dictString)
	strs := column("Hello", "", "ÄÖü ß", "abc123")
	vt.RunExpr(t,
		vt.ExprCase{Name: "lower", Schema: s, Rows: strs, Expr: vector.Lower(vector.Col("s")), Want: []any{"hello", "", "äöü ß", "abc123"}, WantType: vector.String, NullIntolerant: true},
		vt.ExprCase{Name: "upper", Schema: s, Rows: strs, Expr: vector.Upper(vector.Col("s")), Want: []any{"HELLO", "", "ÄÖÜ ß", "ABC123"}, NullIntolerant: true},
		vt.ExprCase{Name: "upper-ascii", Schema: s, Rows: column("a", "zZ", "q"), Expr: vector.Upper(vector.Col("s")), Want: []any{"A", "ZZ", "Q"}, NullIntolerant: true},
		vt.ExprCase{Name: "lower-dictionary", Schema: d, Rows: strs, Expr: vector.Lower(vector.Col("s")), Want: []any{"hello", "", "äöü ß", "abc123"}, NullIntolerant: true},
		vt.ExprCase{Name: "length-chars", Schema: s, Rows: strs, Expr: vector.Length(vector.Col("s")), Want: []any{5, 0, 5, 6}, WantType: vector.Int32, NullIntolerant: true},
		vt.ExprCase{Name: "length-binary", Schema: schemaOf("b", vector.Binary), Rows: column([]byte("ÄÖ")), Expr: vector.Length(vector.Col("b")), Want: []any{4}, NullIntolerant: true},
		vt.ExprCase{Name: "lower-int-is-cast", Schema: schemaOf("n", vector.Int64), Rows: column(12), Expr: vector.Lower(vector.Col("n")), Want: []any{"12"}, NullIntolerant: true},
		vt.ExprCase{Name: "constant", Schema: s, Rows: strs[:1], Expr: vector.Upper(vector.Lit("abc")), Want: []any{"ABC"}},
		vt.ExprCase{Name: "bad-type", Schema: schemaOf("w", vector.WindowType), Rows: []vt.Row{{nil}}, Expr: vector.Lower(vector.Col("w")),
			WantErr: "cannot bind lower(w): w must be a string, not struct<start:timestamp,end:timestamp>: type mismatch (available columns: w)"},
	)
}

func TestSubstring(t *testing.T) {
	s := schemaOf("s", vector.String)
	strs := column("Spark SQL", "", "héllo wörld")
	sub := func(name string, pos int, length any, want ...any) vt.ExprCase {
		var l vector.Expr
		if length != nil {
			l = vector.Lit(length)
		}
		return vt.ExprCase{Name: name, Schema: s, Rows: strs, Expr: vector.Substring(vector.Col("s"), vector.Lit(pos), l), Want: want, WantType: vector.String, NullIntolerant: true}
	}
	vt.RunExpr(t,
		sub("from-5", 5, nil, "k SQL", "", "o wörld"),
		sub("5-1", 5, 1, "k", "", "o"),
		sub("negative", -3, nil, "SQL", "", "rld"),
		sub("zero", 0, 2, "Sp", "", "hé"),
		sub("negative-len", 2, -1, "", "", ""),
		sub("before-start", -20, 12, "S", "", "hél"),
		sub("past-end", 100, 2, "", "", ""),
		sub("unicode", 2, 3, "par", "", "éll"),
		vt.ExprCase{Name: "columns", Schema: schemaOf("s", vector.String, "p", vector.Int32, "l", vector.Int64),
			Rows:           []vt.Row{{"abcdef", 2, int64(3)}, {"abcdef", -2, int64(5)}, {"xyz", 1, int64(1)}},
			Expr:           vector.Substring(vector.Col("s"), vector.Col("p"), vector.Col("l")),
			Want:           []any{"bcd", "ef", "x"},
			NullIntolerant: true},
		vt.ExprCase{Name: "binary", Schema: schemaOf("b", vector.Binary), Rows: column([]byte("abcdef")),
			Expr: vector.Substring(vector.Col("b"), vector.Lit(-2), nil), Want: []any{"ef"}, WantType: vector.Binary, NullIntolerant: true},
		vt.ExprCase{Name: "bad-pos", Schema: s, Rows: strs, Expr: vector.Substring(vector.Col("s"), vector.Lit("x"), nil),
			WantErr: "cannot bind substring(s, 'x'): 'x' must be an integer, not string"},
		vt.ExprCase{Name: "null-pos", Schema: s, Rows: strs, Expr: vector.Substring(vector.Col("s"), vector.TypedLit(vector.Int32, nil), nil),
			Want: []any{nil, nil, nil}},
	)
}

func TestConcat(t *testing.T) {
	s := schemaOf("a", vector.String, "b", dictString, "n", vector.Int64)
	rows := []vt.Row{{"x", "y", int64(1)}, {"", "", int64(-2)}, {"héllo", "!", int64(0)}}
	vt.RunExpr(t,
		vt.ExprCase{Name: "three", Schema: s, Rows: rows, Expr: vector.Concat(vector.Col("a"), vector.Col("b"), vector.Col("n")),
			Want: []any{"xy1", "-2", "héllo!0"}, WantType: vector.String, NullIntolerant: true},
		vt.ExprCase{Name: "with-literal", Schema: s, Rows: rows, Expr: vector.Concat(vector.Lit("<"), vector.Col("a"), vector.Lit(">")),
			Want: []any{"<x>", "<>", "<héllo>"}},
		vt.ExprCase{Name: "null-literal", Schema: s, Rows: rows, Expr: vector.Concat(vector.Col("a"), vector.TypedLit(vector.String, nil)),
			Want: []any{nil, nil, nil}},
		vt.ExprCase{Name: "none", Schema: s, Rows: rows, Expr: vector.Concat(), Want: []any{"", "", ""}},
		vt.ExprCase{Name: "binary", Schema: schemaOf("x", vector.Binary, "y", vector.Binary), Rows: []vt.Row{{[]byte("a"), []byte("b")}},
			Expr: vector.Concat(vector.Col("x"), vector.Col("y")), Want: []any{"ab"}, WantType: vector.Binary, NullIntolerant: true},
		// Binaries next to a string or a number are text, as Spark's
		// ConcatCoercion casts every child to string unless all are binary.
		vt.ExprCase{Name: "binary-with-string", Schema: schemaOf("x", vector.Binary, "s", vector.String, "n", vector.Int64),
			Rows: []vt.Row{{[]byte("2"), "1", int64(0)}, {[]byte("héllo"), "", int64(10)}},
			Expr: vector.Concat(vector.Col("n"), vector.Col("s"), vector.Col("x"), vector.Lit([]byte("!"))),
			Want: []any{"012!", "10héllo!"}, WantType: vector.String, NullIntolerant: true},
	)
}

func TestSplit(t *testing.T) {
	s := schemaOf("s", vector.String)
	strs := column("a,b,,c,,", "", "abc", ",a")
	list := func(xs ...string) []any {
		out := make([]any, len(xs))
		for i, x := range xs {
			out[i] = x
		}
		return out
	}
	split := func(name, re string, limit any, want ...any) vt.ExprCase {
		var l vector.Expr
		if limit != nil {
			l = vector.Lit(limit)
		}
		return vt.ExprCase{Name: name, Schema: s, Rows: strs, Expr: vector.Split(vector.Col("s"), vector.Lit(re), l), Want: want,
			WantType: vector.ListOf(vector.String), NullIntolerant: true}
	}
	vt.RunExpr(t,
		split("comma", ",", nil, list("a", "b", "", "c", "", ""), list(""), list("abc"), list("", "a")),
		split("limit-2", ",", 2, list("a", "b,,c,,"), list(""), list("abc"), list("", "a")),
		split("limit-0-keeps-trailing", ",", 0, list("a", "b", "", "c", "", ""), list(""), list("abc"), list("", "a")),
		split("regex", ",+", nil, list("a", "b", "c", ""), list(""), list("abc"), list("", "a")),
		split("escaped-literal", `\,`, nil, list("a", "b", "", "c", "", ""), list(""), list("abc"), list("", "a")),
		split("empty-regex", "", nil, list("a", ",", "b", ",", ",", "c", ",", ",", ""), list(""), list("a", "b", "c", ""), list(",", "a", "")),
		split("empty-regex-limit", "", 2, list("a", ",b,,c,,"), list(""), list("a", "bc"), list(",", "a")),
		split("zero-width", "x*", nil, list("a", ",", "b", ",", ",", "c", ",", ",", ""), list(""), list("a", "b", "c", ""), list(",", "a", "")),
		vt.ExprCase{Name: "dictionary", Schema: schemaOf("s", dictString), Rows: column("a b", "a b", "c"),
			Expr: vector.Split(vector.Col("s"), vector.Lit(" "), nil), Want: []any{list("a", "b"), list("a", "b"), list("c")}, NullIntolerant: true},
		vt.ExprCase{Name: "regex-column", Schema: schemaOf("s", vector.String, "r", vector.String), Rows: []vt.Row{{"a-b", "-"}, {"a1b22c", "[0-9]+"}},
			Expr: vector.Split(vector.Col("s"), vector.Col("r"), nil), Want: []any{list("a", "b"), list("a", "b", "c")}, NullIntolerant: true},
		vt.ExprCase{Name: "bad-regex", Schema: s, Rows: strs, Expr: vector.Split(vector.Col("s"), vector.Lit("("), nil),
			WantErr: "cannot bind split(s, '('): invalid split regex \"(\""},
		vt.ExprCase{Name: "bad-regex-column", Schema: schemaOf("s", vector.String, "r", vector.String), Rows: []vt.Row{{"a", "("}},
			Expr: vector.Split(vector.Col("s"), vector.Col("r"), nil), WantErr: "invalid split regex"},
	)
}

// TestStringFunctionsConstantOperand covers calls whose string operand is a
// literal while another operand is a column (found by FuzzExprEval: the
// kernels read the literal as a column and dereferenced nil).
func TestStringFunctionsConstantOperand(t *testing.T) {
	list := func(xs ...any) []any { return xs }
	vt.RunExpr(t,
		vt.ExprCase{Name: "substring-literal-pos-column", Schema: schemaOf("p", vector.Int32), Rows: column(1, -1, 0, 3),
			Expr: vector.Substring(vector.Lit("héllo"), vector.Col("p"), vector.Lit(2)), Want: []any{"hé", "o", "hé", "ll"},
			WantType: vector.String, NullIntolerant: true},
		vt.ExprCase{Name: "substring-literal-len-column", Schema: schemaOf("l", vector.Int64), Rows: column(int64(1), int64(0), int64(9)),
			Expr: vector.Substring(vector.Lit("abc"), vector.Lit(2), vector.Col("l")), Want: []any{"b", "", "bc"}, NullIntolerant: true},
		vt.ExprCase{Name: "substring-binary-literal", Schema: schemaOf("p", vector.Int32), Rows: column(2),
			Expr: vector.Substring(vector.Lit([]byte("xyz")), vector.Col("p"), nil), Want: []any{"yz"}, WantType: vector.Binary, NullIntolerant: true},
		vt.ExprCase{Name: "split-literal-regex-column", Schema: schemaOf("r", vector.String), Rows: column(",", "b", ""),
			Expr: vector.Split(vector.Lit("a,b"), vector.Col("r"), nil), Want: []any{list("a", "b"), list("a,", ""), list("a", ",", "b", "")},
			WantType: vector.ListOf(vector.String), NullIntolerant: true},
		vt.ExprCase{Name: "split-literal-regex-boolean", Schema: schemaOf("b", vector.Boolean), Rows: column(true, false),
			Expr: vector.Split(vector.Lit("atrueb"), vector.Col("b"), nil), Want: []any{list("a", "b"), list("atrueb")}, NullIntolerant: true},
		vt.ExprCase{Name: "split-literal-limit-column", Schema: schemaOf("n", vector.Int32), Rows: column(1, 2, -1),
			Expr: vector.Split(vector.Lit("a,b,c"), vector.Lit(","), vector.Col("n")), Want: []any{list("a,b,c"), list("a", "b,c"), list("a", "b", "c")}, NullIntolerant: true},
		vt.ExprCase{Name: "split-literal-bad-regex-column", Schema: schemaOf("r", vector.String), Rows: column("("),
			Expr: vector.Split(vector.Lit("a"), vector.Col("r"), nil), WantErr: "invalid split regex"},
	)
}
