package kafka_test

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/apache/arrow/go/v17/arrow"
	"github.com/apache/arrow/go/v17/arrow/memory"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/arrowstream/arrowstream/arrowstream"
	"github.com/arrowstream/arrowstream/arrowstream/source/kafka"
	"github.com/arrowstream/arrowstream/internal/testutil"
	"github.com/arrowstream/arrowstream/internal/testutil/poisonmem"
	"github.com/arrowstream/arrowstream/vector"
	vt "github.com/arrowstream/arrowstream/vector/vectortest"
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

// TestSinkOptionTopicAndNulls: the topic option wins over the topic
// column, a NULL key is no key, a NULL partition is the partitioner's
// choice, and replaying an epoch writes it again (at-least-once).
func TestSinkOptionTopicAndNulls(t *testing.T) {
	c := newCluster(t, 3, "out", "ignored")
	mem := poisonmem.New()
	defer mem.AssertSize(t, 0)
	schema := arrow.NewSchema([]arrow.Field{
		{Name: "value", Type: vector.String, Nullable: true}, {Name: "key", Type: vector.Binary, Nullable: true},
		{Name: "topic", Type: vector.String, Nullable: true}, {Name: "partition", Type: vector.Int32, Nullable: true},
	}, nil)
	// A sliced record: the sink must honour the slice offset.
	whole := vt.BuildRecord(mem, schema, []vt.Row{{"skipped", []byte("skipped"), "ignored", int32(1)},
		{"v0", []byte("k0"), "ignored", int32(2)}, {"v1", nil, "ignored", nil}, {"", []byte("k2"), nil, int32(0)}})
	rec := whole.NewSlice(1, 4)
	whole.Release()
	defer rec.Release()
	sink, err := kafka.NewSink(mem, schema, kafka.SinkOptions{Brokers: c.ListenAddrs(), Topic: "out"})
	if err != nil {
		t.Fatal(err)
	}
	defer sink.Close()
	for _, epoch := range []int64{0, 0} { // the replay writes again
		scan, err := vector.NewScan(schema, rec)
		if err != nil {
			t.Fatal(err)
		}
		if err := sink.AddBatch(context.Background(), epoch, scan); err != nil {
			t.Fatal(err)
		}
	}
	cl, err := kgo.NewClient(kgo.SeedBrokers(c.ListenAddrs()...), kgo.ConsumeTopics("out", "ignored"), kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	var got []string
	ctx, cancel := context.WithTimeout(context.Background(), testutil.Scaled(3*time.Minute))
	defer cancel()
	for len(got) < 6 {
		fs := cl.PollFetches(ctx)
		if err := fs.Err0(); err != nil {
			t.Fatal(err)
		}
		fs.EachRecord(func(r *kgo.Record) {
			p := fmt.Sprint(r.Partition)
			if string(r.Value) == "v1" {
				p = "any"
			}
			got = append(got, fmt.Sprintf("%s/%s/%q/%v/%s", r.Topic, r.Value, r.Key, r.Key == nil, p))
		})
	}
	want := []string{`out//"k2"/false/0`, `out//"k2"/false/0`, `out/v0/"k0"/false/2`, `out/v0/"k0"/false/2`, `out/v1/""/true/any`, `out/v1/""/true/any`}
	sort.Strings(got)
	if strings.Join(got, " ") != strings.Join(want, " ") {
		t.Fatalf("got  %v\nwant %v", got, want)
	}
}
