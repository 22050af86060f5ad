package sparksql

import (
	"context"
	"strings"
	"testing"

	"github.com/apache/arrow/go/v17/arrow/memory"
)

// TestRunnerFileConventions: a --SET header is applied before the first
// query (a refused one makes later differing answers unjudgeable); DESC
// answers are rendered as Spark's golden files show them; an answer about
// a table whose ALTER was refused, and an EXPLAIN, are skipped when they
// differ; a refused USE is treated as a refused setting.
func TestRunnerFileConventions(t *testing.T) {
	type q struct {
		sql, schema string
		out         []string
		want        Outcome
	}
	desc := func(rows ...string) []string { return rows }
	queries := []q{
		{"CREATE TABLE t (a INT, b STRING) USING parquet", "struct<>", nil, Passed},
		{"DESC t", "struct<col_name:string,data_type:string,comment:string>", desc(
			"a                   \tint                 \t                    ",
			"b                   \tstring              \t"), Passed},
		{"ALTER TABLE t ADD COLUMNS (c INT)", "struct<>", nil, Skipped},
		{"DESC t", "struct<col_name:string,data_type:string,comment:string>", desc("a\tint\t", "b\tstring\t", "c\tint\t"), Skipped},
		{"INSERT INTO t VALUES (1, 'x')", "struct<>", nil, Passed},
		{"SELECT a FROM t", "struct<a:int>", []string{"7"}, Skipped},
		{"CREATE TABLE u (i INT) USING parquet", "struct<>", nil, Passed},
		{"WITH u AS (SELECT 42) INSERT INTO u SELECT * FROM u", "struct<>", nil, Skipped},
		{"SELECT * FROM u", "struct<i:int>", []string{"42"}, Skipped},
		{"EXPLAIN SELECT 1", "struct<plan:string>", desc("== Physical Plan ==", "*(1) Project [1 AS 1#x]"), Skipped},
		// The header's refused setting: a differing answer is not judged,
		// errors still are.
		{"SELECT 1 AS a", "struct<a:int>", []string{"2"}, Skipped},
		{"SELECT no_such_column", "struct<a:int>", []string{"1"}, Failed},
	}
	var input, output strings.Builder
	input.WriteString("--SET spark.sql.legacy.timeParserPolicy=LEGACY\n--CONFIG_DIM1 spark.sql.codegen.wholeStage=true\n\n")
	output.WriteString(header)
	for _, x := range queries {
		input.WriteString(x.sql + ";\n")
		output.WriteString(block(x.sql, x.schema, x.out...))
	}
	dir := writeGolden(t, "conventions", input.String(), output.String())
	files, err := LoadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	if got := files[0].Settings; len(got) != 1 || !strings.EqualFold(got[0].Key, "spark.sql.legacy.timeParserPolicy") || got[0].Value != "LEGACY" {
		t.Fatalf("header settings %+v", got)
	}
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	r := &Runner{Allocator: mem}
	sum := r.Run(context.Background(), files)
	mem.AssertSize(t, 0)
	got := sum.Files[0].Queries
	if len(got) != len(queries) {
		t.Fatalf("got %d results, want %d", len(got), len(queries))
	}
	for i, x := range queries {
		if got[i].Outcome != x.want {
			t.Errorf("#%d %s: %s, want %s (%s)", i+1, x.sql, got[i].Outcome, x.want, got[i].Detail)
		}
	}

	// Without the header, the same differing answer is wrong; a refused
	// USE then stands for a setting.
	queries = []q{
		{"SELECT 1 AS a", "struct<a:int>", []string{"2"}, Wrong},
		{"CREATE TABLE t (a INT) USING parquet", "struct<>", nil, Passed},
		{"DESC t", "struct<col_name:string,data_type:string,comment:string>", []string{"a\tint"}, Wrong},
		{"USE otherdb", "struct<>", nil, Failed},
		{"SELECT 1 AS a", "struct<a:int>", []string{"2"}, Skipped},
	}
	input.Reset()
	output.Reset()
	output.WriteString(header)
	for _, x := range queries {
		input.WriteString(x.sql + ";\n")
		output.WriteString(block(x.sql, x.schema, x.out...))
	}
	dir = writeGolden(t, "plain", input.String(), output.String())
	if files, err = LoadDir(dir); err != nil {
		t.Fatal(err)
	}
	sum = r.Run(context.Background(), files)
	mem.AssertSize(t, 0)
	for i, x := range queries {
		if o := sum.Files[0].Queries[i].Outcome; o != x.want {
			t.Errorf("plain #%d %s: %s, want %s (%s)", i+1, x.sql, o, x.want, sum.Files[0].Queries[i].Detail)
		}
	}
}
