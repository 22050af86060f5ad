package retain

import (
	"context"
	"fmt"
	"log/slog"
	"runtime"

	"github.com/apache/arrow/go/v17/arrow"
	"github.com/apache/arrow/go/v17/arrow/memory"

	"github.com/arrowstream/arrowstream/arrowstream"
	"github.com/arrowstream/arrowstream/bench/harness"
	"github.com/arrowstream/arrowstream/vector"
)

// QueryResult is what RunQuery measured: resident set sizes in bytes (0
// where the OS does not tell).
type QueryResult struct {
	// Input is the bytes of the static table's buffers, Results those of
	// the query's result records (held until the end of the query).
	Input, Results int64
	// StartRSS before the table is registered; PeakRSS the highest while
	// the query ran and its results were held.
	StartRSS, PeakRSS int64
	// After the results, the table and the session are released: after a
	// GC (AfterGC), after the session's pool returned its free buffers and
	// a GC ran (AfterPool), after debug.FreeOSMemory (AfterFree).
	AfterGC, AfterPool, AfterFree int64
}

// RunQuery runs a large batch query (a sort of a static table of rows
// rows, its result held whole) on a fresh session, releases everything,
// and reports how far the resident set comes back, step by step.
func RunQuery(ctx context.Context, rows int) (QueryResult, error) {
	var res QueryResult
	freeOS()
	res.StartRSS, _ = harness.CurrentRSS()
	rss := harness.StartRSS()
	pool := vector.NewPoolAllocator(memory.NewGoAllocator(), 0)
	s := arrowstream.NewSession(arrowstream.SessionOptions{Allocator: pool, Logger: slog.New(slog.DiscardHandler)})
	input := memory.NewGoAllocator()
	var recs []arrow.Record
	for start := 0; start < rows; start += 64 << 10 {
		n := min(64<<10, rows-start)
		r := epochRecord(input, 0, n)
		recs = append(recs, r)
		res.Input += 16 * int64(n)
	}
	err := s.RegisterTable("big", schema, recs...)
	for _, r := range recs {
		r.Release()
	}
	if err != nil {
		return res, err
	}
	r, err := s.SQL(ctx, "SELECT id, x, id * 2 AS y FROM big ORDER BY x DESC")
	if err != nil {
		return res, fmt.Errorf("query: %w", err)
	}
	out, err := vector.Drain(ctx, r.Op)
	r.Close()
	if err != nil {
		return res, fmt.Errorf("query: %w", err)
	}
	var got int64
	for _, o := range out {
		got += o.NumRows()
		res.Results += 24 * o.NumRows()
	}
	res.PeakRSS, _ = rss.Peak()
	for _, o := range out {
		o.Release()
	}
	s.DropTable("big")
	if got != int64(rows) {
		return res, fmt.Errorf("query returned %d rows, want %d", got, rows)
	}
	runtime.GC()
	res.AfterGC, _ = harness.CurrentRSS()
	pool.Close()
	runtime.GC()
	res.AfterPool, _ = harness.CurrentRSS()
	freeOS()
	res.AfterFree, _ = harness.CurrentRSS()
	runtime.KeepAlive(s)
	return res, nil
}
