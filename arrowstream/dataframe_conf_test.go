package arrowstream

import (
	"context"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/apache/arrow/go/v17/arrow"
	"github.com/apache/arrow/go/v17/arrow/array"
	"github.com/apache/arrow/go/v17/arrow/memory"

	"github.com/arrowstream/arrowstream/plan"
	"github.com/arrowstream/arrowstream/vector"
)

// collectStrings runs a static DataFrame and returns its rows as sorted
// "a|b" strings (NULL for null), or its error.
func collectStrings(df *DataFrame) ([]string, error) {
	recs, err := df.Collect(context.Background())
	if err != nil {
		return nil, err
	}
	return releaseAsStrings(recs), nil
}

// releaseAsStrings returns the records' rows as sorted "a|b" strings
// (NULL for null) and releases the records.
func releaseAsStrings(recs []arrow.Record) []string {
	var out []string
	for _, r := range recs {
		for i := 0; i < int(r.NumRows()); i++ {
			var cells []string
			for c := 0; c < int(r.NumCols()); c++ {
				if col := r.Column(c); col.IsNull(i) {
					cells = append(cells, "NULL")
				} else {
					cells = append(cells, strings.Clone(col.ValueStr(i)))
				}
			}
			out = append(out, strings.Join(cells, "|"))
		}
		r.Release()
	}
	slices.Sort(out)
	return out
}

// sqlStrings is rowStrings returning the error instead of failing.
func sqlStrings(s *Session, query string) (rows []string, err error) {
	res, err := s.SQL(context.Background(), query)
	if err != nil {
		return nil, err
	}
	defer res.Close()
	recs, err := vector.Drain(context.Background(), res.Op)
	if err != nil {
		return nil, err
	}
	return releaseAsStrings(recs), nil
}

// dropTestTable drops a static table a test made, so that the checked
// allocator ends at zero.
func dropTestTable(s *Session, name string) {
	_, _ = s.SQL(context.Background(), "DROP TABLE IF EXISTS "+name)
}

var errorClass = regexp.MustCompile(`\[[A-Z_.]+\]`)

// sameOutcome fails t unless the SQL statement and the DataFrame gave the
// same rows, or both failed with the same Spark error class.
func sameOutcome(t *testing.T, what string, sqlRows []string, sqlErr error, dfRows []string, dfErr error) {
	t.Helper()
	switch {
	case sqlErr != nil && dfErr != nil:
		if a, b := errorClass.FindString(sqlErr.Error()), errorClass.FindString(dfErr.Error()); a != b {
			t.Errorf("%s: SQL failed with %s (%v), the DataFrame with %s (%v)", what, a, sqlErr, b, dfErr)
		}
	case sqlErr != nil || dfErr != nil:
		t.Errorf("%s: SQL gave %q, %v; the DataFrame %q, %v", what, sqlRows, sqlErr, dfRows, dfErr)
	case !slices.Equal(sqlRows, dfRows):
		t.Errorf("%s: SQL gave %q, the DataFrame %q", what, sqlRows, dfRows)
	}
}

