package kafka_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/apache/arrow/go/v17/arrow"
	"github.com/apache/arrow/go/v17/arrow/memory"

	"github.com/arrowstream/arrowstream/arrowstream"
	"github.com/arrowstream/arrowstream/arrowstream/source/kafka"
	"github.com/arrowstream/arrowstream/vector"
)

// TestSinkRoundTrip: Kafka → query → Kafka sink → Kafka source → memory:
// every value arrives, upper-cased by the query, with its key, its header
// and the partition the query chose.
func TestSinkRoundTrip(t *testing.T) {
	c := newCluster(t, 2, "in")
	if err := c.CreateTopic("out", 3, nil); err != nil {
		t.Fatal(err)
	}
	produce(t, c, "in", 2, "a", 0, 200)
	s := newTestSession(t, t.TempDir())
	defer s.close(t)
	for name, topic := range map[string]string{"src": "in", "back": "out"} {
		if err := s.RegisterSource(name, "kafka", nil, map[string]string{"kafka.bootstrap.servers": brokers(c), "subscribe": topic,
			"startingOffsets": "earliest", "includeHeaders": "true"}); err != nil {
			t.Fatal(err)
		}
	}
	copyQ, err := s.ReadStream("src").
		Select("upper(CAST(value AS STRING)) AS value", "key", "'out' AS topic", "partition + 1 AS partition", "headers").
		WriteStream().Format("kafka").Option("kafka.bootstrap.servers", brokers(c)).QueryName("copy").
		Trigger(arrowstream.ProcessingTime(5 * time.Millisecond)).Start(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	processAll(t, copyQ)
	readQ, err := s.ReadStream("back").
		Select("concat(CAST(value AS STRING), '|', CAST(key AS STRING), '|', CAST(partition AS STRING)) AS v", "headers").
		WriteStream().Format("memory").QueryName("out").Trigger(arrowstream.ProcessingTime(5 * time.Millisecond)).Start(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	processAll(t, readQ)
	var want, wantHeaders []string
	for i := 0; i < 200; i++ {
		want = append(want, fmt.Sprintf("A%d|a%d|%d", i, i, i%2+1))
		wantHeaders = append(wantHeaders, fmt.Sprintf("[[h a%d]]", i))
	}
	checkExactlyOnce(t, s.stringColumn(t, "out", "v"), want)
	checkExactlyOnce(t, s.stringColumn(t, "out", "headers"), wantHeaders)
}

// TestSinkSchemaErrors: the sink names what is wrong with the columns.
func TestSinkSchemaErrors(t *testing.T) {
	f := func(name string, dt arrow.DataType) arrow.Field {
		return arrow.Field{Name: name, Type: dt, Nullable: true}
	}
	cases := []struct {
		name   string
		fields []arrow.Field
		topic  string
		err    string
	}{
		{"ok", []arrow.Field{f("value", vector.String), f("topic", vector.String)}, "", ""},
		{"no value", []arrow.Field{f("key", vector.String)}, "t", "required attribute 'value' not found (columns: key)"},
		{"no topic", []arrow.Field{f("value", vector.Binary)}, "", "topic option required when no 'topic' attribute is present"},
		{"bad value type", []arrow.Field{f("value", vector.Int64)}, "t", "value attribute type must be string or binary, not bigint"},
		{"bad key type", []arrow.Field{f("value", vector.String), f("key", vector.Float64)}, "t", "key attribute type must be string or binary"},
		{"bad partition type", []arrow.Field{f("value", vector.String), f("partition", vector.Int64)}, "t", "partition attribute type must be int"},
		{"bad headers type", []arrow.Field{f("value", vector.String), f("headers", vector.String)}, "t", "headers attribute type must be array<struct<key: string, value: binary>>"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			sink, err := kafka.NewSink(memory.NewGoAllocator(), arrow.NewSchema(c.fields, nil), kafka.SinkOptions{Brokers: []string{"127.0.0.1:1"}, Topic: c.topic})
			if sink != nil {
				sink.Close()
			}
			if (c.err == "") != (err == nil) || (err != nil && !strings.Contains(err.Error(), c.err)) {
				t.Fatalf("error %v, want %q", err, c.err)
			}
		})
	}
}
