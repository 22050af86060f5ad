package server

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/apache/arrow/go/v17/arrow"

	"github.com/arrowstream/arrowstream/internal/testutil"
	"github.com/arrowstream/arrowstream/memsink"
)

// TestConcurrentReadersSeeWholeEpochs runs 32 clients (16 ADBC
// connections running SQL, 16 plain Flight readers alternating full and
// incremental reads) for a bounded time while a writer commits an epoch
// of a known row count every 2 ms, with retention evicting old epochs.
// Every result must be a whole number of epochs, consecutive, and no call
// may fail. The table merges its small epochs in the background every 4
// epochs, so readers hold snapshots across compactions.
func TestConcurrentReadersSeeWholeEpochs(t *testing.T) {
	const (
		clients   = 32
		perEpoch  = 50
		duration  = 1500 * time.Millisecond
		maxRounds = 300 // per client, bounds the work on slow machines
	)
	f := newSQLFixture(t, Config{})
	live := newTable(t, f.mem, f.cat, "live", epochSchema, memsink.Options{MaxEpochs: 300, CompactAfter: 4})
	commitEpochs(t, f.mem, live, 0, 1, perEpoch)

	// The run lasts at least duration and until the readers have done
	// enough whole reads during enough commits: on a loaded machine that
	// takes longer, and the test waits for it instead of failing. The
	// bound only stops a hang.
	ctx, cancel := context.WithTimeout(context.Background(), testutil.Scaled(5*time.Minute))
	defer cancel()
	var wg sync.WaitGroup
	var commits, reads atomic.Int64
	enough := func() bool { return reads.Load() >= 2*clients && commits.Load() >= 10 }
	go func() {
		start := time.Now()
		for ctx.Err() == nil && (time.Since(start) < duration || !enough()) {
			time.Sleep(10 * time.Millisecond)
		}
		cancel()
	}()
	wg.Add(1)
	go func() {
		defer wg.Done()
		tick := time.NewTicker(2 * time.Millisecond)
		defer tick.Stop()
		for e := int64(1); ctx.Err() == nil; e++ {
			if err := commitErr(live, e, epochRecord(f.mem, e, 0, perEpoch)); err != nil {
				t.Error(err)
				return
			}
			commits.Add(1)
			select {
			case <-ctx.Done():
			case <-tick.C:
			}
		}
	}()

	errs := make(chan error, clients)
	check := func(recs []arrow.Record) error {
		defer releaseAll(recs)
		if err := checkWholeEpochs(recs, perEpoch); err != nil {
			return err
		}
		m, _ := epochCounts(recs)
		lo, hi := int64(1<<62), int64(-1)
		for e := range m {
			lo, hi = min(lo, e), max(hi, e)
		}
		if hi >= 0 && int64(len(m)) != hi-lo+1 {
			return fmt.Errorf("epochs %d..%d with %d missing", lo, hi, hi-lo+1-int64(len(m)))
		}
		reads.Add(1)
		return nil
	}
	for i := range clients {
		wg.Add(1)
		go func() {
			defer wg.Done()
			var err error
			if i%2 == 0 {
				err = adbcReader(ctx, t, f.srv, maxRounds, check)
			} else {
				err = flightReader(ctx, t, f.srv, maxRounds, check)
			}
			if err != nil {
				errs <- fmt.Errorf("client %d: %w", i, err)
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	if reads.Load() < clients || commits.Load() < 10 {
		t.Fatalf("only %d reads and %d commits", reads.Load(), commits.Load())
	}
	// A compaction triggered during the reads has merged epochs (waited
	// for: on a loaded machine the background merge may still be running).
	for deadline := time.Now().Add(testutil.Scaled(time.Minute)); ; time.Sleep(10 * time.Millisecond) {
		sz := live.Size()
		if sz.Records < sz.Epochs {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("no compaction ran during the reads: %+v", sz)
		}
	}
	t.Logf("%d whole-epoch reads by %d clients during %d commits", reads.Load(), clients, commits.Load())
}

// adbcReader runs SELECT * FROM live through its own ADBC connection
// until ctx ends.
func adbcReader(ctx context.Context, t *testing.T, s *Server, rounds int, check func([]arrow.Record) error) error {
	cn := adbcConn(t, s, nil)
	for range rounds {
		if ctx.Err() != nil {
			return nil
		}
		// The query itself runs to completion (no ADBC cancellation
		// mid-stream: the v1.1.0 driver has a data race there).
		recs, err := query(context.Background(), cn, "SELECT * FROM live", nil)
		if err != nil {
			return err
		}
		if err := check(recs); err != nil {
			return err
		}
	}
	return nil
}

// flightReader alternates full reads and incremental reads since the
// previous one.
func flightReader(ctx context.Context, t *testing.T, s *Server, rounds int, check func([]arrow.Record) error) error {
	c := flightClient(t, s)
	since := int64(-1)
	for r := range rounds {
		if ctx.Err() != nil {
			return nil
		}
		tk := Ticket{Version: TicketVersion, Table: "live"}
		if r%2 == 1 {
			tk.Since = &since
		}
		b, _ := tk.Encode()
		schema, recs, err := readAll(context.Background(), c, b)
		if err != nil {
			return err
		}
		if v, ok := schema.Metadata().GetValue(EpochMetadataKey); ok {
			fmt.Sscan(v, &since)
		}
		if err := check(recs); err != nil {
			return err
		}
	}
	return nil
}
