package sql

import (
	"strings"
	"testing"
)

// statements maps statements to their canonical text.
var statements = []struct{ in, out string }{
	// CREATE TABLE.
	{"CREATE TABLE clicks (user_id BIGINT, url STRING, ts TIMESTAMP) USING kafka\n  OPTIONS (bootstrapServers '127.0.0.1:9092', subscribe 'clicks', format 'json')",
		"CREATE TABLE clicks (user_id BIGINT, url STRING, ts TIMESTAMP) USING kafka OPTIONS (bootstrapServers '127.0.0.1:9092', subscribe 'clicks', format 'json')"},
	{"create table r using rate", "CREATE TABLE r USING rate"},
	{"CREATE TABLE r USING `rate-micro-batch` OPTIONS (rowsPerBatch 10, startTimestamp = '0', 'numPartitions' '2')",
		"CREATE TABLE r USING `rate-micro-batch` OPTIONS (rowsPerBatch '10', startTimestamp '0', numPartitions '2')"},
	{"CREATE TABLE k USING kafka OPTIONS (kafka.bootstrap.servers 'h:9092', 'a b' 'x', flag true, n -1)",
		"CREATE TABLE k USING kafka OPTIONS (kafka.bootstrap.servers 'h:9092', 'a b' = 'x', flag 'true', n '-1')"},
	{"CREATE TABLE IF NOT EXISTS db.t (a INT NOT NULL, `b c` DECIMAL(10, 2), d ARRAY<STRING>) USING parquet",
		"CREATE TABLE IF NOT EXISTS db.t (a INT NOT NULL, `b c` DECIMAL(10, 2), d ARRAY<STRING>) USING parquet"},
	{"CREATE TABLE small (number INT) USING memory", "CREATE TABLE small (number INT) USING memory"},
	{"CREATE TABLE t (first INT, window STRING, count BIGINT, from INT) USING csv",
		"CREATE TABLE t (first INT, window STRING, count BIGINT, `from` INT) USING csv"},
	// CREATE STREAMING TABLE.
	{"CREATE STREAMING TABLE clicks_per_minute\n  TBLPROPERTIES ('outputMode' = 'append', 'checkpointLocation' = 'ckpt/clicks')\nAS SELECT window.start AS minute, url, count(*) AS clicks\n   FROM STREAM clicks WATERMARK ts DELAY OF INTERVAL 30 SECONDS\n   GROUP BY window(ts, '1 minute'), url",
		"CREATE STREAMING TABLE clicks_per_minute TBLPROPERTIES ('outputMode' = 'append', 'checkpointLocation' = 'ckpt/clicks') AS SELECT window.start AS minute, url, count(*) AS clicks FROM STREAM clicks WATERMARK ts DELAY OF INTERVAL 30 SECONDS GROUP BY window(ts, '1 minute'), url"},
	{"CREATE OR REFRESH STREAMING TABLE counts AS SELECT value, count(*) FROM STREAM input GROUP BY value",
		"CREATE OR REFRESH STREAMING TABLE counts AS SELECT value, count(*) FROM STREAM input GROUP BY value"},
	{"create or replace streaming table counts as select value from stream input",
		"CREATE OR REPLACE STREAMING TABLE counts AS SELECT value FROM STREAM input"},
	{"create or replace table t using rate options (rowsPerSecond '5')",
		"CREATE OR REPLACE TABLE t USING rate OPTIONS (rowsPerSecond '5')"},
	{"create streaming table s tblproperties ('trigger' '1 second') as with x as (select 1 as a) select * from x",
		"CREATE STREAMING TABLE s TBLPROPERTIES ('trigger' = '1 second') AS WITH x AS (SELECT 1 AS a) SELECT * FROM x"},
	// Other statements.
	{"EXPLAIN SELECT 1", "EXPLAIN SELECT 1"},
	{"explain extended select a from t", "EXPLAIN EXTENDED SELECT a FROM t"},
	{"EXPLAIN CREATE STREAMING TABLE s AS SELECT * FROM STREAM t", "EXPLAIN CREATE STREAMING TABLE s AS SELECT * FROM STREAM t"},
	{"DROP TABLE t", "DROP TABLE t"},
	{"drop table if exists db.t;", "DROP TABLE IF EXISTS db.t"},
	{"SHOW TABLES", "SHOW TABLES"},
	{"DESCRIBE t", "DESCRIBE TABLE t"},
	{"DESC TABLE t", "DESCRIBE TABLE t"},
	{"DESCRIBE history", "DESCRIBE TABLE history"},
	{"DESCRIBE HISTORY counts", "DESCRIBE HISTORY counts"},
	{"describe history history", "DESCRIBE HISTORY history"},
	{"DESCRIBE system.streaming_queries", "DESCRIBE TABLE system.streaming_queries"},
}

