package server

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/apache/arrow/go/v17/arrow"
	"github.com/apache/arrow/go/v17/arrow/array"
	"github.com/apache/arrow/go/v17/arrow/flight/flightsql"
	"github.com/apache/arrow/go/v17/arrow/memory"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"

	"github.com/arrowstream/arrowstream/arrowstream"
	"github.com/arrowstream/arrowstream/internal/testutil"
	"github.com/arrowstream/arrowstream/internal/testutil/poisonmem"
	"github.com/arrowstream/arrowstream/memsink"
)

// peakAllocator counts the bytes its inner allocator has handed out and
// the peak of that count.
type peakAllocator struct {
	memory.Allocator
	cur, peak atomic.Int64
}

func (a *peakAllocator) add(n int64) {
	c := a.cur.Add(n)
	for {
		p := a.peak.Load()
		if c <= p || a.peak.CompareAndSwap(p, c) {
			return
		}
	}
}

func (a *peakAllocator) Allocate(n int) []byte {
	b := a.Allocator.Allocate(n)
	a.add(int64(len(b)))
	return b
}

func (a *peakAllocator) Reallocate(n int, b []byte) []byte {
	old := len(b)
	b = a.Allocator.Reallocate(n, b)
	a.add(int64(len(b) - old))
	return b
}

func (a *peakAllocator) Free(b []byte) {
	a.add(-int64(len(b)))
	a.Allocator.Free(b)
}

// loadFigures are what a load run measured (logged, and quoted in
// docs/reliability.md).
type loadFigures struct {
	clients, epochs, reads, errors, torn int64
	peakBytes, tableBytes                int64
}

func (f loadFigures) String() string {
	return fmt.Sprintf("clients=%d epochs=%d reads=%d errors=%d torn=%d peakBytes=%d retainedBytes=%d",
		f.clients, f.epochs, f.reads, f.errors, f.torn, f.peakBytes, f.tableBytes)
}

