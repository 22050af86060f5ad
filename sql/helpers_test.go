package sql

import (
	"reflect"
	"strings"
	"testing"
)

// posType is reflect's view of Pos, which stripPos zeroes.
var posType = reflect.TypeOf(Pos{})

var identType = reflect.TypeOf(Ident{})

// stripPos zeroes every Pos inside v (a tree the caller owns), so that two
// trees parsed from differently laid out text compare equal.
func stripPos(v any) {
	stripValue(reflect.ValueOf(v))
}

func stripValue(v reflect.Value) {
	switch v.Kind() {
	case reflect.Pointer, reflect.Interface:
		if !v.IsNil() {
			stripValue(v.Elem())
		}
	case reflect.Struct:
		if v.Type() == identType && v.CanSet() {
			// Backquotes matter only around names that are not plain
			// words, which Format always quotes.
			v.FieldByName("Quoted").SetBool(false)
		}
		if v.Type() == posType {
			if v.CanSet() {
				v.Set(reflect.Zero(posType))
			}
			return
		}
		for i := 0; i < v.NumField(); i++ {
			stripValue(v.Field(i))
		}
	case reflect.Slice:
		for i := 0; i < v.Len(); i++ {
			stripValue(v.Index(i))
		}
	}
}

// sameTree reports whether a and b are equal ignoring positions. It
// modifies both.
func sameTree(a, b any) bool {
	stripPos(a)
	stripPos(b)
	return reflect.DeepEqual(a, b)
}

// checkRoundTrip formats n, parses the text again with parse, and fails
// unless the result equals n (ignoring positions) and formats to the same
// text. It returns the formatted text.
func checkRoundTrip[T Node](t testing.TB, src string, n T, parse func(string) (T, error)) string {
	t.Helper()
	text := Format(n)
	again, err := parse(text)
	if err != nil {
		t.Fatalf("round trip of %q: Format gave %q, which does not parse: %v", src, text, err)
	}
	if text2 := Format(again); text2 != text {
		t.Fatalf("round trip of %q: Format gave %q, then %q", src, text, text2)
	}
	checkPositions(t, src, again)
	if !sameTree(n, again) {
		t.Fatalf("round trip of %q: Format gave %q, which parses to a different tree", src, text)
	}
	return text
}

// checkPositions fails if a parsed node lacks a position.
func checkPositions(t testing.TB, src string, n Node) {
	t.Helper()
	Inspect(n, func(m Node) bool {
		if p := m.Position(); p.Line < 1 || p.Col < 1 {
			t.Fatalf("%q: node %T (%s) has no position", src, m, Format(m))
		}
		return true
	})
}

// paren renders an expression fully parenthesized, to check the shape of
// the tree in precedence tests; leaves are rendered by Format.
func paren(e Expr) string {
	switch e := e.(type) {
	case *BinaryExpr:
		return "(" + paren(e.L) + " " + e.Op.String() + " " + paren(e.R) + ")"
	case *UnaryExpr:
		sep := ""
		if e.Op == OpNot {
			sep = " "
		}
		return "(" + e.Op.String() + sep + paren(e.X) + ")"
	case *IsNull:
		if e.Not {
			return "(" + paren(e.X) + " IS NOT NULL)"
		}
		return "(" + paren(e.X) + " IS NULL)"
	case *Between:
		return "(" + paren(e.X) + not(e.Not) + " BETWEEN " + paren(e.Low) + " AND " + paren(e.High) + ")"
	case *In:
		if e.Query != nil {
			return "(" + paren(e.X) + not(e.Not) + " IN (" + Format(e.Query) + "))"
		}
		var items []string
		for _, x := range e.List {
			items = append(items, paren(x))
		}
		return "(" + paren(e.X) + not(e.Not) + " IN (" + strings.Join(items, ", ") + "))"
	case *Like:
		return "(" + paren(e.X) + not(e.Not) + " " + e.Op.String() + " " + paren(e.Pattern) + ")"
	case *Cast:
		return "CAST(" + paren(e.X) + " AS " + Format(e.Type) + ")"
	case *FieldAccess:
		return "(" + paren(e.X) + ")." + e.Field.Name
	case *Subscript:
		return "(" + paren(e.X) + ")[" + paren(e.Index) + "]"
	case *FuncCall:
		var args []string
		for _, x := range e.Args {
			args = append(args, paren(x))
		}
		d := ""
		if e.Distinct {
			d = "DISTINCT "
		}
		return e.Name.Name + "(" + d + strings.Join(args, ", ") + ")"
	}
	return Format(e)
}

func not(b bool) string {
	if b {
		return " NOT"
	}
	return ""
}
