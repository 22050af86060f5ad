package memsink_test

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/apache/arrow/go/v17/arrow"
	"github.com/apache/arrow/go/v17/arrow/array"
	"github.com/apache/arrow/go/v17/arrow/memory"

	"github.com/arrowstream/arrowstream/arrowstream"
	"github.com/arrowstream/arrowstream/bench/harness"
	"github.com/arrowstream/arrowstream/memsink"
	"github.com/arrowstream/arrowstream/vector"
)

// keepUpWatch records, per epoch that read input, when its rows became
// visible (the progress is published after the sink committed) and how
// many input rows the query had read by then.
type keepUpWatch struct {
	mu   sync.Mutex
	at   []time.Time
	rows []int64 // cumulative input rows at at[i]
	sum  int64
}

func (w *keepUpWatch) OnQueryStarted(*arrowstream.StreamingQuery) {}
func (w *keepUpWatch) OnQueryProgress(_ *arrowstream.StreamingQuery, p *arrowstream.StreamingQueryProgress) {
	if p.NumInputRows == 0 {
		return
	}
	now := time.Now()
	w.mu.Lock()
	w.sum += p.NumInputRows
	w.at = append(w.at, now)
	w.rows = append(w.rows, w.sum)
	w.mu.Unlock()
}
func (w *keepUpWatch) OnQueryTerminated(*arrowstream.StreamingQuery, error) {}

// BenchmarkKeepUp feeds a stateful query (count per key over 200 shuffle
// partitions, 1000 keys, all present from a first epoch) 10,000 events per second for 3 s, as one block of
// 100 events every 10 ms on a clock of its own (open loop: the feeder
// never waits for the query), under a 10 ms processing-time trigger,
// with durable checkpoints (fsync) and without. The query falls behind
// when the work of an epoch takes longer than the interval: then epochs
// grow and the backlog with them. It reports
//   - keepup: the input's duration over the time from the first block
//     accepted to the last block's rows visible (1: kept up; below 1:
//     the backlog grew);
//   - lag-ms: the time from the last block accepted to its rows visible;
//   - p50-ms, p99-ms: per block, accepted to visible;
//   - epochs: the epochs that read input (about 300 when each took one
//     block; fewer when the query fell behind and batched the backlog);
//   - cpu-ms/epoch: process CPU over the run per such epoch.
func BenchmarkKeepUp(b *testing.B) {
	const (
		pace   = 10 * time.Millisecond
		blocks = 300
		rows   = 100
		keys   = 1000
	)
	for _, d := range durabilities {
		b.Run(d.name, func(b *testing.B) {
			var lat []time.Duration
			var keepup, lag, cpuPerEpoch, epochs float64
			for b.Loop() {
				r := keepUpRun(b, d.noSync, pace, blocks, rows, keys)
				lat = append(lat, r.lat...)
				keepup += r.keepup
				lag += float64(r.lag) / float64(time.Millisecond)
				epochs += float64(r.epochs)
				cpuPerEpoch += float64(r.cpu) / float64(time.Millisecond) / float64(max(r.epochs, 1))
			}
			n := float64(b.N)
			ms := func(t time.Duration) float64 { return float64(t) / float64(time.Millisecond) }
			b.ReportMetric(keepup/n, "keepup")
			b.ReportMetric(lag/n, "lag-ms")
			b.ReportMetric(ms(harness.Percentile(lat, 50)), "p50-ms")
			b.ReportMetric(ms(harness.Percentile(lat, 99)), "p99-ms")
			b.ReportMetric(epochs/n, "epochs")
			b.ReportMetric(cpuPerEpoch/n, "cpu-ms/epoch")
		})
	}
}

type keepUpResult struct {
	lat    []time.Duration
	keepup float64
	lag    time.Duration
	epochs int
	cpu    time.Duration
}

