package kafka_test

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/arrowstream/arrowstream/arrowstream"
	"github.com/arrowstream/arrowstream/arrowstream/source/kafka"
	"github.com/arrowstream/arrowstream/internal/testutil"
	"github.com/arrowstream/arrowstream/internal/testutil/poisonmem"
	"github.com/arrowstream/arrowstream/memsink"
	"github.com/arrowstream/arrowstream/vector"
	vt "github.com/arrowstream/arrowstream/vector/vectortest"
)

// newCluster starts an in-process Kafka cluster (kfake speaks the real
// protocol on loopback) with the topics of the given partition count.
func newCluster(t testing.TB, partitions int32, topics ...string) *kfake.Cluster {
	t.Helper()
	c, err := kfake.NewCluster(kfake.NumBrokers(1), kfake.SeedTopics(partitions, topics...))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Close)
	return c
}

func brokers(c *kfake.Cluster) string { return strings.Join(c.ListenAddrs(), ",") }

// produce writes values prefix0..prefix(n-1) round-robin over the
// topic's partitions (partition i%partitions), keyed by the value.
func produce(t testing.TB, c *kfake.Cluster, topic string, partitions int32, prefix string, from, n int) {
	t.Helper()
	cl, err := kgo.NewClient(kgo.SeedBrokers(c.ListenAddrs()...), kgo.RecordPartitioner(kgo.ManualPartitioner()))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	recs := make([]*kgo.Record, 0, n)
	for i := from; i < from+n; i++ {
		v := fmt.Sprintf("%s%d", prefix, i)
		recs = append(recs, &kgo.Record{Topic: topic, Partition: int32(i) % partitions, Key: []byte(v), Value: []byte(v),
			Headers: []kgo.RecordHeader{{Key: "h", Value: []byte(v)}}})
	}
	ctx, cancel := context.WithTimeout(context.Background(), testutil.Scaled(3*time.Minute))
	defer cancel()
	if err := cl.ProduceSync(ctx, recs...).FirstErr(); err != nil {
		t.Fatal(err)
	}
}

// values returns prefix from..from+n-1.
func values(prefix string, from, n int) []string {
	out := make([]string, n)
	for i := range out {
		out[i] = fmt.Sprintf("%s%d", prefix, from+i)
	}
	return out
}

// testSession is a session with the kafka and memory formats and a
// checked allocator; close releases everything and checks for leaks.
type testSession struct {
	*arrowstream.Session
	mem   *poisonmem.Allocator
	sinks *memsink.Catalog
	dir   string
	rows  *rowCounter // input rows per query name, when counted
}

// rowCounter counts the input rows of every progress of a session's
// queries by query name (RecentProgress keeps only the last 100).
type rowCounter struct {
	mu   sync.Mutex
	rows map[string]int64
}

func newRowCounter(s *arrowstream.Session) *rowCounter {
	c := &rowCounter{rows: map[string]int64{}}
	s.Streams().AddListener(c)
	return c
}

func (c *rowCounter) OnQueryStarted(*arrowstream.StreamingQuery) {}

func (c *rowCounter) OnQueryProgress(q *arrowstream.StreamingQuery, p *arrowstream.StreamingQueryProgress) {
	c.mu.Lock()
	c.rows[q.Name()] += p.NumInputRows
	c.mu.Unlock()
}

func (c *rowCounter) OnQueryTerminated(*arrowstream.StreamingQuery, error) {}

func (c *rowCounter) read(name string) int64 {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.rows[name]
}

func newTestSession(t *testing.T, dir string) *testSession {
	mem := poisonmem.New()
	s := arrowstream.NewSession(arrowstream.SessionOptions{Allocator: mem, CheckpointRoot: dir, NoSync: true})
	kafka.Install(s)
	sinks := memsink.NewCatalog()
	memsink.Install(s, sinks, memsink.Options{Persist: true})
	return &testSession{Session: s, mem: mem, sinks: sinks, dir: dir}
}

// close drops the sink tables and asserts that nothing leaked.
func (s *testSession) close(t *testing.T) {
	t.Helper()
	for _, q := range s.Streams().Active() {
		q.Stop()
	}
	for _, name := range s.sinks.List() {
		if tbl, ok := s.sinks.Drop(name); ok {
			tbl.Close()
		}
	}
	s.mem.AssertSize(t, 0)
}

// stringColumn returns column col of the sink table as sorted strings.
func (s *testSession) stringColumn(t *testing.T, table, col string) []string {
	t.Helper()
	res, err := s.SQL(context.Background(), "SELECT "+col+" FROM "+table)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Close()
	recs, err := vector.Drain(context.Background(), res.Op)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, r := range vt.RowsOf(recs...) {
		out = append(out, fmt.Sprint(r[0]))
	}
	for _, r := range recs {
		r.Release()
	}
	sort.Strings(out)
	return out
}

// checkExactlyOnce fails unless got holds every wanted value once.
func checkExactlyOnce(t *testing.T, got, want []string) {
	t.Helper()
	sort.Strings(want)
	seen := map[string]int{}
	for _, g := range got {
		seen[g]++
	}
	var missing, dup []string
	for _, w := range want {
		switch seen[w] {
		case 0:
			missing = append(missing, w)
		case 1:
		default:
			dup = append(dup, w)
		}
		delete(seen, w)
	}
	if len(missing) > 0 || len(dup) > 0 || len(seen) > 0 {
		t.Fatalf("got %d rows, want %d: missing %d %v, duplicated %d %v, unexpected %d",
			len(got), len(want), len(missing), head(missing), len(dup), head(dup), len(seen))
	}
}

func head(s []string) []string {
	if len(s) > 5 {
		return s[:5]
	}
	return s
}

func processAll(t *testing.T, q *arrowstream.StreamingQuery) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), testutil.Scaled(3*time.Minute))
	defer cancel()
	if err := q.ProcessAllAvailable(ctx); err != nil {
		t.Fatalf("process all available: %v", err)
	}
}
