package memsink_test

import (
	"context"
	"errors"
	"io/fs"
	"math/rand"
	"os"
	"path/filepath"
	"strconv"
	"testing"

	"github.com/apache/arrow/go/v17/arrow"
	"github.com/apache/arrow/go/v17/arrow/array"

	"github.com/arrowstream/arrowstream/arrowstream"
	"github.com/arrowstream/arrowstream/checkpoint"
	"github.com/arrowstream/arrowstream/vector"
)

// BenchmarkWindowedAggregationWatermark streams 64K-row epochs of 10K keys
// through GROUP BY key, window(eventTime, '10 seconds') count(*), sum(v)
// with a 10 s watermark in Append mode into the memory sink. Each epoch
// covers the next 5 s of event time, so a window closes (is emitted and
// evicted) every other epoch and the state holds about three windows per
// key. It reports events/s and the state's bytes (encoded keys + values in
// the store after the last epoch) per grouping key and per state row.
func BenchmarkWindowedAggregationWatermark(b *testing.B) {
	const (
		rows    = 64 << 10
		keys    = 10_000
		epochMs = 5_000
	)
	for _, d := range durabilities {
		b.Run(d.name, func(b *testing.B) {
			ctx := context.Background()
			s := benchSession(b, d.noSync)
			src := feedEvents(b, s, rows, epochMs, func(r *rand.Rand, _ int) int64 { return r.Int63n(keys) })
			defer src.Close()
			dir := b.TempDir()
			b.ResetTimer()
			q, err := s.ReadStream("events").
				WithColumn("eventTime", "timestamp_millis(ts)").
				WithWatermark("eventTime", "10 seconds").
				GroupBy("key", "window(eventTime, '10 seconds') AS w").Agg("count(*) AS n", "sum(v) AS s").
				WriteStream().Format("memory").QueryName("windowed").OutputMode(arrowstream.Append).
				Option("checkpointLocation", dir).Start(ctx)
			last := runTimed(b, ctx, q, err, rows)
			if last == nil {
				b.Fatal("no progress")
			}
			stateBytes, stateRows := stateSize(b, filepath.Join(dir, "state", "0"), last.BatchID+1)
			b.ReportMetric(float64(stateBytes)/keys, "stateB/key")
			if stateRows > 0 {
				b.ReportMetric(float64(stateBytes)/float64(stateRows), "stateB/row")
			}
		})
	}
}

// feedEvents registers the stream "events" (key, ts in ms, v) and adds
// b.N epochs of rows events: keys from keyOf, event times spread over the
// epoch's epochMs, values random. The caller closes the stream.
func feedEvents(b *testing.B, s *arrowstream.Session, rows int, epochMs int64, keyOf func(r *rand.Rand, epoch int) int64) *arrowstream.MemoryStream {
	schema := arrow.NewSchema([]arrow.Field{
		{Name: "key", Type: vector.Int64, Nullable: true},
		{Name: "ts", Type: vector.Int64, Nullable: true},
		{Name: "v", Type: vector.Int64, Nullable: true},
	}, nil)
	src := arrowstream.NewMemoryStream(s.Allocator(), schema)
	src.SetMaxOffsetsPerTrigger(1)
	s.RegisterStream("events", src)
	r := rand.New(rand.NewSource(1))
	kv, tv, vv := make([]int64, rows), make([]int64, rows), make([]int64, rows)
	for i := 0; i < b.N; i++ {
		for j := range kv {
			kv[j] = keyOf(r, i)
			tv[j] = int64(i)*epochMs + r.Int63n(epochMs)
			vv[j] = r.Int63n(1000)
		}
		var cols []arrow.Array
		for _, vals := range [][]int64{kv, tv, vv} {
			bld := array.NewInt64Builder(s.Allocator())
			bld.AppendValues(vals, nil)
			cols = append(cols, bld.NewArray())
			bld.Release()
		}
		rec := array.NewRecord(schema, cols, int64(rows))
		for _, c := range cols {
			c.Release()
		}
		src.AddRecord(rec)
		rec.Release()
	}
	return src
}

