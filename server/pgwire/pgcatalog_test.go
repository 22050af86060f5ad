package pgwire

import (
	"context"
	"os/exec"
	"slices"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"
)

// queryStrings runs a query and returns its rows as text.
func queryStrings(t *testing.T, c *pgx.Conn, q string, args ...any) [][]string {
	t.Helper()
	rows, err := c.Query(context.Background(), q, append([]any{pgx.QueryResultFormats{pgx.TextFormatCode}}, args...)...)
	if err != nil {
		t.Fatalf("%s: %v", q, err)
	}
	defer rows.Close()
	var out [][]string
	for rows.Next() {
		raw := rows.RawValues()
		row := make([]string, len(raw))
		for i, v := range raw {
			if v == nil {
				row[i] = "NULL"
			} else {
				row[i] = string(v)
			}
		}
		out = append(out, row)
	}
	if err := rows.Err(); err != nil {
		t.Fatalf("%s: %v", q, err)
	}
	return out
}

func firstColumn(rows [][]string, i int) []string {
	var out []string
	for _, r := range rows {
		out = append(out, r[i])
	}
	return out
}

// TestCatalogGrants: the catalog relations are built from the tables the
// user may read: bob (granted only "granted") sees it and not "secret"
// in pg_class, pg_attribute, pg_tables and information_schema, while
// alice sees both.
func TestCatalogGrants(t *testing.T) {
	f := authFixture(t, nil, false)
	bob := pgxConnect(t, f.dsn("bob", "bob-pw", ""))
	alice := pgxConnect(t, f.dsn("alice", "alice-pw", ""))
	for _, q := range []string{
		"SELECT c.relname FROM pg_catalog.pg_class c JOIN pg_catalog.pg_namespace n ON n.oid = c.relnamespace WHERE n.nspname = 'default' ORDER BY 1",
		"SELECT table_name FROM information_schema.tables WHERE table_schema = 'default' ORDER BY 1",
		"SELECT DISTINCT table_name FROM information_schema.columns WHERE table_schema = 'default' ORDER BY 1",
		"SELECT tablename FROM pg_tables WHERE schemaname = 'default' ORDER BY 1",
		"SELECT DISTINCT c.relname FROM pg_catalog.pg_attribute a JOIN pg_catalog.pg_class c ON c.oid = a.attrelid WHERE c.relnamespace = 2200 ORDER BY 1",
	} {
		if got := firstColumn(queryStrings(t, bob, q), 0); !slices.Equal(got, []string{"granted"}) {
			t.Errorf("bob: %s = %v, want [granted]", q, got)
		}
		if got := firstColumn(queryStrings(t, alice, q), 0); !slices.Equal(got, []string{"granted", "secret"}) {
			t.Errorf("alice: %s = %v, want [granted secret]", q, got)
		}
	}
	// 'secret'::regclass resolves to an OID, but bob finds no relation
	// with it.
	if rows := queryStrings(t, bob, "SELECT relname FROM pg_catalog.pg_class WHERE oid = 'secret'::regclass"); len(rows) != 0 {
		t.Errorf("bob finds secret by regclass: %v", rows)
	}
	if rows := queryStrings(t, alice, "SELECT relname FROM pg_catalog.pg_class WHERE oid = 'secret'::regclass"); len(rows) != 1 {
		t.Errorf("alice by regclass: %v", rows)
	}
}

