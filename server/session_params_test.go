package server

import (
	"context"
	"slices"
	"strings"
	"testing"

	"github.com/apache/arrow/go/v17/arrow"
	"github.com/apache/arrow/go/v17/arrow/array"
	"github.com/apache/arrow/go/v17/arrow/flight/flightsql"
	"github.com/apache/arrow/go/v17/arrow/memory"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"

	"github.com/arrowstream/arrowstream/sql"
	vt "github.com/arrowstream/arrowstream/vector/vectortest"
)

// paramRec is a parameter batch: one column per parameter, one row per
// execution.
func paramRec(t testing.TB, mem memory.Allocator, ids []int64, names []string) arrow.Record {
	t.Helper()
	schema := arrow.NewSchema([]arrow.Field{{Name: "id", Type: arrow.PrimitiveTypes.Int64, Nullable: true},
		{Name: "name", Type: arrow.BinaryTypes.String, Nullable: true}}, nil)
	b := array.NewRecordBuilder(mem, schema)
	defer b.Release()
	b.Field(0).(*array.Int64Builder).AppendValues(ids, nil)
	b.Field(1).(*array.StringBuilder).AppendValues(names, nil)
	return b.NewRecord()
}

// TestPreparedParametersADBC: a prepared statement with $1 and $2 over
// the session engine reports its parameter schema; Bind of a batch of
// two rows gives one result per row, in order; BindStream likewise; a
// value that looks like SQL is a value; an unbound statement is refused.
func TestPreparedParametersADBC(t *testing.T) {
	_, srv := startSessionServer(t)
	cn := adbcConn(t, srv, nil)
	ctx := context.Background()
	execSQL(t, cn, "CREATE TABLE people (id BIGINT, name STRING) USING parquet")
	execSQL(t, cn, "INSERT INTO people VALUES (1, 'ann'), (2, 'bob'), (3, 'x\\' OR 1=1 --')")
	st, err := cn.NewStatement()
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	if err := st.SetSqlQuery("SELECT id, name FROM people WHERE id = $1 OR name = $2 ORDER BY id"); err != nil {
		t.Fatal(err)
	}
	if err := st.Prepare(ctx); err != nil {
		t.Fatal(err)
	}
	ps, err := st.GetParameterSchema()
	if err != nil || ps.NumFields() != 2 {
		t.Fatalf("parameter schema %v %v", ps, err)
	}
	params := paramRec(t, memory.DefaultAllocator, []int64{1, 0}, []string{"nobody", "x' OR 1=1 --"})
	defer params.Release()
	if err := st.Bind(ctx, params); err != nil {
		t.Fatal(err)
	}
	rdr, _, err := st.ExecuteQuery(ctx)
	if err != nil {
		t.Fatal(err)
	}
	var got []vt.Row
	for rdr.Next() {
		got = append(got, vt.RowsOf(rdr.Record())...)
	}
	rdr.Release()
	want := []vt.Row{{int64(1), "ann"}, {int64(3), "x' OR 1=1 --"}}
	if len(got) != 2 || got[0][0] != want[0][0] || got[1][1] != want[1][1] {
		t.Fatalf("one result per parameter row: got %v, want %v", got, want)
	}
	// BindStream: the rows of a reader, one execution each.
	params2 := paramRec(t, memory.DefaultAllocator, []int64{2}, []string{""})
	defer params2.Release()
	r, err := array.NewRecordReader(params2.Schema(), []arrow.Record{params2})
	if err != nil {
		t.Fatal(err)
	}
	if err := st.BindStream(ctx, r); err != nil {
		t.Fatal(err)
	}
	rdr, _, err = st.ExecuteQuery(ctx)
	if err != nil {
		t.Fatal(err)
	}
	got = nil
	for rdr.Next() {
		got = append(got, vt.RowsOf(rdr.Record())...)
	}
	rdr.Release()
	if len(got) != 1 || got[0][1] != "bob" {
		t.Fatalf("BindStream: %v", got)
	}
	// Without values: refused, naming the parameters.
	st2, _ := cn.NewStatement()
	defer st2.Close()
	_ = st2.SetSqlQuery("SELECT id FROM people WHERE id = $1")
	if err := st2.Prepare(ctx); err != nil {
		t.Fatal(err)
	}
	if _, _, err := st2.ExecuteQuery(ctx); err == nil || !strings.Contains(err.Error(), "parameters") {
		t.Fatalf("unbound: %v", err)
	}
	// Executed directly, without preparing: refused.
	if _, err := query(ctx, cn, "SELECT id FROM people WHERE id = $1", nil); err == nil {
		t.Fatal("direct execution with a placeholder succeeded")
	}
}

// TestPreparedParametersFlightSQLClient binds through arrow-go's flightsql
// client: the parameter schema, SetParameters of typed values, results
// per row.
func TestPreparedParametersFlightSQLClient(t *testing.T) {
	_, srv := startSessionServer(t)
	cn := adbcConn(t, srv, nil)
	execSQL(t, cn, "CREATE TABLE people (id BIGINT, name STRING) USING parquet")
	execSQL(t, cn, "INSERT INTO people VALUES (1, 'ann'), (2, 'bob')")
	ctx := context.Background()
	cl, err := flightsql.NewClient(srv.Addr().String(), nil, nil, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	ps, err := cl.Prepare(ctx, "SELECT name, $2 AS tag FROM people WHERE id = $1")
	if err != nil {
		t.Fatal(err)
	}
	defer ps.Close(ctx)
	if n := ps.ParameterSchema().NumFields(); n != 2 {
		t.Fatalf("parameter schema: %v", ps.ParameterSchema())
	}
	params := paramRec(t, memory.DefaultAllocator, []int64{2, 1}, []string{"first", "second"})
	defer params.Release()
	ps.SetParameters(params)
	info, err := ps.Execute(ctx)
	if err != nil {
		t.Fatal(err)
	}
	var got []vt.Row
	for _, ep := range info.Endpoint {
		rdr, err := cl.DoGet(ctx, ep.Ticket)
		if err != nil {
			t.Fatal(err)
		}
		for rdr.Next() {
			got = append(got, vt.RowsOf(rdr.Record())...)
		}
		rdr.Release()
	}
	if len(got) != 2 || got[0][0] != "bob" || got[0][1] != "first" || got[1][0] != "ann" || got[1][1] != "second" {
		t.Fatalf("results: %v", got)
	}
}

// TestParseParamsTypes binds every parameter type to a literal and back.
func TestParseParamsTypes(t *testing.T) {
	if _, err := sql.Parse("SELECT $0"); err == nil {
		t.Fatal("$0 parsed")
	}
	st, err := sql.Parse("SELECT $1 + $12")
	if err != nil || !strings.Contains(sql.Format(st), "$1 + $12") {
		t.Fatalf("unbound placeholders: %v %v", st, err)
	}
	_, n, err := parseParams(Request{SQL: "SELECT '$5', $3, `$9`"})
	if err != nil || n != 3 {
		t.Fatalf("count: %d %v", n, err)
	}
	if !slices.Equal([]string{paramSchema(2, nil).Field(1).Name}, []string{"$2"}) {
		t.Fatal("parameter names")
	}
}
