package kafka_test

import (
	"testing"
)

// TestClusterStateMovesWithItsPartitions: a count per key (not the
// input's partitioning) in Complete mode across instances that leave,
// join and come back. Each epoch's state changes go to the changelog
// topic with the hop offsets; a hop partition that moves takes its state
// along: its new owner restores it from the changelog before it counts
// on, and the old owner empties it. After every change of membership the
// union of the instances' tables is the single-instance count: nothing
// counted twice, nothing restarted from zero.
func TestClusterStateMovesWithItsPartitions(t *testing.T) {
	if testing.Short() {
		t.Skip("cluster rebalances take seconds (-short)")
	}
	c := newCluster(t, 12, "ev")
	bl := brokers(c)
	a, ca := newClusterSession(t, t.TempDir(), bl, "c1", "127.0.0.1:1001")
	defer a.close(t)
	bdir := t.TempDir()
	b, _ := newClusterSession(t, bdir, bl, "c1", "127.0.0.1:1002")
	startHopAggregation(t, a, bl)
	startHopAggregation(t, b, bl)
	waitGroup(t, ca, "agg-repartition-0", 2, 6)
	produce(t, c, "ev", 12, "a", 0, 700)
	waitAgg(t, wantAgg(700), a, b)
	if ra, rb := aggRows(t, a), aggRows(t, b); len(ra) == 0 || len(rb) == 0 {
		t.Fatalf("instance tables %v and %v: want the keys shared by both instances", ra, rb)
	}

	// b leaves: a takes its hop partitions with their counts.
	b.close(t)
	waitGroup(t, ca, "agg-repartition-0", 1, 6)
	produce(t, c, "ev", 12, "a", 700, 700)
	waitAgg(t, wantAgg(1400), a)

	// d joins: it takes some of a's partitions, with their counts.
	d, _ := newClusterSession(t, t.TempDir(), bl, "c1", "127.0.0.1:1003")
	defer d.close(t)
	startHopAggregation(t, d, bl)
	waitGroup(t, ca, "agg-repartition-0", 2, 6)
	produce(t, c, "ev", 12, "a", 1400, 700)
	waitAgg(t, wantAgg(2100), a, d)
	if ra, rd := aggRows(t, a), aggRows(t, d); len(ra) == 0 || len(rd) == 0 {
		t.Fatalf("instance tables %v and %v: want the keys shared by both instances", ra, rd)
	}

	// b comes back from its checkpoint (its table holds what it had when
	// it left until its first epoch replaces it).
	b2, _ := newClusterSession(t, bdir, bl, "c1", "127.0.0.1:1002")
	defer b2.close(t)
	startHopAggregation(t, b2, bl)
	waitGroup(t, ca, "agg-repartition-0", 3, 6)
	produce(t, c, "ev", 12, "a", 2100, 700)
	waitAgg(t, wantAgg(2800), a, b2, d)
}
