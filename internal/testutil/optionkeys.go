package testutil

import (
	"go/ast"
	"go/parser"
	"go/token"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// OptionKeysRead returns the option keys the function funcName of the Go
// file path reads: the string constants of its switch cases and of its
// map index expressions (lower["key"]), lower-cased, sorted, without
// duplicates. Connector tests compare them with the keys the connector
// declares, so that the declaration cannot drift from the parser.
func OptionKeysRead(t testing.TB, path, funcName string) []string {
	t.Helper()
	f, err := parser.ParseFile(token.NewFileSet(), path, nil, 0)
	if err != nil {
		t.Fatalf("parse %s: %v", path, err)
	}
	var body *ast.BlockStmt
	for _, d := range f.Decls {
		if fd, ok := d.(*ast.FuncDecl); ok && fd.Name.Name == funcName && fd.Recv == nil {
			body = fd.Body
		}
	}
	if body == nil {
		t.Fatalf("%s: no function %s", path, funcName)
	}
	var keys []string
	add := func(e ast.Expr) {
		if lit, ok := e.(*ast.BasicLit); ok && lit.Kind == token.STRING {
			if s, err := strconv.Unquote(lit.Value); err == nil {
				keys = append(keys, strings.ToLower(s))
			}
		}
	}
	ast.Inspect(body, func(n ast.Node) bool {
		switch x := n.(type) {
		case *ast.CaseClause:
			for _, e := range x.List {
				add(e)
			}
		case *ast.IndexExpr:
			add(x.Index)
		}
		return true
	})
	slices.Sort(keys)
	return slices.Compact(keys)
}

// LowerSorted lower-cases and sorts keys, without duplicates.
func LowerSorted(keys []string) []string {
	out := make([]string, len(keys))
	for i, k := range keys {
		out[i] = strings.ToLower(k)
	}
	slices.Sort(out)
	return slices.Compact(out)
}
