package plan_test

import (
	"context"
	"errors"
	"testing"

	"github.com/arrowstream/arrowstream/plan"
	"github.com/arrowstream/arrowstream/sql"
	"github.com/arrowstream/arrowstream/vector"
	vt "github.com/arrowstream/arrowstream/vector/vectortest"
)

// runStatement parses and analyzes one statement against cat.
func runStatement(t *testing.T, cat plan.Catalog, text string) (plan.Statement, error) {
	t.Helper()
	stmt, err := sql.Parse(text)
	if err != nil {
		return nil, err
	}
	return plan.Analyze(stmt, cat)
}

func queryRows(t *testing.T, cat plan.Catalog, text string) []vt.Row {
	t.Helper()
	mem := vt.NewAllocator(t)
	op, err := plan.ExecuteSQL(context.Background(), mem, cat, text, nil)
	if err != nil {
		t.Fatalf("%s: %v", text, err)
	}
	defer op.Close()
	recs, err := vector.Drain(context.Background(), op)
	if err != nil {
		t.Fatalf("%s: %v", text, err)
	}
	defer func() {
		for _, r := range recs {
			r.Release()
		}
	}()
	return vt.SortRows(vt.RowsOf(recs...))
}

func TestTemporaryView(t *testing.T) {
	cat := plan.NewMemoryCatalog()
	st, err := runStatement(t, cat, "CREATE TEMPORARY VIEW v(n, s) AS SELECT * FROM VALUES (1, 'a'), (2, 'b')")
	if err != nil {
		t.Fatal(err)
	}
	cv, ok := st.(*plan.CreateViewStatement)
	if !ok {
		t.Fatalf("got %T, want a CreateViewStatement", st)
	}
	cat.Register(cv.View.Name, cv.View)
	got := queryRows(t, cat, "SELECT s, n * 10 FROM v WHERE n > 1")
	if want := []vt.Row{{"b", int32(20)}}; !vt.RowsEqual(want, got) {
		t.Fatalf("got %v, want %v", got, want)
	}
	// A view over a view, read twice in one query (a self-join).
	st, err = runStatement(t, cat, "CREATE OR REPLACE TEMPORARY VIEW w AS SELECT n FROM v")
	if err != nil {
		t.Fatal(err)
	}
	cat.Register("w", st.(*plan.CreateViewStatement).View)
	got = queryRows(t, cat, "SELECT a.n, b.n FROM w a JOIN w b ON a.n < b.n")
	if want := []vt.Row{{int32(1), int32(2)}}; !vt.RowsEqual(want, got) {
		t.Fatalf("got %v, want %v", got, want)
	}
	if _, err := runStatement(t, cat, "CREATE TEMPORARY VIEW x(a) AS SELECT 1, 2"); err == nil {
		t.Fatal("a column list of the wrong length was accepted")
	}
	if _, err := runStatement(t, cat, "SELECT * FROM STREAM v"); !errors.Is(err, plan.ErrStreaming) {
		t.Fatalf("STREAM over a batch view: got %v, want ErrStreaming", err)
	}
}

func TestInsertInto(t *testing.T) {
	cat := plan.NewMemoryCatalog()
	tbl := plan.NewStaticTable(fieldsOf("a", vector.Int64, "b", vector.String))
	defer tbl.Release()
	cat.Register("t", tbl)
	mem := vt.NewAllocator(t)
	insert := func(text string) error {
		st, err := runStatement(t, cat, text)
		if err != nil {
			return err
		}
		ins, ok := st.(*plan.InsertStatement)
		if !ok {
			t.Fatalf("%s: got %T, want an InsertStatement", text, st)
		}
		return plan.ExecuteInsert(context.Background(), mem, ins)
	}
	// Values are cast to the table's types by position.
	if err := insert("INSERT INTO t VALUES (1, 'x'), (2, NULL)"); err != nil {
		t.Fatal(err)
	}
	if err := insert("INSERT INTO TABLE t SELECT a + 10, upper(b) FROM t WHERE b IS NOT NULL"); err != nil {
		t.Fatal(err)
	}
	got := queryRows(t, cat, "SELECT a, b FROM t")
	want := vt.SortRows([]vt.Row{{int64(1), "x"}, {int64(2), nil}, {int64(11), "X"}})
	if !vt.RowsEqual(want, got) {
		t.Fatalf("got %v, want %v", got, want)
	}
	if err := insert("INSERT INTO t VALUES (1)"); err == nil {
		t.Fatal("an insert with too few columns was accepted")
	}
	cat.Register("view", &plan.View{Name: "view", Plan: mustPlan(t, cat, "SELECT 1 AS a")})
	if _, err := runStatement(t, cat, "INSERT INTO view VALUES (1)"); !errors.Is(err, plan.ErrUnsupported) {
		t.Fatalf("insert into a view: got %v, want ErrUnsupported", err)
	}
}

func mustPlan(t *testing.T, cat plan.Catalog, text string) plan.Node {
	t.Helper()
	n, err := plan.AnalyzeSQL(text, cat)
	if err != nil {
		t.Fatal(err)
	}
	return n
}

func TestCheckSetting(t *testing.T) {
	for _, c := range []struct {
		key, value string
		ok         bool
	}{
		{"spark.sql.shuffle.partitions", "4", true},
		{"spark.sql.groupByAliases", "true", true},
		{"spark.sql.groupByAliases", "false", false},
		{"spark.sql.crossJoin.enabled", "true", true},
		{"spark.sql.crossJoin.enabled", "false", false},
		{"spark.sql.legacy.allowParameterlessCount", "false", true},
		{"spark.sql.legacy.allowParameterlessCount", "true", true},
		{"spark.sql.legacy.interval.enabled", "true", false},
		{"spark.sql.no.such.setting", "1", false},
	} {
		err := plan.CheckSetting(c.key, c.value)
		if c.ok != (err == nil) {
			t.Errorf("CheckSetting(%s, %s) = %v, want ok=%v", c.key, c.value, err, c.ok)
		}
		if err != nil && !errors.Is(err, plan.ErrUnsupported) {
			t.Errorf("CheckSetting(%s, %s) = %v, want ErrUnsupported", c.key, c.value, err)
		}
	}
}