// TestLoadFlightSQLClientsDuringCommits runs 64 Flight SQL clients, each on
// its own connection, against a memory-sink table that a real streaming
// query keeps committing to (rate-micro-batch, perEpoch rows per epoch,
// retention maxEpochs). The query writes value DIV perEpoch as "epoch", so
// every epoch has exactly perEpoch rows with the same epoch value: a read
// that saw part of an epoch has a count other than perEpoch. Half the
// clients read the rows and count per epoch themselves, half ask the server
// to GROUP BY epoch. Bounded by time and by rounds per client; loopback.
func TestLoadFlightSQLClientsDuringCommits(t *testing.T) {
	if testing.Short() {
		t.Skip("load test")
	}
	const (
		clients   = 64
		perEpoch  = 64
		maxEpochs = 40
		duration  = 3 * time.Second
		maxRounds = 100
	)
	checked := poisonmem.New()
	defer checked.AssertSize(t, 0)
	mem := &peakAllocator{Allocator: checked}
	sess := arrowstream.NewSession(arrowstream.SessionOptions{Allocator: mem, CheckpointRoot: t.TempDir(), NoSync: true,
		Logger: quietLogger()}) // "falling behind" warnings are expected here
	cat := memsink.NewCatalog()
	memsink.Install(sess, cat, memsink.Options{})
	defer func() {
		for _, n := range cat.List() {
			if tb, ok := cat.Drop(n); ok {
				tb.Close()
			}
		}
	}()
	defer sess.Streams().StopAll()
	srv := startServer(t, ForSession(sess, cat))
	defer func() {
		ctx, cancel := context.WithTimeout(context.Background(), testutil.Scaled(time.Minute))
		defer cancel()
		srv.Stop(ctx)
	}()

	if err := sess.RegisterSource("ticks", "rate-micro-batch", nil, map[string]string{"rowsPerBatch": fmt.Sprint(perEpoch)}); err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	q, err := sess.ReadStream("ticks").Select(fmt.Sprintf("CAST(floor(value / %d) AS BIGINT) AS epoch", perEpoch), "value AS i").
		WriteStream().Format("memory").QueryName("live").Option("maxEpochs", fmt.Sprint(maxEpochs)).
		Trigger(arrowstream.ProcessingTime(time.Millisecond)).Start(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer q.Stop()
	waitFor(t, 10*time.Second, "the first epochs", func() bool { p := q.LastProgress(); return p != nil && p.BatchID >= 2 })
	live, _ := cat.Lookup("live")
	baseline := mem.cur.Load()

	// At least duration, and until there is enough work to judge (a
	// loaded machine takes longer; the bound only stops a hang).
	runCtx, cancel := context.WithTimeout(ctx, testutil.Scaled(5*time.Minute))
	defer cancel()
	var reads, torn, failures atomic.Int64
	go func() {
		start := time.Now()
		enough := func() bool {
			p := q.LastProgress()
			return reads.Load() >= 2*clients && p != nil && p.BatchID >= 10
		}
		for runCtx.Err() == nil && (time.Since(start) < duration || !enough()) {
			time.Sleep(10 * time.Millisecond)
		}
		cancel()
	}()
	errs := make(chan error, clients)
	var wg sync.WaitGroup
	for c := range clients {
		wg.Add(1)
		go func() {
			defer wg.Done()
			err := loadClient(runCtx, srv, c%2 == 0, maxRounds, perEpoch, maxEpochs, &reads, &torn)
			if err != nil {
				failures.Add(1)
				errs <- fmt.Errorf("client %d: %w", c, err)
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	if err := q.Exception(); err != nil {
		t.Fatalf("query failed: %v", err)
	}
	fig := loadFigures{clients: clients, epochs: q.LastProgress().BatchID + 1, reads: reads.Load(), errors: failures.Load(),
		torn: torn.Load(), peakBytes: mem.peak.Load(), tableBytes: live.Size().Bytes}
	t.Logf("load: %s (baseline %d bytes before the clients)", fig, baseline)
	if fig.torn != 0 || fig.errors != 0 {
		t.Fatalf("load: %s", fig)
	}
	if fig.reads < clients || fig.epochs < 10 {
		t.Fatalf("too little work to say anything: %s", fig)
	}
	if s := live.Size(); s.Epochs > maxEpochs {
		t.Fatalf("table retains %d epochs, limit %d", s.Epochs, maxEpochs)
	}
	// Memory: the retained epochs (three times over, for the versions
	// readers still hold while retention moves on) plus 4 KiB per client
	// for what in-flight queries allocate. Without retention the table
	// alone passes this bound after a few hundred epochs.
	perEpochBytes := fig.tableBytes / int64(max(1, live.Size().Epochs))
	if bound := 3*maxEpochs*perEpochBytes + clients<<12 + baseline; fig.peakBytes > bound {
		t.Fatalf("peak %d bytes over the bound %d: %s", fig.peakBytes, bound, fig)
	}
}

func quietLogger() *slog.Logger { return slog.New(slog.NewTextHandler(io.Discard, nil)) }

// loadClient runs queries on its own Flight SQL connection until ctx ends
// or rounds are done. raw clients read every row and count per epoch;
// the others read SELECT epoch, count(*) ... GROUP BY epoch.
func loadClient(ctx context.Context, srv *Server, raw bool, rounds, perEpoch, maxEpochs int, reads, torn *atomic.Int64) error {
	cl, err := flightsql.NewClient(srv.Addr().String(), nil, nil, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		return err
	}
	defer cl.Close()
	text := "SELECT epoch, i FROM live"
	if !raw {
		text = "SELECT epoch, count(*) AS n FROM live GROUP BY epoch"
	}
	for range rounds {
		if ctx.Err() != nil {
			return nil
		}
		// Each query runs to completion: cancelling mid-stream is not what
		// this test measures.
		counts, err := runCounting(context.Background(), cl, text, raw)
		if err != nil {
			return err
		}
		reads.Add(1)
		lo, hi := int64(1<<62), int64(-1)
		for e, n := range counts {
			lo, hi = min(lo, e), max(hi, e)
			if n != int64(perEpoch) {
				torn.Add(1)
				return fmt.Errorf("epoch %d has %d rows, want %d (a torn read)", e, n, perEpoch)
			}
		}
		if hi >= 0 && (int64(len(counts)) != hi-lo+1 || len(counts) > maxEpochs) {
			torn.Add(1)
			return fmt.Errorf("epochs %d..%d: %d present, retention %d", lo, hi, len(counts), maxEpochs)
		}
	}
	return nil
}

// runCounting executes text and returns rows per epoch: counted from the
// rows (raw) or read from the n column.
func runCounting(ctx context.Context, cl *flightsql.Client, text string, raw bool) (map[int64]int64, error) {
	info, err := cl.Execute(ctx, text)
	if err != nil {
		return nil, err
	}
	counts := map[int64]int64{}
	for _, ep := range info.Endpoint {
		rdr, err := cl.DoGet(ctx, ep.Ticket)
		if err != nil {
			return nil, err
		}
		for rdr.Next() {
			countRecord(rdr.Record(), raw, counts)
		}
		err = rdr.Err()
		rdr.Release()
		if err != nil && !errors.Is(err, io.EOF) {
			return nil, err
		}
	}
	return counts, nil
}

func countRecord(rec arrow.Record, raw bool, counts map[int64]int64) {
	epochs := rec.Column(0).(*array.Int64).Int64Values()
	if raw {
		for _, e := range epochs {
			counts[e]++
		}
		return
	}
	n := rec.Column(1).(*array.Int64).Int64Values()
	for i, e := range epochs {
		counts[e] += n[i]
	}
}
