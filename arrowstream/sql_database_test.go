package arrowstream

import (
	"context"
	"strings"
	"testing"
)

// TestDatabases: CREATE DATABASE / USE / DROP DATABASE as Spark's
// spark_catalog namespaces. Unqualified names resolve in the current
// database, qualified ones (db.t, spark_catalog.db.t) anywhere; columns
// can be qualified with the database; temporary views shadow tables;
// DROP needs CASCADE when the database has tables.
func TestDatabases(t *testing.T) {
	s, _ := newTestSession(t)
	defer mustSQL(t, s, "DROP TABLE IF EXISTS default.t0")
	mustSQL(t, s, "CREATE TABLE t0 AS SELECT 0 AS i1")
	mustSQL(t, s, "CREATE DATABASE mydb1")
	mustSQL(t, s, "CREATE DATABASE IF NOT EXISTS mydb1")
	sqlErr(t, s, "CREATE DATABASE mydb1", "SCHEMA_ALREADY_EXISTS")
	mustSQL(t, s, "CREATE SCHEMA mydb2 COMMENT 'second' WITH DBPROPERTIES ('a' = 'b')")
	mustSQL(t, s, "USE mydb1")
	mustSQL(t, s, "CREATE TABLE t1 USING parquet AS SELECT 1 AS i1")
	mustSQL(t, s, "USE DATABASE mydb2")
	mustSQL(t, s, "CREATE TABLE t1 (i1 INT)")
	mustSQL(t, s, "INSERT INTO t1 VALUES (20)")

	// In mydb2: t1 is mydb2.t1.
	wantRows(t, s, "SELECT i1 FROM t1", "20")
	wantRows(t, s, "SELECT i1 FROM mydb1.t1", "1")
	wantRows(t, s, "SELECT i1 FROM default.t0", "0")
	sqlErr(t, s, "SELECT i1 FROM t0", "cannot be found")
	wantRows(t, s, "SELECT i1 FROM spark_catalog.mydb1.t1", "1")
	wantRows(t, s, "SELECT mydb1.t1.i1 FROM mydb1.t1", "1")
	wantRows(t, s, "SELECT spark_catalog.mydb1.t1.i1 FROM mydb1.t1", "1")
	wantRows(t, s, "SELECT mydb1.t1.* FROM mydb1.t1", "1")
	// Two tables called t1: the database tells their columns apart.
	wantRows(t, s, "SELECT mydb1.t1.i1, mydb2.t1.i1 FROM t1, mydb1.t1", "1|20")
	sqlErr(t, s, "SELECT t1.i1 FROM t1, mydb1.t1", "ambiguous")
	// An alias hides the table's name, database included.
	sqlErr(t, s, "SELECT mydb1.t1.i1 FROM mydb1.t1 AS a", "cannot be resolved")
	wantRows(t, s, "SELECT a.i1 FROM mydb1.t1 AS a", "1")

	// A temporary view belongs to no database and shadows t1 unqualified.
	mustSQL(t, s, "CREATE TEMPORARY VIEW t1 AS SELECT 7 AS i1")
	wantRows(t, s, "SELECT i1 FROM t1", "7")
	wantRows(t, s, "SELECT i1 FROM mydb2.t1", "20")
	mustSQL(t, s, "DROP VIEW t1")
	wantRows(t, s, "SELECT i1 FROM t1", "20")

	// Global temporary views are read as global_temp.name only.
	mustSQL(t, s, "CREATE GLOBAL TEMPORARY VIEW gv AS SELECT 5 AS g")
	wantRows(t, s, "SELECT global_temp.gv.g FROM global_temp.gv", "5")
	sqlErr(t, s, "SELECT g FROM gv", "cannot be found")
	mustSQL(t, s, "DROP VIEW global_temp.gv")

	sqlErr(t, s, "SHOW TABLES", "SHOW TABLES lists the default database")
	sqlErr(t, s, "USE nodb", "SCHEMA_NOT_FOUND")
	mustSQL(t, s, "USE default")
	wantRows(t, s, "SELECT i1 FROM t0", "0")
	// The default database's listing leaves the other databases' tables out.
	if got := rowStrings(t, s, "SHOW TABLES"); strings.Join(got, ",") != "t0|false" {
		t.Fatalf("SHOW TABLES: %q", got)
	}
	sqlErr(t, s, "SELECT i1 FROM t1", "cannot be found")
	sqlErr(t, s, "DROP DATABASE mydb1", "SCHEMA_NOT_EMPTY")
	sqlErr(t, s, "DROP DATABASE default", "default database")
	mustSQL(t, s, "DROP DATABASE mydb1 CASCADE")
	sqlErr(t, s, "SELECT * FROM mydb1.t1", "cannot be found")
	sqlErr(t, s, "DROP DATABASE mydb1", "SCHEMA_NOT_FOUND")
	mustSQL(t, s, "DROP DATABASE IF EXISTS mydb1")
	mustSQL(t, s, "DROP SCHEMA mydb2 CASCADE")
	sqlErr(t, s, "SELECT * FROM mydb2.t1", "cannot be found")

	// A database is a name, never a path.
	sqlErr(t, s, "CREATE DATABASE `../x`", "not a valid database name")
	sqlErr(t, s, "CREATE DATABASE `a.b`", "not a valid database name")
	sqlErr(t, s, "CREATE DATABASE d LOCATION '/tmp/d'", "LOCATION is not supported")
	sqlErr(t, s, "CREATE DATABASE system", "reserved")
	sqlErr(t, s, "USE a.b.c", "REQUIRES_SINGLE_PART_NAMESPACE")
}