// TestDataFrameFollowsSessionSettings is a differential test of the
// DataFrame builder against the session's SQL: under every combination
// of spark.sql.session.timeZone and spark.sql.ansi.enabled (and
// spark.sql.timestampType=TIMESTAMP_NTZ in two of them), an expression
// in Select, WithColumn, Filter and GroupBy gives what the same
// expression gives in a SELECT (the rows, or the same error class). The
// builder once resolved and ran every DataFrame expression in UTC under
// ANSI whatever the session said: hour(ts) in Los Angeles answered the
// UTC hour, silently.
func TestDataFrameFollowsSessionSettings(t *testing.T) {
	s, _ := newTestSession(t)
	defer dropTestTable(s, "t")
	mustSQL(t, s, `CREATE TABLE t AS SELECT * FROM VALUES
		(TIMESTAMP '2024-01-01 03:30:00', '12', 7, 2.5),
		(TIMESTAMP '2024-07-01 23:15:00', 'x', 2147483647, -1.0),
		(NULL, NULL, NULL, NULL) AS v(ts, s, x, d)`)
	exprs := []string{
		"hour(ts)",
		"date_format(ts, 'yyyy-MM-dd HH:mm')",
		"CAST(ts AS STRING)",
		"CAST(ts AS DATE)",
		"to_date(ts)",
		"unix_timestamp(ts)",
		"CAST(s AS INT)",
		"CAST(s AS TIMESTAMP)",
		"x + 1",
		"x / 0",
		"d / 0",
		"TIMESTAMP '2024-03-10 12:00:00'",
		"CAST('2024-06-01 10:00:00' AS TIMESTAMP)",
		"ts > '2024-06-01 00:00:00'",
		"s = 12",
		"concat(x, s)",
		"date_trunc('DAY', ts)",
		"from_unixtime(0)",
		"to_timestamp('2024-05-01 08:00:00')",
		"typeof(CAST(s AS TIMESTAMP))",
		"typeof(TIMESTAMP '2024-03-10 12:00:00')",
	}
	preds := []string{
		"hour(ts) < 12",
		"s = 12",
		"CAST(s AS INT) > 0",
		"ts > '2024-06-01 00:00:00'",
	}
	type setting struct{ tz, ansi, tsType string }
	var settings []setting
	for _, tz := range []string{"UTC", "America/Los_Angeles", "Asia/Kolkata"} {
		for _, ansi := range []string{"true", "false"} {
			settings = append(settings, setting{tz, ansi, "TIMESTAMP_LTZ"})
		}
	}
	settings = append(settings, setting{"America/Los_Angeles", "true", "TIMESTAMP_NTZ"}, setting{"UTC", "false", "TIMESTAMP_NTZ"})
	for _, st := range settings {
		{
			s.SetConf("spark.sql.session.timeZone", st.tz)
			s.SetConf("spark.sql.ansi.enabled", st.ansi)
			s.SetConf("spark.sql.timestampType", st.tsType)
			conf := "tz=" + st.tz + " ansi=" + st.ansi + " timestampType=" + st.tsType
			for _, e := range exprs {
				rows, err := sqlStrings(s, "SELECT "+e+" AS c FROM t")
				dfRows, dfErr := collectStrings(s.Table("t").Select(e + " AS c"))
				sameOutcome(t, conf+" select "+e, rows, err, dfRows, dfErr)
				dfRows, dfErr = collectStrings(s.Table("t").WithColumn("c", e).Select("c"))
				sameOutcome(t, conf+" withColumn "+e, rows, err, dfRows, dfErr)
			}
			for _, p := range preds {
				rows, err := sqlStrings(s, "SELECT x FROM t WHERE "+p)
				dfRows, dfErr := collectStrings(s.Table("t").Filter(p).Select("x"))
				sameOutcome(t, conf+" filter "+p, rows, err, dfRows, dfErr)
			}
			rows, err := sqlStrings(s, "SELECT hour(ts) AS h, count(*) AS n FROM t GROUP BY hour(ts)")
			dfRows, dfErr := collectStrings(s.Table("t").GroupBy("hour(ts) AS h").Agg("count(*) AS n"))
			sameOutcome(t, conf+" groupBy hour(ts)", rows, err, dfRows, dfErr)
		}
	}
	// The settings are read when an operation is made, as Spark analyzes
	// a DataFrame's operation then: an expression made in Los Angeles
	// keeps Los Angeles when the session moves on.
	s.SetConf("spark.sql.timestampType", "TIMESTAMP_LTZ")
	s.SetConf("spark.sql.ansi.enabled", "true")
	s.SetConf("spark.sql.session.timeZone", "America/Los_Angeles")
	la := s.Table("t").Select("hour(ts) AS h")
	s.SetConf("spark.sql.session.timeZone", "UTC")
	if got, err := collectStrings(la); err != nil || !slices.Equal(got, []string{"16", "19", "NULL"}) {
		t.Errorf("hour(ts) made in Los Angeles, run after the session moved to UTC: %q, %v; want [16 19 NULL]", got, err)
	}
	// A bad setting is the operation's error, not a silent default.
	s.SetConf("spark.sql.session.timeZone", "Mars/Olympus")
	if _, err := collectStrings(s.Table("t").Select("hour(ts)")); err == nil || !strings.Contains(err.Error(), "Mars/Olympus") {
		t.Errorf("a DataFrame under time zone Mars/Olympus: %v, want an error naming it", err)
	}
	s.SetConf("spark.sql.session.timeZone", "UTC") // for dropTestTable
}

