package server

import (
	"context"
	"strings"
	"testing"

	"github.com/apache/arrow/go/v17/arrow"
	"github.com/apache/arrow/go/v17/arrow/array"
	"github.com/apache/arrow/go/v17/arrow/flight"
	"github.com/apache/arrow/go/v17/arrow/flight/flightsql"
	pb "github.com/apache/arrow/go/v17/arrow/flight/gen/flight"
	"github.com/apache/arrow/go/v17/arrow/ipc"
	"github.com/apache/arrow/go/v17/arrow/memory"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/protobuf/proto"
)

// push sends recs to table with a plain Flight DoPut and returns the last
// acknowledged row count.
func push(ctx context.Context, c flight.Client, table string, schema *arrow.Schema, recs ...arrow.Record) (int64, error) {
	stream, err := c.DoPut(ctx)
	if err != nil {
		return 0, err
	}
	w := flight.NewRecordWriter(stream, ipc.WithSchema(schema))
	w.SetFlightDescriptor(&flight.FlightDescriptor{Type: flight.DescriptorPATH, Path: []string{table}})
	for _, r := range recs {
		if err := w.Write(r); err != nil {
			break // the server's error arrives on Recv
		}
	}
	w.Close()
	stream.CloseSend()
	var acked int64
	for {
		res, err := stream.Recv()
		if err != nil {
			if err.Error() == "EOF" {
				return acked, nil
			}
			return acked, err
		}
		var upd pb.DoPutUpdateResult
		if err := proto.Unmarshal(res.AppMetadata, &upd); err == nil {
			acked = upd.RecordCount
		}
	}
}

func TestDoPutIngest(t *testing.T) {
	f := newSQLFixture(t, Config{})
	cn := adbcConn(t, f.srv, nil)
	st, _ := cn.NewStatement()
	st.SetSqlQuery("CREATE TABLE clicks (user_id bigint, url string) USING memory")
	if _, err := st.ExecuteUpdate(context.Background()); err != nil {
		t.Fatal(err)
	}
	st.Close()
	schema := arrow.NewSchema([]arrow.Field{{Name: "user_id", Type: arrow.PrimitiveTypes.Int64}, {Name: "url", Type: arrow.BinaryTypes.String}}, nil)
	build := func(n int) arrow.Record {
		b := array.NewRecordBuilder(memory.DefaultAllocator, schema)
		defer b.Release()
		for i := range n {
			b.Field(0).(*array.Int64Builder).Append(int64(i))
			b.Field(1).(*array.StringBuilder).Append("/p")
		}
		return b.NewRecord()
	}
	r1, r2 := build(3), build(4)
	defer r1.Release()
	defer r2.Release()
	c := flightClient(t, f.srv)
	ctx := context.Background()
	n, err := push(ctx, c, "clicks", schema, r1, r2)
	if err != nil || n != 7 {
		t.Fatalf("push: %d rows acknowledged, %v", n, err)
	}
	recs := mustQuery(t, cn, "SELECT count(*) FROM clicks")
	if v := recs[0].Column(0).(*array.Int64).Value(0); v != 7 {
		t.Fatalf("count after ingest: %d", v)
	}

	// A schema mismatch is rejected before any row, naming the columns.
	bad := arrow.NewSchema([]arrow.Field{{Name: "user_id", Type: arrow.BinaryTypes.String}, {Name: "ref", Type: arrow.BinaryTypes.String}}, nil)
	bb := array.NewRecordBuilder(memory.DefaultAllocator, bad)
	bb.Field(0).(*array.StringBuilder).Append("x")
	bb.Field(1).(*array.StringBuilder).Append("y")
	br := bb.NewRecord()
	bb.Release()
	defer br.Release()
	_, err = push(ctx, c, "clicks", bad, br)
	wantCode(t, err, codes.InvalidArgument)
	for _, want := range []string{`column "user_id" is string, the table has bigint`, `missing column "url" (string)`, `unexpected column "ref"`} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("mismatch error %q lacks %q", err, want)
		}
	}
	_, err = push(ctx, c, "nope", schema, r1)
	wantCode(t, err, codes.NotFound)
	_, err = push(ctx, c, "orders", schema, r1) // a sink table, not an ingest table
	wantCode(t, err, codes.NotFound)

	// Flight SQL bulk ingest into the same table.
	cl, err := flightsql.NewClient(f.srv.Addr().String(), nil, nil, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	rdr, err := array.NewRecordReader(schema, []arrow.Record{r1})
	if err != nil {
		t.Fatal(err)
	}
	defer rdr.Release()
	got, err := cl.ExecuteIngest(ctx, rdr, &flightsql.ExecuteIngestOpts{Table: "clicks",
		TableDefinitionOptions: &flightsql.TableDefinitionOptions{IfExists: flightsql.TableDefinitionOptionsTableExistsOptionAppend}})
	if err != nil || got != 3 {
		t.Fatalf("ExecuteIngest: %d rows, %v", got, err)
	}
	recs = mustQuery(t, cn, "SELECT count(*) FROM clicks")
	if v := recs[0].Column(0).(*array.Int64).Value(0); v != 10 {
		t.Fatalf("count after bulk ingest: %d", v)
	}

	// Without ingest targets DoPut answers Unimplemented.
	s := startServer(t, Config{Sinks: f.cat})
	_, err = push(ctx, flightClient(t, s), "clicks", schema, r1)
	wantCode(t, err, codes.Unimplemented)
}

func TestCheckIngestSchema(t *testing.T) {
	want := arrow.NewSchema([]arrow.Field{{Name: "a", Type: arrow.PrimitiveTypes.Int64}, {Name: "b", Type: arrow.BinaryTypes.String}}, nil)
	same := arrow.NewSchema([]arrow.Field{{Name: "a", Type: arrow.PrimitiveTypes.Int64, Nullable: true}, {Name: "b", Type: arrow.BinaryTypes.String}}, nil)
	if err := checkIngestSchema(same, want); err != nil {
		t.Fatalf("nullability rejected: %v", err)
	}
	swapped := arrow.NewSchema([]arrow.Field{{Name: "b", Type: arrow.BinaryTypes.String}, {Name: "a", Type: arrow.PrimitiveTypes.Int64}}, nil)
	if err := checkIngestSchema(swapped, want); err == nil || !strings.Contains(err.Error(), "out of place") {
		t.Fatalf("swapped columns: %v", err)
	}
}
