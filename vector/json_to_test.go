package vector_test

import (
	"math"
	"testing"

	"github.com/apache/arrow/go/v17/arrow"

	"github.com/arrowstream/arrowstream/vector"
	vt "github.com/arrowstream/arrowstream/vector/vectortest"
)

func TestToJSON(t *testing.T) {
	inner := arrow.StructOf(arrow.Field{Name: "x", Type: vector.Float64, Nullable: true})
	st := arrow.StructOf(
		arrow.Field{Name: "b", Type: vector.String, Nullable: true},
		arrow.Field{Name: "a", Type: vector.Int32, Nullable: true},
		arrow.Field{Name: "l", Type: vector.ListOf(vector.Int64), Nullable: true},
		arrow.Field{Name: "s", Type: inner, Nullable: true},
		arrow.Field{Name: "t", Type: vector.Timestamp, Nullable: true},
		arrow.Field{Name: "d", Type: vector.Date, Nullable: true},
		arrow.Field{Name: "bin", Type: vector.Binary, Nullable: true},
		arrow.Field{Name: "ok", Type: vector.Boolean, Nullable: true},
		arrow.Field{Name: "n", Type: vector.Decimal(5, 2), Nullable: true},
	)
	s := schemaOf("r", st)
	rows := column(
		[]any{"q\"\n\x01é", int32(1), []any{int64(1), nil}, []any{1.0}, int64(1704164645000000), int64(19724), []byte("hi"), true, "12.30"},
		[]any{nil, int32(-2), nil, []any{nil}, nil, nil, nil, nil, nil},
		[]any{"x", nil, []any{}, []any{math.NaN()}, nil, nil, nil, false, nil},
	)
	vt.RunExpr(t,
		vt.ExprCase{Name: "struct", Schema: s, Rows: rows, Expr: vector.ToJSON(vector.Col("r"), nil), WantType: vector.String, NullIntolerant: true, Want: []any{
			`{"b":"q\"\n\u0001é","a":1,"l":[1,null],"s":{"x":1.0},"t":"2024-01-02T03:04:05.000Z","d":"2024-01-02","bin":"aGk=","ok":true,"n":12.30}`,
			`{"a":-2,"s":{}}`,
			`{"b":"x","l":[],"s":{"x":"NaN"},"ok":false}`,
		}},
		vt.ExprCase{Name: "round-trip", Schema: schemaOf("j", vector.String), Rows: column(`{"a": 1, "b": ["x", null]}`),
			Expr: vector.ToJSON(vector.FromJSON(vector.Col("j"), vector.Lit("a INT, b ARRAY<STRING>"), nil), nil), Want: []any{`{"a":1,"b":["x",null]}`}},
		vt.ExprCase{Name: "not-struct", Schema: schemaOf("i", vector.Int64), Rows: column(1), Expr: vector.ToJSON(vector.Col("i"), nil), WantErr: "to_json needs a STRUCT, ARRAY or MAP, not bigint"},
	)
}
