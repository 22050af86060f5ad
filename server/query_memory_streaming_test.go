package server

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/apache/arrow/go/v17/arrow"
	"github.com/apache/arrow/go/v17/arrow/array"
	"github.com/apache/arrow/go/v17/arrow/memory"

	"github.com/arrowstream/arrowstream/arrowstream"
	"github.com/arrowstream/arrowstream/memsink"
)

// TestStreamingQueryOnQueryAllocator: a streaming query started after
// SetStreamingAllocator(srv.StreamingAllocator) runs on an accounting
// allocator: an append table whose kept rows outgrow --query-memory
// stops the query, FAILED with the memory limit's RESOURCE_EXHAUSTED
// error; below the limit it runs.
func TestStreamingQueryOnQueryAllocator(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	sess := arrowstream.NewSession(arrowstream.SessionOptions{Allocator: mem, CheckpointRoot: t.TempDir(), NoSync: true})
	cat := memsink.NewCatalog()
	memsink.Install(sess, cat, memsink.Options{})
	schema := arrow.NewSchema([]arrow.Field{{Name: "v", Type: arrow.PrimitiveTypes.Int64}}, nil)
	src := arrowstream.NewMemoryStream(mem, schema)
	sess.RegisterStream("input", src)
	cfg := ForSession(sess, cat)
	cfg.Allocator = mem
	cfg.Limits = Limits{QueryMemoryBytes: 1 << 20}
	srv := startServer(t, cfg)
	sess.SetStreamingAllocator(srv.StreamingAllocator)
	t.Cleanup(func() {
		sess.Streams().StopAll()
		for _, name := range cat.List() {
			if tbl, ok := cat.Drop(name); ok {
				tbl.Close()
			}
		}
		src.Close()
		if n := mem.CurrentAlloc(); n != 0 {
			t.Errorf("%d bytes still allocated", n)
		}
	})
	ctx := context.Background()
	res, err := sess.SQL(ctx, "CREATE STREAMING TABLE kept AS SELECT v + 1 AS w FROM STREAM input")
	if err != nil {
		t.Fatal(err)
	}
	q := res.Query
	add := func(n int) {
		b := array.NewInt64Builder(mem)
		defer b.Release()
		for i := range n {
			b.Append(int64(i))
		}
		col := b.NewArray()
		defer col.Release()
		rec := array.NewRecord(schema, []arrow.Array{col}, int64(n))
		defer rec.Release()
		if _, err := src.AddRecord(rec); err != nil {
			t.Fatal(err)
		}
	}
	add(1000) // 8 KB kept: under the limit
	if err := q.ProcessAllAvailable(ctx); err != nil {
		t.Fatalf("under the limit: %v", err)
	}
	for range 4 {
		add(100_000) // 800 KB each: the kept rows pass 1 MiB
	}
	tctx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	err = q.AwaitTermination(tctx)
	var mle *MemoryLimitError
	if !errors.As(err, &mle) || !strings.Contains(err.Error(), "RESOURCE_EXHAUSTED") || mle.Limit != 1<<20 {
		t.Fatalf("query ended with %v, want the per-query memory limit", err)
	}
}
