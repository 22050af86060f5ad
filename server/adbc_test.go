package server

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/apache/arrow-adbc/go/adbc"
	adbcflight "github.com/apache/arrow-adbc/go/adbc/driver/flightsql"
	_ "github.com/apache/arrow-adbc/go/adbc/sqldriver/flightsql"
	"github.com/apache/arrow/go/v17/arrow"
	"github.com/apache/arrow/go/v17/arrow/array"
	"github.com/apache/arrow/go/v17/arrow/memory"

	"github.com/arrowstream/arrowstream/arrowstream"
	"github.com/arrowstream/arrowstream/internal/testutil"
	"github.com/arrowstream/arrowstream/internal/testutil/poisonmem"
	"github.com/arrowstream/arrowstream/memsink"
)

// sqlFixture is a server with the test engine over a catalog holding
// "orders" (epochs 0-4 of 100 rows, epochSchema).
type sqlFixture struct {
	mem    *poisonmem.Allocator
	cat    *memsink.Catalog
	eng    *testEngine
	srv    *Server
	orders *memsink.Table
}

func newSQLFixture(t testing.TB, cfg Config) *sqlFixture {
	t.Helper()
	f := &sqlFixture{mem: poisonmem.New(), cat: memsink.NewCatalog()}
	f.orders = newTable(t, f.mem, f.cat, "orders", epochSchema, memsink.Options{})
	commitEpochs(t, f.mem, f.orders, 0, 5, 100)
	system := SystemTables(fakeQueries{})
	f.eng = newTestEngine(f.cat, f.mem, system)
	cfg.Sinks, cfg.Engine, cfg.SystemTables, cfg.Ingest = f.cat, f.eng, system, f.eng
	if cfg.Allocator == nil {
		cfg.Allocator = f.mem
	}
	f.srv = startServer(t, cfg)
	t.Cleanup(func() {
		// Runs before startServer's cleanup stops the server (LIFO), so
		// stop it here first to release its streams.
		ctx, cancel := context.WithTimeout(context.Background(), testutil.Scaled(time.Minute))
		defer cancel()
		f.srv.Stop(ctx)
		f.eng.stopAll()
		for _, name := range f.cat.List() {
			if tab, ok := f.cat.Drop(name); ok {
				tab.Close()
			}
		}
		f.mem.AssertSize(t, 0)
	})
	return f
}

// fakeQueries is a QueryLister with one query and two progress reports.
type fakeQueries struct{}

func (fakeQueries) Queries() []QueryState {
	rate := 1000.0
	return []QueryState{{ID: "q-1", RunID: "r-1", Name: "orders", Status: "ACTIVE", Message: "Waiting for data to arrive",
		Recent: []*arrowstream.StreamingQueryProgress{
			{ID: "q-1", RunID: "r-1", BatchID: 3, Timestamp: "2026-01-01T00:00:00.000Z", NumInputRows: 10},
			{ID: "q-1", RunID: "r-1", BatchID: 4, Timestamp: "2026-01-01T00:00:01.000Z", NumInputRows: 20,
				InputRowsPerSecond: &rate, EventTime: map[string]string{"watermark": "2026-01-01T00:00:00.500Z"}},
		}}}
}

// adbcConn opens an ADBC Flight SQL connection to the fixture's server.
func adbcConn(t testing.TB, s *Server, opts map[string]string) adbc.Connection {
	t.Helper()
	all := map[string]string{adbc.OptionKeyURI: "grpc://" + s.Addr().String()}
	for k, v := range opts {
		all[k] = v
	}
	db, err := adbcflight.NewDriver(memory.DefaultAllocator).NewDatabase(all)
	if err != nil {
		t.Fatal(err)
	}
	cn, err := db.Open(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		cn.Close()
		db.Close()
	})
	return cn
}

// query runs sql through ADBC and returns the rows' records.
func query(ctx context.Context, cn adbc.Connection, sql string, params arrow.Record) ([]arrow.Record, error) {
	st, err := cn.NewStatement()
	if err != nil {
		return nil, err
	}
	defer st.Close()
	if err := st.SetSqlQuery(sql); err != nil {
		return nil, err
	}
	if params != nil {
		if err := st.Prepare(ctx); err != nil {
			return nil, err
		}
		if err := st.Bind(ctx, params); err != nil {
			return nil, err
		}
	}
	rdr, _, err := st.ExecuteQuery(ctx)
	if err != nil {
		return nil, err
	}
	defer rdr.Release()
	var out []arrow.Record
	for rdr.Next() {
		r := rdr.Record()
		r.Retain()
		out = append(out, r)
	}
	if err := rdr.Err(); err != nil {
		releaseAll(out)
		return nil, err
	}
	return out, nil
}

