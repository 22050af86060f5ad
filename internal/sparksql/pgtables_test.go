package sparksql

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/apache/arrow/go/v17/arrow/memory"
)

// writePostgresData writes a small test-data/postgresql directory beside a
// sql-tests directory, with the named files, and returns both.
func writePostgresData(t *testing.T, files map[string]string) (sqlTests, data string) {
	t.Helper()
	root := t.TempDir()
	sqlTests = filepath.Join(root, "sql-tests")
	data = filepath.Join(root, "test-data", "postgresql")
	for _, d := range []string{sqlTests, data} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	for name, text := range files {
		if err := os.WriteFile(filepath.Join(data, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return sqlTests, data
}

func TestPostgresDataDir(t *testing.T) {
	sqlTests, data := writePostgresData(t, nil)
	if got := PostgresDataDir(sqlTests); got != data {
		t.Errorf("beside %s: got %q, want %q", sqlTests, got, data)
	}
	if got := PostgresDataDir(sqlTests + string(filepath.Separator)); got != data {
		t.Errorf("with a trailing separator: got %q, want %q", got, data)
	}
	if got := PostgresDataDir(t.TempDir()); got != "" {
		t.Errorf("without test-data: got %q, want none", got)
	}
}

// TestPostgresTables runs queries over aggtest, onek and tenk1 loaded from
// small files of the suite's layout (tab-separated, no header): the
// columns have the suite's names and types, an empty field is null and a
// blank line is no row (Spark's CSV reader), and a table whose file is
// absent does not exist.
func TestPostgresTables(t *testing.T) {
	row := func(vals ...string) string { return strings.Join(vals, "\t") + "\n" }
	tenk := row("1", "2", "3", "4", "5", "6", "7", "8", "9", "10", "11", "12", "13", "ABAAAA", "BAAAAA", "OOOOxx") +
		row("7", "", "1", "1", "1", "1", "1", "1", "1", "1", "1", "1", "1", "", "x y", "AAAAxx")
	_, data := writePostgresData(t, map[string]string{
		"agg.data":  "56\t7.8\n\n100\t99.097\n0\t\n\t1.5\n",
		"onek.data": tenk,
	})
	spark := "org.apache.spark.sql.AnalysisException"
	queries := []struct {
		sql, schema string
		out         []string
	}{
		{"SELECT a, b FROM aggtest ORDER BY a", "struct<a:int,b:float>", []string{"NULL\t1.5", "0\tNULL", "56\t7.8", "100\t99.097"}},
		{"SELECT typeof(a), typeof(b) FROM aggtest LIMIT 1", "struct<typeof(a):string,typeof(b):string>", []string{"int\tfloat"}},
		{"SELECT unique1, unique2, stringu1, stringu2, string4 FROM onek ORDER BY unique1", "struct<unique1:int,unique2:int,stringu1:string,stringu2:string,string4:string>",
			[]string{"1\t2\tABAAAA\tBAAAAA\tOOOOxx", "7\tNULL\tNULL\tx y\tAAAAxx"}},
		{"SELECT sum(two + four + ten + twenty + hundred + thousand + twothousand + fivethous + tenthous + odd + even) AS s FROM onek", "struct<s:bigint>", []string{"99"}},
		{"SELECT count(*) FROM tenk1", "struct<>", []string{spark, "[TABLE_OR_VIEW_NOT_FOUND] The table or view `tenk1` cannot be found."}},
	}
	var input, output strings.Builder
	output.WriteString(header)
	for _, q := range queries {
		input.WriteString(q.sql + ";\n")
		output.WriteString(block(q.sql, q.schema, q.out...))
	}
	files, err := LoadDir(writeGolden(t, "pg", input.String(), output.String()))
	if err != nil {
		t.Fatal(err)
	}
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	sum := (&Runner{Allocator: mem, PostgresData: data}).Run(context.Background(), files)
	mem.AssertSize(t, 0)
	for i, q := range sum.Files[0].Queries {
		if q.Outcome != Passed {
			t.Errorf("#%d %s: %s (%s)", i+1, queries[i].sql, q.Outcome, q.Detail)
		}
	}

	// Without the data the tables do not exist: the queries fail.
	sum = (&Runner{Allocator: mem}).Run(context.Background(), files)
	mem.AssertSize(t, 0)
	if got := sum.Files[0].Counts; got[Passed] != 1 || got[Failed] != 4 {
		t.Errorf("without the data: %v, want 1 passed (tenk1 missing), 4 failed", got)
	}
}
