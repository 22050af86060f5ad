package kafka_test

import (
	"context"
	"strings"
	"testing"

	"github.com/apache/arrow/go/v17/arrow/memory"

	"github.com/arrowstream/arrowstream/arrowstream/source/kafka"
)

// TestInitialOffsetsKeptInCheckpoint: startingOffsets=latest is resolved
// once; a source opened later on the same checkpoint directory starts
// where the first one would have, not at the new latest.
func TestInitialOffsetsKeptInCheckpoint(t *testing.T) {
	c := newCluster(t, 2, "t")
	produce(t, c, "t", 2, "a", 0, 10)
	dir := t.TempDir()
	open := func() *kafka.Source {
		o, err := kafka.ParseSourceOptions(map[string]string{"kafka.bootstrap.servers": brokers(c), "subscribe": "t"})
		if err != nil {
			t.Fatal(err)
		}
		src, err := kafka.NewSource(memory.NewGoAllocator(), o)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { src.Close() })
		if err := src.SetCheckpointDir(dir); err != nil {
			t.Fatal(err)
		}
		return src
	}
	first := open()
	if got := string(first.InitialOffset()); got != `{"t":{"0":5,"1":5}}` {
		t.Fatalf("initial offset %s", got)
	}
	produce(t, c, "t", 2, "b", 0, 10)
	second := open()
	if got := string(second.InitialOffset()); got != `{"t":{"0":5,"1":5}}` {
		t.Fatalf("restarted source resolved startingOffsets again: %s", got)
	}
	latest, err := second.LatestOffset(context.Background())
	if err != nil || string(latest) != `{"t":{"0":10,"1":10}}` {
		t.Fatalf("latest %s, %v", latest, err)
	}
	if d := second.Description(); d != "KafkaV2[Subscribe[t]]" {
		t.Fatalf("description %q", d)
	}
}

// TestStartingOffsetsMustNameEveryPartition: Spark's rule for specific
// starting offsets with subscribe.
func TestStartingOffsetsMustNameEveryPartition(t *testing.T) {
	c := newCluster(t, 2, "t")
	o, err := kafka.ParseSourceOptions(map[string]string{"kafka.bootstrap.servers": brokers(c), "subscribe": "t", "startingOffsets": `{"t":{"0":0}}`})
	if err != nil {
		t.Fatal(err)
	}
	src, err := kafka.NewSource(memory.NewGoAllocator(), o)
	if err != nil {
		t.Fatal(err)
	}
	defer src.Close()
	err = src.SetCheckpointDir(t.TempDir())
	if err == nil || !strings.Contains(err.Error(), "partition t-1 is not specified") {
		t.Fatalf("error %v", err)
	}
}
