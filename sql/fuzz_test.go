package sql

import (
	"errors"
	"strings"
	"testing"
)

// FuzzParse checks that no input makes the parser panic or hang, that
// every error is a *SyntaxError with a position inside the input, and that
// whatever parses survives a trip through Format unchanged.
func FuzzParse(f *testing.F) {
	for _, tc := range statements {
		f.Add(tc.in)
	}
	for _, tc := range queries {
		f.Add(tc.in)
	}
	for _, tc := range exprShapes {
		f.Add(tc.in)
	}
	for _, tc := range exprFormats {
		f.Add(tc.in)
	}
	for _, tc := range syntaxErrors {
		if len(tc.in) < 500 {
			f.Add(tc.in)
		}
	}
	for _, s := range conformanceSQL(f) {
		f.Add(s)
	}
	f.Add(benchQuery)
	for _, s := range []string{"DESC FUNCTION EXTENDED 'abs'", "DESCRIBE FUNCTION &", "SELECT a NOT ILIKE ALL ('x%', b), a IS NOT DISTINCT FROM b, c IS TRUE, current_date",
		"SELECT OVERLAY('yabadoo' PLACING 'daba' FROM 5 FOR 0), overlay(b, x'01', 2)",
		"SELECT a sort FROM t sort by 1 DESC NULLS LAST; SELECT * FROM t distribute by a, b sort by c LIMIT 1; SELECT a FROM t CLUSTER BY a, b",
		"SELECT INTERVAL -'1 2:3:4.5' DAY TO SECOND, INTERVAL '10:20' HOUR TO MINUTE",
		"SELECT * FROM t AS x(a, b), LATERAL (SELECT x.a) s(c) LEFT JOIN LATERAL (SELECT c) ON true",
		"SELECT * FROM ((SELECT f1 / 2 AS x FROM t) ss1 JOIN u i4 ON x = f1) j, LATERAL (SELECT x) ss2(y); SELECT * FROM ((SELECT 1) UNION (SELECT 2)) s; SELECT count(*) FROM FROM t",
		"CREATE DATABASE IF NOT EXISTS d COMMENT 'c'; USE d; SHOW COLUMNS IN t FROM d; DESC QUERY SELECT 1; DROP DATABASE d CASCADE"} {
		f.Add(s)
	}
	for _, tc := range windowQueries {
		f.Add(tc.src)
	}
	f.Fuzz(func(t *testing.T, src string) {
		stmts, err := ParseScript(src)
		if err != nil {
			checkSyntaxError(t, src, err)
		}
		for _, s := range stmts {
			checkPositions(t, src, s)
			checkRoundTrip(t, src, s, Parse)
		}
		e, err := ParseExpr(src)
		if err != nil {
			checkSyntaxError(t, src, err)
			return
		}
		checkPositions(t, src, e)
		checkRoundTrip(t, src, e, ParseExpr)
	})
}

func checkSyntaxError(t *testing.T, src string, err error) {
	t.Helper()
	var se *SyntaxError
	if !errors.As(err, &se) {
		t.Fatalf("%q: error %v is %T, not *SyntaxError", src, err, err)
	}
	if se.Line < 1 || se.Col < 1 || se.Line > strings.Count(src, "\n")+1 || se.Msg == "" {
		t.Fatalf("%q: error %v has a bad position or no message", src, err)
	}
}