// TestDatabasesDropCurrent: the current database may be dropped (as in
// Spark); unqualified names then resolve in no table, and no table can be
// created there.
func TestDatabasesDropCurrent(t *testing.T) {
	s, _ := newTestSession(t)
	defer mustSQL(t, s, "DROP TABLE default.t")
	mustSQL(t, s, "CREATE TABLE t AS SELECT 1 AS a")
	mustSQL(t, s, "CREATE DATABASE d")
	mustSQL(t, s, "USE d")
	mustSQL(t, s, "CREATE TABLE t AS SELECT 2 AS a")
	mustSQL(t, s, "DROP DATABASE d CASCADE")
	sqlErr(t, s, "SELECT * FROM t", "cannot be found")
	sqlErr(t, s, "CREATE TABLE u (a INT)", "SCHEMA_NOT_FOUND")
	wantRows(t, s, "SELECT a FROM default.t", "1")
}

// TestDatabasesDurableRefused: a session with a durable catalog refuses
// CREATE DATABASE (the catalog log does not record databases).
func TestDatabasesDurableRefused(t *testing.T) {
	s := NewSession(SessionOptions{CheckpointRoot: t.TempDir(), NoSync: true})
	if _, err := s.RestoreCatalog(context.Background()); err != nil {
		t.Fatal(err)
	}
	sqlErr(t, s, "CREATE DATABASE d", "durable catalog")
}

// TestDescribeQueryAndShowColumns: DESCRIBE [QUERY] query lists the
// query's columns without running it; SHOW COLUMNS lists a table's names,
// with the database given either way (conflicts refused).
func TestDescribeQueryAndShowColumns(t *testing.T) {
	s, _ := newTestSession(t)
	wantRows(t, s, "DESCRIBE QUERY SELECT 1 AS a, 'x' AS b", "a|int|NULL", "b|string|NULL")
	wantRows(t, s, "DESC WITH s AS (SELECT 2.5D AS d) SELECT d, d / 0 AS z FROM s", "d|double|NULL", "z|double|NULL")
	wantRows(t, s, "DESCRIBE VALUES (1L, 'h') AS v(x, y)", "x|bigint|NULL", "y|string|NULL")
	sqlErr(t, s, "DESCRIBE QUERY SELECT nope", "cannot be resolved")

	mustSQL(t, s, "CREATE DATABASE sc")
	defer mustSQL(t, s, "DROP DATABASE sc CASCADE")
	mustSQL(t, s, "CREATE TABLE sc.t (c1 INT, `c 2` STRING)")
	mustSQL(t, s, "CREATE TEMPORARY VIEW tv AS SELECT 1 AS v")
	defer mustSQL(t, s, "DROP VIEW tv")
	wantRows(t, s, "SHOW COLUMNS IN sc.t", "c1", "c 2")
	wantRows(t, s, "SHOW COLUMNS FROM t IN sc", "c1", "c 2")
	wantRows(t, s, "SHOW COLUMNS IN sc.t FROM SC", "c1", "c 2")
	sqlErr(t, s, "SHOW COLUMNS IN sc.t FROM other", "SHOW_COLUMNS_WITH_CONFLICT_NAMESPACE")
	wantRows(t, s, "SHOW COLUMNS IN tv", "v")
	sqlErr(t, s, "SHOW COLUMNS IN tv FROM sc", "not found")
	sqlErr(t, s, "SHOW COLUMNS IN nope", "not found")
}
