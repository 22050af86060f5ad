package memsink_test

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/apache/arrow/go/v17/arrow"
	"github.com/apache/arrow/go/v17/arrow/array"
	"github.com/apache/arrow/go/v17/arrow/memory"

	"github.com/arrowstream/arrowstream/arrowstream"
	"github.com/arrowstream/arrowstream/memsink"
	"github.com/arrowstream/arrowstream/vector"
	vt "github.com/arrowstream/arrowstream/vector/vectortest"
)

// epochSchema: each row says which epoch wrote it (e) and its index (i).
var epochSchema = arrow.NewSchema([]arrow.Field{{Name: "e", Type: vector.Int64}, {Name: "i", Type: vector.Int64}}, nil)

// epochOp returns an operator over n rows (e, i) in records of batch rows.
func epochOp(t testing.TB, mem memory.Allocator, e int64, n, batch int) vector.Operator {
	var recs []arrow.Record
	for start := 0; start < n; start += batch {
		m := min(batch, n-start)
		eb, ib := array.NewInt64Builder(mem), array.NewInt64Builder(mem)
		for j := 0; j < m; j++ {
			eb.Append(e)
			ib.Append(int64(start + j))
		}
		ea, ia := eb.NewArray(), ib.NewArray()
		recs = append(recs, array.NewRecord(epochSchema, []arrow.Array{ea, ia}, int64(m)))
		ea.Release()
		ia.Release()
		eb.Release()
		ib.Release()
	}
	s, err := vector.NewScan(epochSchema, recs...)
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range recs {
		r.Release()
	}
	return s
}

// checkEpochs verifies a snapshot of an Append table whose epochs 0..latest
// each wrote rows i = 0..n-1: every epoch present is whole, epochs form
// one contiguous run ending at the snapshot's latest epoch.
func checkEpochs(s *memsink.Snapshot, n int) error {
	count := map[int64]int{}
	sum := map[int64]int64{}
	lo, hi := int64(1<<62), int64(-1)
	for _, rec := range s.Records() {
		es := rec.Column(0).(*array.Int64).Int64Values()
		is := rec.Column(1).(*array.Int64).Int64Values()
		for j, e := range es {
			count[e]++
			sum[e] += is[j]
			lo, hi = min(lo, e), max(hi, e)
		}
	}
	if len(count) == 0 {
		return nil
	}
	if hi != s.LatestEpoch() {
		return fmt.Errorf("rows up to epoch %d, snapshot says latest %d", hi, s.LatestEpoch())
	}
	want := int64(n) * int64(n-1) / 2
	for e := lo; e <= hi; e++ {
		if count[e] != n || sum[e] != want {
			return fmt.Errorf("epoch %d has %d rows summing to %d, want %d summing to %d", e, count[e], sum[e], n, want)
		}
	}
	if s.NumRows() != int64(len(count)*n) {
		return fmt.Errorf("NumRows %d for %d epochs", s.NumRows(), len(count))
	}
	return nil
}

// checkComplete: the snapshot is exactly one epoch's whole result.
func checkComplete(s *memsink.Snapshot, n int) error {
	if s.LatestEpoch() < 0 {
		return nil
	}
	var rows int
	var sum int64
	for _, rec := range s.Records() {
		for j, e := range rec.Column(0).(*array.Int64).Int64Values() {
			if e != s.LatestEpoch() {
				return fmt.Errorf("row of epoch %d in a snapshot of epoch %d", e, s.LatestEpoch())
			}
			sum += rec.Column(1).(*array.Int64).Value(j)
			rows++
		}
	}
	if rows != n || sum != int64(n)*int64(n-1)/2 {
		return fmt.Errorf("epoch %d: %d rows summing to %d", s.LatestEpoch(), rows, sum)
	}
	return nil
}

// checkView: a view keyed by i where every epoch rewrites every key with
// e = epoch: every key is present once, all from the snapshot's epoch.
func checkView(s *memsink.Snapshot, n int) error {
	if s.LatestEpoch() < 0 {
		return nil
	}
	seen := make([]bool, n)
	for _, rec := range s.Records() {
		is := rec.Column(1).(*array.Int64).Int64Values()
		for j, e := range rec.Column(0).(*array.Int64).Int64Values() {
			if e != s.LatestEpoch() || seen[is[j]] {
				return fmt.Errorf("key %d: epoch %d (duplicate %v) in a snapshot of epoch %d", is[j], e, seen[is[j]], s.LatestEpoch())
			}
			seen[is[j]] = true
		}
	}
	for k, ok := range seen {
		if !ok {
			return fmt.Errorf("key %d missing at epoch %d", k, s.LatestEpoch())
		}
	}
	return nil
}

