package kafka_test

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"testing"

	"github.com/apache/arrow/go/v17/arrow/memory"

	"github.com/arrowstream/arrowstream/arrowstream/source/kafka"
	"github.com/arrowstream/arrowstream/internal/testutil/poisonmem"
	vt "github.com/arrowstream/arrowstream/vector/vectortest"
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

// TestReadIsRepeatable: Read(start, end] gives the same records each time,
// exactly the offsets of the range, in records of at most BatchRows rows.
func TestReadIsRepeatable(t *testing.T) {
	c := newCluster(t, 3, "t")
	produce(t, c, "t", 3, "a", 0, 90)
	mem := poisonmem.New()
	defer mem.AssertSize(t, 0)
	o, err := kafka.ParseSourceOptions(map[string]string{"kafka.bootstrap.servers": brokers(c), "subscribe": "t", "startingOffsets": "earliest"})
	if err != nil {
		t.Fatal(err)
	}
	o.BatchRows = 7
	src, err := kafka.NewSource(mem, o)
	if err != nil {
		t.Fatal(err)
	}
	defer src.Close()
	start := kafka.PartitionOffsets{"t": {0: 3, 1: 0, 2: 29}}.Encode()
	end := kafka.PartitionOffsets{"t": {0: 10, 1: 30, 2: 30}}.Encode()
	read := func() []string {
		op, err := src.Read(context.Background(), start, end)
		if err != nil {
			t.Fatal(err)
		}
		defer op.Close()
		var out []string
		for {
			rec, err := op.Next(context.Background())
			if err != nil {
				break
			}
			if rec.NumRows() > 7 {
				t.Errorf("a record of %d rows, BatchRows is 7", rec.NumRows())
			}
			for _, r := range vt.RowsOf(rec) {
				out = append(out, fmt.Sprintf("%s@%d:%d", r[1], r[3], r[4]))
			}
			rec.Release()
		}
		sort.Strings(out)
		return out
	}
	first, second := read(), read()
	if len(first) != 7+30+1 || strings.Join(first, " ") != strings.Join(second, " ") {
		t.Fatalf("reads differ or wrong size (%d):\n%v\n%v", len(first), first, second)
	}
	for _, want := range []string{"a9@0:3", "a27@0:9", "a1@1:0", "a88@1:29", "a89@2:29"} {
		found := false
		for _, g := range first {
			found = found || g == want
		}
		if !found {
			t.Errorf("%s missing from %v", want, first)
		}
	}
}
