package vector_test

import (
	"testing"

	"github.com/arrowstream/arrowstream/vector"
	vt "github.com/arrowstream/arrowstream/vector/vectortest"
)

// TestFromUnixTimeFormatColumn: the format of from_unixtime may be a
// column, each row printed with its own pattern (Spark's from_unixtime
// takes any string expression); NULL seconds are NULL whatever the format.
func TestFromUnixTimeFormatColumn(t *testing.T) {
	s := schemaOf("n", vector.Int64, "f", vector.String)
	rows := []vt.Row{{int64(0), "yyyy"}, {int64(86400), "yyyy-MM-dd HH:mm"}, {int64(3600), nil}, {nil, "yyyy"}}
	vt.RunExpr(t,
		vt.ExprCase{Name: "per-row-pattern", Schema: s, Rows: rows, Expr: vector.FromUnixTime(vector.Col("n"), vector.Col("f")),
			Want: []any{"1970", "1970-01-02 00:00", nil, nil}, WantType: vector.String},
		vt.ExprCase{Name: "null-seconds", Schema: s, Rows: rows, Expr: vector.FromUnixTime(vector.TypedLit(vector.Int64, nil), vector.Col("f")),
			Want: []any{nil, nil, nil, nil}, WantType: vector.String},
		vt.ExprCase{Name: "bad-pattern-row", Schema: s, Rows: []vt.Row{{int64(0), "yyyy-MM-dd HH:mm:ss.SSSSSSSSSS"}},
			Expr: vector.FromUnixTime(vector.Col("n"), vector.Col("f")), WantErr: "SSSSSSSSSS"},
	)
}
