package server

import (
	"context"
	"strings"
	"testing"

	"github.com/apache/arrow/go/v17/arrow"
	"github.com/apache/arrow/go/v17/arrow/array"
	"github.com/apache/arrow/go/v17/arrow/flight/flightsql"
	"github.com/apache/arrow/go/v17/arrow/memory"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
)

// TestDoPutBatchOverQueryMemory: a DoPut batch that decodes to more than
// the per-query memory limit is refused with ResourceExhausted naming the
// limit, and nothing of it is appended; smaller batches go in, and the
// bytes the table holds count in the server's memory pool.
func TestDoPutBatchOverQueryMemory(t *testing.T) {
	f := newSQLFixture(t, Config{Limits: Limits{QueryMemoryBytes: 64 << 10}})
	cn := adbcConn(t, f.srv, nil)
	st, _ := cn.NewStatement()
	st.SetSqlQuery("CREATE TABLE clicks (user_id bigint) USING memory")
	if _, err := st.ExecuteUpdate(context.Background()); err != nil {
		t.Fatal(err)
	}
	st.Close()
	schema := arrow.NewSchema([]arrow.Field{{Name: "user_id", Type: arrow.PrimitiveTypes.Int64}}, nil)
	build := func(n int) arrow.Record {
		b := array.NewRecordBuilder(memory.DefaultAllocator, schema)
		defer b.Release()
		for i := range n {
			b.Field(0).(*array.Int64Builder).Append(int64(i))
		}
		return b.NewRecord()
	}
	small, big := build(100), build(100_000)
	defer small.Release()
	defer big.Release()
	c := flightClient(t, f.srv)
	ctx := context.Background()
	before := f.srv.pool.inUse.Load()
	if n, err := push(ctx, c, "clicks", schema, small, small); err != nil || n != 200 {
		t.Fatalf("small batches: %d rows, %v", n, err)
	}
	if held := f.srv.pool.inUse.Load() - before; held < 2*100*8 {
		t.Fatalf("the pool counts %d bytes for 200 ingested bigints", held)
	}
	_, err := push(ctx, c, "clicks", schema, big)
	wantCode(t, err, codes.ResourceExhausted)
	if !strings.Contains(err.Error(), "per-query memory limit of 65536 bytes") || !strings.Contains(err.Error(), "--query-memory") {
		t.Fatalf("refusal %v does not name the limit", err)
	}
	recs := mustQuery(t, cn, "SELECT count(*) FROM clicks")
	if v := recs[0].Column(0).(*array.Int64).Value(0); v != 200 {
		t.Fatalf("count after the refused batch: %d, want 200", v)
	}

	// Flight SQL bulk ingest (ADBC's) is held to the same limits: the
	// small batch goes in and counts in the pool, the big one is refused
	// with the rows appended before it reported.
	cl, err := flightsql.NewClient(f.srv.Addr().String(), nil, nil, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	ingest := func(recs ...arrow.Record) (int64, error) {
		rdr, err := array.NewRecordReader(schema, recs)
		if err != nil {
			t.Fatal(err)
		}
		defer rdr.Release()
		return cl.ExecuteIngest(ctx, rdr, &flightsql.ExecuteIngestOpts{Table: "clicks",
			TableDefinitionOptions: &flightsql.TableDefinitionOptions{IfExists: flightsql.TableDefinitionOptionsTableExistsOptionAppend}})
	}
	before = f.srv.pool.inUse.Load()
	if n, err := ingest(small); err != nil || n != 100 {
		t.Fatalf("bulk ingest of a small batch: %d rows, %v", n, err)
	}
	if held := f.srv.pool.inUse.Load() - before; held < 100*8 {
		t.Fatalf("the pool counts %d bytes for 100 bulk-ingested bigints", held)
	}
	_, err = ingest(small, big)
	wantCode(t, err, codes.ResourceExhausted)
	if !strings.Contains(err.Error(), "per-query memory limit of 65536 bytes") {
		t.Fatalf("bulk-ingest refusal %v does not name the limit", err)
	}
	recs = mustQuery(t, cn, "SELECT count(*) FROM clicks")
	if v := recs[0].Column(0).(*array.Int64).Value(0); v != 400 {
		t.Fatalf("count after the refused bulk ingest: %d, want 400 (the small batch before the big one stays)", v)
	}
}
