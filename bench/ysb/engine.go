package ysb

import (
	"context"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"time"

	"github.com/apache/arrow/go/v17/arrow"
	"github.com/apache/arrow/go/v17/arrow/array"
	"github.com/apache/arrow/go/v17/arrow/memory"

	"github.com/arrowstream/arrowstream/arrowstream"
	"github.com/arrowstream/arrowstream/arrowstream/pebblestate"
	"github.com/arrowstream/arrowstream/bench/harness"
	"github.com/arrowstream/arrowstream/memsink"
)

// QuerySQL is the Yahoo Streaming Benchmark query in Arrowstream's SQL:
// keep the views, join each ad to its campaign through the static table,
// and count views per campaign in 10-second tumbling windows, with a
// 10-second watermark bounding the windows kept open. The result is a
// memory-sink table updated every epoch (one row per campaign and window).
const QuerySQL = `CREATE STREAMING TABLE ysb
  TBLPROPERTIES ('outputMode' = 'update')
AS SELECT c.campaign_id, window.start AS window_start, count(*) AS views
   FROM STREAM events WATERMARK event_time DELAY OF INTERVAL 10 SECONDS e
   JOIN campaigns c ON e.ad_id = c.ad_id
   WHERE e.event_type = 'view'
   GROUP BY c.campaign_id, window(e.event_time, '10 seconds')`

// EngineOptions configure one run of the query through the engine.
type EngineOptions struct {
	// Mem is the allocator of the session (and of nothing else).
	Mem memory.Allocator
	// CheckpointRoot holds the query's checkpoint.
	CheckpointRoot string
	// Sync makes checkpoint writes durable (fsync); benchmarks default to
	// NoSync so that the figure is the engine's, not the disk's.
	Sync bool
	// Pace, when positive, feeds one epoch per Pace and measures each
	// epoch's latency; zero queues every epoch first and measures
	// throughput.
	Pace time.Duration
	// ShufflePartitions sets spark.sql.shuffle.partitions (0: 1).
	ShufflePartitions int
	Logger            *slog.Logger
	// Held, when set, receives after each epoch the bytes the query
	// holds: its state (progress memoryUsedBytes of its stateful
	// operators, their live state) plus what its memory-sink table
	// retains (Arrow bytes and bookkeeping). It is called on the query's
	// goroutine.
	Held func(bytes int64)
}

// EngineResult is what a run measured.
type EngineResult struct {
	Answer Answer
	// Elapsed is the time from starting the query (throughput mode) or
	// feeding the first epoch (paced mode) until the last epoch was
	// visible in the memory sink.
	Elapsed time.Duration
	// Latencies are, per data epoch in paced mode, the time from the
	// epoch's input being accepted by the source to its rows being
	// visible in the memory sink.
	Latencies []time.Duration
	Epochs    int
	// CPU is the process CPU time (all threads) over the same span as
	// Elapsed.
	CPU time.Duration
}

// progressWatch signals every epoch that read input, and passes held
// (when set) what the query holds after every epoch.
type progressWatch struct {
	mu   sync.Mutex
	ch   chan time.Time
	name string
	held func(int64)
	cat  *memsink.Catalog
}

func (w *progressWatch) OnQueryStarted(*arrowstream.StreamingQuery) {}
func (w *progressWatch) OnQueryProgress(q *arrowstream.StreamingQuery, p *arrowstream.StreamingQueryProgress) {
	if q.Name() != w.name {
		return
	}
	if w.held != nil {
		var n int64
		for _, op := range p.StateOperators {
			n += op.MemoryUsedBytes
		}
		if t, ok := w.cat.Lookup(w.name); ok {
			sz := t.Size()
			n += sz.Bytes + sz.Overhead
		}
		w.held(n)
	}
	if p.NumInputRows == 0 {
		return
	}
	// The progress is published after the sink committed: the rows are
	// visible to readers now.
	select {
	case w.ch <- time.Now():
	default:
	}
}
func (w *progressWatch) OnQueryTerminated(*arrowstream.StreamingQuery, error) {}

