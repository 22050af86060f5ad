package kafka_test

import (
	"context"
	"testing"
	"time"

	"github.com/arrowstream/arrowstream/internal/testutil"
)

// TestClusterMembersWhileGroupForms: from the moment a table's query
// starts until its group has formed, describing the members is not an
// error (the broker may not know the group yet: GROUP_ID_NOT_FOUND) but
// an empty or partial list, so system.cluster_members and a waiter on
// the members see the group form instead of failing.
func TestClusterMembersWhileGroupForms(t *testing.T) {
	if testing.Short() {
		t.Skip("cluster groups take seconds to form (-short)")
	}
	c := newCluster(t, 12, "ev")
	bl := brokers(c)
	a, ca := newClusterSession(t, t.TempDir(), bl, "f1", "127.0.0.1:1001")
	defer a.close(t)
	startPassthrough(t, a, bl)
	deadline := time.Now().Add(testutil.Scaled(time.Minute))
	for calls := 0; ; calls++ {
		ms, err := ca.Members(context.Background())
		if err != nil {
			t.Fatalf("describe %d while the group forms: %v", calls, err)
		}
		tms, err := ca.TableMembers(context.Background(), "out")
		if err != nil {
			t.Fatalf("table members %d while the group forms: %v", calls, err)
		}
		if len(ms) == 1 && len(tms) == 1 && ms[0].Self {
			t.Logf("the group formed after %d describes", calls)
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("members %+v after a minute: want this instance", ms)
		}
		time.Sleep(time.Millisecond)
	}
}
