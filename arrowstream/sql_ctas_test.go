package arrowstream

import (
	"context"
	"slices"
	"strings"
	"testing"

	"github.com/apache/arrow/go/v17/arrow"

	"github.com/arrowstream/arrowstream/vector"
)

// rowStrings runs query and renders its rows as "v1|v2|...", sorted.
func rowStrings(t *testing.T, s *Session, query string) []string {
	t.Helper()
	out := orderedRowStrings(t, s, query)
	slices.Sort(out)
	return out
}

// orderedRowStrings is rowStrings in the answer's order.
func orderedRowStrings(t *testing.T, s *Session, query string) []string {
	t.Helper()
	res, err := s.SQL(context.Background(), query)
	if err != nil {
		t.Fatalf("%s: %v", query, err)
	}
	defer res.Close()
	recs, err := vector.Drain(context.Background(), res.Op)
	if err != nil {
		t.Fatalf("%s: %v", query, err)
	}
	var out []string
	for _, r := range recs {
		for i := 0; i < int(r.NumRows()); i++ {
			var cells []string
			for c := 0; c < int(r.NumCols()); c++ {
				col := r.Column(c)
				if col.IsNull(i) {
					cells = append(cells, "NULL")
				} else {
					cells = append(cells, strings.Clone(col.ValueStr(i))) // the record is released below
				}
			}
			out = append(out, strings.Join(cells, "|"))
		}
		r.Release()
	}
	return out
}

func sqlErr(t *testing.T, s *Session, text, want string) {
	t.Helper()
	res, err := s.SQL(context.Background(), text)
	if err == nil && res.Op != nil {
		var recs []arrow.Record
		recs, err = vector.Drain(context.Background(), res.Op)
		for _, r := range recs {
			r.Release()
		}
	}
	if err == nil {
		res.Close()
		t.Fatalf("%s: succeeded, want an error containing %q", text, want)
	}
	if res != nil {
		res.Close()
	}
	if !strings.Contains(err.Error(), want) {
		t.Fatalf("%s: error %v, want it to contain %q", text, err, want)
	}
}

func wantRows(t *testing.T, s *Session, query string, want ...string) {
	t.Helper()
	slices.Sort(want)
	if got := rowStrings(t, s, query); !slices.Equal(got, want) {
		t.Fatalf("%s:\n got %q\nwant %q", query, got, want)
	}
}

// TestCreateTableAsSelect: CTAS with and without USING parquet makes a
// static table with the query's columns and rows; IF NOT EXISTS, OR
// REPLACE, a failing query (no table left) and Spark's errors.
func TestCreateTableAsSelect(t *testing.T) {
	s, _ := newTestSession(t)
	defer closeTestTables(s)
	mustSQL(t, s, "CREATE TABLE c1 AS SELECT 1 AS a, 'x' AS b UNION ALL SELECT 2, NULL")
	wantRows(t, s, "SELECT a, b FROM c1", "1|x", "2|NULL")
	// a is an INT, as the query's 1 is: it overflows at 2^31 under ANSI.
	sqlErr(t, s, "SELECT a * 2147483647 FROM c1 WHERE a = 2", "ARITHMETIC_OVERFLOW")
	mustSQL(t, s, "CREATE TABLE c2 USING parquet AS SELECT a + 10 AS a FROM c1")
	wantRows(t, s, "SELECT a FROM c2", "11", "12")
	mustSQL(t, s, "CREATE TABLE IF NOT EXISTS c2 AS SELECT 99 AS a")
	wantRows(t, s, "SELECT a FROM c2", "11", "12")
	sqlErr(t, s, "CREATE TABLE c2 AS SELECT 99 AS a", "TABLE_OR_VIEW_ALREADY_EXISTS")
	mustSQL(t, s, "CREATE OR REPLACE TABLE c2 AS SELECT 99 AS a")
	wantRows(t, s, "SELECT a FROM c2", "99")
	// The table takes INSERTs afterwards, cast to its column types.
	mustSQL(t, s, "INSERT INTO c1 VALUES (3L, 'z')")
	wantRows(t, s, "SELECT a, b FROM c1", "1|x", "2|NULL", "3|z")

	// A query that fails when it runs leaves no table.
	sqlErr(t, s, "CREATE TABLE c3 AS SELECT 1 / 0 AS z", "DIVIDE_BY_ZERO")
	sqlErr(t, s, "SELECT * FROM c3", "cannot be found")
	sqlErr(t, s, "CREATE TABLE c3 AS SELECT 1 AS a, 2 AS a", "COLUMN_ALREADY_EXISTS")
	sqlErr(t, s, "CREATE TABLE c3 (a INT) AS SELECT 1", "Schema may not be specified")
	sqlErr(t, s, "CREATE TABLE c3 USING rate AS SELECT 1 AS a", "not supported")
	sqlErr(t, s, "SELECT * FROM c3", "cannot be found")
}

