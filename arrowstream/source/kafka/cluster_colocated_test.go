package kafka_test

import (
	"context"
	"testing"
	"time"

	"github.com/arrowstream/arrowstream/internal/testutil"
)

// TestClusterColocatedInstances: three instances share a table, two of
// them advertising the same host; each counts the instances on its own
// host (2, 2 and 1), and a rebalance (the third joining) wakes
// Rebalanced's waiters.
func TestClusterColocatedInstances(t *testing.T) {
	if testing.Short() {
		t.Skip("cluster groups take seconds to form (-short)")
	}
	c := newCluster(t, 12, "ev")
	bl := brokers(c)
	a, ca := newClusterSession(t, t.TempDir(), bl, "c1", "127.0.0.1:1001")
	defer a.close(t)
	startPassthrough(t, a, bl)
	waitMembers(t, ca, 1)
	if n, err := ca.ColocatedInstances(context.Background()); err != nil || n != 1 {
		t.Fatalf("one instance: ColocatedInstances = %d, %v; want 1", n, err)
	}
	changed := ca.Rebalanced()
	b, cb := newClusterSession(t, t.TempDir(), bl, "c1", "127.0.0.1:1002")
	defer b.close(t)
	startPassthrough(t, b, bl)
	select {
	case <-changed:
	case <-time.After(testutil.Scaled(time.Minute)):
		t.Fatal("a second member joined and Rebalanced was not closed")
	}
	d, cd := newClusterSession(t, t.TempDir(), bl, "c1", "127.0.0.2:1003")
	defer d.close(t)
	startPassthrough(t, d, bl)
	waitMembers(t, ca, 3)
	for _, tc := range []struct {
		name string
		n    int
		c    interface {
			ColocatedInstances(context.Context) (int, error)
		}
	}{{"127.0.0.1:1001", 2, ca}, {"127.0.0.1:1002", 2, cb}, {"127.0.0.2:1003", 1, cd}} {
		// The group may still be settling on the others' side.
		deadline := time.Now().Add(testutil.Scaled(time.Minute))
		for {
			n, err := tc.c.ColocatedInstances(context.Background())
			if err == nil && n == tc.n {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("%s: ColocatedInstances = %d, %v; want %d", tc.name, n, err, tc.n)
			}
			time.Sleep(100 * time.Millisecond)
		}
	}
}
