package duckdbpeer

import (
	"context"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"runtime"
	"slices"
	"testing"

	"github.com/apache/arrow/go/v17/arrow"
	"github.com/apache/arrow/go/v17/arrow/array"
	"github.com/apache/arrow/go/v17/arrow/memory"

	"github.com/arrowstream/arrowstream/arrowstream"
	"github.com/arrowstream/arrowstream/bench/gen"
	"github.com/arrowstream/arrowstream/vector"
)

// The windowed-aggregation benchmark of issue 5: a 10-second tumbling-window
// count per key with a 5-second watermark, Append mode, over epochs of
// (key bigint, ts timestamp) rows whose times are slightly out of order.
//
// Arrowstream runs the streaming query (memory source → withWatermark →
// groupBy(window(ts, '10 seconds'), key).count(), Append) epoch by epoch:
// add the epoch's record, ProcessAllAvailable (the data batch, then the
// no-data batch that evicts the windows the new watermark closed).
//
// DuckDB (threads = 1) computes the same thing incrementally, per epoch, on
// a table agg(w BIGINT µs, key BIGINT, n BIGINT, PRIMARY KEY (w, key)):
//
//	INSERT INTO agg SELECT epoch_us(time_bucket(INTERVAL 10 s, ts)), key, count(*)
//	  FROM e<i> WHERE <window end> > <late watermark> GROUP BY ALL
//	  ON CONFLICT (w, key) DO UPDATE SET n = agg.n + excluded.n;
//	SELECT max(ts) FROM e<i>;                      -- new watermark = max − 5 s
//	DELETE FROM agg WHERE w + 10 s <= <watermark> RETURNING key, w, n;  -- Append output
//
// Each epoch's rows are loaded (untimed) into their own table e<i> first, as
// Arrowstream's records are built untimed. Both engines' emitted windows are
// checked, untimed, against a Go recomputation (and so against each other).
var (
	winEpochs    = flag.Int("win.epochs", 32, "epochs of the windowed-aggregation benchmark")
	winEpochRows = flag.Int("win.epochrows", 64*1024, "rows per epoch of the windowed-aggregation benchmark")
	winKeys      = flag.Int("win.keys", 10_000, "distinct keys of the windowed-aggregation benchmark")
	winSync      = flag.Bool("win.sync", false, "fsync Arrowstream's checkpoint files (default: NoSync)")
)

const (
	winSeed     = 20261130
	winWindowUs = 10_000_000
	winDelayUs  = 5_000_000
	// Event time advances by one window per epoch; a row's time is up to
	// winJitterUs before its place in the sequence, less than the delay, so
	// no row is late and every count is exact.
	winJitterUs = 2_000_000
	winStartUs  = 1_700_000_000_000_000
)

// winData is one data set: per epoch, the keys and times (µs).
type winData struct {
	keys, ts [][]int64
	recs     []arrow.Record
	duck     *duckTable
	want     []winRow // windows emitted by the end: end ≤ final watermark
	finalWm  int64
}

// winRow is one emitted window count.
type winRow = gen.WinRow

func winCmp(a, b winRow) int {
	if a.Start != b.Start {
		return cmpInt(a.Start, b.Start)
	}
	if a.Key != b.Key {
		return cmpInt(a.Key, b.Key)
	}
	return cmpInt(a.N, b.N)
}

