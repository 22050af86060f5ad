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
// tables testdata, arraydata and mapdata.
//
// A directory whose inputs/ holds Spark's whole sql-tests tree (it has
// subdirectories other than ansi/) is read recursively with the
// conventions of SQLQueryTestSuite: each input is compared with the
// results/ file at the same relative path and named by that path
// ("typeCoercion/native/concat"); files under postgreSQL/ run with
// spark.sql.ansi.enabled=true and spark.sql.legacy.interval.enabled=true,
// under ansi/ with ANSI on, under timestampNTZ/ with
// spark.sql.timestampType=TIMESTAMP_NTZ, others with ANSI off; files under
// udf/ (which need Scala or Python UDFs) are counted skipped; an input
// without results is left out. In both layouts an input's --SET lines are
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
// Every query is classified:
//
//   - passed: the same answer as Spark, or both raise an error;
//   - wrong: we answer and the answer (rows or column types) differs, or
//     we answer where Spark raises an error;
//   - skipped: we refuse with a not-supported error, or the query fails
//     after a setup statement that created a table or view it names was
//     refused;
//   - failed: we raise another error where Spark answers.
package sparksql
