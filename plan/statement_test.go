package plan_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/apache/arrow/go/v17/arrow"
	"github.com/apache/arrow/go/v17/arrow/memory"

	"github.com/arrowstream/arrowstream/internal/testutil/poisonmem"
	"github.com/arrowstream/arrowstream/plan"
	"github.com/arrowstream/arrowstream/sql"
	"github.com/arrowstream/arrowstream/vector"
	vt "github.com/arrowstream/arrowstream/vector/vectortest"
)

// sinkTable imitates a memory-sink table: epoch e holds the rows
// {k: "e<e>", n: e}; the table as of version v has epochs 0..v.
type sinkTable struct {
	latest int64
}

var sinkSchema = fieldsOf("k", vector.String, "n", vector.Int64)

func (s *sinkTable) Schema() *arrow.Schema { return sinkSchema }
func (s *sinkTable) Streaming() bool       { return false }

func (s *sinkTable) rows(mem memory.Allocator, schema *arrow.Schema, from, to int64, changes bool) (vector.Operator, error) {
	var rows []vt.Row
	for e := from; e <= to; e++ {
		r := vt.Row{fmt.Sprintf("e%d", e), e}
		if changes {
			r = append(r, e, arrow.Timestamp(e*1_000_000))
		}
		rows = append(rows, r)
	}
	rec := vt.BuildRecord(mem, schema, rows)
	defer rec.Release()
	return vector.NewScan(schema, rec)
}

func (s *sinkTable) Scan(_ context.Context, mem memory.Allocator) (vector.Operator, error) {
	return s.rows(mem, sinkSchema, 0, s.latest, false)
}

func (s *sinkTable) ScanVersion(_ context.Context, mem memory.Allocator, v int64) (vector.Operator, error) {
	if v > s.latest {
		return nil, fmt.Errorf("epoch %d is not committed", v)
	}
	return s.rows(mem, sinkSchema, 0, v, false)
}

func (s *sinkTable) ScanChanges(_ context.Context, mem memory.Allocator, from, to int64) (vector.Operator, error) {
	if to < 0 {
		to = s.latest
	}
	return s.rows(mem, plan.ChangesSchema(sinkSchema), from+1, to, true)
}

func runRows(t *testing.T, cat plan.Catalog, q string) ([]string, error) {
	t.Helper()
	mem := poisonmem.New()
	defer mem.AssertSize(t, 0)
	n, err := plan.AnalyzeSQL(q, cat)
	if err != nil {
		return nil, err
	}
	if n, err = plan.Optimize(n); err != nil {
		return nil, err
	}
	op, err := plan.Execute(context.Background(), mem, n, nil)
	if err != nil {
		return nil, err
	}
	recs, err := plan.DrainAndClose(context.Background(), op)
	defer func() {
		for _, r := range recs {
			r.Release()
		}
	}()
	return resultRows(recs), err
}

func TestTimeTravelAndChanges(t *testing.T) {
	cat := plan.NewMemoryCatalog()
	cat.Register("counts", &sinkTable{latest: 4})
	for _, c := range []struct{ q, want string }{
		{"SELECT k FROM counts", "e0,e1,e2,e3,e4"},
		{"SELECT k FROM counts VERSION AS OF 2", "e0,e1,e2"},
		{"SELECT count(*) FROM counts FOR VERSION AS OF '1'", "2"},
		{"SELECT k, _epoch FROM table_changes('counts', 2)", "e3 | 3,e4 | 4"},
		{"SELECT k, _commit_timestamp FROM table_changes('counts', 1, 2)", "e2 | 1970-01-01 00:00:02"},
		{"SELECT c.n FROM table_changes('counts', 3) AS c WHERE c._epoch > 3", "4"},
		{"SELECT v.k FROM counts VERSION AS OF 1 v JOIN counts c ON v.n = c.n", "e0,e1"},
	} {
		got, err := runRows(t, cat, c.q)
		if err != nil {
			t.Errorf("%s: %v", c.q, err)
			continue
		}
		if s := strings.Join(got, ","); s != c.want {
			t.Errorf("%s = %s, want %s", c.q, s, c.want)
		}
	}
	if _, err := runRows(t, cat, "SELECT k FROM counts VERSION AS OF 9"); err == nil || !strings.Contains(err.Error(), "epoch 9 is not committed") {
		t.Errorf("missing version: %v", err)
	}
	if _, err := runRows(t, cat, "SELECT * FROM table_changes('counts', 'x')"); err == nil {
		t.Error("table_changes with a string epoch succeeded")
	}
	if _, err := runRows(t, cat, "SELECT * FROM table_changes('nope', 1)"); !errors.Is(err, plan.ErrUnresolved) {
		t.Errorf("table_changes of an unknown table: %v", err)
	}
}

