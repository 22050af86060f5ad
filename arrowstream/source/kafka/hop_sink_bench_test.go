package kafka

import (
	"context"
	"syscall"
	"testing"
	"time"

	"github.com/apache/arrow/go/v17/arrow"
	"github.com/apache/arrow/go/v17/arrow/memory"
	"github.com/twmb/franz-go/pkg/kfake"

	"github.com/arrowstream/arrowstream/arrowstream/stream"
	"github.com/arrowstream/arrowstream/vector"
)

// BenchmarkHopSinkEpoch measures an upstream epoch of the repartition
// hop end to end against an in-process kfake broker (its CPU counts
// too): 48 batches of 8,192 rows hashed into 12 partitions, encoded,
// produced in one transaction with the markers and the writer's epoch
// mark, committed. ns/event is the wall time per row of the epoch,
// cpu-ns/event the process's CPU time (user + system, the broker's too)
// per row.
func BenchmarkHopSinkEpoch(b *testing.B) {
	c, err := kfake.NewCluster(kfake.NumBrokers(1))
	if err != nil {
		b.Fatal(err)
	}
	defer c.Close()
	mem := memory.NewGoAllocator()
	cl, err := NewCluster(ClusterOptions{Name: "c1", Brokers: c.ListenAddrs(), SessionTimeout: 6 * time.Second})
	if err != nil {
		b.Fatal(err)
	}
	spec := stream.HopSpec{Table: "t", Schema: hopTestSchema, KeyColumns: []int{0}, Partitions: 12, EventTimeColumn: 2, CheckpointDir: b.TempDir()}
	sink, err := cl.HopSink(mem, spec)
	if err != nil {
		b.Fatal(err)
	}
	defer sink.(stream.ClosingSink).CloseSink()
	const batches, rows = 48, 8192
	recs := make([]arrow.Record, batches)
	for i := range recs {
		recs[i] = hopRecord(mem, i*rows, rows, 1000)
		defer recs[i].Release()
	}
	ctx := context.Background()
	cpu := func() int64 {
		var ru syscall.Rusage
		if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
			b.Fatal(err)
		}
		return ru.Utime.Nano() + ru.Stime.Nano()
	}
	b.ResetTimer()
	cpu0 := cpu()
	for i := 0; i < b.N; i++ {
		op, err := vector.NewScan(hopTestSchema, recs...)
		if err != nil {
			b.Fatal(err)
		}
		if err := sink.AddBatch(ctx, int64(i), op); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*batches*rows), "ns/event")
	b.ReportMetric(float64(cpu()-cpu0)/float64(b.N*batches*rows), "cpu-ns/event")
}
