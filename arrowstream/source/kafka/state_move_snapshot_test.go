package kafka_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/arrowstream/arrowstream/arrowstream/source/kafka"
	"github.com/arrowstream/arrowstream/internal/testutil"
)

// TestClusterStateRestoresFromLocalSnapshot: an instance that takes its
// old hop partitions back (restarted from its checkpoint after another
// instance held them) restores each from its local snapshot plus the
// changelog's tail: it reads only what the other owner wrote meanwhile,
// fewer records than the changelog holds, and counts on to the
// single-instance result. B counts alone, stops; A takes every partition
// over (restoring each from the whole changelog), counts on, stops; B
// comes back and takes every partition again.
func TestClusterStateRestoresFromLocalSnapshot(t *testing.T) {
	if testing.Short() {
		t.Skip("cluster rebalances take seconds (-short)")
	}
	c := newCluster(t, 12, "ev")
	bl := brokers(c)
	bdir := t.TempDir()
	b, cb := newClusterSession(t, bdir, bl, "c1", "127.0.0.1:1002")
	startHopAggregation(t, b, bl)
	waitGroup(t, cb, "agg-repartition-0", 1, 6)
	// Several rounds, so that B's own part of the changelog is most of it.
	for i := range 4 {
		produce(t, c, "ev", 12, "b", i*500, 500)
		waitAgg(t, wantAgg((i+1)*500), b)
	}
	b.close(t)

	a, ca := newClusterSession(t, t.TempDir(), bl, "c1", "127.0.0.1:1001")
	startHopAggregation(t, a, bl)
	waitGroup(t, ca, "agg-repartition-0", 1, 6)
	produce(t, c, "ev", 12, "a", 2000, 300)
	waitAgg(t, wantAgg(2300), a)
	ra := ca.Restores()
	// At least the 6 partitions, each from the changelog: a query that
	// fails after its restore (a changelog write refused under load, say)
	// restores again when it restarts, and the counts add up.
	if ra.Partitions < 6 || ra.FromSnapshot != 0 {
		t.Fatalf("A's restores %+v: want all 6 partitions from the changelog (A has no snapshot)", ra)
	}
	a.close(t)
	total := changelogRecords(t, c, strings.TrimSuffix(kafka.ChangelogTopic("c1", "agg", 0), "0"))

	b2, cb2 := newClusterSession(t, bdir, bl, "c1", "127.0.0.1:1002")
	q2 := startHopAggregation(t, b2, bl)
	waitGroup(t, cb2, "agg-repartition-0", 1, 6)
	produce(t, c, "ev", 12, "b", 2300, 300)
	waitAgg(t, wantAgg(2600), b2)
	rb := cb2.Restores()
	t.Logf("changelog: %d records; A's restores %+v; B's after its restart %+v", total, ra, rb)
	switch n, _ := q2.Restarts(); {
	case n > 0:
		// An epoch that failed after its restores (a transaction the
		// Kafka client did not commit, say: txn_outcome.go) forgets the
		// partitions' snapshots; its retry restores them whole. The
		// first attempt's restores came from the snapshots.
		if rb.FromSnapshot == 0 {
			t.Fatalf("B's restores after its restart %+v (the query restarted %d times): want the first attempt's from its local snapshot", rb, n)
		}
	default:
		// The partitions A wrote to (the 7 keys hash into some of the 6);
		// the others still end where B left them and are not restored.
		if rb.Partitions == 0 || rb.FromSnapshot != rb.Partitions {
			t.Fatalf("B's restores after its restart %+v: want every partition restored from its local snapshot plus the changelog's tail", rb)
		}
		if rb.Records >= total || rb.Records >= ra.Records {
			t.Fatalf("B's restores read %d changelog records: want fewer than the changelog's %d (what A's whole restore read: %d)", rb.Records, total, ra.Records)
		}
	}
	b2.close(t)

	// B again, nothing written meanwhile: its local state, which the
	// restore above rewrote (only the keys changed since the snapshot),
	// is the changelog's and is used as it is.
	b3, cb3 := newClusterSession(t, bdir, bl, "c1", "127.0.0.1:1002")
	defer b3.close(t)
	q3 := startHopAggregation(t, b3, bl)
	waitGroup(t, cb3, "agg-repartition-0", 1, 6)
	produce(t, c, "ev", 12, "b", 2600, 200)
	waitAgg(t, wantAgg(2800), b3)
	// (An epoch that failed after changing a partition restores it on
	// its retry, as above.)
	if r := cb3.Restores(); r.Partitions != 0 {
		if n, _ := q3.Restarts(); n == 0 {
			t.Fatalf("B's restores after a restart with nothing written meanwhile %+v: want none", r)
		}
	}
}