// runTimed waits for the started query to process every epoch, stops the
// timer, reports events/s, stops the query and returns its last progress.
func runTimed(b *testing.B, ctx context.Context, q *arrowstream.StreamingQuery, startErr error, rows int) *arrowstream.StreamingQueryProgress {
	if startErr != nil {
		b.Fatal(startErr)
	}
	if err := q.ProcessAllAvailable(ctx); err != nil {
		b.Fatal(err)
	}
	b.StopTimer()
	b.ReportMetric(float64(rows)*float64(b.N)/b.Elapsed().Seconds(), "events/s")
	last := q.LastProgress()
	q.Stop()
	return last
}

// stateSize sums the encoded bytes and rows of every partition of an
// operator's state at version.
func stateSize(b *testing.B, opDir string, version int64) (bytes, rows int64) {
	b.Helper()
	ents, err := os.ReadDir(opDir)
	if errors.Is(err, fs.ErrNotExist) {
		// No partition wrote a file (its state lives in the epoch log),
		// and the operator's schema is in the checkpoint's metadata: no
		// directory, as there are no partition directories below one.
		return 0, 0
	}
	if err != nil {
		b.Fatal(err)
	}
	for _, e := range ents {
		if _, err := strconv.Atoi(e.Name()); err != nil || !e.IsDir() {
			continue
		}
		part, err := checkpoint.OpenStorePartition(filepath.Join(opDir, e.Name()), &checkpoint.Writer{NoSync: true}, checkpoint.StoreOptions{})
		if err != nil {
			b.Fatal(err)
		}
		st, err := part.Begin(version)
		if err != nil {
			b.Fatal(err)
		}
		st.Range(func(k, v []byte) bool {
			bytes += int64(len(k) + len(v))
			rows++
			return true
		})
		st.Abort()
	}
	return bytes, rows
}

// BenchmarkSessionWindowAppend streams 64K-row epochs through GROUP BY key,
// session_window(eventTime, '3 seconds') count(*), sum(v) with a 5 s
// watermark in Append mode. Each epoch covers the next 5 s of event time
// and half of the 10K keys (alternating), so every key's session closes
// after its burst and is emitted and evicted once the watermark passes.
// It reports events/s and the state's bytes per key and per stored
// session (the state holds one row per key: its sessions).
func BenchmarkSessionWindowAppend(b *testing.B) {
	const (
		rows    = 64 << 10
		keys    = 10_000
		epochMs = 5_000
	)
	for _, d := range durabilities {
		b.Run(d.name, func(b *testing.B) {
			ctx := context.Background()
			s := benchSession(b, d.noSync)
			// Half of the keys per epoch, alternating.
			src := feedEvents(b, s, rows, epochMs, func(r *rand.Rand, epoch int) int64 { return 2*r.Int63n(keys/2) + int64(epoch%2) })
			defer src.Close()
			dir := b.TempDir()
			b.ResetTimer()
			q, err := s.ReadStream("events").
				WithColumn("eventTime", "timestamp_millis(ts)").
				WithWatermark("eventTime", "5 seconds").
				GroupBy("key", "session_window(eventTime, '3 seconds') AS session").Agg("count(*) AS n", "sum(v) AS s").
				WriteStream().Format("memory").QueryName("sessions").OutputMode(arrowstream.Append).
				Option("checkpointLocation", dir).Start(ctx)
			last := runTimed(b, ctx, q, err, rows)
			if last == nil || len(last.StateOperators) != 1 {
				b.Fatal("no state progress")
			}
			stateBytes, _ := stateSize(b, filepath.Join(dir, "state", "0"), last.BatchID+1)
			b.ReportMetric(float64(stateBytes)/keys, "stateB/key")
			if n := last.StateOperators[0].NumRowsTotal; n > 0 {
				b.ReportMetric(float64(stateBytes)/float64(n), "stateB/session")
			}
		})
	}
}