// RunEngine runs QuerySQL over epochs (each a list of records fed as one
// epoch) joined with the campaigns table, and returns the answer read back
// from the memory sink.
func RunEngine(ctx context.Context, opts EngineOptions, campaigns arrow.Record, epochs [][]arrow.Record) (*EngineResult, error) {
	if len(epochs) == 0 {
		return nil, fmt.Errorf("ysb: no epochs to run")
	}
	logger := opts.Logger
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	parts := max(opts.ShufflePartitions, 1)
	s := arrowstream.NewSession(arrowstream.SessionOptions{
		Allocator: opts.Mem, Logger: logger, CheckpointRoot: opts.CheckpointRoot, NoSync: !opts.Sync,
		Conf: map[string]string{arrowstream.ConfShufflePartitions: fmt.Sprint(parts)},
	})
	pebblestate.Register(s)
	cat := memsink.NewCatalog()
	memsink.Install(s, cat, memsink.Options{})
	defer func() {
		if t, ok := cat.Drop("ysb"); ok {
			t.Close()
		}
	}()
	if err := s.RegisterTable("campaigns", campaigns.Schema(), campaigns); err != nil {
		return nil, fmt.Errorf("ysb: campaigns table: %w", err)
	}
	defer s.DropTable("campaigns")
	src := arrowstream.NewMemoryStream(opts.Mem, epochs[0][0].Schema())
	defer src.Close()
	s.RegisterStream("events", src)
	watch := &progressWatch{ch: make(chan time.Time, 1), name: "ysb", held: opts.Held, cat: cat}
	s.Streams().AddListener(watch)
	res := &EngineResult{Epochs: len(epochs)}
	addEpoch := func(recs []arrow.Record) error {
		for _, r := range recs {
			if _, err := src.AddRecord(r); err != nil {
				return err
			}
		}
		return nil
	}
	var span harness.Span
	if opts.Pace <= 0 {
		src.SetMaxOffsetsPerTrigger(int64(len(epochs[0])))
		for _, e := range epochs {
			if err := addEpoch(e); err != nil {
				return nil, err
			}
		}
		span = harness.StartSpan()
	} else {
		// One record per epoch keeps a paced epoch whole: the loop cannot
		// pick up half of it.
		src.SetMaxOffsetsPerTrigger(1)
		for _, e := range epochs {
			if len(e) != 1 {
				return nil, fmt.Errorf("ysb: paced runs take one record per epoch, got %d", len(e))
			}
		}
	}
	r, err := s.SQL(ctx, QuerySQL)
	if err != nil {
		return nil, fmt.Errorf("ysb: starting the query: %w", err)
	}
	q := r.Query
	defer q.Stop()
	if opts.Pace <= 0 {
		if err := q.ProcessAllAvailable(ctx); err != nil {
			return nil, fmt.Errorf("ysb: query: %w", err)
		}
		res.Elapsed, res.CPU = span.Stop()
	} else {
		next := time.Now()
		span = harness.StartSpan()
		for _, e := range epochs {
			if d := time.Until(next); d > 0 {
				select {
				case <-time.After(d):
				case <-ctx.Done():
					return nil, ctx.Err()
				}
			}
			next = next.Add(opts.Pace)
			accepted := time.Now()
			if err := addEpoch(e); err != nil {
				return nil, err
			}
			select {
			case seen := <-watch.ch:
				res.Latencies = append(res.Latencies, seen.Sub(accepted))
			case <-ctx.Done():
				return nil, ctx.Err()
			case <-time.After(30 * time.Second):
				return nil, fmt.Errorf("ysb: an epoch was not visible after 30 s (query error: %v)", q.Exception())
			}
		}
		if err := q.ProcessAllAvailable(ctx); err != nil {
			return nil, fmt.Errorf("ysb: query: %w", err)
		}
		res.Elapsed, res.CPU = span.Stop()
	}
	if err := q.Stop(); err != nil {
		return nil, fmt.Errorf("ysb: query: %w", err)
	}
	t, ok := cat.Lookup("ysb")
	if !ok {
		return nil, fmt.Errorf("ysb: the memory sink has no table ysb")
	}
	snap := t.Snapshot()
	defer snap.Release()
	ans, err := readAnswer(snap.Records())
	if err != nil {
		return nil, err
	}
	res.Answer = ans
	return res, nil
}

// readAnswer reads (campaign_id, window_start, views) rows in commit order:
// in Update mode each epoch appends the keys it changed, so the last row of
// a key holds its final count.
func readAnswer(recs []arrow.Record) (Answer, error) {
	out := Answer{}
	for _, rec := range recs {
		c, err := Strings(rec.Column(0))
		w, ok2 := rec.Column(1).(*array.Timestamp)
		n, ok3 := rec.Column(2).(*array.Int64)
		if err != nil || !ok2 || !ok3 {
			return nil, fmt.Errorf("ysb: sink table has schema %s (%v)", rec.Schema(), err)
		}
		for i := range int(rec.NumRows()) {
			// The key outlives the snapshot: copy the string out of
			// the buffer.
			out[WindowKey{strings.Clone(c[i]), int64(w.Value(i))}] = n.Value(i)
		}
	}
	return out, nil
}
