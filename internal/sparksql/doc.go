// Package sparksql runs Apache Spark's SQL golden test files
// (sql-tests/inputs/*.sql with their results/*.sql.out, as kept in
// ../shared/sparksql) against an embedded session and compares every
// answer with Spark's.
//
// The statements of a file are the "-- !query" blocks of its expected
// output (the exact statements Spark's SQLQueryTestSuite split from the
// input file, in order); the expected output is results/ansi/X.sql.out
// when it exists (the target is Spark's ANSI mode) and results/X.sql.out
// otherwise. Each file runs on a fresh session that has the suite's
// tables testdata, arraydata and mapdata, and, when Runner.PostgresData
// names Spark's test-data/postgresql directory, aggtest, onek and tenk1
// read from its agg.data, onek.data and tenk.data with the suite's schemas
// and CSV options (tab-separated, no header); the files are read in place.
//
// A directory whose inputs/ holds Spark's whole sql-tests tree (it has
// subdirectories other than ansi/) is read recursively with the
// conventions of SQLQueryTestSuite: each input is compared with the
// results/ file at the same relative path and named by that path
// ("typeCoercion/native/concat"); files under postgreSQL/ run with
// spark.sql.ansi.enabled=true and spark.sql.legacy.interval.enabled=true,
// under ansi/ with ANSI on, under timestampNTZ/ with
// spark.sql.timestampType=TIMESTAMP_NTZ, others with ANSI off; an input
// without results is left out. As Spark's suite does, the files under
// udf/ run with its test UDF registered as udf (IntegratedUDFTestUtils'
// TestInternalScalaUDF: udf(x) is CAST(f(CAST(x AS STRING)) AS
// typeof(x)), f returning its string; udf.go), those under
// udf/postgreSQL/ also with the postgreSQL/ settings, and the PostgreSQL
// files (postgreSQL/ and udf/postgreSQL/) with the suite's booleq, boolne
// and vol. They are registered through the engine's user-function API
// (Session.RegisterFunction), so a udf(...) is an opaque call the
// optimizer neither folds nor sees through, as in Spark; Spark's Python
// and pandas variants of these files expect the same answers and are not
// run separately. In both layouts an input's --SET lines are
// set before its queries, and of each --CONFIG_DIM dimension the first
// alternative the engine accepts (Spark expects one output under all).
// Settings are set with SET, which refuses what the engine cannot honour;
// after a refused setting, an answer that differs from Spark's is counted
// skipped (the file runs in another configuration than Spark's), never
// passed.
//
// Answers are rendered as Spark's HiveResult renders them (NULL, Java's
// Double.toString, BigDecimal.toPlainString, timestamps in the session
// time zone with trailing fractional zeros dropped, nested values in
// JSON-like form with sorted map entries) and compared as Spark's suite
// compares them: row order only when the plan is sorted (a global sort
// reached from the root through operators other than joins, aggregates
// and DISTINCT), otherwise as sorted lines; trailing white space ignored.
// The schema line is compared on column types only (column names are
// generated differently by this engine): the expected struct<...> must
// match name:type pairs with our types, in order.
//
// The SET lines of an input file's header ("--SET k=v", the settings
// Spark computed its answers under) run before the first query;
// --CONFIG_DIM lines are not read (Spark's answers agree under each).
// DESCRIBE TABLE answers are rendered as Spark's suite renders them (each
// of col_name, data_type, comment left-aligned in 20 characters).
//
// Every query is classified:
//
//   - passed: the same answer as Spark, or both raise an error;
//   - wrong: we answer and the answer (rows or column types) differs, or
//     we answer where Spark raises an error;
//   - skipped: we refuse with a not-supported error; or the query fails,
//     or answers differently, after a setup statement (CREATE, INSERT,
//     ALTER, TRUNCATE) of a table or view it names was refused and before
//     a CREATE or INSERT OVERWRITE defines it anew; or it answers
//     differently after a refused SET (header or statement), USE or
//     CREATE DATABASE, which leave the session otherwise configured than
//     Spark's; or it is an EXPLAIN, whose text is the engine's own plan;
//   - failed: we raise another error where Spark answers.
package sparksql
