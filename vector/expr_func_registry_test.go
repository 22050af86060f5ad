package vector_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/arrowstream/arrowstream/vector"
	vt "github.com/arrowstream/arrowstream/vector/vectortest"
)

func TestLookupFunction(t *testing.T) {
	s := schemaOf("s", vector.String, "n", vector.Int64)
	rows := []vt.Row{{"Hello World", int64(3)}}
	call := func(name string, args ...vector.Expr) vector.Expr {
		t.Helper()
		e, err := vector.LookupFunction(name, args)
		if err != nil {
			t.Fatalf("LookupFunction(%s): %v", name, err)
		}
		return e
	}
	vt.RunExpr(t,
		vt.ExprCase{Name: "UPPER", Schema: s, Rows: rows, Expr: call("UPPER", vector.Col("s")), Want: []any{"HELLO WORLD"}},
		vt.ExprCase{Name: "lcase", Schema: s, Rows: rows, Expr: call("lcase", vector.Col("s")), Want: []any{"hello world"}},
		vt.ExprCase{Name: "char_length", Schema: s, Rows: rows, Expr: call("char_length", vector.Col("s")), Want: []any{11}},
		vt.ExprCase{Name: "substr", Schema: s, Rows: rows, Expr: call("substr", vector.Col("s"), vector.Col("n"), vector.Lit(2)), Want: []any{"ll"}},
		vt.ExprCase{Name: "split", Schema: s, Rows: rows, Expr: call("split", vector.Col("s"), vector.Lit(" ")), Want: []any{[]any{"Hello", "World"}}},
		vt.ExprCase{Name: "concat", Schema: s, Rows: rows, Expr: call("concat", vector.Col("s"), vector.Col("n")), Want: []any{"Hello World3"}},
		vt.ExprCase{Name: "like", Schema: s, Rows: rows, Expr: call("like", vector.Col("s"), vector.Lit("H%")), Want: []any{true}},
		vt.ExprCase{Name: "hash", Schema: s, Rows: rows, Expr: call("hash", vector.Lit(1)), Want: []any{-559580957}},
		vt.ExprCase{Name: "int", Schema: s, Rows: rows, Expr: call("int", vector.Lit("12")), Want: []any{12}},
		vt.ExprCase{Name: "timestamp_seconds", Schema: s, Rows: rows, Expr: call("timestamp_seconds", vector.Col("n")), Want: []any{3_000_000}},
		vt.ExprCase{Name: "date_trunc", Schema: s, Rows: rows, Expr: call("date_trunc", vector.Lit("DAY"), vector.Lit("2026-01-01 10:00:00")),
			Want: []any{tsMicros("2026-01-01 00:00:00")}},
	)
	if got := call("Substring", vector.Col("s"), vector.Lit(1)).String(); got != "substring(s, 1)" {
		t.Errorf("String = %q", got)
	}
	_, err := vector.LookupFunction("nope", nil)
	if !errors.Is(err, vector.ErrUnknownFunction) {
		t.Errorf("unknown: %v", err)
	}
	_, err = vector.LookupFunction("substring", []vector.Expr{vector.Col("s")})
	if !errors.Is(err, vector.ErrArgumentCount) || !strings.Contains(err.Error(), "substring(s) requires 2 to 3 arguments, got 1") {
		t.Errorf("count: %v", err)
	}
	_, err = vector.LookupFunction("hash", nil)
	if !errors.Is(err, vector.ErrArgumentCount) || !strings.Contains(err.Error(), "at least 1") {
		t.Errorf("hash count: %v", err)
	}
	if len(vector.FunctionNames()) < 20 {
		t.Errorf("names: %v", vector.FunctionNames())
	}
}