func keepUpRun(b *testing.B, noSync bool, pace time.Duration, blocks, rows, keys int) keepUpResult {
	ctx := context.Background()
	pool := vector.NewPoolAllocator(memory.NewGoAllocator(), 0)
	defer pool.Close()
	s := arrowstream.NewSession(arrowstream.SessionOptions{
		Allocator: pool, CheckpointRoot: b.TempDir(), NoSync: noSync,
		Conf: map[string]string{arrowstream.ConfShufflePartitions: "200"},
	})
	cat := memsink.NewCatalog()
	memsink.Install(s, cat, memsink.Options{MaxEpochs: 4})
	defer func() {
		if t, ok := cat.Drop("keepup"); ok {
			t.Close()
		}
	}()
	schema := arrow.NewSchema([]arrow.Field{{Name: "k", Type: vector.Int64, Nullable: true}}, nil)
	src := arrowstream.NewMemoryStream(pool, schema)
	defer src.Close()
	s.RegisterStream("input", src)
	// The blocks are built before the clock starts.
	recs := make([]arrow.Record, blocks)
	for i := range recs {
		bld := array.NewInt64Builder(pool)
		for j := range rows {
			bld.Append(int64((i*rows + j*7) % keys))
		}
		col := bld.NewArray()
		bld.Release()
		recs[i] = array.NewRecord(schema, []arrow.Array{col}, int64(rows))
		col.Release()
	}
	defer func() {
		for _, r := range recs {
			r.Release()
		}
	}()
	watch := &keepUpWatch{}
	s.Streams().AddListener(watch)
	q, err := s.ReadStream("input").GroupBy("k").Agg("count(*) AS n").
		WriteStream().Format("memory").QueryName("keepup").OutputMode(arrowstream.Update).
		Trigger(arrowstream.ProcessingTime(pace)).Start(ctx)
	if err != nil {
		b.Fatal(err)
	}
	defer q.Stop()
	// A first block of every key, before the clock: starting the query
	// (creating 200 partitions' directories, the first snapshots) is not
	// what keeping up measures.
	warm := array.NewInt64Builder(pool)
	for k := range keys {
		warm.Append(int64(k))
	}
	wcol := warm.NewArray()
	warm.Release()
	wrec := array.NewRecord(schema, []arrow.Array{wcol}, int64(keys))
	wcol.Release()
	_, err = src.AddRecord(wrec)
	wrec.Release()
	if err != nil {
		b.Fatal(err)
	}
	if err := q.ProcessAllAvailable(ctx); err != nil {
		b.Fatal(err)
	}
	watch.mu.Lock()
	watch.at, watch.rows, watch.sum = nil, nil, 0
	watch.mu.Unlock()
	accepted := make([]time.Time, blocks)
	span := harness.StartSpan()
	start := time.Now()
	for i, r := range recs {
		if d := time.Until(start.Add(time.Duration(i) * pace)); d > 0 {
			time.Sleep(d)
		}
		accepted[i] = time.Now()
		if _, err := src.AddRecord(r); err != nil {
			b.Fatal(err)
		}
	}
	if err := q.ProcessAllAvailable(ctx); err != nil {
		b.Fatal(err)
	}
	_, cpu := span.Stop()
	if err := q.Stop(); err != nil {
		b.Fatal(err)
	}
	watch.mu.Lock()
	defer watch.mu.Unlock()
	res := keepUpResult{epochs: len(watch.at), cpu: cpu}
	if n := watch.rows; len(n) == 0 || n[len(n)-1] != int64(blocks*rows) {
		b.Fatalf("the query read %v rows, want %d", n, blocks*rows)
	}
	// Block i is visible at the first epoch whose cumulative rows cover
	// it.
	e := 0
	for i, t := range accepted {
		need := int64((i + 1) * rows)
		for watch.rows[e] < need {
			e++
		}
		res.lat = append(res.lat, watch.at[e].Sub(t))
	}
	last := watch.at[len(watch.at)-1]
	res.lag = last.Sub(accepted[blocks-1])
	res.keepup = float64(time.Duration(blocks)*pace) / float64(last.Sub(accepted[0])+pace)
	return res
}