// queries maps queries to their canonical text.
var queries = []struct{ in, out string }{
	{"select i from range(-5, 6) t(i)", "SELECT i FROM range(-5, 6) AS t(i)"},
	{"SELECT * FROM clicks_per_minute WHERE clicks > 100 ORDER BY minute DESC LIMIT 20",
		"SELECT * FROM clicks_per_minute WHERE clicks > 100 ORDER BY minute DESC LIMIT 20"},
	{"select distinct a, b as c, d e, t.*, `x y` from t", "SELECT DISTINCT a, b AS c, d AS e, t.*, `x y` FROM t"},
	{"SELECT ALL a FROM t", "SELECT a FROM t"},
	{"SELECT 1", "SELECT 1"},
	{"SELECT 1 WHERE true", "SELECT 1 WHERE TRUE"},
	{"SELECT a FROM db.t AS x, u y, v", "SELECT a FROM db.t AS x, u AS y, v"},
	{"SELECT * FROM system.streaming_queries", "SELECT * FROM system.streaming_queries"},
	// Streams and watermarks.
	{"SELECT value FROM STREAM input", "SELECT value FROM STREAM input"},
	{"SELECT value FROM STREAM(input) AS i", "SELECT value FROM STREAM input AS i"},
	{"SELECT value FROM stream", "SELECT value FROM `stream`"},
	{"SELECT value FROM stream AS s", "SELECT value FROM `stream` AS s"},
	{"SELECT value FROM STREAM stream", "SELECT value FROM STREAM `stream`"},
	{"SELECT value FROM STREAM first, STREAM second", "SELECT value FROM STREAM first, STREAM second"},
	{"SELECT CAST(window.start AS BIGINT), count(*) AS count FROM STREAM input WATERMARK timestamp_seconds(value) AS eventTime DELAY OF INTERVAL 10 SECONDS GROUP BY window(eventTime, '5 seconds')",
		"SELECT CAST(window.start AS BIGINT), count(*) AS count FROM STREAM input WATERMARK timestamp_seconds(value) AS eventTime DELAY OF INTERVAL 10 SECONDS GROUP BY window(eventTime, '5 seconds')"},
	{"SELECT * FROM STREAM input WATERMARK ts eventTime DELAY OF INTERVAL '10' SECOND e",
		"SELECT * FROM STREAM input WATERMARK ts AS eventTime DELAY OF INTERVAL '10' SECONDS AS e"},
	{"SELECT * FROM events WATERMARK ts DELAY OF INTERVAL 1 MINUTE AS watermark", "SELECT * FROM events WATERMARK ts DELAY OF INTERVAL 1 MINUTE AS watermark"},
	{"SELECT * FROM events watermark", "SELECT * FROM events AS watermark"},
	{"SELECT * FROM events watermark WHERE a", "SELECT * FROM events AS watermark WHERE a"},
	{"SELECT * FROM (SELECT _1 AS rightId, timestamp_seconds(_2) AS rightTime FROM STREAM inputStream WHERE _1 % 2 = 0) WATERMARK rightTime DELAY OF INTERVAL 5 SECONDS AS r",
		"SELECT * FROM (SELECT _1 AS rightId, timestamp_seconds(_2) AS rightTime FROM STREAM inputStream WHERE _1 % 2 = 0) WATERMARK rightTime DELAY OF INTERVAL 5 SECONDS AS r"},
	// Time travel and table-valued functions.
	{"SELECT * FROM counts VERSION AS OF 12", "SELECT * FROM counts VERSION AS OF 12"},
	{"SELECT * FROM counts FOR VERSION AS OF 12 c", "SELECT * FROM counts VERSION AS OF 12 AS c"},
	{"SELECT * FROM counts version", "SELECT * FROM counts AS version"},
	{"SELECT * FROM table_changes('counts', 10)", "SELECT * FROM table_changes('counts', 10)"},
	{"SELECT _epoch, _commit_timestamp FROM table_changes('counts', 10, 20) AS c", "SELECT _epoch, _commit_timestamp FROM table_changes('counts', 10, 20) AS c"},
	// Joins.
	{"SELECT * FROM STREAM input JOIN smallTable ON value = number", "SELECT * FROM STREAM input JOIN smallTable ON value = number"},
	{"SELECT * FROM a INNER JOIN b USING (k) LEFT JOIN c ON a.x = c.x", "SELECT * FROM a JOIN b USING (k) LEFT OUTER JOIN c ON a.x = c.x"},
	{"SELECT * FROM a LEFT OUTER JOIN b ON p RIGHT JOIN c ON q FULL JOIN d ON r FULL OUTER JOIN e ON s",
		"SELECT * FROM a LEFT OUTER JOIN b ON p RIGHT OUTER JOIN c ON q FULL OUTER JOIN d ON r FULL OUTER JOIN e ON s"},
	{"SELECT * FROM a SEMI JOIN b ON p LEFT SEMI JOIN c ON q ANTI JOIN d ON r LEFT ANTI JOIN e USING (k, window)",
		"SELECT * FROM a LEFT SEMI JOIN b ON p LEFT SEMI JOIN c ON q LEFT ANTI JOIN d ON r LEFT ANTI JOIN e USING (k, window)"},
	{"SELECT * FROM a CROSS JOIN b, c JOIN d", "SELECT * FROM a CROSS JOIN b, c JOIN d"},
	{"SELECT * FROM a x JOIN b y ON x.k = y.k", "SELECT * FROM a AS x JOIN b AS y ON x.k = y.k"},
	{"SELECT * FROM (SELECT value AS key FROM STREAM input1) AS l JOIN (SELECT value AS key FROM STREAM input2) AS r USING (key)",
		"SELECT * FROM (SELECT value AS key FROM STREAM input1) AS l JOIN (SELECT value AS key FROM STREAM input2) AS r USING (key)"},
	{"SELECT l.window.end FROM l JOIN r ON l.window = r.window", "SELECT l.window.end FROM l JOIN r ON l.window = r.window"},
	// Grouping, ordering, limits.
	{"SELECT value, count(*) FROM STREAM input GROUP BY value HAVING value >= CAST(current_timestamp() AS BIGINT) - 10",
		"SELECT value, count(*) FROM STREAM input GROUP BY value HAVING value >= CAST(current_timestamp() AS BIGINT) - 10"},
	{"SELECT a FROM t ORDER BY a ASC NULLS LAST, b DESC, c NULLS FIRST LIMIT 5 + 1", "SELECT a FROM t ORDER BY a NULLS LAST, b DESC, c NULLS FIRST LIMIT 5 + 1"},
	{"SELECT a FROM t LIMIT 0", "SELECT a FROM t LIMIT 0"},
	{"SELECT a FROM t limit 3", "SELECT a FROM t LIMIT 3"},
	{"SELECT a limit 3", "SELECT a LIMIT 3"},
	{"SELECT a FROM t ORDER BY a LIMIT 2 offset 1", "SELECT a FROM t ORDER BY a LIMIT 2 OFFSET 1"},
	{"SELECT a FROM t offset 4", "SELECT a FROM t OFFSET 4"},
	{"SELECT count(DISTINCT ( * )) FROM t", "SELECT count(DISTINCT *) FROM t"},
	{"SELECT (a, b + 1) FROM t WHERE (a, b) IN (SELECT x, y FROM u)", "SELECT struct(a, b + 1) FROM t WHERE struct(a, b) IN (SELECT x, y FROM u)"},
	{"SELECT * FROM t WHERE (a AS p, b AS q) NOT IN ((1, 2), (3, 4))", "SELECT * FROM t WHERE struct(a AS p, b AS q) NOT IN (struct(1, 2), struct(3, 4))"},
	{"FROM (SELECT a FROM t WHERE a = 1) s SELECT * WHERE a > 0 ORDER BY a", "SELECT * FROM (SELECT a FROM t WHERE a = 1) AS s WHERE a > 0 ORDER BY a"},
	{"FROM t, u SELECT t.a, count(*) GROUP BY t.a", "SELECT t.a, count(*) FROM t, u GROUP BY t.a"},
	{"SELECT * FROM t WHERE a IN (SELECT b FROM u OFFSET 1)", "SELECT * FROM t WHERE a IN (SELECT b FROM u OFFSET 1)"},
	// Unions.
	{"SELECT value FROM STREAM input UNION ALL SELECT value + 1 AS value FROM STREAM input",
		"SELECT value FROM STREAM input UNION ALL SELECT value + 1 AS value FROM STREAM input"},
	{"SELECT 1 UNION SELECT 2 UNION DISTINCT SELECT 3 ORDER BY 1 LIMIT 2", "SELECT 1 UNION SELECT 2 UNION SELECT 3 ORDER BY 1 LIMIT 2"},
	{"(SELECT 1) UNION ((SELECT 2))", "SELECT 1 UNION SELECT 2"},
	{"SELECT 1 UNION (SELECT 2 UNION ALL SELECT 3)", "SELECT 1 UNION (SELECT 2 UNION ALL SELECT 3)"},
	{"(SELECT 1 UNION SELECT 2) UNION ALL SELECT 3", "SELECT 1 UNION SELECT 2 UNION ALL SELECT 3"},
	{"(SELECT a FROM t ORDER BY a LIMIT 1) UNION ALL (SELECT b FROM u LIMIT 2) LIMIT 3",
		"(SELECT a FROM t ORDER BY a LIMIT 1) UNION ALL (SELECT b FROM u LIMIT 2) LIMIT 3"},
	{"((SELECT 1 LIMIT 1))", "SELECT 1 LIMIT 1"},
	{"(SELECT 1 LIMIT 2) LIMIT 1", "(SELECT 1 LIMIT 2) LIMIT 1"},
	{"SELECT sum(value) FROM (SELECT value FROM STREAM first WATERMARK timestamp_seconds(value) AS eventTime DELAY OF INTERVAL 10 SECONDS UNION ALL SELECT value FROM STREAM second WATERMARK timestamp_seconds(value) AS eventTime DELAY OF INTERVAL 5 SECONDS) AS u",
		"SELECT sum(value) FROM (SELECT value FROM STREAM first WATERMARK timestamp_seconds(value) AS eventTime DELAY OF INTERVAL 10 SECONDS UNION ALL SELECT value FROM STREAM second WATERMARK timestamp_seconds(value) AS eventTime DELAY OF INTERVAL 5 SECONDS) AS u"},
	// WITH.
	{"WITH a AS (SELECT 1 AS x), b (y) AS (SELECT x FROM a) SELECT y FROM b", "WITH a AS (SELECT 1 AS x), b (y) AS (SELECT x FROM a) SELECT y FROM b"},
	{"WITH a (SELECT 1) SELECT * FROM a", "WITH a AS (SELECT 1) SELECT * FROM a"},
	{"SELECT * FROM (WITH a AS (SELECT 1) SELECT * FROM a) t", "SELECT * FROM (WITH a AS (SELECT 1) SELECT * FROM a) AS t"},
	// Subqueries without alias, keywords as names.
	{"SELECT * FROM (SELECT 1)", "SELECT * FROM (SELECT 1)"},
	{"SELECT first, last, count, window, version, history, tables, options, delay FROM t",
		"SELECT first, last, count, window, version, history, tables, options, delay FROM t"},
	{"SELECT a like FROM t", "SELECT a AS like FROM t"},
	{"SELECT a div FROM t", "SELECT a AS div FROM t"},
	{"SELECT a FROM first JOIN last ON first.a = last.a", "SELECT a FROM first JOIN last ON first.a = last.a"},
	{"SELECT time, user, to, create, for, escape FROM t for", "SELECT time, user, to, create, for, escape FROM t AS for"},
	{"SELECT timestamp_seconds(time) AS leftTime FROM t", "SELECT timestamp_seconds(time) AS leftTime FROM t"},
	{"SELECT a LIKE b escape, c FROM t", "SELECT a LIKE b AS escape, c FROM t"},
	{"SELECT a AS end, b AS from FROM t AS where", "SELECT a AS `end`, b AS `from` FROM t AS `where`"},
	{"SELECT count(*) filter FROM t", "SELECT count(*) AS filter FROM t"},
	// Comments and layout.
	{"-- leading\nSELECT a, /* inline /* nested */ still */ b -- trailing\nFROM t -- end", "SELECT a, b FROM t"},
	{"SELECT\n\ta\n\t,b\r\nFROM\tt", "SELECT a, b FROM t"},
}