// TestConcurrentReaders: readers take snapshots in a loop (holding some
// across commits) while a writer commits and evicts epochs; every
// snapshot must hold whole epochs only, before and after later commits.
func TestConcurrentReaders(t *testing.T) {
	cases := []struct {
		name  string
		info  arrowstream.SinkInfo
		opts  memsink.Options
		rows  int
		check func(*memsink.Snapshot, int) error
	}{
		{"append", arrowstream.SinkInfo{Mode: arrowstream.Append}, memsink.Options{MaxEpochs: 8}, 300, checkEpochs},
		{"append by rows", arrowstream.SinkInfo{Mode: arrowstream.Append}, memsink.Options{MaxRows: 2000}, 300, checkEpochs},
		{"complete", arrowstream.SinkInfo{Mode: arrowstream.Complete}, memsink.Options{MaxEpochs: 3}, 300, checkComplete},
		{"view", arrowstream.SinkInfo{Mode: arrowstream.Update, KeyColumns: []string{"i"}}, memsink.Options{UpdateAsView: true, MaxEpochs: 2}, 300, checkView},
	}
	// The writer runs for about softTime, and on past it (a loaded machine
	// may give it little CPU) until minWork epochs and snapshots happened;
	// hardTime only bounds a stuck run, so a slow machine cannot fail it.
	const (
		readers  = 3
		softTime = 400 * time.Millisecond
		hardTime = 5 * time.Minute
		maxEpoch = 300
		minWork  = 10
	)
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			mem := vt.NewAllocator(t)
			info := c.info
			info.QueryName, info.Schema = "q", epochSchema
			tbl := newTable(t, mem, info, c.opts)
			ctx, cancel := context.WithTimeout(context.Background(), hardTime)
			defer cancel()
			soft := time.Now().Add(softTime)
			var done atomic.Bool
			var snapshots atomic.Int64
			var wg sync.WaitGroup
			errs := make(chan error, readers+1)
			for range readers {
				wg.Add(1)
				go func() {
					defer wg.Done()
					var held []*memsink.Snapshot
					defer func() {
						for _, s := range held {
							s.Release()
						}
					}()
					for n := 0; !done.Load(); n++ {
						s := tbl.Snapshot()
						snapshots.Add(1)
						if err := c.check(s, c.rows); err != nil {
							errs <- fmt.Errorf("fresh snapshot: %w", err)
							s.Release()
							return
						}
						// Keep every 8th snapshot a while and check it
						// again after the writer has moved on.
						if n%8 == 0 {
							held = append(held, s)
						} else {
							s.Release()
						}
						if len(held) == 4 {
							for _, h := range held {
								if err := c.check(h, c.rows); err != nil {
									errs <- fmt.Errorf("held snapshot: %w", err)
									return
								}
								h.Release()
							}
							held = held[:0]
						}
						// Exercise the other readers too.
						if latest := tbl.LatestEpoch(); latest > 0 && n%5 == 0 {
							if a, err := tbl.AsOf(latest); err == nil {
								a.Release()
							}
							if s, err := tbl.Since(latest - 1); err == nil {
								s.Release()
							}
							_ = tbl.History()
							_ = tbl.Size()
						}
					}
				}()
			}
			var epochs int64
			enough := func() bool {
				return time.Now().After(soft) && epochs >= minWork && snapshots.Load() >= minWork
			}
			for e := int64(0); e < maxEpoch && ctx.Err() == nil && !enough(); e++ {
				if err := tbl.AddBatch(ctx, e, epochOp(t, mem, e, c.rows, 128)); err != nil {
					if ctx.Err() != nil {
						break
					}
					t.Fatalf("AddBatch(%d): %v", e, err)
				}
				epochs++
			}
			done.Store(true)
			wg.Wait()
			close(errs)
			for err := range errs {
				t.Error(err)
			}
			if epochs < minWork || snapshots.Load() < minWork {
				t.Errorf("too little happened: %d epochs, %d snapshots", epochs, snapshots.Load())
			}
			s := tbl.Snapshot()
			if err := c.check(s, c.rows); err != nil {
				t.Error(err)
			}
			s.Release()
			t.Logf("%d epochs, %d snapshots", epochs, snapshots.Load())
		})
	}
}
