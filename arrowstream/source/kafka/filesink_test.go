package kafka_test

import (
	"context"
	"fmt"
	"path/filepath"
	"sort"
	"testing"
	"time"

	"github.com/apache/arrow/go/v17/arrow/memory"

	"github.com/arrowstream/arrowstream/arrowstream"
	"github.com/arrowstream/arrowstream/arrowstream/source/files"
	"github.com/arrowstream/arrowstream/arrowstream/source/kafka"
	"github.com/arrowstream/arrowstream/internal/testutil"
	"github.com/arrowstream/arrowstream/internal/testutil/poisonmem"
	"github.com/arrowstream/arrowstream/vector"
	vt "github.com/arrowstream/arrowstream/vector/vectortest"
)

// Kafka source → Parquet file sink → read back (issue 8's acceptance):
// the output, read through the manifest by a batch SELECT, holds every
// record exactly once across a restart (here) and across SIGKILLs
// (filesink_crash_test.go).

// startKafkaToParquet starts the query of these tests: the value of every
// record of topic events, as a string column v, into Parquet files in out.
func startKafkaToParquet(s *arrowstream.Session, brokerList, out, checkpoint string, trigger arrowstream.Trigger) (*arrowstream.StreamingQuery, error) {
	return s.ReadStreamFormat("kafka").Option("kafka.bootstrap.servers", brokerList).Option("subscribe", "events").
		Option("startingOffsets", "earliest").Option("maxOffsetsPerTrigger", "97").Load("").
		Select("CAST(value AS STRING) AS v").
		WriteStream().Format("parquet").Option("path", out).Option("maxRecordsPerFile", "40").
		Option("checkpointLocation", checkpoint).Trigger(trigger).Start(context.Background())
}

// newFileSession is a session with the kafka and file formats.
func newFileSession(mem memory.Allocator) *arrowstream.Session {
	s := arrowstream.NewSession(arrowstream.SessionOptions{Allocator: mem, NoSync: true})
	kafka.Install(s)
	files.Install(s)
	return s
}

// readBackParquet reads the sink's output directory with a batch SELECT
// (the file source, which lists only the files the manifest committed) and
// returns column v sorted.
func readBackParquet(t *testing.T, out string) []string {
	t.Helper()
	ctx := context.Background()
	mem := poisonmem.New()
	defer mem.AssertSize(t, 0)
	s := newFileSession(mem)
	if _, err := s.SQL(ctx, "CREATE TABLE back USING parquet OPTIONS (path '"+out+"')"); err != nil {
		t.Fatal(err)
	}
	defer s.DropTable("back")
	res, err := s.SQL(ctx, "SELECT v FROM back")
	if err != nil {
		t.Fatal(err)
	}
	defer res.Close()
	recs, err := vector.Drain(ctx, res.Op)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, r := range vt.RowsOf(recs...) {
		got = append(got, fmt.Sprint(r[0]))
	}
	for _, r := range recs {
		r.Release()
	}
	sort.Strings(got)
	return got
}

// TestKafkaToFileSinkRestart: a first run stops in the middle of the
// stream (one trigger of at most 97 records, the next an hour away), more records
// arrive while it is down, and a second run from the same checkpoint
// finishes: the Parquet output holds every record once.
func TestKafkaToFileSinkRestart(t *testing.T) {
	c := newCluster(t, 3, "events")
	produce(t, c, "events", 3, "r", 0, 500)
	dir := t.TempDir()
	out, ckpt := filepath.Join(dir, "out"), filepath.Join(dir, "checkpoint")
	mem := poisonmem.New()
	defer mem.AssertSize(t, 0)
	s := newFileSession(mem)
	q, err := startKafkaToParquet(s, brokers(c), out, ckpt, arrowstream.ProcessingTime(time.Hour))
	if err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(testutil.Scaled(3 * time.Minute))
	for q.LastProgress() == nil {
		if time.Now().After(deadline) {
			t.Fatal("no progress")
		}
		time.Sleep(5 * time.Millisecond)
	}
	if err := q.Stop(); err != nil {
		t.Fatal(err)
	}
	// maxOffsetsPerTrigger 97 is split over the 3 partitions.
	if got := readBackParquet(t, out); len(got) == 0 || len(got) > 97 {
		t.Fatalf("the first run wrote %d rows, want one trigger's (at most 97)", len(got))
	}
	produce(t, c, "events", 3, "r", 500, 300)
	q, err = startKafkaToParquet(s, brokers(c), out, ckpt, arrowstream.ProcessingTime(20*time.Millisecond))
	if err != nil {
		t.Fatal(err)
	}
	processAll(t, q)
	if err := q.Stop(); err != nil {
		t.Fatal(err)
	}
	checkExactlyOnce(t, readBackParquet(t, out), values("r", 0, 800))
}