// changelogRecords counts the committed records of the topics whose
// names start with prefix (read_committed, as a restore reads them). It
// reads each partition up to its last stable offset, listed first: the
// transaction markers come as records (KeepControlRecords, not counted),
// so the reader's position reaches that offset exactly. (Stopping after a
// few empty polls undercounted under load: a poll can come back empty
// while records are still to be fetched.)
func changelogRecords(t *testing.T, c *kfake.Cluster, prefix string) int64 {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), testutil.Scaled(time.Minute))
	defer cancel()
	admCl, err := kgo.NewClient(kgo.SeedBrokers(c.ListenAddrs()...))
	if err != nil {
		t.Fatal(err)
	}
	defer admCl.Close()
	adm := kadm.NewClient(admCl)
	topics, err := adm.ListTopics(ctx)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, name := range topics.Names() {
		if strings.HasPrefix(name, prefix) {
			names = append(names, name)
		}
	}
	if len(names) == 0 {
		t.Fatalf("no changelog topic starts with %q", prefix)
	}
	starts, err := adm.ListStartOffsets(ctx, names...)
	if err != nil {
		t.Fatal(err)
	}
	ends, err := adm.ListCommittedOffsets(ctx, names...)
	if err != nil {
		t.Fatal(err)
	}
	consume := map[string]map[int32]kgo.Offset{}
	left := map[string]map[int32]int64{} // partition -> its last stable offset
	ends.Each(func(o kadm.ListedOffset) {
		if o.Err != nil {
			t.Fatalf("the end of %s-%d: %v", o.Topic, o.Partition, o.Err)
		}
		start, ok := starts.Lookup(o.Topic, o.Partition)
		if !ok || start.Offset >= o.Offset {
			return // empty
		}
		if consume[o.Topic] == nil {
			consume[o.Topic], left[o.Topic] = map[int32]kgo.Offset{}, map[int32]int64{}
		}
		consume[o.Topic][o.Partition] = kgo.NewOffset().At(start.Offset)
		left[o.Topic][o.Partition] = o.Offset
	})
	cl, err := kgo.NewClient(kgo.SeedBrokers(c.ListenAddrs()...), kgo.ConsumePartitions(consume),
		kgo.FetchIsolationLevel(kgo.ReadCommitted()), kgo.KeepControlRecords())
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	var n int64
	for open := len(left); open > 0; {
		fs := cl.PollFetches(ctx)
		if err := ctx.Err(); err != nil {
			t.Fatalf("the changelog topics were not read in time: %v (partitions left %v)", err, left)
		}
		fs.EachError(func(topic string, p int32, err error) { t.Fatalf("reading %s-%d: %v", topic, p, err) })
		fs.EachRecord(func(r *kgo.Record) {
			end, ok := left[r.Topic][r.Partition]
			if !ok || r.Offset >= end {
				return
			}
			if !r.Attrs.IsControl() {
				n++
			}
			if r.Offset+1 >= end {
				delete(left[r.Topic], r.Partition)
				if len(left[r.Topic]) == 0 {
					delete(left, r.Topic)
					open--
				}
			}
		})
	}
	return n
}
