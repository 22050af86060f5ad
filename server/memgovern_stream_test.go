package server

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/apache/arrow/go/v17/arrow/memory"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/arrowstream/arrowstream/arrowstream"
	"github.com/arrowstream/arrowstream/memsink"
	"github.com/arrowstream/arrowstream/plan"
)

// TestResultStreamAccountedToQuery: the buffers a result stream allocates
// (here zstd-compressed bodies) come from the query's accounting
// allocator, so a query whose plan allocates nothing (a scan of a static
// table) still meets its memory limit when its stream does; without a
// limit the same query streams, and everything is released.
func TestResultStreamAccountedToQuery(t *testing.T) {
	for _, tc := range []struct {
		limit int64
		fails bool
	}{{4096, true}, {0, false}} {
		mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
		sess := arrowstream.NewSession(arrowstream.SessionOptions{Allocator: mem, CheckpointRoot: t.TempDir(), NoSync: true})
		cat := memsink.NewCatalog()
		memsink.Install(sess, cat, memsink.Options{})
		static := plan.NewMemoryCatalog()
		static.Register("big", bigTable(t, mem, 300_000))
		sess.AddCatalog(static)
		cfg := ForSession(sess, cat)
		cfg.IPCCompression = "zstd"
		cfg.Limits = Limits{QueryMemoryBytes: tc.limit, QueryTimeout: time.Minute}
		srv := startServer(t, cfg)
		base := mem.CurrentAlloc()
		err := runFlightSQL(context.Background(), sqlClient(t, srv), "SELECT value FROM big")
		if tc.fails {
			st, _ := status.FromError(err)
			if st.Code() != codes.ResourceExhausted || !strings.Contains(st.Message(), "memory limit of 4096 bytes") {
				t.Fatalf("limit %d: got %v, want ResourceExhausted naming the limit", tc.limit, err)
			}
		} else if err != nil {
			t.Fatalf("no limit: %v", err)
		}
		waitFor(t, 10*time.Second, "the stream's memory to be released", func() bool { return mem.CurrentAlloc() == base })
	}
}
