package vector_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/apache/arrow/go/v17/arrow"
	"github.com/apache/arrow/go/v17/arrow/array"

	"github.com/arrowstream/arrowstream/internal/testutil/poisonmem"
	"github.com/arrowstream/arrowstream/vector"
	vt "github.com/arrowstream/arrowstream/vector/vectortest"
)

func TestFromJSON(t *testing.T) {
	s := schemaOf("j", vector.String)
	d := schemaOf("j", dictString)
	fj := func(schema string, opts ...string) vector.Expr {
		var o vector.Expr
		if len(opts) > 0 {
			o = vector.Lit(opts[0])
		}
		return vector.FromJSON(vector.Col("j"), vector.Lit(schema), o)
	}
	docs := column(
		`{"a": 1, "b": "x", "c": [1, 2]}`,
		`{"b": "only b", "extra": {"deep": [1, {"k": 2}]}}`,
		`{"a": 1, "b": `, // not JSON: a struct of NULL fields, as Spark
		`{"a": "not a number"}`,
		``,
		`  `,
		`[1, 2]`,
		`{"a": -7, "c": null}`,
		`{"a": 2} {"a": 3}`, // two values in one row
	)
	want := []any{
		[]any{int64(1), "x", []any{int64(1), int64(2)}},
		[]any{nil, "only b", nil},
		[]any{nil, nil, nil}, nil, nil, nil, nil,
		[]any{int64(-7), nil, nil},
		[]any{int64(2), nil, nil}, // the first value, as Jackson reads it
	}
	vt.RunExpr(t,
		vt.ExprCase{Name: "permissive", Schema: s, Rows: docs, Expr: fj("a INT, b STRING, c ARRAY<BIGINT>"), Want: want,
			WantType: arrow.StructOf(arrow.Field{Name: "a", Type: vector.Int32, Nullable: true}, arrow.Field{Name: "b", Type: vector.String, Nullable: true},
				arrow.Field{Name: "c", Type: vector.ListOf(vector.Int64), Nullable: true}), NullIntolerant: true},
		vt.ExprCase{Name: "dictionary", Schema: d, Rows: docs, Expr: fj("a INT, b STRING, c ARRAY<BIGINT>"), Want: want},
		vt.ExprCase{Name: "struct-form-nested", Schema: s, Rows: column(`{"p": {"x": 1.5, "t": "2024-01-02 03:04:05"}}`, `{"p": null}`),
			Expr: fj("struct<p: struct<x: double, t: timestamp>>"), Want: []any{[]any{[]any{1.5, int64(1704164645000000)}}, []any{nil}}},
		vt.ExprCase{Name: "explicit-permissive", Schema: s, Rows: column(`{"a":1}`, `{`), Expr: fj("a INT", `{"mode": "permissive"}`), Want: []any{[]any{int64(1)}, []any{nil}}},
		vt.ExprCase{Name: "failfast-ok", Schema: s, Rows: column(`{"a":1}`, ``), Expr: fj("a INT", `{"mode":"FAILFAST"}`), Want: []any{[]any{int64(1)}, nil}},
		vt.ExprCase{Name: "failfast-syntax", Schema: s, Rows: column(`{"a":1}`, `{"a":`), Expr: fj("a INT", `{"mode":"FAILFAST"}`),
			WantErr: `from_json(j, 'a INT', '{"mode":"FAILFAST"}')`},
		vt.ExprCase{Name: "failfast-type", Schema: s, Rows: column(`{"a":1}`, `{"a":"x"}`), Expr: fj("a INT", `{"mode":"FAILFAST"}`), WantErr: "malformed JSON"},
		vt.ExprCase{Name: "null-input-type", Schema: schemaOf("n", vector.Null), Rows: column(nil), Expr: vector.FromJSON(vector.Col("n"), vector.Lit("a INT"), nil), Want: []any{nil}},
		vt.ExprCase{Name: "bad-schema", Schema: s, Rows: column(`{}`), Expr: fj("a MAP<INT, INT>"), WantErr: "must have STRING keys"},
		vt.ExprCase{Name: "schema-not-constant", Schema: schemaOf("j", vector.String, "k", vector.String), Rows: []vt.Row{{"{}", "a INT"}},
			Expr: vector.FromJSON(vector.Col("j"), vector.Col("k"), nil), WantErr: "the schema k of from_json must be a constant string"},
		vt.ExprCase{Name: "bad-mode", Schema: s, Rows: column(`{}`), Expr: fj("a INT", `{"mode":"DROPMALFORMED"}`), WantErr: "mode DROPMALFORMED is not supported"},
		vt.ExprCase{Name: "bad-options", Schema: s, Rows: column(`{}`), Expr: fj("a INT", `mode=FAILFAST`), WantErr: "not a JSON object"},
		vt.ExprCase{Name: "binary-input", Schema: schemaOf("b", vector.Binary), Rows: column([]byte("{}")), Expr: vector.FromJSON(vector.Col("b"), vector.Lit("a INT"), nil),
			WantErr: "from_json needs a string to parse, not binary"},
	)
}