func cmpInt(a, b int64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

func winBucket(ts int64) int64 { return ts - ((ts%winWindowUs)+winWindowUs)%winWindowUs }

var winSchema = arrow.NewSchema([]arrow.Field{
	{Name: "key", Type: vector.Int64},
	{Name: "ts", Type: vector.Timestamp},
}, nil)

func newWinData(epochs, rows, nKeys int) *winData {
	d := &winData{}
	s := uint64(winSeed)
	next := func() uint64 { // splitmix64
		s += 0x9e3779b97f4a7c15
		z := s
		z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9
		z = (z ^ (z >> 27)) * 0x94d049bb133111eb
		return z ^ (z >> 31)
	}
	counts := map[[2]int64]int64{}
	wm := int64(0)
	for e := 0; e < epochs; e++ {
		keys, ts := make([]int64, rows), make([]int64, rows)
		maxTs := int64(0)
		for i := range keys {
			g := int64(e*rows + i)
			keys[i] = int64(next() % uint64(nKeys))
			ts[i] = winStartUs + g*winWindowUs/int64(rows) - int64(next()%winJitterUs)
			maxTs = max(maxTs, ts[i])
			counts[[2]int64{keys[i], winBucket(ts[i])}]++
		}
		wm = max(wm, maxTs-winDelayUs)
		d.keys, d.ts = append(d.keys, keys), append(d.ts, ts)
	}
	d.finalWm = wm
	for k, n := range counts {
		if k[1]+winWindowUs <= wm {
			d.want = append(d.want, winRow{Key: k[0], Start: k[1], N: n})
		}
	}
	slices.SortFunc(d.want, winCmp)
	return d
}

func (d *winData) rows() int { return len(d.keys) * len(d.keys[0]) }

// records returns one Arrow record per epoch, built once.
func (d *winData) records() []arrow.Record {
	if d.recs == nil {
		for e := range d.keys {
			kb := array.NewInt64Builder(memory.DefaultAllocator)
			tb := array.NewTimestampBuilder(memory.DefaultAllocator, vector.Timestamp.(*arrow.TimestampType))
			kb.AppendValues(d.keys[e], nil)
			for _, t := range d.ts[e] {
				tb.Append(arrow.Timestamp(t))
			}
			k, t := kb.NewArray(), tb.NewArray()
			d.recs = append(d.recs, array.NewRecord(winSchema, []arrow.Array{k, t}, int64(len(d.keys[e]))))
			k.Release()
			t.Release()
			kb.Release()
			tb.Release()
		}
	}
	return d.recs
}

func (d *winData) close() {
	for _, r := range d.recs {
		r.Release()
	}
	d.recs = nil
	if d.duck != nil {
		d.duck.close()
		d.duck = nil
	}
}

// check compares an engine's emitted windows with the recomputation.
func (d *winData) check(got []winRow) error {
	got = slices.Clone(got)
	slices.SortFunc(got, winCmp)
	if len(got) != len(d.want) {
		return fmt.Errorf("%d windows emitted, want %d", len(got), len(d.want))
	}
	for i := range got {
		if got[i] != d.want[i] {
			return fmt.Errorf("emitted window %d: (key %d, start %d µs, count %d), want (key %d, start %d µs, count %d)",
				i, got[i].Key, got[i].Start, got[i].N, d.want[i].Key, d.want[i].Start, d.want[i].N)
		}
	}
	return nil
}

// winSink collects Arrowstream's Append output (key, ws, n).
type winSink struct{ rows []winRow }

func (s *winSink) AddBatch(ctx context.Context, _ int64, data vector.Operator) error {
	defer data.Close()
	for {
		rec, err := data.Next(ctx)
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return err
		}
		k, ok1 := rec.Column(0).(*array.Int64)
		w, ok2 := rec.Column(1).(*array.Timestamp)
		n, ok3 := rec.Column(2).(*array.Int64)
		if !ok1 || !ok2 || !ok3 {
			err = fmt.Errorf("sink got schema %s", rec.Schema())
		} else {
			kv, wv, nv := k.Int64Values(), w.TimestampValues(), n.Int64Values()
			for i := range kv {
				s.rows = append(s.rows, winRow{Key: kv[i], Start: int64(wv[i]), N: nv[i]})
			}
		}
		rec.Release()
		if err != nil {
			return err
		}
	}
}

// winState is what the state store held: the largest memoryUsedBytes of
// the run and the state rows ((window, key) groups) at that point.
type winState struct{ bytes, rows int64 }

// runArrowstreamWindowed runs the streaming query over all epochs on a
// fresh checkpoint directory and returns the emitted windows.
func runArrowstreamWindowed(ctx context.Context, mem memory.Allocator, recs []arrow.Record, dir string) ([]winRow, winState, error) {
	s := arrowstream.NewSession(arrowstream.SessionOptions{
		Allocator: mem, NoSync: !*winSync,
		Logger: slog.New(slog.NewTextHandler(io.Discard, nil)),
	})
	src := arrowstream.NewMemoryStream(mem, winSchema)
	defer src.Close()
	s.RegisterStream("events", src)
	sink := &winSink{}
	q, err := s.ReadStream("events").
		WithWatermark("ts", "5 seconds").
		GroupBy("window(ts, '10 seconds') AS w", "key").Agg("count(*) AS n").
		Select("key", "w.Start AS ws", "n").
		WriteStream().Sink(sink).OutputMode(arrowstream.Append).Option("checkpointLocation", dir).Start(ctx)
	if err != nil {
		return nil, winState{}, err
	}
	defer q.Stop()
	var st winState
	for _, rec := range recs {
		if _, err := src.AddRecord(rec); err != nil {
			return nil, st, err
		}
		if err := q.ProcessAllAvailable(ctx); err != nil {
			return nil, st, err
		}
		for _, p := range q.RecentProgress() {
			if len(p.StateOperators) == 1 && p.StateOperators[0].MemoryUsedBytes > st.bytes {
				st = winState{p.StateOperators[0].MemoryUsedBytes, p.StateOperators[0].NumRowsTotal}
			}
		}
	}
	return sink.rows, st, q.Stop()
}