// TestInsertColumnListAndOverwrite: a table created without USING is
// Spark's default (parquet) static table; INSERT with a column list
// writes by name and NULL elsewhere; INSERT OVERWRITE replaces the rows.
func TestInsertColumnListAndOverwrite(t *testing.T) {
	s, _ := newTestSession(t)
	defer closeTestTables(s)
	mustSQL(t, s, "CREATE TABLE p (a INT, b STRING)")
	mustSQL(t, s, "INSERT INTO p (b, a) VALUES ('y', 2)")
	mustSQL(t, s, "INSERT INTO TABLE p (A) SELECT 3")
	wantRows(t, s, "SELECT a, b FROM p", "2|y", "3|NULL")
	sqlErr(t, s, "INSERT INTO p (a, a) VALUES (1, 2)", "COLUMN_ALREADY_EXISTS")
	sqlErr(t, s, "INSERT INTO p (c) VALUES (1)", "UNRESOLVED_COLUMN")
	sqlErr(t, s, "INSERT INTO p (a) VALUES (1, 'x')", "INSERT_COLUMN_ARITY_MISMATCH")
	sqlErr(t, s, "INSERT INTO p VALUES (1)", "INSERT_COLUMN_ARITY_MISMATCH")
	mustSQL(t, s, "INSERT OVERWRITE TABLE p VALUES (9, 'z'), (8, 'w')")
	wantRows(t, s, "SELECT a, b FROM p", "8|w", "9|z")
	mustSQL(t, s, "INSERT OVERWRITE p (b) SELECT 'only'")
	wantRows(t, s, "SELECT a, b FROM p", "NULL|only")
	// A failing query overwrites nothing.
	sqlErr(t, s, "INSERT OVERWRITE p SELECT 1 / 0, 'x'", "DIVIDE_BY_ZERO")
	wantRows(t, s, "SELECT a, b FROM p", "NULL|only")
}