// TestDataFrameReadsViews: Session.Table reads a temporary view as FROM
// does (spark.table), and ReadStream a streaming view; the wrong kind is
// refused with the way to read it.
func TestDataFrameReadsViews(t *testing.T) {
	s, mem := newTestSession(t)
	mustSQL(t, s, "CREATE TEMPORARY VIEW v AS SELECT * FROM VALUES (1, 'a'), (2, 'b') AS t(k, name)")
	got, err := collectStrings(s.Table("v").Filter("k > 1").Select("v.name"))
	if err != nil || !slices.Equal(got, []string{"b"}) {
		t.Errorf("Table(v): %q, %v; want [b]", got, err)
	}
	if err := s.ReadStream("v").Err(); err == nil || !strings.Contains(err.Error(), "not streaming") {
		t.Errorf("ReadStream of a static view: %v, want a refusal", err)
	}
	src := NewMemoryStream(mem, valueSchema)
	defer src.Close()
	s.RegisterStream("input", src)
	mustSQL(t, s, "CREATE TEMPORARY VIEW sv AS SELECT value * 2 AS doubled FROM STREAM input")
	df := s.ReadStream("sv")
	if err := df.Err(); err != nil || !df.IsStreaming() {
		t.Errorf("ReadStream(sv): streaming %v, %v", df.IsStreaming(), err)
	}
	if err := s.Table("sv").Err(); err == nil || !strings.Contains(err.Error(), "reads a stream") {
		t.Errorf("Table of a streaming view: %v, want a refusal", err)
	}
}

// TestDataFrameCallsUserFunctions: a function registered with the
// session is callable from DataFrame expressions (Select, Filter,
// GroupBy), as from SQL; SHOW USER FUNCTIONS lists it and DESCRIBE
// FUNCTION describes it; after DropFunction it is unresolved again.
func TestDataFrameCallsUserFunctions(t *testing.T) {
	s, _ := newTestSession(t)
	err := s.RegisterFunction(&plan.ScalarFunction{
		Name: "Twice", Args: []arrow.DataType{vector.Int64}, Result: vector.Int64, Deterministic: true,
		Eval: func(_ context.Context, mem memory.Allocator, args []arrow.Array) (arrow.Array, error) {
			in := args[0].(*array.Int64)
			b := array.NewInt64Builder(mem)
			defer b.Release()
			for i := 0; i < in.Len(); i++ {
				if in.IsNull(i) {
					b.AppendNull()
				} else {
					b.Append(2 * in.Value(i))
				}
			}
			return b.NewArray(), nil
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	defer dropTestTable(s, "t")
	mustSQL(t, s, "CREATE TABLE t AS SELECT * FROM VALUES (1), (2), (NULL) AS v(x)")
	if got, err := collectStrings(s.Table("t").Select("twice(x) AS y")); err != nil || !slices.Equal(got, []string{"2", "4", "NULL"}) {
		t.Errorf("Select(twice(x)): %q, %v", got, err)
	}
	if got, err := collectStrings(s.Table("t").Filter("twice(x) > 2").Select("x")); err != nil || !slices.Equal(got, []string{"2"}) {
		t.Errorf("Filter(twice(x) > 2): %q, %v", got, err)
	}
	if got, err := collectStrings(s.Table("t").GroupBy("twice(x) AS y").Agg("count(*) AS n")); err != nil || !slices.Equal(got, []string{"2|1", "4|1", "NULL|1"}) {
		t.Errorf("GroupBy(twice(x)): %q, %v", got, err)
	}
	wantRows(t, s, "SHOW USER FUNCTIONS", "twice")
	wantRows(t, s, "SHOW FUNCTIONS LIKE 'tw*'", "twice")
	wantRows(t, s, "SHOW SYSTEM FUNCTIONS LIKE 'tw*'")
	wantRows(t, s, "DESCRIBE FUNCTION twice", "Function: twice", "Kind: user function registered in this session",
		"Usage: twice(bigint) - returns bigint.")
	if rows := rowStrings(t, s, "DESCRIBE FUNCTION EXTENDED TWICE"); !slices.Contains(rows, "    Deterministic: true") {
		t.Errorf("DESCRIBE FUNCTION EXTENDED TWICE: %q", rows)
	}
	s.DropFunction("twice")
	wantRows(t, s, "SHOW USER FUNCTIONS")
	if err := s.Table("t").Select("twice(x)").Err(); err == nil {
		t.Error("twice(x) resolved after DropFunction")
	}
	if _, err := s.SQL(context.Background(), "DESCRIBE FUNCTION twice"); err == nil || !strings.Contains(err.Error(), "UNRESOLVED_ROUTINE") {
		t.Errorf("DESCRIBE FUNCTION twice after DropFunction: %v", err)
	}
}
