package pgwire

import (
	"context"
	"errors"
	"math/big"
	"reflect"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgtype"
)

func pgxConnect(t testing.TB, dsn string) *pgx.Conn {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	c, err := pgx.Connect(ctx, dsn)
	if err != nil {
		t.Fatalf("connect %s: %v", dsn, err)
	}
	t.Cleanup(func() { c.Close(context.Background()) })
	return c
}

// scanTypes reads typesSchema's columns of one row.
type scannedRow struct {
	id   int64
	b    pgtype.Bool
	i2   pgtype.Int2
	i4   pgtype.Int4
	f4   pgtype.Float4
	f8   pgtype.Float8
	n    pgtype.Numeric
	s    pgtype.Text
	by   []byte
	d    pgtype.Date
	ts   pgtype.Timestamp
	tstz pgtype.Timestamptz
	iv   pgtype.Interval
	js   map[string]any
	arr  []int64
	sarr []string
}

func (r *scannedRow) dest() []any {
	return []any{&r.id, &r.b, &r.i2, &r.i4, &r.f4, &r.f8, &r.n, &r.s, &r.by, &r.d, &r.ts, &r.tstz, &r.iv, &r.js, &r.arr, &r.sarr}
}

func numericText(n pgtype.Numeric) string {
	if !n.Valid {
		return "NULL"
	}
	v := new(big.Float).SetInt(n.Int)
	v.Mul(v, new(big.Float).SetFloat64(1))
	r := new(big.Rat).SetInt(n.Int)
	if n.Exp < 0 {
		r.Quo(r, new(big.Rat).SetInt(new(big.Int).Exp(big.NewInt(10), big.NewInt(int64(-n.Exp)), nil)))
	} else {
		r.Mul(r, new(big.Rat).SetInt(new(big.Int).Exp(big.NewInt(10), big.NewInt(int64(n.Exp)), nil)))
	}
	return r.FloatString(3)
}

func checkTypesRows(t *testing.T, mode string, rows pgx.Rows) {
	t.Helper()
	defer rows.Close()
	i := 0
	for rows.Next() {
		var got scannedRow
		if err := rows.Scan(got.dest()...); err != nil {
			t.Fatalf("%s: scan row %d: %v", mode, i, err)
		}
		if i == len(typesRows) {
			// The NULL row.
			if got.id != 3 || got.b.Valid || got.i2.Valid || got.i4.Valid || got.f4.Valid || got.f8.Valid || got.n.Valid || got.s.Valid ||
				got.by != nil || got.d.Valid || got.ts.Valid || got.tstz.Valid || got.iv.Valid || got.js != nil || got.arr != nil || got.sarr != nil {
				t.Errorf("%s: NULL row: got %+v", mode, got)
			}
			i++
			continue
		}
		w := typesRows[i]
		if got.id != w.id || got.b.Bool != w.b || got.i2.Int16 != w.i2 || got.i4.Int32 != w.i4 || got.f4.Float32 != w.f4 || got.f8.Float64 != w.f8 {
			t.Errorf("%s: row %d numbers: got %+v, want %+v", mode, i, got, w)
		}
		if numericText(got.n) != w.n {
			t.Errorf("%s: row %d numeric: got %s, want %s", mode, i, numericText(got.n), w.n)
		}
		if got.s.String != w.s || !got.s.Valid || string(got.by) != string(w.by) || got.by == nil {
			t.Errorf("%s: row %d text/bytea: got %q %x, want %q %x", mode, i, got.s.String, got.by, w.s, w.by)
		}
		if !got.d.Time.Equal(w.d) || !got.ts.Time.Equal(w.ts) || !got.tstz.Time.Equal(w.tstz) {
			t.Errorf("%s: row %d times: got %v %v %v, want %v %v %v", mode, i, got.d.Time, got.ts.Time, got.tstz.Time, w.d, w.ts, w.tstz)
		}
		if time.Duration(got.iv.Microseconds)*time.Microsecond != w.iv || got.iv.Days != 0 || got.iv.Months != 0 {
			t.Errorf("%s: row %d interval: got %+v, want %v", mode, i, got.iv, w.iv)
		}
		if got.js["a"] != float64(w.js) {
			t.Errorf("%s: row %d json: got %v, want a=%d", mode, i, got.js, w.js)
		}
		if !reflect.DeepEqual(got.arr, w.arr) || !reflect.DeepEqual(got.sarr, w.sarr) {
			t.Errorf("%s: row %d arrays: got %v %q, want %v %q", mode, i, got.arr, got.sarr, w.arr, w.sarr)
		}
		i++
	}
	if err := rows.Err(); err != nil {
		t.Fatalf("%s: %v", mode, err)
	}
	if i != len(typesRows)+1 {
		t.Fatalf("%s: %d rows, want %d", mode, i, len(typesRows)+1)
	}
}

