package vector_test

import (
	"fmt"
	"testing"

	"github.com/apache/arrow/go/v17/arrow"
	"github.com/apache/arrow/go/v17/arrow/array"
	"github.com/apache/arrow/go/v17/arrow/memory"

	"github.com/arrowstream/arrowstream/vector"
	vt "github.com/arrowstream/arrowstream/vector/vectortest"
)

func TestLikeConstantPattern(t *testing.T) {
	s := schemaOf("s", vector.String)
	d := schemaOf("s", dictString)
	strs := column("abc", "abcd", "xabc", "ab", "", "a_c", "a%c", "aXc", "héllo", "a\nc", "ABC")
	like := func(name, pattern string, want ...any) []vt.ExprCase {
		return []vt.ExprCase{
			{Name: name, Schema: s, Rows: strs, Expr: vector.Like(vector.Col("s"), vector.Lit(pattern)), Want: want, WantType: vector.Boolean, NullIntolerant: true},
			{Name: name + "-dictionary", Schema: d, Rows: strs, Expr: vector.Like(vector.Col("s"), vector.Lit(pattern)), Want: want, NullIntolerant: true},
		}
	}
	var cases []vt.ExprCase
	cases = append(cases, like("exact", "abc", true, false, false, false, false, false, false, false, false, false, false)...)
	cases = append(cases, like("prefix", "abc%", true, true, false, false, false, false, false, false, false, false, false)...)
	cases = append(cases, like("suffix", "%abc", true, false, true, false, false, false, false, false, false, false, false)...)
	cases = append(cases, like("contains", "%bc%", true, true, true, false, false, false, false, false, false, false, false)...)
	cases = append(cases, like("prefix-suffix", "a%c", true, false, false, false, false, true, true, true, false, true, false)...)
	cases = append(cases, like("all", "%", true, true, true, true, true, true, true, true, true, true, true)...)
	cases = append(cases, like("underscore", "a_c", true, false, false, false, false, true, true, true, false, true, false)...)
	cases = append(cases, like("unicode-underscore", "h_llo", false, false, false, false, false, false, false, false, true, false, false)...)
	cases = append(cases, like("escaped-underscore", `a\_c`, false, false, false, false, false, true, false, false, false, false, false)...)
	cases = append(cases, like("escaped-percent", `a\%%`, false, false, false, false, false, false, true, false, false, false, false)...)
	cases = append(cases, like("general", "%b_%", true, true, true, false, false, false, false, false, false, false, false)...)
	cases = append(cases, like("empty", "", false, false, false, false, true, false, false, false, false, false, false)...)
	cases = append(cases, like("backtracking", "a%b%c%", true, true, false, false, false, false, false, false, false, false, false)...)
	vt.RunExpr(t, cases...)
}

func TestLikePatternColumn(t *testing.T) {
	s := schemaOf("s", vector.String, "p", vector.String)
	vt.RunExpr(t,
		vt.ExprCase{Name: "column", Schema: s, Rows: []vt.Row{{"abc", "a%"}, {"abc", "a%"}, {"abc", "_b_"}, {"abc", "x%"}, {"a%", `a\%`}},
			Expr: vector.Like(vector.Col("s"), vector.Col("p")), Want: []any{true, true, true, false, true}, NullIntolerant: true},
		vt.ExprCase{Name: "bad-row", Schema: s, Rows: []vt.Row{{"abc", "a%"}, {"abc", `a\b`}},
			Expr: vector.Like(vector.Col("s"), vector.Col("p")), WantErr: `invalid LIKE pattern 'a\b': the escape character is not allowed to precede 'b'`},
	)
}

func TestLikeErrors(t *testing.T) {
	s := schemaOf("s", vector.String, "w", vector.WindowType, "n", vector.Int64)
	rows := []vt.Row{{"a", nil, int64(12)}}
	vt.RunExpr(t,
		vt.ExprCase{Name: "bad-escape", Schema: s, Rows: rows, Expr: vector.Like(vector.Col("s"), vector.Lit(`a\x`)),
			WantErr: `cannot bind s LIKE 'a\x': invalid LIKE pattern 'a\x': the escape character is not allowed to precede 'x' (available columns: s, w, n)`},
		vt.ExprCase{Name: "trailing-escape", Schema: s, Rows: rows, Expr: vector.Like(vector.Col("s"), vector.Lit(`a\`)),
			WantErr: "it is not allowed to end with the escape character"},
		vt.ExprCase{Name: "struct", Schema: s, Rows: rows, Expr: vector.Like(vector.Col("w"), vector.Lit("a")),
			WantErr: "LIKE: w must be a string, not struct"},
		vt.ExprCase{Name: "number-is-cast", Schema: s, Rows: rows, Expr: vector.Like(vector.Col("n"), vector.Lit("1%")), Want: []any{true}},
		vt.ExprCase{Name: "null-pattern", Schema: s, Rows: rows, Expr: vector.Like(vector.Col("s"), vector.TypedLit(vector.String, nil)), Want: []any{nil}},
	)
}

func BenchmarkLikePrefix(b *testing.B) {
	const rows = 64 * 1024
	mem := memory.NewGoAllocator()
	bld := array.NewStringBuilder(mem)
	for i := 0; i < rows; i++ {
		if i%3 == 0 {
			bld.Append(fmt.Sprintf("abc-%d", i))
		} else {
			bld.Append(fmt.Sprintf("event-%d", i))
		}
	}
	col := bld.NewArray()
	schema := schemaOf("s", vector.String)
	rec := array.NewRecord(schema, []arrow.Array{col}, rows)
	ev, err := vector.Like(vector.Col("s"), vector.Lit("abc%")).Bind(schema, mem)
	if err != nil {
		b.Fatal(err)
	}
	runEvalBench(b, ev, rec, rows)
}
