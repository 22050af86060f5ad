package server

import (
	"context"
	"go/ast"
	"go/parser"
	"go/token"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/apache/arrow/go/v17/arrow/flight"
	"github.com/apache/arrow/go/v17/arrow/flight/flightsql"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

// sqlWord finds SQL keywords that start a clause naming a table or
// column.
var sqlWord = regexp.MustCompile(`(?i)\b(SELECT|FROM|INTO|TABLE|JOIN|WHERE|DESCRIBE|EXPLAIN|UPDATE|DROP)\b\s`)

// safeOperand is an expression that renders names as SQL safely: the
// quoting helpers and the SQL formatter (which quotes every identifier
// that needs it).
func safeOperand(e ast.Expr) bool {
	call, ok := e.(*ast.CallExpr)
	if !ok {
		return false
	}
	switch fn := call.Fun.(type) {
	case *ast.Ident:
		return fn.Name == "quoteIdent" || fn.Name == "quoteString"
	case *ast.SelectorExpr:
		return fn.Sel.Name == "Format" || fn.Sel.Name == "QuoteIdent"
	}
	return false
}

// allowed are reviewed exceptions, by file and the text of the operand.
var allowed = map[string]string{
	// def.Query is sql.Format of a parsed query (see engine.remember).
	"engine.go": "def.Query",
}

// TestNoSQLBuiltFromNames scans the non-test Go files of server/ and
// cmd/arrowstream/ for SQL text assembled with + or a Printf verb from
// something other than a quoting helper: a name with a quote or a
// semicolon in it would change the statement.
func TestNoSQLBuiltFromNames(t *testing.T) {
	var files []string
	for _, dir := range []string{".", filepath.Join("..", "cmd", "arrowstream")} {
		m, err := filepath.Glob(filepath.Join(dir, "*.go"))
		if err != nil {
			t.Fatal(err)
		}
		for _, f := range m {
			if !strings.HasSuffix(f, "_test.go") {
				files = append(files, f)
			}
		}
	}
	if len(files) < 20 {
		t.Fatalf("only %d files found", len(files))
	}
	fset := token.NewFileSet()
	for _, path := range files {
		file, err := parser.ParseFile(fset, path, nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		literal := func(e ast.Expr) (string, bool) {
			lit, ok := e.(*ast.BasicLit)
			if !ok || lit.Kind != token.STRING {
				return "", false
			}
			s, err := strconv.Unquote(lit.Value)
			return s, err == nil
		}
		report := func(n ast.Node, what string) {
			t.Errorf("%s: SQL text built from %s; quote names with quoteIdent or build an AST and sql.Format it", fset.Position(n.Pos()), what)
		}
		ast.Inspect(file, func(n ast.Node) bool {
			switch x := n.(type) {
			case *ast.BinaryExpr:
				if x.Op != token.ADD {
					return true
				}
				for _, pair := range [][2]ast.Expr{{x.X, x.Y}, {x.Y, x.X}} {
					s, ok := literal(pair[0])
					if !ok || !sqlWord.MatchString(s) {
						continue
					}
					if _, isLit := literal(pair[1]); isLit || safeOperand(pair[1]) {
						continue
					}
					operand := exprText(pair[1])
					if allowed[filepath.Base(path)] == operand {
						continue
					}
					report(x, operand)
				}
			case *ast.CallExpr:
				sel, ok := x.Fun.(*ast.SelectorExpr)
				if !ok || !strings.HasSuffix(sel.Sel.Name, "printf") && sel.Sel.Name != "Sprintf" && sel.Sel.Name != "Errorf" {
					return true
				}
				for i, arg := range x.Args {
					s, ok := literal(arg)
					if !ok || !sqlWord.MatchString(s) || !strings.Contains(s, "%s") && !strings.Contains(s, "%v") {
						continue
					}
					// Messages quote names with %q; an unquoted verb after
					// a clause keyword is SQL assembly.
					if regexp.MustCompile(`(?i)\b(FROM|INTO|TABLE|JOIN)\s+%[sv]`).MatchString(s) {
						rest := x.Args[i+1:]
						if len(rest) == 0 || !safeOperand(rest[0]) {
							report(x, "a Printf verb")
						}
					}
				}
			}
			return true
		})
	}
}

func exprText(e ast.Expr) string {
	switch x := e.(type) {
	case *ast.Ident:
		return x.Name
	case *ast.SelectorExpr:
		return exprText(x.X) + "." + x.Sel.Name
	case *ast.IndexExpr:
		return exprText(x.X) + "[...]"
	}
	return "an expression"
}

// TestNamesWithQuotesAndSemicolons runs names containing quotes, a
// semicolon and SQL through every path that carries a table name: SQL
// with a backquoted identifier, GetTables, ListFlights, PATH descriptors,
// table tickets and LIKE filters; the name is data everywhere.
func TestNamesWithQuotesAndSemicolons(t *testing.T) {
	sess, srv := startSessionServer(t)
	ctx := context.Background()
	const src = "src'; DROP TABLE x; --"
	const sink = "out \"q\"; `tick`"
	quote := func(n string) string { return "`" + strings.ReplaceAll(n, "`", "``") + "`" }
	for _, text := range []string{
		"CREATE TABLE " + quote(src) + " USING `rate-micro-batch` OPTIONS (rowsPerBatch 4)",
		"CREATE STREAMING TABLE " + quote(sink) + " AS SELECT value FROM STREAM " + quote(src),
	} {
		res, err := sess.SQL(ctx, text)
		if err != nil {
			t.Fatalf("%s: %v", text, err)
		}
		res.Close()
	}
	cl := sqlClient(t, srv)
	waitFor(t, 10*time.Second, "rows in the sink", func() bool {
		info, err := cl.Execute(ctx, "SELECT count(*) FROM "+quote(sink))
		return err == nil && drainInfo(ctx, cl, info) == nil
	})
	tables, flights := visibleTables(t, ctx, cl)
	if !strings.Contains(tables, "default."+src) || !strings.Contains(tables, "default."+sink) || flights != sink {
		t.Fatalf("tables [%s], flights [%s]", tables, flights)
	}
	c := flightClient(t, srv)
	if _, err := c.GetFlightInfo(ctx, &flight.FlightDescriptor{Type: flight.DescriptorPATH, Path: []string{sink}}); err != nil {
		t.Fatalf("PATH descriptor: %v", err)
	}
	tk, err := TableTicket(sink)
	if err != nil {
		t.Fatal(err)
	}
	_, recs, err := readAll(ctx, c, tk)
	if err != nil {
		t.Fatalf("table ticket: %v", err)
	}
	releaseAll(recs)
	pattern := "out \"q\"%"
	info, err := cl.GetTables(ctx, &flightsql.GetTablesOpts{TableNameFilterPattern: &pattern})
	if err != nil || drainInfo(ctx, cl, info) != nil {
		t.Fatalf("GetTables with a LIKE pattern: %v", err)
	}
	// Unquoted, the name is a syntax error, not a second statement.
	_, err = cl.Execute(ctx, "SELECT * FROM "+sink)
	if status.Code(err) == codes.OK {
		t.Fatal("an unquoted name with a semicolon was accepted")
	}
	if _, err := sess.SQL(ctx, "SELECT * FROM x"); err == nil {
		t.Fatal("table x exists")
	}
}
