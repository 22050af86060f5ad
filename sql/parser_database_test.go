package sql

import (
	"strings"
	"testing"
)

// TestParseDatabasesAndLateral: the statements of databases and LATERAL
// subqueries parse, format back to what they mean, and bad forms fail with
// Spark's error classes.
func TestParseDatabasesAndLateral(t *testing.T) {
	for _, tc := range []struct{ src, want string }{
		{"CREATE DATABASE d", "CREATE DATABASE d"},
		{"create schema if not exists d comment 'x' with dbproperties ('a' = 'b')", "CREATE DATABASE IF NOT EXISTS d COMMENT 'x'"},
		{"DROP SCHEMA IF EXISTS spark_catalog.d CASCADE", "DROP DATABASE IF EXISTS d CASCADE"},
		{"DROP DATABASE d RESTRICT", "DROP DATABASE d"},
		{"USE d", "USE d"},
		{"USE NAMESPACE d", "USE d"},
		{"SELECT * FROM t, LATERAL (SELECT t.a) s(x)", "SELECT * FROM t, LATERAL (SELECT t.a) AS s(x)"},
		{"SELECT * FROM t LEFT JOIN LATERAL (SELECT a) ON true", "SELECT * FROM t LEFT OUTER JOIN LATERAL (SELECT a) ON TRUE"},
	} {
		st, err := Parse(tc.src)
		if err != nil {
			t.Fatalf("%s: %v", tc.src, err)
		}
		if got := Format(st); got != tc.want {
			t.Errorf("%s: formats as %q, want %q", tc.src, got, tc.want)
		}
		checkRoundTrip(t, tc.src, st, Parse)
	}
	for _, tc := range []struct{ src, want string }{
		{"CREATE DATABASE d LOCATION '/tmp'", "LOCATION is not supported"},
		{"USE a.b", "REQUIRES_SINGLE_PART_NAMESPACE"},
		{"SELECT * FROM t NATURAL JOIN LATERAL (SELECT 1)", "LATERAL_NATURAL_JOIN"},
		{"SELECT * FROM t JOIN LATERAL (SELECT 1 AS a) USING (a)", "LATERAL_JOIN_USING"},
		{"SELECT * FROM t FULL JOIN LATERAL (SELECT 1 AS a) ON true", "LATERAL_JOIN_OF_TYPE"},
		{"SELECT * FROM t, LATERAL u", "LATERAL can only be used with a subquery"},
	} {
		_, err := Parse(tc.src)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: error %v, want %q", tc.src, err, tc.want)
		}
	}
	// A column or table named use still reads.
	if _, err := Parse("SELECT use FROM use"); err != nil {
		t.Error(err)
	}
}
