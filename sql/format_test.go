package sql

import "testing"

func TestFormatNodes(t *testing.T) {
	s, err := Parse("WITH c (x) AS (SELECT 1) SELECT CASE WHEN a THEN 1 END FROM STREAM s WATERMARK ts AS e DELAY OF INTERVAL 1 SECOND JOIN c USING (x) UNION SELECT 2")
	if err != nil {
		t.Fatal(err)
	}
	q := s.(*Query)
	sel := q.Body.(*Union).Left.(*Select)
	join := sel.From[0].(*Join)
	wm := join.Left.(*TableRef).Watermark
	tests := []struct {
		n    Node
		want string
	}{
		{q.With[0], "c (x) AS (SELECT 1)"},
		{q.Body, "SELECT CASE WHEN a THEN 1 END FROM STREAM s WATERMARK ts AS e DELAY OF INTERVAL 1 SECOND JOIN c USING (x) UNION SELECT 2"},
		{sel.Items[0], "CASE WHEN a THEN 1 END"},
		{sel.Items[0].Expr.(*Case).Whens[0], "WHEN a THEN 1"},
		{join, "STREAM s WATERMARK ts AS e DELAY OF INTERVAL 1 SECOND JOIN c USING (x)"},
		{wm, " WATERMARK ts AS e DELAY OF INTERVAL 1 SECOND"},
		{wm.Delay.Parts[0], "1 SECOND"},
		{join.Using[0], "x"},
		{Ident{Name: "select"}, "`select`"},
		{Ident{Name: "a`b c"}, "`a``b c`"},
		{Ident{Name: ""}, "``"},
		{&ColumnDef{Name: Ident{Name: "a"}, Type: &TypeName{Name: "INT"}, NotNull: true}, "a INT NOT NULL"},
		{&Property{Key: "a.b", Value: "v"}, "a.b 'v'"},
		{&Property{Key: "a b", Value: "it's"}, `'a b' = 'it\'s'`},
		{&StructField{Name: Ident{Name: "f"}, Type: &TypeName{Name: "STRING"}}, "f: STRING"},
		{&OrderItem{Expr: &ColumnRef{Parts: []Ident{{Name: "a"}}}, Desc: true, Nulls: NullsFirst}, "a DESC NULLS FIRST"},
		{&Literal{Kind: LitString, Value: "\x00\x1f\x7f\xff\n"}, `'\u0000\u001F\u007F` + "\xff" + `\n'`},
		{nil, ""},
	}
	for _, tc := range tests {
		if got := Format(tc.n); got != tc.want {
			t.Errorf("Format(%T) = %q, want %q", tc.n, got, tc.want)
		}
	}
}

func TestOperatorNames(t *testing.T) {
	for _, tc := range []struct{ got, want string }{
		{LitTimestamp.String(), "TIMESTAMP"},
		{LiteralKind(99).String(), "LiteralKind(99)"},
		{OpIntDiv.String(), "DIV"},
		{BinaryOp(99).String(), "BinaryOp(99)"},
		{OpBitNot.String(), "~"},
		{UnaryOp(99).String(), "UnaryOp(99)"},
		{OpRLike.String(), "RLIKE"},
		{LikeOp(99).String(), "LikeOp(99)"},
		{JoinAnti.String(), "LEFT ANTI JOIN"},
		{JoinKind(99).String(), "JoinKind(99)"},
		{Pos{3, 4}.String(), "3:4"},
	} {
		if tc.got != tc.want {
			t.Errorf("got %q, want %q", tc.got, tc.want)
		}
	}
}