func TestStatements(t *testing.T) {
	for _, tc := range append(statements, queries...) {
		s, err := Parse(tc.in)
		if err != nil {
			t.Errorf("Parse(%q): %v", tc.in, err)
			continue
		}
		if got := Format(s); got != tc.out {
			t.Errorf("Format(Parse(%q))\n got %s\nwant %s", tc.in, got, tc.out)
		}
		checkPositions(t, tc.in, s)
		checkRoundTrip(t, tc.in, s, Parse)
	}
}

func TestStatementTrees(t *testing.T) {
	s, err := Parse("CREATE TABLE r (a INT) USING `rate-micro-batch` OPTIONS (rowsPerBatch '10')")
	if err != nil {
		t.Fatal(err)
	}
	ct := s.(*CreateTable)
	if ct.Name[0].Name != "r" || len(ct.Columns) != 1 || ct.Columns[0].Type.Name != "INT" ||
		ct.Using[0].Name != "rate-micro-batch" || ct.Options[0].Key != "rowsPerBatch" || ct.Options[0].Value != "10" {
		t.Errorf("CREATE TABLE parsed as %#v", ct)
	}

	s, err = Parse("SELECT x FROM STREAM input WATERMARK timestamp_seconds(value) AS eventTime DELAY OF INTERVAL 10 SECONDS AS i")
	if err != nil {
		t.Fatal(err)
	}
	ref := s.(*Query).Body.(*Select).From[0].(*TableRef)
	if !ref.Stream || ref.Name[0].Name != "input" || ref.Alias.Name != "i" || ref.Watermark.Name.Name != "eventTime" ||
		Format(ref.Watermark.Expr) != "timestamp_seconds(value)" || ref.Watermark.Delay.Parts[0] != (IntervalPart{Pos{1, 94}, false, "10", false, "SECOND"}) {
		t.Errorf("FROM item parsed as %#v", ref)
	}
	if ref.Watermark.Pos != (Pos{1, 28}) || ref.Pos != (Pos{1, 15}) {
		t.Errorf("positions: table %s, watermark %s", ref.Pos, ref.Watermark.Pos)
	}

	s, err = Parse("SELECT 1 UNION ALL SELECT 2 UNION SELECT 3 ORDER BY 1 LIMIT 4")
	if err != nil {
		t.Fatal(err)
	}
	q := s.(*Query)
	u := q.Body.(*Union)
	if u.All || !u.Left.(*Union).All || len(q.OrderBy) != 1 || q.Limit == nil {
		t.Errorf("UNION parsed as %#v", q)
	}

	s, err = Parse("SELECT * FROM counts VERSION AS OF 12")
	if err != nil {
		t.Fatal(err)
	}
	if v := s.(*Query).Body.(*Select).From[0].(*TableRef).Version; v.Kind != LitInt || v.Value != "12" {
		t.Errorf("VERSION AS OF parsed as %#v", v)
	}

	s, err = Parse("SELECT * FROM a LEFT JOIN b USING (k)")
	if err != nil {
		t.Fatal(err)
	}
	j := s.(*Query).Body.(*Select).From[0].(*Join)
	if j.Kind != JoinLeft || j.On != nil || len(j.Using) != 1 || j.Using[0].Name != "k" {
		t.Errorf("join parsed as %#v", j)
	}
}

