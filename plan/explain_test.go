package plan_test

import (
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/apache/arrow/go/v17/arrow"

	"github.com/arrowstream/arrowstream/plan"
	"github.com/arrowstream/arrowstream/sql"
	"github.com/arrowstream/arrowstream/vector"
)

var update = flag.Bool("update", false, "rewrite golden files")

// testCatalog has static tables t(a int, b string, c double) and
// u(a int, d string) and streams clicks(user_id bigint, url string,
// ts timestamp) and input(value int).
func testCatalog(t testing.TB) *plan.MemoryCatalog {
	cat := plan.NewMemoryCatalog()
	mk := func(fields ...arrow.Field) *arrow.Schema { return arrow.NewSchema(fields, nil) }
	f := func(name string, dt arrow.DataType) arrow.Field {
		return arrow.Field{Name: name, Type: dt, Nullable: true}
	}
	tt, err := plan.NewMemTable(mk(f("a", vector.Int32), f("b", vector.String), f("c", vector.Float64)))
	if err != nil {
		t.Fatal(err)
	}
	uu, err := plan.NewMemTable(mk(f("a", vector.Int32), f("d", vector.String)))
	if err != nil {
		t.Fatal(err)
	}
	cat.Register("t", tt)
	cat.Register("u", uu)
	cat.Register("clicks", &plan.SourceTable{TableSchema: mk(f("user_id", vector.Int64), f("url", vector.String), f("ts", vector.Timestamp))})
	cat.Register("input", &plan.SourceTable{TableSchema: mk(f("value", vector.Int32))})
	return cat
}

func golden(t *testing.T, path, got string) {
	t.Helper()
	if *update {
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run with -update to create it)", err)
	}
	if string(want) != got {
		t.Errorf("%s differs (run with -update after checking):\n--- got\n%s\n--- want\n%s", path, got, want)
	}
}

func TestExplainGolden(t *testing.T) {
	files, err := filepath.Glob("testdata/explain/*.sql")
	if err != nil || len(files) == 0 {
		t.Fatalf("no explain inputs: %v", err)
	}
	cat := testCatalog(t)
	for _, f := range files {
		t.Run(filepath.Base(f), func(t *testing.T) {
			src, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			stmt, err := sql.Parse(string(src))
			if err != nil {
				t.Fatal(err)
			}
			a, err := plan.Analyze(stmt, cat)
			if err != nil {
				t.Fatal(err)
			}
			ex, ok := a.(*plan.ExplainStatement)
			if !ok {
				t.Fatalf("%T, want an EXPLAIN", a)
			}
			text, err := plan.ExplainText(ex)
			if err != nil {
				t.Fatal(err)
			}
			golden(t, strings.TrimSuffix(f, ".sql")+".golden", text)
		})
	}
}