// TestInsertIntoMemoryStream: INSERT INTO a USING memory table pushes the
// rows to the stream as one arrival; other streams refuse inserts, and
// a stream cannot be overwritten.
func TestInsertIntoMemoryStream(t *testing.T) {
	s, _ := newTestSession(t)
	defer closeTestTables(s)
	mustSQL(t, s, "CREATE TABLE m (a BIGINT, b STRING) USING memory")
	mustSQL(t, s, "INSERT INTO m VALUES (1, 'x'), (2, 'y')")
	mustSQL(t, s, "INSERT INTO m (b, a) SELECT 'z', 3")
	tb, err := s.Catalog().Table("m")
	if err != nil {
		t.Fatal(err)
	}
	ms := tb.(*streamTable).shared.(*MemoryStream)
	end, err := ms.LatestOffset(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	op, err := ms.Read(context.Background(), nil, end)
	if err != nil {
		t.Fatal(err)
	}
	recs, err := vector.Drain(context.Background(), op)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, r := range recs {
		for i := 0; i < int(r.NumRows()); i++ {
			got = append(got, strings.Clone(r.Column(0).ValueStr(i)+"|"+r.Column(1).ValueStr(i)))
		}
		r.Release()
	}
	op.Close()
	if want := []string{"1|x", "2|y", "3|z"}; !slices.Equal(got, want) {
		t.Fatalf("stream rows %q, want %q", got, want)
	}
	sqlErr(t, s, "INSERT OVERWRITE m VALUES (1, 'x')", "INSERT OVERWRITE `m` is not supported")
	mustSQL(t, s, "CREATE TABLE r USING rate")
	sqlErr(t, s, "INSERT INTO r VALUES (1, 2)", "INSERT INTO `r` is not supported")
}

// closeTestTables drops every table, so that the checked allocator ends
// at zero.
func closeTestTables(s *Session) {
	for _, n := range []string{"c1", "c2", "c3", "p", "m", "r"} {
		_, _ = s.SQL(context.Background(), "DROP TABLE IF EXISTS "+n)
	}
}

// TestCatalogCreateTableAsSelect: with a durable catalog, CTAS records the
// table's columns (not its query, which is not run again) and the rows
// come back after a restart.
func TestCatalogCreateTableAsSelect(t *testing.T) {
	root := t.TempDir()
	s1, _ := catalogSession(t, root)
	mustSQL(t, s1, "CREATE TABLE ct AS SELECT id AS k, CAST(id AS STRING) AS v FROM range(3)")
	wantRows(t, s1, "SELECT k, v FROM ct", "0|0", "1|1", "2|2")
	s2, restored := catalogSession(t, root)
	for _, r := range restored {
		if r.Err != nil {
			t.Fatalf("restore %s: %v", r.Name, r.Err)
		}
	}
	wantRows(t, s2, "SELECT k, v FROM ct", "0|0", "1|1", "2|2")
	sqlErr(t, s2, "INSERT OVERWRITE ct SELECT 1, 'x'", "cannot be overwritten")
	mustSQL(t, s2, "CREATE OR REPLACE TABLE ct AS SELECT 7L AS k, 'x' AS v")
	s3, _ := catalogSession(t, root)
	wantRows(t, s3, "SELECT k, v FROM ct", "7|x")
}

// TestShowFunctions: SHOW FUNCTIONS lists the functions calls resolve
// from (scalar, aggregate, window, generator), filtered by Spark's
// pattern (* any characters, | alternatives); USER lists none.
func TestShowFunctions(t *testing.T) {
	s, _ := newTestSession(t)
	wantRows(t, s, "SHOW FUNCTIONS LIKE 'to_c*|row_num*|EXPLODE'", "explode", "row_number", "to_char")
	wantRows(t, s, "SHOW SYSTEM FUNCTIONS 'shift*'", "shiftleft", "shiftright", "shiftrightunsigned")
	wantRows(t, s, "SHOW ALL FUNCTIONS LIKE 'count*'", "count", "count_if")
	wantRows(t, s, "SHOW USER FUNCTIONS")
	all := rowStrings(t, s, "SHOW FUNCTIONS")
	for _, name := range []string{"abs", "sum", "rank", "coalesce", "to_varchar", "posexplode"} {
		if !slices.Contains(all, name) {
			t.Errorf("SHOW FUNCTIONS does not list %s", name)
		}
	}
	if slices.Contains(all, "subscript") {
		t.Error("SHOW FUNCTIONS lists the internal function subscript")
	}
	// Every listed function resolves: the list and the planner agree.
	for _, name := range all {
		if _, err := s.SQL(context.Background(), "SELECT "+name+"()"); err != nil && strings.Contains(err.Error(), "Undefined function") {
			t.Errorf("SHOW FUNCTIONS lists %s, which does not resolve: %v", name, err)
		}
	}
}

// TestDescribeFunction: DESCRIBE FUNCTION answers a listed function's
// kind and usage in column function_desc; an unknown name is an error.
func TestDescribeFunction(t *testing.T) {
	s, _ := newTestSession(t)
	rows := rowStrings(t, s, "DESC FUNCTION boolean")
	if len(rows) != 3 || rows[0] != "Function: boolean" || rows[1] != "Kind: scalar function" || !strings.HasPrefix(rows[2], "Usage: boolean(x)") {
		t.Errorf("DESC FUNCTION boolean: %q", rows)
	}
	// rowStrings sorts the rows.
	if rows := rowStrings(t, s, "DESCRIBE FUNCTION EXTENDED 'sum'"); !slices.Contains(rows, "Extended Usage:") || !slices.Contains(rows, "Function: sum") {
		t.Errorf("DESCRIBE FUNCTION EXTENDED 'sum': %q", rows)
	}
	if _, err := s.SQL(context.Background(), "DESC FUNCTION no_such_function"); err == nil || !strings.Contains(err.Error(), "UNRESOLVED_ROUTINE") {
		t.Errorf("DESC FUNCTION no_such_function: %v, want UNRESOLVED_ROUTINE", err)
	}
}
