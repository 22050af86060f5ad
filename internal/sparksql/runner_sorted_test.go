package sparksql

import (
	"context"
	"strings"
	"testing"

	"github.com/apache/arrow/go/v17/arrow/memory"
)

// TestRunnerSortedUnderSessionSettings: whether a query's rows are
// compared in order is decided on its plan analyzed with the session's
// settings. avg of a TIMESTAMP analyzes only with ANSI off; analyzed with
// the defaults the query looked unsorted, its rows were sorted, and a
// right answer in ORDER BY ... DESC order was judged wrong.
func TestRunnerSortedUnderSessionSettings(t *testing.T) {
	q := "SELECT k, avg(CAST(10 AS TIMESTAMP)) OVER () AS a FROM VALUES (2), (1) AS t(k) ORDER BY k DESC"
	var cases []goldenCase
	for _, x := range []goldenCase{
		{"SET spark.sql.ansi.enabled=false", "struct<key:string,value:string>", []string{"spark.sql.ansi.enabled\tfalse"}},
		{q, "struct<k:int,a:double>", []string{"2\t10.0", "1\t10.0"}},
	} {
		cases = append(cases, x)
	}
	runAllPass(t, "sorted", cases)
}

// TestRunnerSortByIsUnordered: SORT BY orders Spark's partitions only, so
// SQLQueryTestSuite compares its rows sorted (order-by-ordinal's "sort by
// 1 desc" shows 1 1 first). The engine sorts by the key; judged as an
// ordered result that right answer would be wrong.
func TestRunnerSortByIsUnordered(t *testing.T) {
	var cases []goldenCase
	for _, x := range []goldenCase{
		{"CREATE TEMPORARY VIEW data AS SELECT * FROM VALUES (1, 1), (1, 2), (2, 1), (2, 2) AS t(a, b)", "struct<>", nil},
		{"select * from data sort by 1 desc", "struct<a:int,b:int>", []string{"1\t1", "1\t2", "2\t1", "2\t2"}},
		{"select b, a from data cluster by a desc", "struct<>", []string{"org.apache.spark.sql.catalyst.parser.ParseException", "mismatched input 'desc'"}},
		{"select a from data distribute by a sort by b desc", "struct<a:int>", []string{"1", "1", "2", "2"}},
		{"select * from data sort by 3", "struct<>", []string{"org.apache.spark.sql.AnalysisException", "ORDER BY position 3 is not in select list (valid range is [1, 2])"}},
		{"select * from data distribute by c", "struct<>", []string{"org.apache.spark.sql.AnalysisException", "cannot resolve 'c'"}},
		{"set spark.sql.orderByOrdinal=false", "struct<key:string,value:string>", []string{"spark.sql.orderByOrdinal\tfalse"}},
		{"select * from data sort by 0", "struct<a:int,b:int>", []string{"1\t1", "1\t2", "2\t1", "2\t2"}},
	} {
		cases = append(cases, x)
	}
	runAllPass(t, "sortby", cases)
}

// goldenCase is one query of a golden file written by a test: its SQL,
// Spark's schema line and output rows.
type goldenCase struct {
	sql, schema string
	out         []string
}

// runAllPass writes cases as a golden file named name, runs it and
// requires every query to pass, with the allocator back at zero.
func runAllPass(t *testing.T, name string, cases []goldenCase) {
	t.Helper()
	var input, output strings.Builder
	output.WriteString(header)
	for _, x := range cases {
		input.WriteString(x.sql + ";\n")
		output.WriteString(block(x.sql, x.schema, x.out...))
	}
	dir := writeGolden(t, name, input.String(), output.String())
	files, err := LoadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	r := &Runner{Allocator: mem}
	sum := r.Run(context.Background(), files)
	mem.AssertSize(t, 0)
	for i, g := range sum.Files[0].Queries {
		if g.Outcome != Passed {
			t.Errorf("#%d: %s (%s)", i+1, g.Outcome, g.Detail)
		}
	}
}
