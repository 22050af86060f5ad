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
	var input, output strings.Builder
	output.WriteString(header)
	for _, x := range []struct {
		sql, schema string
		out         []string
	}{
		{"SET spark.sql.ansi.enabled=false", "struct<key:string,value:string>", []string{"spark.sql.ansi.enabled\tfalse"}},
		{q, "struct<k:int,a:double>", []string{"2\t10.0", "1\t10.0"}},
	} {
		input.WriteString(x.sql + ";\n")
		output.WriteString(block(x.sql, x.schema, x.out...))
	}
	dir := writeGolden(t, "sorted", input.String(), output.String())
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
