package sparksql

import (
	"context"
	"strings"
	"testing"

	"github.com/apache/arrow/go/v17/arrow/memory"
)

// TestRunnerDescribeKeepsOrder: SQLQueryTestSuite keeps the rows of a
// DESCRIBE in their order (col_name, data_type, comment, then the
// statistics; a table's columns in the table's order). Sorted, the right
// answers below were judged wrong.
func TestRunnerDescribeKeepsOrder(t *testing.T) {
	runAllPass(t, "describe", []goldenCase{
		{"CREATE TEMPORARY VIEW dk AS SELECT 1 AS b, 'x' AS a", "struct<>", nil},
		{"DESC dk", "struct<col_name:string,data_type:string,comment:string>", []string{
			"b                   \tint                 \t                    ",
			"a                   \tstring              \t                    ",
		}},
		{"DESC dk b", "struct<info_name:string,info_value:string>", []string{"col_name\tb", "data_type\tint", "comment\tNULL"}},
		{"DESC FORMATTED dk a", "struct<info_name:string,info_value:string>", []string{
			"col_name\ta", "data_type\tstring", "comment\tNULL", "min\tNULL", "max\tNULL", "num_nulls\tNULL",
			"distinct_count\tNULL", "avg_col_len\tNULL", "max_col_len\tNULL", "histogram\tNULL",
		}},
	})
}

// TestRunnerRefusedAnalyzeBreaksTable: after a refused ANALYZE TABLE the
// engine's table has no statistics where Spark's has some, so an answer
// that differs (DESC EXTENDED t col shows them) is skipped, not wrong.
func TestRunnerRefusedAnalyzeBreaksTable(t *testing.T) {
	cases := []goldenCase{
		{"CREATE TEMPORARY VIEW st AS SELECT * FROM VALUES (1), (2) AS t(a)", "struct<>", nil},
		{"ANALYZE TABLE st COMPUTE STATISTICS FOR COLUMNS a", "struct<>", nil},
		{"DESC EXTENDED st a", "struct<info_name:string,info_value:string>", []string{
			"col_name\ta", "data_type\tint", "comment\tNULL", "min\t1", "max\t2", "num_nulls\t0",
			"distinct_count\t2", "avg_col_len\t4", "max_col_len\t4", "histogram\tNULL",
		}},
	}
	var input, output strings.Builder
	output.WriteString(header)
	for _, x := range cases {
		input.WriteString(x.sql + ";\n")
		output.WriteString(block(x.sql, x.schema, x.out...))
	}
	files, err := LoadDir(writeGolden(t, "analyze", input.String(), output.String()))
	if err != nil {
		t.Fatal(err)
	}
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	sum := (&Runner{Allocator: mem}).Run(context.Background(), files)
	mem.AssertSize(t, 0)
	if q := sum.Files[0].Queries[2]; q.Outcome != Skipped {
		t.Errorf("DESC EXTENDED after a refused ANALYZE: %s (%s), want skipped", q.Outcome, q.Detail)
	}
}

// TestDependsOnBrokenQualified: a table whose setup was refused is the
// same table when a later query names it through the default database.
func TestDependsOnBrokenQualified(t *testing.T) {
	broken := map[string]bool{"t": true, "showdb.s": true}
	for text, want := range map[string]bool{
		"DESC t":                                true,
		"DESC default.t":                        true,
		"SELECT * FROM `default`.`t`":           true,
		"SELECT * FROM spark_catalog.default.t": true,
		"SELECT * FROM showdb.s":                true,
		"SELECT * FROM other.t":                 false,
		"SELECT * FROM default.tt":              false,
		"SELECT * FROM s":                       false,
	} {
		if got := dependsOnBroken(text, broken); got != want {
			t.Errorf("dependsOnBroken(%q) = %v, want %v", text, got, want)
		}
	}
}
