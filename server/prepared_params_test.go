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

// TestPreparedParamsOverQueryMemory: prepared-statement parameter batches
// are decoded on an accounted allocator, as bulk ingest's are: a batch
// that decodes to more than the per-query memory limit is refused with
// ResourceExhausted naming the limit, while a small one binds, runs, and
// counts in the server's memory pool while it is bound.
func TestPreparedParamsOverQueryMemory(t *testing.T) {
	f := newSQLFixture(t, Config{Limits: Limits{QueryMemoryBytes: 64 << 10}})
	cl, err := flightsql.NewClient(f.srv.Addr().String(), nil, nil, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	ctx := context.Background()
	schema := arrow.NewSchema([]arrow.Field{{Name: "p", Type: arrow.PrimitiveTypes.Int64}}, nil)
	build := func(n int) arrow.Record {
		b := array.NewRecordBuilder(memory.DefaultAllocator, schema)
		defer b.Release()
		for i := range n {
			b.Field(0).(*array.Int64Builder).Append(int64(i))
		}
		return b.NewRecord()
	}
	small, big := build(1), build(100_000) // 8 bytes; 800 KB
	defer small.Release()
	defer big.Release()

	prep, err := cl.Prepare(ctx, "SELECT * FROM orders WHERE i = ?")
	if err != nil {
		t.Fatal(err)
	}
	defer prep.Close(ctx)
	before := f.srv.pool.inUse.Load()
	prep.SetParameters(small)
	info, err := prep.Execute(ctx)
	if err != nil {
		t.Fatalf("a small parameter batch: %v", err)
	}
	if len(info.Endpoint) == 0 {
		t.Fatal("no endpoint for the bound statement")
	}
	if held := f.srv.pool.inUse.Load() - before; held <= 0 {
		t.Fatalf("the pool counts %d bytes for the bound parameters", held)
	}

	prep.SetParameters(big)
	_, err = prep.Execute(ctx)
	wantCode(t, err, codes.ResourceExhausted)
	for _, want := range []string{"bind parameters", "per-query memory limit of 65536 bytes", "--query-memory"} {
		if !strings.Contains(err.Error(), want) {
			t.Fatalf("refusal %v does not say %q", err, want)
		}
	}
}
