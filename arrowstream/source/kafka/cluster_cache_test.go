package kafka_test

import (
	"fmt"
	"testing"
	"time"

	"github.com/arrowstream/arrowstream/arrowstream/source/kafka"
	"github.com/arrowstream/arrowstream/internal/testutil"
)

// TestClusterOffsetFetchesCached: with a stable assignment, epochs take
// the committed offsets from the member's cache (its own claims), not
// from an OffsetFetch each (three per epoch before); a second instance
// joining invalidates the cache, and the union stays exactly once.
func TestClusterOffsetFetchesCached(t *testing.T) {
	if testing.Short() {
		t.Skip("cluster rebalances take seconds (-short)")
	}
	c := newCluster(t, 12, "ev")
	bl := brokers(c)
	a, ca := newClusterSession(t, t.TempDir(), bl, "c1", "127.0.0.1:1001")
	defer a.close(t)
	startPassthrough(t, a, bl)
	produce(t, c, "ev", 12, "a", 0, 12)
	waitUnion(t, 12, "a", a)
	waitMembers(t, ca, 1)
	before := kafka.OffsetFetchesOf(ca, "out")
	const rounds = 10
	for i := range rounds {
		prefix := fmt.Sprintf("r%d-", i)
		produce(t, c, "ev", 12, prefix, 0, 24)
		waitUnion(t, 24, prefix, a)
	}
	fetches := kafka.OffsetFetchesOf(ca, "out") - before
	t.Logf("%d OffsetFetch requests over %d rounds of input", fetches, rounds)
	if fetches > 2 {
		t.Fatalf("%d OffsetFetch requests over %d epochs with a stable assignment; want the cache to answer", fetches, rounds)
	}

	// A second member: the cache is dropped at the rebalance, both read
	// from the group's offsets, and every row is read once.
	b, cb := newClusterSession(t, t.TempDir(), bl, "c1", "127.0.0.1:1002")
	defer b.close(t)
	startPassthrough(t, b, bl)
	waitMembers(t, cb, 2)
	deadline := time.Now().Add(testutil.Scaled(time.Minute))
	for kafka.OffsetFetchesOf(ca, "out")-before == fetches {
		produce(t, c, "ev", 12, "x", 0, 12)
		if time.Now().After(deadline) {
			t.Fatal("no OffsetFetch after the rebalance: the cache outlived the assignment")
		}
		time.Sleep(100 * time.Millisecond)
	}
	produce(t, c, "ev", 12, "z", 0, 120)
	all := waitUnion(t, 120, "z", a, b)
	want := values("a", 0, 12)
	for i := range rounds {
		want = append(want, values(fmt.Sprintf("r%d-", i), 0, 24)...)
	}
	want = append(want, values("z", 0, 120)...)
	var got []string
	for _, v := range all {
		if v[0] != 'x' {
			got = append(got, v)
		}
	}
	checkExactlyOnce(t, got, want)
}
