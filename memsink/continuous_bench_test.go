package memsink_test

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/apache/arrow/go/v17/arrow"
	"github.com/apache/arrow/go/v17/arrow/array"
	"github.com/apache/arrow/go/v17/arrow/memory"

	"github.com/arrowstream/arrowstream/arrowstream"
	"github.com/arrowstream/arrowstream/memsink"
)

// BenchmarkContinuousLatency measures end-to-end latency — a record handed
// to the source → its row readable from the memory sink — of the same
// map-like query run with continuous processing (rows visible on arrival,
// 100 ms epochs) and with the micro-batch engine at ProcessingTime(0), in
// the same run, at 10K, 100K and 1M events/s. The feeder hands a batch
// every millisecond; a reader follows the table through Changed. Both
// engines write (and fsync) their checkpoints.
//
//	go test ./memsink/ -run XXX -bench ContinuousLatency -benchtime 1x -cpu 1
func BenchmarkContinuousLatency(b *testing.B) {
	for _, rate := range []int{10_000, 100_000, 1_000_000} {
		for _, engine := range []string{"continuous", "microbatch"} {
			b.Run(fmt.Sprintf("rate=%d/engine=%s", rate, engine), func(b *testing.B) {
				var lat []time.Duration
				var rows int
				start := time.Now()
				for i := 0; i < b.N; i++ {
					l := runLatency(b, engine, rate, time.Second)
					lat = append(lat, l...)
					rows += len(l)
				}
				elapsed := time.Since(start)
				slices.Sort(lat)
				pct := func(p float64) float64 {
					if len(lat) == 0 {
						return 0
					}
					return float64(lat[int(p*float64(len(lat)-1))].Microseconds())
				}
				b.ReportMetric(pct(0.5), "p50-µs")
				b.ReportMetric(pct(0.99), "p99-µs")
				b.ReportMetric(pct(0.999), "p99.9-µs")
				b.ReportMetric(float64(rows)/elapsed.Seconds(), "rows/s")
			})
		}
	}
}

var sentSchema = arrow.NewSchema([]arrow.Field{{Name: "sent", Type: arrow.PrimitiveTypes.Int64}}, nil)

// runLatency runs one engine at rate events/s for d and returns each row's
// latency.
func runLatency(b *testing.B, engine string, rate int, d time.Duration) []time.Duration {
	b.Helper()
	ctx := context.Background()
	mem := memory.NewGoAllocator()
	s := arrowstream.NewSession(arrowstream.SessionOptions{Allocator: mem})
	cat := memsink.NewCatalog()
	memsink.Install(s, cat, memsink.Options{})
	src := arrowstream.NewMemoryStream(mem, sentSchema)
	defer src.Close()
	s.RegisterStream("input", src)
	w := s.ReadStream("input").Select("sent", "sent % 7 AS k").WriteStream().Format("memory").QueryName("out").
		Option("checkpointLocation", b.TempDir())
	if engine == "continuous" {
		w.Trigger(arrowstream.Continuous(100 * time.Millisecond)).Option("continuous.visibility", "arrival")
	} else {
		w.Trigger(arrowstream.ProcessingTime(0))
	}
	q, err := w.Start(ctx)
	if err != nil {
		b.Fatal(err)
	}
	tbl, _ := cat.Lookup("out")
	defer tbl.Close()

	var wg sync.WaitGroup
	done := make(chan struct{})
	var lat []time.Duration
	wg.Add(1)
	go func() { // the reader
		defer wg.Done()
		seen := int64(0)
		for {
			ch := tbl.Changed()
			snap := tbl.Snapshot()
			now := time.Now()
			skip := seen
			for _, rec := range snap.Records() {
				n := rec.NumRows()
				if skip >= n {
					skip -= n
					continue
				}
				sent := rec.Column(0).(*array.Int64).Int64Values()
				for _, ns := range sent[skip:] {
					lat = append(lat, now.Sub(time.Unix(0, ns)))
				}
				seen += n - skip
				skip = 0
			}
			snap.Release()
			select {
			case <-ch:
			case <-done:
				return
			}
		}
	}()
	perTick := max(rate/1000, 1)
	vals := make([]int64, perTick)
	tick := time.NewTicker(time.Millisecond)
	end := time.Now().Add(d)
	for now := range tick.C {
		if now.After(end) {
			break
		}
		ns := time.Now().UnixNano()
		for i := range vals {
			vals[i] = ns
		}
		col := array.NewInt64Data(array.NewData(arrow.PrimitiveTypes.Int64, perTick, []*memory.Buffer{nil, memory.NewBufferBytes(arrow.Int64Traits.CastToBytes(slices.Clone(vals)))}, nil, 0, 0))
		rec := array.NewRecord(sentSchema, []arrow.Array{col}, int64(perTick))
		col.Release()
		if _, err := src.AddRecord(rec); err != nil {
			b.Fatal(err)
		}
		rec.Release()
	}
	tick.Stop()
	if err := q.ProcessAllAvailable(ctx); err != nil {
		b.Fatal(err)
	}
	q.Stop()
	close(done)
	wg.Wait()
	return lat
}