// TestFromJSONFailFastRow: the FAILFAST error names the failing row.
func TestFromJSONFailFastRow(t *testing.T) {
	mem := poisonmem.New()
	defer mem.AssertSize(t, 0)
	b := array.NewStringBuilder(mem)
	for i := 0; i < 100; i++ {
		if i == 73 {
			b.Append(`{"a": true}`)
			continue
		}
		b.Append(fmt.Sprintf(`{"a": %d}`, i))
	}
	col := b.NewArray()
	b.Release()
	rec := array.NewRecord(schemaOf("j", vector.String), []arrow.Array{col}, 100)
	col.Release()
	defer rec.Release()
	ev, err := vector.FromJSON(vector.Col("j"), vector.Lit("a INT"), vector.Lit(`{"mode":"FAILFAST"}`)).Bind(rec.Schema(), mem)
	if err != nil {
		t.Fatal(err)
	}
	_, err = ev.Eval(context.Background(), rec)
	var ee *vector.EvalError
	if !errors.As(err, &ee) || ee.Row != 73 || !errors.Is(err, vector.ErrMalformedJSON) || !strings.Contains(err.Error(), `{"a": true}`) {
		t.Fatalf("error %v, want row 73 named", err)
	}
}

// FuzzFromJSON: no document may panic or leak, every row gives one value,
// and PERMISSIVE never fails.
func FuzzFromJSON(f *testing.F) {
	for _, s := range []string{`{"a":1,"b":"x","c":[1,2],"d":{"e":1.5}}`, `{"a":`, `[]`, `null`, `{"c":[null,"x"]}`, `{"a":1}{"a":2}`, `"str"`, `{"d":{"e":"NaN"}}`} {
		f.Add(s, `{"a":2}`)
	}
	f.Fuzz(func(t *testing.T, doc1, doc2 string) {
		mem := poisonmem.New()
		defer mem.AssertSize(t, 0)
		b := array.NewStringBuilder(mem)
		b.AppendValues([]string{doc1, doc2, doc1}, []bool{true, true, false})
		col := b.NewArray()
		b.Release()
		rec := array.NewRecord(schemaOf("j", vector.String), []arrow.Array{col}, 3)
		col.Release()
		defer rec.Release()
		ev, err := vector.FromJSON(vector.Col("j"), vector.Lit("a INT, b STRING, c ARRAY<STRING>, d STRUCT<e: DOUBLE>"), nil).Bind(rec.Schema(), mem)
		if err != nil {
			t.Fatal(err)
		}
		out, err := ev.Eval(context.Background(), rec)
		if err != nil {
			t.Fatalf("PERMISSIVE failed: %v", err)
		}
		defer out.Release()
		if out.Len() != 3 || out.IsValid(2) {
			t.Fatalf("%d rows, row 2 valid %v", out.Len(), out.IsValid(2))
		}
	})
}