func TestAnalyzeStatements(t *testing.T) {
	cat := testCatalog(t)
	parse := func(q string) sql.Statement {
		st, err := sql.Parse(q)
		if err != nil {
			t.Fatal(err)
		}
		return st
	}
	st, err := plan.Analyze(parse("CREATE OR REFRESH STREAMING TABLE counts TBLPROPERTIES ('outputMode' = 'update', 'trigger' = '1 second') AS SELECT value, count(*) FROM STREAM input GROUP BY value"), cat)
	if err != nil {
		t.Fatal(err)
	}
	cst, ok := st.(*plan.StreamingTableStatement)
	if !ok || cst.Name != "counts" || !cst.OrRefresh || cst.Properties["outputmode"] != "update" || cst.Properties["trigger"] != "1 second" || !cst.Query.IsStreaming() {
		t.Errorf("streaming table statement %+v", st)
	}
	for _, q := range []string{"DROP TABLE IF EXISTS x", "SHOW TABLES", "DESCRIBE t", "DESCRIBE HISTORY counts", "CREATE TABLE r USING rate"} {
		st, err := plan.Analyze(parse(q), cat)
		if _, ok := st.(*plan.CommandStatement); err != nil || !ok {
			t.Errorf("%s: %T, %v", q, st, err)
		}
	}
	if _, err := plan.Analyze(parse("EXPLAIN SELECT nope FROM t"), cat); !errors.Is(err, plan.ErrUnresolved) {
		t.Errorf("EXPLAIN of a bad query: %v", err)
	}
	if _, err := plan.AnalyzeSQL("DROP TABLE t", cat); !errors.Is(err, plan.ErrUnsupported) {
		t.Errorf("AnalyzeSQL of a command: %v", err)
	}
	if _, err := plan.Analyze(nil, cat); err == nil {
		t.Error("nil statement accepted")
	}
}

// TestCaseInsensitiveCatalog: table names and columns resolve in any case;
// the catalog lists names for suggestions.
func TestCaseInsensitiveCatalog(t *testing.T) {
	cat := testCatalog(t)
	if _, err := plan.AnalyzeSQL("SELECT T.A, U.D FROM T JOIN U ON T.A = U.A", cat); err != nil {
		t.Error(err)
	}
	if !cat.Drop("U") || cat.Drop("u") {
		t.Error("Drop is not case-insensitive")
	}
	if got := strings.Join(cat.TableNames(), ","); got != "clicks,input,t" {
		t.Errorf("names %s", got)
	}
	if _, err := cat.Table("u"); !errors.Is(err, plan.ErrTableNotFound) {
		t.Errorf("dropped table: %v", err)
	}
}

// TestValuesAndNoFrom covers literal relations.
func TestValuesAndNoFrom(t *testing.T) {
	mem := vt.NewAllocator(t)
	v, err := plan.NewValues(fieldsOf("x", vector.Int64, "s", vector.String), [][]any{{int64(1), "a"}, {nil, "b"}})
	if err != nil {
		t.Fatal(err)
	}
	op, err := plan.Execute(context.Background(), mem, v, nil)
	if err != nil {
		t.Fatal(err)
	}
	recs, err := plan.DrainAndClose(context.Background(), op)
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(resultRows(recs), ","); got != "1 | a,NULL | b" {
		t.Errorf("values: %s", got)
	}
	for _, r := range recs {
		r.Release()
	}
	if _, err := plan.NewValues(fieldsOf("x", vector.Int64), [][]any{{1, 2}}); err == nil {
		t.Error("a row of the wrong width was accepted")
	}
}

// TestSystemTables: qualified names reach the catalog joined with dots.
func TestSystemTables(t *testing.T) {
	mem := poisonmem.New()
	defer mem.AssertSize(t, 0)
	schema := fieldsOf("name", vector.String, "status", vector.String)
	rec := vt.BuildRecord(mem, schema, []vt.Row{{"q1", "ACTIVE"}, {"q2", "TERMINATED"}})
	mt, err := plan.NewMemTable(schema, rec)
	rec.Release()
	if err != nil {
		t.Fatal(err)
	}
	defer mt.Release()
	cat := plan.NewMemoryCatalog()
	cat.Register("system.streaming_queries", mt)
	got, err := runRows(t, cat, "SELECT q.name FROM system.streaming_queries q WHERE status = 'ACTIVE'")
	if err != nil || strings.Join(got, ",") != "q1" {
		t.Errorf("got %v, %v", got, err)
	}
	got, err = runRows(t, cat, "SELECT streaming_queries.status FROM SYSTEM.STREAMING_QUERIES WHERE name = 'q2'")
	if err != nil || strings.Join(got, ",") != "TERMINATED" {
		t.Errorf("got %v, %v", got, err)
	}
}