func TestParseScript(t *testing.T) {
	src := `
CREATE TABLE clicks (user_id BIGINT, url STRING, ts TIMESTAMP) USING kafka
  OPTIONS (bootstrapServers '127.0.0.1:9092', subscribe 'clicks', format 'json');

CREATE STREAMING TABLE clicks_per_minute
  TBLPROPERTIES ('outputMode' = 'append', 'checkpointLocation' = 'ckpt/clicks')
AS SELECT window.start AS minute, url, count(*) AS clicks
   FROM STREAM clicks WATERMARK ts DELAY OF INTERVAL 30 SECONDS
   GROUP BY window(ts, '1 minute'), url;;

SELECT * FROM clicks_per_minute WHERE clicks > 100 ORDER BY minute DESC LIMIT 20;
`
	stmts, err := ParseScript(src)
	if err != nil {
		t.Fatal(err)
	}
	if len(stmts) != 3 {
		t.Fatalf("got %d statements, want 3", len(stmts))
	}
	if _, ok := stmts[1].(*CreateStreamingTable); !ok {
		t.Errorf("second statement is %T", stmts[1])
	}
	if p := stmts[2].Position(); p != (Pos{11, 1}) {
		t.Errorf("third statement at %s, want 11:1", p)
	}
	text := FormatScript(stmts)
	again, err := ParseScript(text)
	if err != nil {
		t.Fatalf("ParseScript(FormatScript(...)): %v\n%s", err, text)
	}
	if !sameTree(stmts, again) {
		t.Errorf("script does not round-trip:\n%s", text)
	}
	if strings.Count(text, ";\n") != 3 {
		t.Errorf("FormatScript gave %q", text)
	}

	for _, empty := range []string{"", " ; ;", "-- nothing\n"} {
		stmts, err := ParseScript(empty)
		if err != nil || len(stmts) != 0 {
			t.Errorf("ParseScript(%q) = %v, %v; want no statements", empty, stmts, err)
		}
	}
}

