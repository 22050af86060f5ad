package kafka_test

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/arrowstream/arrowstream/arrowstream"
)

// startContinuousCopy starts a continuous query copying ks's values into
// the durable memory table out, polling Kafka every pollInterval.
func startContinuousCopy(t *testing.T, s *testSession, pollInterval string) *arrowstream.StreamingQuery {
	t.Helper()
	q, err := s.ReadStream("ks").Select("CAST(value AS STRING) AS v").
		WriteStream().Format("memory").QueryName("out").OutputMode(arrowstream.Append).
		Trigger(arrowstream.Continuous(50*time.Millisecond)).Option("continuous.pollInterval", pollInterval).
		Start(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	return q
}

// TestKafkaContinuousQuery: a continuous query reads Kafka end to end,
// across a restart, every record exactly once.
func TestKafkaContinuousQuery(t *testing.T) {
	c := newCluster(t, 3, "events")
	produce(t, c, "events", 3, "a", 0, 300)
	dir := t.TempDir()
	opts := map[string]string{"kafka.bootstrap.servers": brokers(c), "subscribe": "events", "startingOffsets": "earliest"}
	run := func(prefix string, want []string) {
		s := newTestSession(t, dir)
		defer s.close(t)
		if err := s.RegisterSource("ks", "kafka", nil, opts); err != nil {
			t.Fatal(err)
		}
		q := startContinuousCopy(t, s, "10ms")
		processAll(t, q)
		produce(t, c, "events", 3, prefix, 0, 200) // while the query runs
		processAll(t, q)
		if err := q.Stop(); err != nil {
			t.Fatal(err)
		}
		if err := q.Exception(); err != nil {
			t.Fatal(err)
		}
		checkExactlyOnce(t, s.stringColumn(t, "out", "v"), want)
	}
	run("b", append(values("a", 0, 300), values("b", 0, 200)...))
	produce(t, c, "events", 3, "c", 0, 100) // while the query is down
	run("d", append(append(values("a", 0, 300), values("b", 0, 200)...), append(values("c", 0, 100), values("d", 0, 200)...)...))
}

// BenchmarkKafkaContinuousIdlePoll measures what an idle continuous query
// over Kafka costs at each continuous.pollInterval: the Kafka source does
// not notify, so every poll is a LatestOffset, that is a ListOffsets round
// trip (plus a metadata refresh at most every 10 ms). It reports the
// ListOffsets requests the broker served and the CPU time of the process
// (client and in-process broker) per second of wall time.
//
//	go test ./arrowstream/source/kafka/ -run XXX -bench KafkaContinuousIdlePoll -benchtime 1x
func BenchmarkKafkaContinuousIdlePoll(b *testing.B) {
	for _, poll := range []string{"1ms", "10ms", "50ms"} {
		b.Run("pollInterval="+poll, func(b *testing.B) {
			c := newCluster(b, 3, "events")
			var listOffsets atomic.Int64
			c.ControlKey(int16(kmsg.ListOffsets), func(kmsg.Request) (kmsg.Response, error, bool) {
				c.KeepControl()
				listOffsets.Add(1)
				return nil, nil, false
			})
			t := &testing.T{}
			s := newTestSession(t, b.TempDir())
			if err := s.RegisterSource("ks", "kafka", nil, map[string]string{"kafka.bootstrap.servers": brokers(c), "subscribe": "events"}); err != nil {
				b.Fatal(err)
			}
			q := startContinuousCopy(t, s, poll)
			time.Sleep(100 * time.Millisecond) // connected and idle
			const idle = time.Second
			b.ResetTimer()
			var wall time.Duration
			var cpu time.Duration
			var reqs int64
			for range b.N {
				before, cpuBefore := listOffsets.Load(), cpuTime()
				start := time.Now()
				time.Sleep(idle)
				wall += time.Since(start)
				cpu += cpuTime() - cpuBefore
				reqs += listOffsets.Load() - before
			}
			b.StopTimer()
			q.Stop()
			if err := q.Exception(); err != nil {
				b.Fatal(err)
			}
			s.close(t)
			b.ReportMetric(float64(reqs)/wall.Seconds(), "ListOffsets/s")
			b.ReportMetric(float64(cpu.Milliseconds())/wall.Seconds(), "cpu-ms/s")
		})
	}
}
