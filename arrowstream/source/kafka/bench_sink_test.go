package kafka_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/apache/arrow/go/v17/arrow"
	"github.com/apache/arrow/go/v17/arrow/memory"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/arrowstream/arrowstream/arrowstream/source/kafka"
	"github.com/arrowstream/arrowstream/vector"
	vt "github.com/arrowstream/arrowstream/vector/vectortest"
)

// BenchmarkKafkaSink writes 50k rows (key, 100-byte value) per iteration
// with the sink (which copies each column's bytes out of Arrow before
// producing) and the same rows as prebuilt kgo records with a bare
// producer, alternating the two so that both see the same machine load.
// It reports both rates and the sink/bare ratio.
//
//	go test -run '^$' -bench BenchmarkKafkaSink -benchtime 5x ./arrowstream/source/kafka/
func BenchmarkKafkaSink(b *testing.B) {
	const rows = 50_000
	c := newCluster(b, 4, "sink", "bare")
	mem := memory.NewGoAllocator()
	schema := arrow.NewSchema([]arrow.Field{{Name: "key", Type: vector.String, Nullable: true}, {Name: "value", Type: vector.String, Nullable: true}}, nil)
	value := strings.Repeat("x", 100)
	data := make([]vt.Row, rows)
	bare := make([]*kgo.Record, rows)
	for i := range data {
		k := fmt.Sprint(i)
		data[i] = vt.Row{k, value}
		bare[i] = &kgo.Record{Topic: "bare", Key: []byte(k), Value: []byte(value)}
	}
	rec := vt.BuildRecord(mem, schema, data)
	defer rec.Release()
	sink, err := kafka.NewSink(mem, schema, kafka.SinkOptions{Brokers: c.ListenAddrs(), Topic: "sink"})
	if err != nil {
		b.Fatal(err)
	}
	defer sink.Close()
	cl, err := kgo.NewClient(kgo.SeedBrokers(c.ListenAddrs()...), kgo.RequiredAcks(kgo.AllISRAcks()))
	if err != nil {
		b.Fatal(err)
	}
	defer cl.Close()
	ctx := context.Background()
	var sinkTime, bareTime time.Duration
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		t0 := time.Now()
		rec.Retain()
		scan, err := vector.NewScan(schema, rec)
		rec.Release()
		if err != nil {
			b.Fatal(err)
		}
		if err := sink.AddBatch(ctx, int64(i), scan); err != nil {
			b.Fatal(err)
		}
		t1 := time.Now()
		for _, r := range bare {
			r.Partition, r.Offset = 0, 0
		}
		if err := cl.ProduceSync(ctx, bare...).FirstErr(); err != nil {
			b.Fatal(err)
		}
		sinkTime += t1.Sub(t0)
		bareTime += time.Since(t1)
	}
	n := float64(rows) * float64(b.N)
	b.ReportMetric(n/sinkTime.Seconds(), "sink-rows/s")
	b.ReportMetric(n/bareTime.Seconds(), "bare-kgo-rows/s")
	b.ReportMetric(bareTime.Seconds()/sinkTime.Seconds(), "sink/bare")
}
