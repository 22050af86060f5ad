package arrowstream

import (
	"slices"
	"testing"
)

// TestDescribeColumn: DESC t col answers Spark's info_name/info_value rows
// in Spark's order; EXTENDED and FORMATTED add the column statistics
// (NULL: the engine computes none); a qualified column, a backquoted
// name with a dot, a nested field and DESC EXTENDED of a whole table.
func TestDescribeColumn(t *testing.T) {
	s, _ := newTestSession(t)
	mustSQL(t, s, "CREATE TABLE dc (`a.b` INT, col STRUCT<x: INT, y: STRING>, k BIGINT)")
	defer mustSQL(t, s, "DROP TABLE dc")
	basic := []string{"col_name|k", "data_type|bigint", "comment|NULL"}
	stats := []string{"min|NULL", "max|NULL", "num_nulls|NULL", "distinct_count|NULL", "avg_col_len|NULL", "max_col_len|NULL", "histogram|NULL"}
	for _, c := range []struct {
		query string
		want  []string
	}{
		{"DESC dc k", basic},
		{"DESCRIBE TABLE dc dc.K", basic},
		{"DESC EXTENDED dc k", append(slices.Clone(basic), stats...)},
		{"DESC FORMATTED dc `a.b`", append([]string{"col_name|a.b", "data_type|int", "comment|NULL"}, stats...)},
		{"DESC dc col", []string{"col_name|col", "data_type|struct<x:int,y:string>", "comment|NULL"}},
	} {
		// rowStrings sorts; the order of these rows is part of the answer.
		got := orderedRowStrings(t, s, c.query)
		if !slices.Equal(got, c.want) {
			t.Errorf("%s:\n got %q\nwant %q", c.query, got, c.want)
		}
	}
	sqlErr(t, s, "DESC dc col.x", "does not support nested column: col.x")
	sqlErr(t, s, "DESC dc nope", "column `nope` does not exist")
	sqlErr(t, s, "DESC dc other.k", "column `other.k` does not exist")
	sqlErr(t, s, "DESC EXTENDED dc", "not supported")
	sqlErr(t, s, "DESC no_such_table k", "not found")
	wantRows(t, s, "DESC dc", "a.b|int|NULL", "col|struct<x:int,y:string>|NULL", "k|bigint|NULL")
}