// TestCatalogRelations checks the catalog's rows against the table they
// describe: pg_attribute's columns, types and numbers, format_type,
// information_schema.columns, OIDs that stay the same across statements
// and tables, the session functions inside other queries, and the
// shaped-empty relations.
func TestCatalogRelations(t *testing.T) {
	f := startFixture(t, fixtureOpts{})
	f.addTable(t, "types_t", typesSchema, typesRecord(f.mem))
	c := pgxConnect(t, f.dsn("alice", "", ""))
	oid := queryStrings(t, c, "SELECT oid FROM pg_class WHERE relname = 'types_t'")
	if len(oid) != 1 {
		t.Fatalf("pg_class rows for types_t: %v", oid)
	}
	f.addTable(t, "other_t", typesSchema, typesRecord(f.mem))
	if again := queryStrings(t, c, "SELECT oid FROM pg_class WHERE relname = 'types_t'"); again[0][0] != oid[0][0] {
		t.Fatalf("OID changed after another table was added: %v then %v", oid, again)
	}
	attrs := queryStrings(t, c, "SELECT a.attnum, a.attname, pg_catalog.format_type(a.atttypid, a.atttypmod), t.typname "+
		"FROM pg_catalog.pg_attribute a JOIN pg_catalog.pg_type t ON t.oid = a.atttypid WHERE a.attrelid = $1 ORDER BY a.attnum", oid[0][0])
	want := [][]string{{"1", "id", "bigint", "int8"}, {"2", "b", "boolean", "bool"}, {"3", "i2", "smallint", "int2"},
		{"4", "i4", "integer", "int4"}, {"5", "f4", "real", "float4"}, {"6", "f8", "double precision", "float8"},
		{"7", "n", "numeric(12,3)", "numeric"}, {"8", "s", "text", "text"}, {"9", "by", "bytea", "bytea"},
		{"10", "d", "date", "date"}, {"11", "ts", "timestamp without time zone", "timestamp"},
		{"12", "tstz", "timestamp with time zone", "timestamptz"}, {"13", "iv", "interval", "interval"},
		{"14", "js", "json", "json"}, {"15", "arr", "bigint[]", "_int8"}, {"16", "sarr", "text[]", "_text"}}
	if !slices.EqualFunc(attrs, want, slices.Equal[[]string]) {
		t.Errorf("pg_attribute of types_t:\n got %v\nwant %v", attrs, want)
	}
	cols := queryStrings(t, c, "SELECT column_name, data_type, udt_name, numeric_precision, numeric_scale FROM information_schema.columns "+
		"WHERE table_name = 'types_t' AND column_name IN ('n', 'arr', 'ts') ORDER BY ordinal_position")
	wantCols := [][]string{{"n", "numeric", "numeric", "12", "3"}, {"ts", "timestamp without time zone", "timestamp", "NULL", "NULL"},
		{"arr", "ARRAY", "_int8", "NULL", "NULL"}}
	if !slices.EqualFunc(cols, wantCols, slices.Equal[[]string]) {
		t.Errorf("information_schema.columns: got %v, want %v", cols, wantCols)
	}
	fn := queryStrings(t, c, "SELECT current_schema(), current_database(), current_user, pg_catalog.version() LIKE 'PostgreSQL %', "+
		"quote_ident('a b'), quote_ident('ab'), pg_catalog.pg_encoding_to_char(6), has_table_privilege('types_t', 'SELECT'), "+
		"obj_description(1, 'pg_class') IS NULL, relname FROM pg_class WHERE relname = 'types_t'")
	wantFn := []string{"default", "arrowstream", "alice", "t", `"a b"`, "ab", "UTF8", "t", "t", "types_t"}
	if len(fn) != 1 || !slices.Equal(fn[0], wantFn) {
		t.Errorf("functions: got %v, want %v", fn, wantFn)
	}
	for _, rel := range []string{"pg_index", "pg_constraint", "pg_description", "pg_proc", "pg_attrdef", "information_schema.views"} {
		if rows := queryStrings(t, c, "SELECT * FROM "+rel); len(rows) != 0 {
			t.Errorf("%s has rows: %v", rel, rows)
		}
	}
	settings := queryStrings(t, c, "SELECT setting FROM pg_settings WHERE name = 'TimeZone'")
	if len(settings) != 1 {
		t.Errorf("pg_settings TimeZone: %v", settings)
	}
	// A scalar subquery over an empty relation is NULL, correlated or
	// not; a query joining one has no rows.
	sub := queryStrings(t, c, "SELECT (SELECT d.adbin FROM pg_catalog.pg_attrdef d WHERE d.adrelid = a.attrelid AND a.atthasdef) "+
		"FROM pg_catalog.pg_attribute a WHERE a.attrelid = $1 AND a.attnum = 1", oid[0][0])
	if len(sub) != 1 || sub[0][0] != "NULL" {
		t.Errorf("subquery over pg_attrdef: %v", sub)
	}
	if rows := queryStrings(t, c, "SELECT a.attname FROM pg_attribute a JOIN (SELECT unnest(ix.indkey) attnum FROM pg_index ix) k ON a.attnum = k.attnum"); len(rows) != 0 {
		t.Errorf("join with pg_index: %v", rows)
	}
}

// TestSQLAlchemy runs SQLAlchemy's inspector (Debian's
// python3-sqlalchemy, whose catalog queries run through the planner)
// and pandas.read_sql_table against the endpoint.
func TestSQLAlchemy(t *testing.T) {
	f := startFixture(t, fixtureOpts{})
	f.addTable(t, "types_t", typesSchema, typesRecord(f.mem))
	if err := exec.Command("/usr/bin/python3", "-c", "import sqlalchemy, psycopg2, pandas").Run(); err != nil {
		t.Skipf("python3-sqlalchemy, python3-psycopg2 and python3-pandas are not installed: %v", err)
	}
	out := runClient(t, nil, "/usr/bin/python3", "-c", sqlalchemyProg, pgHost(f), pgPort(f))
	golden(t, "sqlalchemy.out", out)
	if !strings.Contains(out, "tables: ['types_t']") {
		t.Fatalf("inspector output:\n%s", out)
	}
}
