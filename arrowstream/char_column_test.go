package arrowstream

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/arrowstream/arrowstream/plan"
)

// TestCreateTableRefusesCharColumns: CHAR(n) and VARCHAR(n) columns, also
// nested ones, are refused with the column named, since Spark's padding
// and length checks are not implemented; STRING columns are created.
func TestCreateTableRefusesCharColumns(t *testing.T) {
	s, _ := newTestSession(t)
	for _, c := range []struct{ ddl, col string }{
		{"CREATE TABLE c1 (a INT, c CHAR(5)) USING parquet", "c"},
		{"CREATE TABLE c2 (v VARCHAR(3)) USING parquet", "v"},
		{"CREATE TABLE c3 (m MAP<STRING, ARRAY<CHAR(2)>>) USING parquet", "m"},
		{"CREATE TABLE c4 (st STRUCT<x: VARCHAR(9)>) USING parquet", "st"},
	} {
		_, err := s.SQL(context.Background(), c.ddl)
		if err == nil {
			t.Errorf("%s: created", c.ddl)
			continue
		}
		if !errors.Is(err, plan.ErrUnsupported) || !strings.Contains(err.Error(), "column "+c.col) || !strings.Contains(err.Error(), "CHAR(") {
			t.Errorf("%s: %v, want a refusal naming column %s and its CHAR/VARCHAR type", c.ddl, err, c.col)
		}
		if _, err := s.Catalog().Table(strings.Fields(c.ddl)[2]); err == nil {
			t.Errorf("%s: the table exists after the refusal", c.ddl)
		}
	}
	mustSQL(t, s, "CREATE TABLE ok (s STRING) USING parquet")
	t.Cleanup(func() { s.DropTable("ok") })
	mustSQL(t, s, "INSERT INTO ok SELECT CAST('abc' AS VARCHAR(1))")
	// A CAST to VARCHAR(n) is a CAST to STRING, as in Spark.
	if got := int64s(t, s, "SELECT CAST(length(s) AS BIGINT) FROM ok"); len(got) != 1 || got[0] != 3 {
		t.Errorf("length of CAST('abc' AS VARCHAR(1)) = %v, want [3]", got)
	}
}
