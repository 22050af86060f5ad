package kafka_test

import (
	"context"
	"testing"

	"github.com/apache/arrow/go/v17/arrow"
	"github.com/apache/arrow/go/v17/arrow/memory"
	"go.uber.org/goleak"

	"github.com/arrowstream/arrowstream/arrowstream"
	"github.com/arrowstream/arrowstream/arrowstream/source/kafka"
	"github.com/arrowstream/arrowstream/internal/testutil/poisonmem"
	"github.com/arrowstream/arrowstream/vector"
	vt "github.com/arrowstream/arrowstream/vector/vectortest"
)

// TestSinkClosedWhenQueryStops: stopping a query with a Kafka sink closes
// its producer (arrowstream.ClosingSink): no goroutine of the query or of
// the producer is left, and the sink refuses further epochs.
func TestSinkClosedWhenQueryStops(t *testing.T) {
	c := newCluster(t, 1, "out")
	// kfake's own goroutines started with the cluster; everything started
	// after this point must be gone once the query stopped.
	defer goleak.VerifyNone(t, goleak.IgnoreCurrent())
	mem := poisonmem.New()
	defer mem.AssertSize(t, 0)
	s := arrowstream.NewSession(arrowstream.SessionOptions{Allocator: mem, NoSync: true})
	var sink *kafka.Sink
	s.RegisterSinkFormat("kafka", func(_ context.Context, mem memory.Allocator, info arrowstream.SinkInfo) (arrowstream.Sink, error) {
		o, err := kafka.ParseSinkOptions(info.Options)
		if err != nil {
			return nil, err
		}
		sink, err = kafka.NewSink(mem, info.Schema, o)
		return sink, err
	})
	schema := arrow.NewSchema([]arrow.Field{{Name: "value", Type: vector.String, Nullable: true}}, nil)
	src := arrowstream.NewMemoryStream(mem, schema)
	defer src.Close()
	s.RegisterStream("input", src)
	q, err := s.ReadStream("input").WriteStream().Format("kafka").
		Option("kafka.bootstrap.servers", brokers(c)).Option("topic", "out").
		Option("checkpointLocation", t.TempDir()).Start(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if _, err := src.AddData([]any{"a"}, []any{"b"}); err != nil {
		t.Fatal(err)
	}
	processAll(t, q) // the producer is connected now
	if err := q.Stop(); err != nil {
		t.Fatal(err)
	}
	rec := vt.BuildRecord(mem, schema, []vt.Row{{"late"}})
	defer rec.Release()
	scan, err := vector.NewScan(schema, rec)
	if err != nil {
		t.Fatal(err)
	}
	if err := sink.AddBatch(context.Background(), 9, scan); err == nil {
		t.Fatal("AddBatch after the query stopped succeeded: the producer is still open")
	}
}