// TestPgxTypesRoundTrip reads a column of every type through pgx in the
// binary format (extended protocol) and the text format (simple
// protocol), NULLs included, and compares with the values written.
func TestPgxTypesRoundTrip(t *testing.T) {
	f := startFixture(t, fixtureOpts{})
	f.addTable(t, "types_t", typesSchema, typesRecord(f.mem))
	c := pgxConnect(t, f.dsn("alice", "", ""))
	ctx := context.Background()
	const q = "SELECT id, b, i2, i4, f4, f8, n, s, by, d, ts, tstz, iv, js, arr, sarr FROM types_t ORDER BY id"
	for _, mode := range []pgx.QueryExecMode{pgx.QueryExecModeCacheStatement, pgx.QueryExecModeExec, pgx.QueryExecModeSimpleProtocol} {
		rows, err := c.Query(ctx, q, mode)
		if err != nil {
			t.Fatalf("%v: %v", mode, err)
		}
		checkTypesRows(t, mode.String(), rows)
	}
	// The formats really differ: the binary mode asked for binary results.
	rows, err := c.Query(ctx, "SELECT i4, s FROM types_t", pgx.QueryResultFormats{pgx.BinaryFormatCode, pgx.TextFormatCode})
	if err != nil {
		t.Fatal(err)
	}
	fds := rows.FieldDescriptions()
	rows.Close()
	if fds[0].Format != pgx.BinaryFormatCode || fds[1].Format != pgx.TextFormatCode || fds[0].DataTypeOID != oidInt4 || fds[1].DataTypeOID != oidText {
		t.Fatalf("field descriptions %+v", fds)
	}
}

// TestPgxParameters binds $n parameters of several types, in both
// protocols pgx offers for them, including a value that would break out
// of a string literal if it were pasted into the statement.
func TestPgxParameters(t *testing.T) {
	f := startFixture(t, fixtureOpts{})
	f.addTable(t, "types_t", typesSchema, typesRecord(f.mem))
	c := pgxConnect(t, f.dsn("alice", "", ""))
	ctx := context.Background()
	var id int64
	var s string
	if err := c.QueryRow(ctx, "SELECT id, s FROM types_t WHERE i4 = $1 AND b = $2", int32(123456), true).Scan(&id, &s); err != nil {
		t.Fatal(err)
	}
	if id != 1 {
		t.Fatalf("id = %d", id)
	}
	for _, hostile := range []string{`x' OR '1'='1`, `\' OR 1=1 --`, "a\nb", ""} {
		var got string
		if err := c.QueryRow(ctx, "SELECT $1::text", hostile).Scan(&got); err != nil {
			t.Fatalf("%q: %v", hostile, err)
		}
		if got != hostile {
			t.Fatalf("echo %q: got %q", hostile, got)
		}
	}
	var n int64
	if err := c.QueryRow(ctx, "SELECT count(*) FROM types_t WHERE s = $1", `x' OR '1'='1`).Scan(&n); err != nil || n != 0 {
		t.Fatalf("injection: n=%d err=%v", n, err)
	}
	var ts time.Time
	var f8 float64
	var d time.Time
	if err := c.QueryRow(ctx, "SELECT $1::timestamptz, $2::float8, $3::date", stamp(2020, 5, 6, 7, 8, 9, 10), 2.5, date(2021, 1, 2)).Scan(&ts, &f8, &d); err != nil {
		t.Fatal(err)
	}
	if !ts.Equal(stamp(2020, 5, 6, 7, 8, 9, 10)) || f8 != 2.5 || !d.Equal(date(2021, 1, 2)) {
		t.Fatalf("got %v %v %v", ts, f8, d)
	}
	var isNull *int64
	if err := c.QueryRow(ctx, "SELECT $1::bigint", nil).Scan(&isNull); err != nil || isNull != nil {
		t.Fatalf("NULL parameter: %v %v", isNull, err)
	}
}

func wantState(t *testing.T, err error, code string) {
	t.Helper()
	var pe *pgconn.PgError
	if !errors.As(err, &pe) {
		t.Fatalf("error %v (%T) is not a PostgreSQL error, want SQLSTATE %s", err, err, code)
	}
	if pe.Code != code {
		t.Fatalf("SQLSTATE %s (%s), want %s", pe.Code, pe.Message, code)
	}
}

