package kafka_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/arrowstream/arrowstream/arrowstream"
)

// TestFromJSONOverKafka: JSON values decoded by SQL, with the struct
// fields taken apart; a malformed value gives NULLs.
func TestFromJSONOverKafka(t *testing.T) {
	c := newCluster(t, 1, "json")
	cl, err := kgo.NewClient(kgo.SeedBrokers(c.ListenAddrs()...))
	if err != nil {
		t.Fatal(err)
	}
	var recs []*kgo.Record
	for i := 0; i < 5; i++ {
		recs = append(recs, &kgo.Record{Topic: "json", Value: fmt.Appendf(nil, `{"a": %d, "b": "b%d", "ignored": true}`, i, i)})
	}
	recs = append(recs, &kgo.Record{Topic: "json", Value: []byte(`{"a": oops`)})
	if err := cl.ProduceSync(context.Background(), recs...).FirstErr(); err != nil {
		t.Fatal(err)
	}
	cl.Close()
	s := newTestSession(t, t.TempDir())
	defer s.close(t)
	if err := s.RegisterSource("kafka_stream", "kafka", nil, map[string]string{"kafka.bootstrap.servers": brokers(c), "subscribe": "json", "startingOffsets": "earliest"}); err != nil {
		t.Fatal(err)
	}
	df := s.SQLDataFrame("SELECT concat(CAST(from_json(CAST(value AS STRING), 'a INT, b STRING').a AS STRING), '/', coalesce(from_json(CAST(value AS STRING), 'struct<a: int, b: string>').b, 'null')) AS v FROM STREAM kafka_stream")
	q, err := df.WriteStream().Format("memory").QueryName("out").Trigger(arrowstream.ProcessingTime(5 * time.Millisecond)).Start(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	processAll(t, q)
	checkExactlyOnce(t, s.stringColumn(t, "out", "coalesce(v, 'malformed')"), []string{"0/b0", "1/b1", "2/b2", "3/b3", "4/b4", "malformed"})
}