func mustQuery(t testing.TB, cn adbc.Connection, sql string) []arrow.Record {
	t.Helper()
	recs, err := query(context.Background(), cn, sql, nil)
	if err != nil {
		t.Fatalf("%s: %v", sql, err)
	}
	t.Cleanup(func() { releaseAll(recs) })
	return recs
}

func TestADBCGetObjectsAndTableSchema(t *testing.T) {
	f := newSQLFixture(t, Config{})
	cn := adbcConn(t, f.srv, nil)
	ctx := context.Background()

	rdr, err := cn.GetObjects(ctx, adbc.ObjectDepthAll, nil, nil, nil, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	objs := flattenObjects(t, rdr)
	want := []string{
		"arrowstream.default.orders(epoch,i,x)",
		"arrowstream.system.query_progress(id,run_id,name,batch_id,timestamp,batch_duration_ms,num_input_rows,input_rows_per_second,processed_rows_per_second,watermark,num_output_rows,progress_json)",
		"arrowstream.system.streaming_queries(id,run_id,name,status,message,last_epoch,watermark,input_rows_per_second,processed_rows_per_second,exception)",
	}
	if strings.Join(objs, "\n") != strings.Join(want, "\n") {
		t.Fatalf("GetObjects:\n%s\nwant\n%s", strings.Join(objs, "\n"), strings.Join(want, "\n"))
	}

	// Filters: schema pattern and table name pattern.
	sys := "sys%"
	rdr, err = cn.GetObjects(ctx, adbc.ObjectDepthTables, nil, &sys, nil, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	if objs := flattenObjects(t, rdr); len(objs) != 2 || !strings.HasPrefix(objs[0], "arrowstream.system.") {
		t.Fatalf("GetObjects schema sys%%: %v", objs)
	}

	schema, err := cn.GetTableSchema(ctx, nil, nil, "orders")
	if err != nil {
		t.Fatal(err)
	}
	if !schema.Equal(epochSchema) {
		t.Fatalf("GetTableSchema: %s, want %s", schema, epochSchema)
	}
	_, err = cn.GetTableSchema(ctx, nil, nil, "missing")
	wantADBC(t, err, adbc.StatusNotFound, "")

	types, err := cn.GetTableTypes(ctx)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for types.Next() {
		col := types.Record().Column(0).(*array.String)
		for i := range col.Len() {
			got = append(got, col.Value(i))
		}
	}
	types.Release()
	if strings.Join(got, ",") != "STREAMING TABLE,SYSTEM TABLE,TABLE" {
		t.Fatalf("table types %v", got)
	}

	info, err := cn.GetInfo(ctx, []adbc.InfoCode{adbc.InfoVendorName, adbc.InfoVendorVersion})
	if err != nil {
		t.Fatal(err)
	}
	n := int64(0)
	for info.Next() {
		n += info.Record().NumRows()
	}
	info.Release()
	if n != 2 {
		t.Fatalf("GetInfo: %d rows", n)
	}
}

// flattenObjects renders GetObjects as catalog.schema.table(columns),
// sorted.
func flattenObjects(t testing.TB, rdr array.RecordReader) []string {
	t.Helper()
	defer rdr.Release()
	var out []string
	for rdr.Next() {
		rec := rdr.Record()
		cats := rec.Column(0).(*array.String)
		schemasL := rec.Column(1).(*array.List)
		schemas := schemasL.ListValues().(*array.Struct)
		for c := range int(rec.NumRows()) {
			s0, s1 := schemasL.ValueOffsets(c)
			for s := s0; s < s1; s++ {
				sname := schemas.Field(0).(*array.String).Value(int(s))
				tablesL := schemas.Field(1).(*array.List)
				tables := tablesL.ListValues().(*array.Struct)
				t0, t1 := tablesL.ValueOffsets(int(s))
				for tb := t0; tb < t1; tb++ {
					name := tables.Field(0).(*array.String).Value(int(tb))
					colsL := tables.Field(2).(*array.List)
					var cols []string
					if colsL.IsValid(int(tb)) {
						colsS := colsL.ListValues().(*array.Struct)
						c0, c1 := colsL.ValueOffsets(int(tb))
						for k := c0; k < c1; k++ {
							cols = append(cols, colsS.Field(0).(*array.String).Value(int(k)))
						}
					}
					entry := fmt.Sprintf("%s.%s.%s", cats.Value(c), sname, name)
					if len(cols) > 0 {
						entry += "(" + strings.Join(cols, ",") + ")"
					}
					out = append(out, entry)
				}
			}
		}
	}
	if err := rdr.Err(); err != nil {
		t.Fatal(err)
	}
	sort.Strings(out)
	return out
}

// wantADBC checks an error's ADBC status and that its message contains
// msg.
func wantADBC(t testing.TB, err error, code adbc.Status, msg string) {
	t.Helper()
	var ae adbc.Error
	if !errors.As(err, &ae) {
		t.Fatalf("error %v (%T) is not an adbc.Error", err, err)
	}
	if ae.Code != code || !strings.Contains(ae.Msg, msg) {
		t.Fatalf("got %s %q, want %s containing %q", ae.Code, ae.Msg, code, msg)
	}
}

func TestADBCQueries(t *testing.T) {
	f := newSQLFixture(t, Config{})
	cn := adbcConn(t, f.srv, nil)

	recs := mustQuery(t, cn, "SELECT * FROM orders")
	if _, n := epochCounts(recs); n != 500 {
		t.Fatalf("SELECT *: %d rows", n)
	}
	recs = mustQuery(t, cn, "select * from ORDERS where epoch = 3")
	if m, n := epochCounts(recs); n != 100 || m[3] != 100 {
		t.Fatalf("filter: %d rows %v", n, m)
	}
	recs = mustQuery(t, cn, "SELECT count(*) FROM orders")
	if v := recs[0].Column(0).(*array.Int64).Value(0); v != 500 {
		t.Fatalf("count(*) = %d", v)
	}
	recs = mustQuery(t, cn, "SELECT * FROM system.streaming_queries")
	if recs[0].NumRows() != 1 || recs[0].Column(5).(*array.Int64).Value(0) != 4 {
		t.Fatalf("system.streaming_queries: %v", recs[0])
	}
	recs = mustQuery(t, cn, "SELECT * FROM system.query_progress")
	if recs[0].NumRows() != 2 {
		t.Fatalf("system.query_progress: %d rows", recs[0].NumRows())
	}

	st, _ := cn.NewStatement()
	defer st.Close()
	st.SetSqlQuery("SELECT * FROM orders")
	schema, err := st.(adbc.StatementExecuteSchema).ExecuteSchema(context.Background())
	if err != nil || !schema.Equal(epochSchema) {
		t.Fatalf("ExecuteSchema: %v %v", schema, err)
	}
}

func TestADBCPreparedStatementExecutesThreeTimes(t *testing.T) {
	f := newSQLFixture(t, Config{})
	cn := adbcConn(t, f.srv, nil)
	ctx := context.Background()
	st, err := cn.NewStatement()
	if err != nil {
		t.Fatal(err)
	}
	if err := st.SetSqlQuery("SELECT * FROM orders WHERE i = ?"); err != nil {
		t.Fatal(err)
	}
	if err := st.Prepare(ctx); err != nil {
		t.Fatal(err)
	}
	ps, err := st.GetParameterSchema()
	if err != nil || ps.NumFields() != 1 {
		t.Fatalf("parameter schema %v %v", ps, err)
	}
	if f.srv.sql.prepared.len() != 1 {
		t.Fatalf("%d prepared statements on the server", f.srv.sql.prepared.len())
	}
	for _, v := range []int64{7, 42, 99} {
		params := int64Rec(memory.DefaultAllocator, arrow.NewSchema([]arrow.Field{{Name: "i", Type: arrow.PrimitiveTypes.Int64}}, nil), v)
		if err := st.Bind(ctx, params); err != nil {
			t.Fatal(err)
		}
		params.Release()
		rdr, _, err := st.ExecuteQuery(ctx)
		if err != nil {
			t.Fatal(err)
		}
		rows := 0
		for rdr.Next() {
			rec := rdr.Record()
			for _, i := range rec.Column(1).(*array.Int64).Int64Values() {
				if i != v {
					t.Fatalf("i = %d in the result for %d", i, v)
				}
				rows++
			}
		}
		if err := rdr.Err(); err != nil {
			t.Fatal(err)
		}
		rdr.Release()
		if rows != 5 { // one row per epoch
			t.Fatalf("i = %d: %d rows, want 5", v, rows)
		}
	}
	if err := st.Close(); err != nil {
		t.Fatal(err)
	}
	if f.srv.sql.prepared.len() != 0 {
		t.Fatalf("Close left %d prepared statements", f.srv.sql.prepared.len())
	}

	// Executing without binding a value fails clearly.
	st, _ = cn.NewStatement()
	defer st.Close()
	st.SetSqlQuery("SELECT * FROM orders WHERE i = ?")
	if err := st.Prepare(ctx); err != nil {
		t.Fatal(err)
	}
	_, _, err = st.ExecuteQuery(ctx)
	wantADBC(t, err, adbc.StatusInvalidArgument, "no values are bound")
}

func TestADBCErrorsCarryServerMessages(t *testing.T) {
	f := newSQLFixture(t, Config{})
	cn := adbcConn(t, f.srv, nil)
	ctx := context.Background()
	_, err := query(ctx, cn, "SELECT * FROM missing", nil)
	wantADBC(t, err, adbc.StatusNotFound, `table or view "missing"`)
	_, err = query(ctx, cn, "SELEC nonsense", nil)
	wantADBC(t, err, adbc.StatusInvalidArgument, `syntax error in "SELEC nonsense"`)
	exec := func(sql string) error {
		st, _ := cn.NewStatement()
		defer st.Close()
		st.SetSqlQuery(sql)
		_, err := st.ExecuteUpdate(ctx)
		return err
	}
	if err := exec("CREATE TABLE t1 (a bigint) USING memory"); err != nil {
		t.Fatal(err)
	}
	wantADBC(t, exec("CREATE TABLE T1 (a bigint) USING memory"), adbc.StatusAlreadyExists, "T1")
	wantADBC(t, exec("DROP TABLE nope"), adbc.StatusNotFound, "nope")
	if err := exec("DROP TABLE IF EXISTS nope"); err != nil {
		t.Fatal(err)
	}
	_, err = query(ctx, cn, "SELECT panic", nil)
	wantADBC(t, err, adbc.StatusInternal, "deliberate panic")
	// The server is still up.
	mustQuery(t, cn, "SELECT count(*) FROM orders")
}

func TestADBCStreamingTableLifecycle(t *testing.T) {
	f := newSQLFixture(t, Config{})
	cn := adbcConn(t, f.srv, nil)
	ctx := context.Background()
	st, _ := cn.NewStatement()
	defer st.Close()
	st.SetSqlQuery("CREATE STREAMING TABLE ticks AS SELECT * FROM STREAM rate")
	if _, err := st.ExecuteUpdate(ctx); err != nil {
		t.Fatal(err)
	}
	if !f.eng.running("ticks") {
		t.Fatal("CREATE STREAMING TABLE started no query")
	}
	// The table fills with whole 10-row epochs.
	waitFor(t, 5*time.Second, "ticks to fill", func() bool {
		recs, err := query(ctx, cn, "SELECT * FROM ticks", nil)
		if err != nil {
			t.Fatal(err)
		}
		defer releaseAll(recs)
		if err := checkWholeEpochs(recs, 10); err != nil {
			t.Fatal(err)
		}
		_, n := epochCounts(recs)
		return n >= 50
	})
	// DDL sent as a query (Python DB-API execute) returns a row count.
	recs := mustQuery(t, cn, "DROP TABLE ticks")
	if recs[0].Schema().Field(0).Name != "rows_affected" || recs[0].NumRows() != 1 {
		t.Fatalf("DROP as query returned %v", recs[0])
	}
	if f.eng.running("ticks") {
		t.Fatal("DROP TABLE did not stop the query")
	}
	_, err := query(ctx, cn, "SELECT * FROM ticks", nil)
	wantADBC(t, err, adbc.StatusNotFound, "ticks")
}

func TestADBCDatabaseSQLAdapter(t *testing.T) {
	f := newSQLFixture(t, Config{})
	db, err := sql.Open("flightsql", "uri=grpc://"+f.srv.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	// ADBC v1.1.0's adapter binds arguments of db.Query without preparing
	// ("must call Prepare before calling Bind"): prepare explicitly.
	ps, err := db.Prepare("SELECT * FROM orders WHERE i = ?")
	if err != nil {
		t.Fatal(err)
	}
	defer ps.Close()
	rows, err := ps.Query(int64(5))
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for rows.Next() {
		var epoch, i int64
		var x float64
		if err := rows.Scan(&epoch, &i, &x); err != nil {
			t.Fatal(err)
		}
		if i != 5 || x != 2.5 {
			t.Fatalf("row (%d, %d, %g)", epoch, i, x)
		}
		n++
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	rows.Close()
	if n != 5 {
		t.Fatalf("%d rows", n)
	}
	if _, err := db.Exec("CREATE STREAMING TABLE s2 AS SELECT 1"); err != nil {
		t.Fatal(err)
	}
	var count int64
	waitFor(t, 5*time.Second, "s2 to fill", func() bool {
		if err := db.QueryRow("SELECT count(*) FROM s2").Scan(&count); err != nil {
			t.Fatal(err)
		}
		return count > 0 && count%10 == 0
	})
	if _, err := db.Exec("DROP TABLE s2"); err != nil {
		t.Fatal(err)
	}
	err = db.QueryRow("SELECT count(*) FROM s2").Scan(&count)
	if err == nil || !strings.Contains(err.Error(), "s2") {
		t.Fatalf("query of a dropped table: %v", err)
	}
}
