package kafka_test

import (
	"context"
	"errors"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/apache/arrow/go/v17/arrow"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/arrowstream/arrowstream/arrowstream/source/kafka"
	"github.com/arrowstream/arrowstream/internal/testutil"
	"github.com/arrowstream/arrowstream/internal/testutil/poisonmem"
	"github.com/arrowstream/arrowstream/vector"
	vt "github.com/arrowstream/arrowstream/vector/vectortest"
)

// failProduce makes the cluster answer every produce request with a
// retriable error (NOT_LEADER_FOR_PARTITION) while failing is set, so the
// producer keeps the records buffered and retries; seen is closed at the
// first refused request.
func failProduce(c *kfake.Cluster, failing *atomic.Bool, seen chan struct{}) {
	var once atomic.Bool
	c.ControlKey(int16(kmsg.Produce), func(req kmsg.Request) (kmsg.Response, error, bool) {
		c.KeepControl()
		if !failing.Load() {
			return nil, nil, false
		}
		pr := req.(*kmsg.ProduceRequest)
		resp := pr.ResponseKind().(*kmsg.ProduceResponse)
		for _, rt := range pr.Topics {
			st := kmsg.NewProduceResponseTopic()
			st.Topic = rt.Topic
			for _, rp := range rt.Partitions {
				sp := kmsg.NewProduceResponseTopicPartition()
				sp.Partition = rp.Partition
				sp.ErrorCode = kerr.NotLeaderForPartition.Code
				st.Partitions = append(st.Partitions, sp)
			}
			resp.Topics = append(resp.Topics, st)
		}
		if once.CompareAndSwap(false, true) {
			close(seen)
		}
		return resp, nil, true
	})
}

// addBatch writes rows (one string value each) as one epoch.
func addBatch(ctx context.Context, t *testing.T, sink *kafka.Sink, mem *poisonmem.Allocator, schema *arrow.Schema, epoch int64, vals []string) error {
	t.Helper()
	rows := make([]vt.Row, len(vals))
	for i, v := range vals {
		rows[i] = vt.Row{v}
	}
	rec := vt.BuildRecord(mem, schema, rows)
	defer rec.Release()
	scan, err := vector.NewScan(schema, rec)
	if err != nil {
		t.Fatal(err)
	}
	return sink.AddBatch(ctx, epoch, scan)
}

// topicValues reads the records of the topic's partition 0 until the
// last one read is last.
func topicValues(t *testing.T, c *kfake.Cluster, topic string, last string) []string {
	t.Helper()
	cl, err := kgo.NewClient(kgo.SeedBrokers(c.ListenAddrs()...), kgo.ConsumePartitions(map[string]map[int32]kgo.Offset{topic: {0: kgo.NewOffset().AtStart()}}))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	ctx, cancel := context.WithTimeout(context.Background(), testutil.Scaled(time.Minute))
	defer cancel()
	var out []string
	for len(out) == 0 || out[len(out)-1] != last {
		fs := cl.PollFetches(ctx)
		if ctx.Err() != nil {
			t.Fatalf("%s not among the %d records of %s: %q", last, len(out), topic, out)
		}
		fs.EachRecord(func(r *kgo.Record) { out = append(out, string(r.Value)) })
	}
	return out
}

// TestSinkFailedFlushKeepsRecordsIntact: when an epoch's flush fails (the
// context ends while the broker refuses every produce), the producer still
// holds the epoch's records and sends them once the broker accepts
// produces again, after AddBatch returned and the Arrow buffers were
// released and poisoned. The records must not point into those buffers
// (nor into record slots the next epoch reuses): everything that reaches
// Kafka is a value that was written, and the next epoch arrives whole.
func TestSinkFailedFlushKeepsRecordsIntact(t *testing.T) {
	c := newCluster(t, 1, "out")
	mem := poisonmem.New()
	defer mem.AssertSize(t, 0)
	schema := arrow.NewSchema([]arrow.Field{{Name: "value", Type: vector.String, Nullable: true}}, nil)
	sink, err := kafka.NewSink(mem, schema, kafka.SinkOptions{Brokers: c.ListenAddrs(), Topic: "out"})
	if err != nil {
		t.Fatal(err)
	}
	defer sink.Close()
	var failing atomic.Bool
	seen := make(chan struct{})
	failProduce(c, &failing, seen)

	if err := addBatch(context.Background(), t, sink, mem, schema, 0, values("first", 0, 3)); err != nil {
		t.Fatal(err)
	}
	failing.Store(true)
	ctx, cancel := context.WithCancel(context.Background())
	go func() {
		select {
		case <-seen: // the producer holds the epoch's records and retries
		case <-time.After(testutil.Scaled(time.Minute)):
		}
		cancel()
	}()
	err = addBatch(ctx, t, sink, mem, schema, 1, values("lost", 0, 50))
	cancel()
	if err == nil || !errors.Is(err, context.Canceled) {
		t.Fatalf("a flush the broker refused returned %v, want the context's error", err)
	}
	failing.Store(false)
	// This flush also waits for the records the client kept.
	if err := addBatch(context.Background(), t, sink, mem, schema, 2, values("next", 0, 3)); err != nil {
		t.Fatalf("the epoch after a failed flush: %v", err)
	}
	valid := map[string]bool{}
	for _, v := range append(append(values("first", 0, 3), values("lost", 0, 50)...), values("next", 0, 3)...) {
		valid[v] = true
	}
	got := topicValues(t, c, "out", "next2")
	seenNext := 0
	for _, g := range got {
		if !valid[g] {
			t.Errorf("record %q reached Kafka", g)
		}
		if strings.HasPrefix(g, "next") {
			seenNext++
		}
	}
	if seenNext != 3 || len(got) > 56 {
		t.Errorf("%d records with %d of the next epoch: %q", len(got), seenNext, got)
	}
}