// BenchmarkWindowed measures the windowed count on both engines over the
// same epochs (see the top of the file). Run with -cpu 1.
func BenchmarkWindowed(b *testing.B) {
	d := newWinData(*winEpochs, *winEpochRows, *winKeys)
	defer d.close()
	ctx := context.Background()
	var asRate, duckRate float64
	b.Run("arrowstream", func(b *testing.B) {
		recs := d.records()
		pool := vector.NewPoolAllocator(memory.NewGoAllocator(), 0)
		defer pool.Close()
		var st winState
		iters := 0
		for b.Loop() {
			out, s, err := runArrowstreamWindowed(ctx, pool, recs, b.TempDir())
			if err != nil {
				b.Fatal(err)
			}
			b.StopTimer()
			if err := d.check(out); err != nil {
				b.Fatalf("Arrowstream gave a wrong answer: %v", err)
			}
			st = s
			iters++
			b.StartTimer()
		}
		asRate = float64(d.rows()) * float64(iters) / b.Elapsed().Seconds()
		b.ReportMetric(asRate, "events/s")
		b.ReportMetric(asRate/float64(runtime.GOMAXPROCS(0)), "events/s/core")
		if st.rows > 0 {
			b.ReportMetric(float64(st.bytes)/float64(st.rows), "state-B/key")
			b.ReportMetric(float64(st.rows), "state-keys")
		}
	})
	b.Run("duckdb-1thread", func(b *testing.B) {
		if d.duck == nil {
			t, err := loadDuckWindowed(d.keys, d.ts)
			if err != nil {
				b.Fatalf("loading DuckDB: %v", err)
			}
			d.duck = t
		}
		if err := d.duck.setThreads(1); err != nil {
			b.Fatal(err)
		}
		iters := 0
		for b.Loop() {
			out, err := runDuckWindowed(ctx, d.duck, len(d.keys))
			if err != nil {
				b.Fatal(err)
			}
			b.StopTimer()
			if err := d.check(out); err != nil {
				b.Fatalf("DuckDB gave a wrong answer: %v", err)
			}
			iters++
			b.StartTimer()
		}
		duckRate = float64(d.rows()) * float64(iters) / b.Elapsed().Seconds()
		b.ReportMetric(duckRate, "events/s")
	})
	if asRate > 0 && duckRate > 0 {
		fmt.Printf("\nwindowed count, %d epochs × %d rows, %d keys: arrowstream %.2f M events/s, duckdb-1thread %.2f M events/s, ratio %.2fx (GOMAXPROCS=%d)\n",
			len(d.keys), len(d.keys[0]), *winKeys, asRate/1e6, duckRate/1e6, asRate/duckRate, runtime.GOMAXPROCS(0))
	}
}

// TestWindowedPeers runs both sides of BenchmarkWindowed on a small data set
// (Arrowstream on a leak-checked allocator) and checks that the checker can
// fail.
func TestWindowedPeers(t *testing.T) {
	d := newWinData(6, 4096, 500)
	defer d.close()
	if len(d.want) == 0 {
		t.Fatal("no window closes in the small data set")
	}
	ctx := context.Background()
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	out, _, err := runArrowstreamWindowed(ctx, mem, d.records(), t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	if err := d.check(out); err != nil {
		t.Fatalf("arrowstream: %v", err)
	}
	mem.AssertSize(t, 0)
	tbl, err := loadDuckWindowed(d.keys, d.ts)
	if err != nil {
		t.Fatal(err)
	}
	d.duck = tbl
	dout, err := runDuckWindowed(ctx, tbl, len(d.keys))
	if err != nil {
		t.Fatal(err)
	}
	if err := d.check(dout); err != nil {
		t.Fatalf("duckdb: %v", err)
	}
	dout[len(dout)/2].N++
	if err := d.check(dout); err == nil {
		t.Fatal("a wrong count passed the check")
	}
}