func TestParseSet(t *testing.T) {
	for _, c := range []struct{ src, key, value string }{
		{"SET spark.sql.ansi.enabled = false", "spark.sql.ansi.enabled", "false"},
		{"SET spark.sql.session.timeZone='America/Los_Angeles'", "spark.sql.session.timeZone", "America/Los_Angeles"},
		{"set spark.sql.session.timeZone = UTC", "spark.sql.session.timeZone", "UTC"},
		{"SET TIME ZONE 'Asia/Hong_Kong'", "spark.sql.session.timeZone", "Asia/Hong_Kong"},
		{"set time zone INTERVAL 10 HOURS", "spark.sql.session.timeZone", "+10:00"},
		{"SET TIME ZONE INTERVAL '15:40:32' HOUR TO SECOND", "spark.sql.session.timeZone", "+15:40:32"},
		{"SET TIME ZONE INTERVAL -'05:30' HOUR TO MINUTE", "spark.sql.session.timeZone", "-05:30"},
		{"SET TIME ZONE INTERVAL 0 HOURS", "spark.sql.session.timeZone", "Z"},
	} {
		st, err := Parse(c.src)
		if err != nil {
			t.Fatalf("%s: %v", c.src, err)
		}
		s, ok := st.(*Set)
		if !ok || s.Key != c.key || s.Value != c.value || !s.HasValue {
			t.Errorf("%s: got %#v", c.src, st)
		}
	}
	for _, bad := range []string{"SET", "SET = 1", "SET a b = 1", "SET TIME ZONE", "SET TIME ZONE LOCAL",
		"SET TIME ZONE INTERVAL 3 DAYS", "SET TIME ZONE INTERVAL 24 HOURS", "SET TIME ZONE INTERVAL '19:40:32' HOUR TO SECOND",
		"SET TIME ZONE INTERVAL 10 HOURS 'GMT+1'", "SET TIME ZONE INTERVAL 1.5 SECONDS"} {
		if _, err := Parse(bad); err == nil {
			t.Errorf("%s: no error", bad)
		}
	}
}