// TestPgxErrorStates checks the SQLSTATE of each error class, and that
// the connection stays usable after each.
func TestPgxErrorStates(t *testing.T) {
	f := startFixture(t, fixtureOpts{})
	f.addTable(t, "types_t", typesSchema, typesRecord(f.mem))
	c := pgxConnect(t, f.dsn("alice", "", ""))
	ctx := context.Background()
	cases := []struct{ sql, code string }{
		{"SELEC 1", "42601"},
		{"SELECT * FROM no_such_table", "42P01"},
		{"SELECT no_such_column FROM types_t", "42703"},
		{"SET spark.sql.ansi.enabled = true", ""},
		{"SELECT 1 / (id - id) FROM types_t", "22012"},
		{"SELECT CAST('abc' AS INT)", "22P02"},
		{"SET no_such_parameter = 1", "42704"},
	}
	for _, mode := range []pgx.QueryExecMode{pgx.QueryExecModeSimpleProtocol, pgx.QueryExecModeCacheDescribe} {
		for _, tc := range cases {
			rows, err := c.Query(ctx, tc.sql, mode)
			if err == nil {
				for rows.Next() {
				}
				rows.Close()
				err = rows.Err()
			}
			if tc.code == "" {
				if err != nil {
					t.Fatalf("%s: %v", tc.sql, err)
				}
				continue
			}
			wantState(t, err, tc.code)
			var one int
			if err := c.QueryRow(ctx, "SELECT 1").Scan(&one); err != nil || one != 1 {
				t.Fatalf("after %q: %v", tc.sql, err)
			}
		}
	}
}

// TestSessionStatements: what drivers send on connecting and around
// queries is answered by the session: transactions, SET/SHOW of the
// PostgreSQL parameters (TimeZone becomes the session's time zone), the
// server functions; several statements in one simple query; and a failed
// statement inside a transaction aborts it until ROLLBACK.
func TestSessionStatements(t *testing.T) {
	f := startFixture(t, fixtureOpts{})
	f.addTable(t, "types_t", typesSchema, typesRecord(f.mem))
	c := pgxConnect(t, f.dsn("alice", "", "application_name=tests"))
	ctx := context.Background()
	str := func(q string) string {
		t.Helper()
		var s string
		if err := c.QueryRow(ctx, q, pgx.QueryExecModeSimpleProtocol).Scan(&s); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
		return s
	}
	for q, want := range map[string]string{
		"SHOW application_name": "tests", "SHOW client_encoding": "UTF8", "SHOW DateStyle": "ISO, MDY",
		"SELECT version()": "PostgreSQL 15.0 (Arrowstream)", "select current_schema()": "default",
		"SELECT current_user": "alice", "SHOW TRANSACTION ISOLATION LEVEL": "read committed",
	} {
		if got := str(q); got != want {
			t.Errorf("%s = %q, want %q", q, got, want)
		}
	}
	if _, err := c.Exec(ctx, "SET TIME ZONE 'Asia/Kolkata'"); err != nil {
		t.Fatal(err)
	}
	if got := str("SELECT tstz FROM types_t WHERE id = 1"); got != "2000-01-01 05:29:59+05:30" {
		t.Errorf("tstz in Asia/Kolkata: %q", got)
	}
	if got := str("SHOW TimeZone"); got != "Asia/Kolkata" {
		t.Errorf("TimeZone %q", got)
	}
	_, err := c.Exec(ctx, "SET client_encoding = 'LATIN1'")
	wantState(t, err, "0A000")
	// Several statements; the first error stops the rest.
	res, err := c.PgConn().Exec(ctx, "BEGIN; SELECT 1; SELECT * FROM nope; SELECT 2").ReadAll()
	if len(res) != 2 || err == nil {
		t.Fatalf("multi-statement: %d results, %v", len(res), err)
	}
	_, err = c.Exec(ctx, "SELECT 1", pgx.QueryExecModeSimpleProtocol)
	wantState(t, err, "25P02")
	if _, err := c.Exec(ctx, "ROLLBACK"); err != nil {
		t.Fatal(err)
	}
	if got := str("SELECT CAST(1 AS STRING)"); got != "1" {
		t.Fatalf("after ROLLBACK: %q", got)
	}
}

// TestDDLOverPg creates a source and a streaming table over pg (simple
// and extended protocol), reads the streaming table as its epochs
// commit, and drops both.
func TestDDLOverPg(t *testing.T) {
	f := startFixture(t, fixtureOpts{})
	c := pgxConnect(t, f.dsn("alice", "", ""))
	ctx := context.Background()
	tag, err := c.Exec(ctx, "CREATE TABLE ticks USING `rate-micro-batch` OPTIONS (rowsPerBatch 10)", pgx.QueryExecModeSimpleProtocol)
	if err != nil || tag.String() != "CREATE TABLE" {
		t.Fatalf("CREATE TABLE: %q %v", tag, err)
	}
	if _, err := c.Exec(ctx, "CREATE STREAMING TABLE evens AS SELECT value FROM STREAM ticks WHERE value % 2 = 0"); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(2 * time.Minute)
	for {
		var n int64
		if err := c.QueryRow(ctx, "SELECT count(*) FROM evens").Scan(&n); err != nil {
			t.Fatal(err)
		}
		if n > 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("evens stayed empty")
		}
		time.Sleep(20 * time.Millisecond)
	}
	if _, err := c.Exec(ctx, "DROP TABLE evens"); err != nil {
		t.Fatal(err)
	}
	_, err = c.Exec(ctx, "SELECT * FROM evens")
	wantState(t, err, "42P01")
}
