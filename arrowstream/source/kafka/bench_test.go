package kafka_test

import (
	"context"
	"fmt"
	"io"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/apache/arrow/go/v17/arrow/memory"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/arrowstream/arrowstream/arrowstream"
	"github.com/arrowstream/arrowstream/arrowstream/source/kafka"
	"github.com/arrowstream/arrowstream/vector"
)

const benchRecords, benchPartitions = 200_000, 4

// benchCluster holds benchRecords 100-byte records in 4 partitions.
func benchCluster(b *testing.B) string {
	c := newCluster(b, benchPartitions, "bench")
	cl, err := kgo.NewClient(kgo.SeedBrokers(c.ListenAddrs()...), kgo.RecordPartitioner(kgo.ManualPartitioner()), kgo.ProducerLinger(0))
	if err != nil {
		b.Fatal(err)
	}
	defer cl.Close()
	value := []byte(strings.Repeat("x", 100))
	recs := make([]*kgo.Record, 0, 10_000)
	for i := 0; i < benchRecords; i++ {
		recs = append(recs, &kgo.Record{Topic: "bench", Partition: int32(i % benchPartitions), Key: []byte(fmt.Sprint(i)), Value: value})
		if len(recs) == cap(recs) {
			if err := cl.ProduceSync(context.Background(), recs...).FirstErr(); err != nil {
				b.Fatal(err)
			}
			recs = recs[:0]
		}
	}
	return strings.Join(c.ListenAddrs(), ",")
}

// BenchmarkKafkaIngest reads the same 200k records (100-byte values, 4
// partitions) with the source, to Arrow records, and with a bare kgo
// consumer that only counts them, alternating the two in every iteration
// so that both see the same machine load. It reports both rates and the
// source/bare ratio (the goal: ≥ 0.8).
//
//	go test -run '^$' -bench BenchmarkKafkaIngest -benchtime 5x ./arrowstream/source/kafka/
func BenchmarkKafkaIngest(b *testing.B) {
	addrs := benchCluster(b)
	src, start, end := openBenchSource(b, addrs)
	var bareTime, sourceTime, bareCPU, sourceCPU time.Duration
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		t0, c0 := time.Now(), cpuTime()
		bareConsume(b, addrs)
		t1, c1 := time.Now(), cpuTime()
		if n := sourceRead(b, src, start, end); n != benchRecords {
			b.Fatalf("read %d records, want %d", n, benchRecords)
		}
		bareTime += t1.Sub(t0)
		sourceTime += time.Since(t1)
		bareCPU += c1 - c0
		sourceCPU += cpuTime() - c1
	}
	rows := float64(benchRecords) * float64(b.N)
	b.ReportMetric(rows/sourceTime.Seconds(), "source-rows/s")
	b.ReportMetric(rows/bareTime.Seconds(), "bare-kgo-rows/s")
	b.ReportMetric(bareTime.Seconds()/sourceTime.Seconds(), "source/bare")
	// The process's CPU time (kfake's broker included) per phase: on a
	// shared machine it varies less than wall time.
	b.ReportMetric(bareCPU.Seconds()/sourceCPU.Seconds(), "source/bare-cpu")
}

// openBenchSource opens a source over the benchmark topic, from its
// earliest to its latest offsets, on the session's default allocator;
// the benchmark's cleanup closes it.
func openBenchSource(b *testing.B, addrs string) (src *kafka.Source, start, end arrowstream.Offset) {
	b.Helper()
	opts, err := kafka.ParseSourceOptions(map[string]string{"kafka.bootstrap.servers": addrs, "subscribe": "bench", "startingOffsets": "earliest"})
	if err != nil {
		b.Fatal(err)
	}
	src, err = kafka.NewSource(vector.NewPoolAllocator(memory.NewGoAllocator(), 0), opts)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { src.Close() })
	if end, err = src.LatestOffset(context.Background()); err != nil {
		b.Fatal(err)
	}
	return src, src.InitialOffset(), end
}

// cpuTime is the process's user+system CPU time so far.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// bareConsume reads every benchmark record with a plain kgo consumer.
func bareConsume(b *testing.B, addrs string) {
	offs := map[string]map[int32]kgo.Offset{"bench": {}}
	for p := int32(0); p < benchPartitions; p++ {
		offs["bench"][p] = kgo.NewOffset().At(0)
	}
	cl, err := kgo.NewClient(kgo.SeedBrokers(strings.Split(addrs, ",")...), kgo.ConsumePartitions(offs), kgo.FetchMaxPartitionBytes(8<<20))
	if err != nil {
		b.Fatal(err)
	}
	defer cl.Close()
	n, bytes := 0, 0
	for n < benchRecords {
		fs := cl.PollFetches(context.Background())
		if err := fs.Err0(); err != nil {
			b.Fatal(err)
		}
		fs.EachRecord(func(r *kgo.Record) { n++; bytes += len(r.Value) })
	}
}

// sourceRead drains one Read of the source.
func sourceRead(b *testing.B, src *kafka.Source, start, end arrowstream.Offset) int64 {
	ctx := context.Background()
	op, err := src.Read(ctx, start, end)
	if err != nil {
		b.Fatal(err)
	}
	defer op.Close()
	n := int64(0)
	for {
		rec, err := op.Next(ctx)
		if err == io.EOF {
			return n
		}
		if err != nil {
			b.Fatal(err)
		}
		n += rec.NumRows()
		rec.Release()
	}
}
