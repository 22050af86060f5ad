package kafka_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/arrowstream/arrowstream/arrowstream"
	"github.com/arrowstream/arrowstream/arrowstream/source/kafka"
	"github.com/arrowstream/arrowstream/internal/testutil"
	"github.com/arrowstream/arrowstream/internal/testutil/poisonmem"
	"github.com/arrowstream/arrowstream/memsink"
)

// newPacedClusterSession is newClusterSession with the hop's pacing
// delay set (kafka.ClusterOptions.HopPaceMaxDelay).
func newPacedClusterSession(t *testing.T, dir, brokerList, name, addr string, pace time.Duration) (*testSession, *kafka.Cluster) {
	t.Helper()
	cl, err := kafka.NewCluster(kafka.ClusterOptions{Name: name, Brokers: strings.Split(brokerList, ","), Address: addr,
		SessionTimeout: 6 * time.Second, HopPaceMaxDelay: pace})
	if err != nil {
		t.Fatal(err)
	}
	mem := poisonmem.New()
	s := arrowstream.NewSession(arrowstream.SessionOptions{Allocator: mem, CheckpointRoot: dir, NoSync: true, Cluster: name})
	kafka.InstallCluster(s, cl)
	sinks := memsink.NewCatalog()
	memsink.Install(s, sinks, memsink.Options{Persist: true})
	return &testSession{Session: s, mem: mem, sinks: sinks, dir: dir}, cl
}

// activeQuery returns the session's running query named name.
func activeQuery(t *testing.T, s *testSession, name string) *arrowstream.StreamingQuery {
	t.Helper()
	for _, q := range s.Streams().Active() {
		if q.Name() == name {
			return q
		}
	}
	t.Fatalf("no active query %s", name)
	return nil
}

// TestClusterHopPacedToLocalUpstream: with two instances, each
// instance's downstream stage runs at most one data epoch per commit of
// its own upstream stage (plus its first), where it ran one per commit
// of either upstream: each downstream epoch reads a round of both
// writers' rows in one transaction. The counts stay exactly the
// single-instance counts.
func TestClusterHopPacedToLocalUpstream(t *testing.T) {
	if testing.Short() {
		t.Skip("cluster rebalances take seconds (-short)")
	}
	c := newCluster(t, 12, "ev")
	bl := brokers(c)
	a, ca := newPacedClusterSession(t, t.TempDir(), bl, "c1", "127.0.0.1:1001", 20*time.Second)
	defer a.close(t)
	b, _ := newPacedClusterSession(t, t.TempDir(), bl, "c1", "127.0.0.1:1002", 20*time.Second)
	defer b.close(t)
	for _, s := range []*testSession{a, b} {
		s.SetConf(arrowstream.ConfShufflePartitions, "6")
		if err := s.RegisterSource("ks", "kafka", nil, map[string]string{"kafka.bootstrap.servers": bl, "subscribe": "ev", "startingOffsets": "earliest"}); err != nil {
			t.Fatal(err)
		}
		// The default trigger: an epoch as soon as the source has data.
		q, err := s.ReadStream("ks").
			Select(fmt.Sprintf("CAST(CAST(substring(CAST(value AS STRING), 2) AS INT) %% %d AS INT) AS u", hopBuckets)).
			GroupBy("u").Count().
			WriteStream().Format("memory").OutputMode(arrowstream.Complete).QueryName("agg").Start(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		defer q.Stop()
	}
	waitGroup(t, ca, "agg", 2, 12)
	waitGroup(t, ca, "agg-repartition-0", 2, 6)

	// Rounds of input, each read by both upstreams before the next is
	// produced: both writers commit once per round, at moments of their
	// own, and each downstream sees both commits.
	const rounds, per = 25, 60
	for i := range rounds {
		produce(t, c, "ev", 12, "a", i*per, per)
		waitHopUpstreamRows(t, int64((i+1)*per), a, b)
	}
	waitAgg(t, wantAgg(rounds*per), a, b)

	for _, s := range []*testSession{a, b} {
		up, down := activeQuery(t, s, "agg-repartition-0"), activeQuery(t, s, "agg")
		up.Stop()
		down.Stop()
		ups, downs := dataEpochs(up), dataEpochs(down)
		if len(ups) < 3 {
			t.Fatalf("upstream epochs %v: want the input read in several epochs", ups)
		}
		// The first downstream epoch is let through; every other waits
		// for a commit of the local upstream since the one before, or
		// until that upstream is late (a round that took twice the one
		// before, on a loaded machine): a fifth more is tolerated.
		// Without the pacing each instance ran up to one epoch per
		// commit of either upstream (35 and 36 for 25 in two of three
		// runs).
		if len(downs) > len(ups)+1+len(ups)/5 {
			t.Fatalf("%d downstream epochs (%v) for %d epochs of the local upstream (%v): want one per local commit",
				len(downs), downs, len(ups), ups)
		}
		t.Logf("upstream epochs %d, downstream epochs %d", len(ups), len(downs))
	}
}

// waitHopUpstreamRows waits until the sessions' upstream stages of agg have
// read n rows in all.
func waitHopUpstreamRows(t *testing.T, n int64, sessions ...*testSession) {
	t.Helper()
	deadline := time.Now().Add(testutil.Scaled(2 * time.Minute))
	for {
		var got int64
		for _, s := range sessions {
			for _, p := range activeQuery(t, s, "agg-repartition-0").RecentProgress() {
				got += p.NumInputRows
			}
		}
		if got >= n {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("the upstream stages read %d rows, want %d", got, n)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// TestHopPacerHolds checks the downstream's rule on a manual clock.
func TestHopPacerHolds(t *testing.T) {
	p := kafka.NewHopPaceForTest()
	h := kafka.NewHopPacerForTest(p, time.Second)
	t0 := time.Unix(1000, 0)
	if h.Hold(t0) {
		t.Fatal("first epoch held")
	}
	// The local upstream never committed: inactive, nothing waits.
	if h.Hold(t0.Add(10 * time.Millisecond)) {
		t.Fatal("held with an inactive upstream")
	}
	p.Committed(t0.Add(20 * time.Millisecond))
	if h.Hold(t0.Add(30 * time.Millisecond)) {
		t.Fatal("held after a local commit")
	}
	// Active upstream, no commit since: held until a commit or the delay.
	if !h.Hold(t0.Add(40 * time.Millisecond)) {
		t.Fatal("not held without a local commit")
	}
	if d := h.UntilDeadline(t0.Add(530 * time.Millisecond)); d != 500*time.Millisecond {
		t.Fatalf("until deadline %v, want 500ms", d)
	}
	if h.Hold(t0.Add(1030 * time.Millisecond)) {
		t.Fatal("held past the delay")
	}
	if d := h.UntilDeadline(t0.Add(1030 * time.Millisecond)); d != 0 {
		t.Fatalf("until deadline %v after a let-through, want 0", d)
	}
	// The upstream's last commit is older than the delay: inactive.
	if h.Hold(t0.Add(1040 * time.Millisecond)) {
		t.Fatal("held with an upstream idle for longer than the delay")
	}
	p.Committed(t0.Add(2000 * time.Millisecond))
	if h.Hold(t0.Add(2001 * time.Millisecond)) {
		t.Fatal("held after a commit")
	}
	if !h.Hold(t0.Add(2002 * time.Millisecond)) {
		t.Fatal("not held")
	}
	// One interval known (1.98 s): the delay bounds the wait.
	if d := h.UntilDeadline(t0.Add(2002 * time.Millisecond)); d != 999*time.Millisecond {
		t.Fatalf("until deadline %v, want 999ms", d)
	}
	woken := p.Next()
	p.Committed(t0.Add(2100 * time.Millisecond))
	select {
	case <-woken:
	default:
		t.Fatal("a commit did not wake the downstream")
	}
	if h.Hold(t0.Add(2101 * time.Millisecond)) {
		t.Fatal("held after a commit")
	}
	// The upstream commits every 100 ms now: it is late 200 ms after its
	// last commit, long before the delay.
	if !h.Hold(t0.Add(2102 * time.Millisecond)) {
		t.Fatal("not held")
	}
	if d := h.UntilDeadline(t0.Add(2150 * time.Millisecond)); d != 150*time.Millisecond {
		t.Fatalf("until deadline %v, want 150ms (twice the upstream's interval after its commit)", d)
	}
	if h.Hold(t0.Add(2300 * time.Millisecond)) {
		t.Fatal("held after the upstream is late")
	}
	// Late, the downstream keeps the upstream's cadence: one epoch per
	// 100 ms, until the upstream has been quiet for the delay.
	if !h.Hold(t0.Add(2310 * time.Millisecond)) {
		t.Fatal("not held within an upstream interval of the last epoch")
	}
	if d := h.UntilDeadline(t0.Add(2310 * time.Millisecond)); d != 90*time.Millisecond {
		t.Fatalf("until deadline %v, want 90ms (one upstream interval after the last epoch)", d)
	}
	if h.Hold(t0.Add(2400 * time.Millisecond)) {
		t.Fatal("held for longer than an upstream interval after the last epoch")
	}
	if !h.Hold(t0.Add(2450 * time.Millisecond)) {
		t.Fatal("not held within an upstream interval of the last epoch")
	}
	if h.Hold(t0.Add(3100 * time.Millisecond)) {
		t.Fatal("held with an upstream quiet for the delay")
	}
	// No pacing: never held.
	off := kafka.NewHopPacerForTest(p, -1)
	for i := range 3 {
		if off.Hold(t0.Add(time.Duration(2200+i) * time.Millisecond)) {
			t.Fatal("held without pacing")
		}
	}
}

// TestHopPacerWaitsForLocalEpochInFlight: an epoch the local upstream is
// writing holds the downstream until it commits, or ends without a
// commit, or began maxDelay ago, when the upstream has not committed
// since the last downstream epoch: at the start of a burst (the local
// upstream inactive) and when the late rule would let an epoch through.
// Before, both cases ran a downstream epoch for part of a round.
func TestHopPacerWaitsForLocalEpochInFlight(t *testing.T) {
	p := kafka.NewHopPaceForTest()
	h := kafka.NewHopPacerForTest(p, time.Second)
	t0 := time.Unix(1000, 0)
	// The start of a burst: the local upstream never committed and
	// writes its first epoch; another writer's rows wait for it.
	p.Started(t0)
	if !h.Hold(t0.Add(10 * time.Millisecond)) {
		t.Fatal("first epoch let through while the local upstream writes its first")
	}
	if d := h.UntilDeadline(t0.Add(10 * time.Millisecond)); d != 990*time.Millisecond {
		t.Fatalf("until deadline %v, want 990ms (the delay after the local epoch began)", d)
	}
	woken := p.Next()
	p.Committed(t0.Add(100 * time.Millisecond))
	select {
	case <-woken:
	default:
		t.Fatal("the local commit did not wake the downstream")
	}
	p.Ended() // after a commit: nothing more
	if h.Hold(t0.Add(101 * time.Millisecond)) {
		t.Fatal("held after the local commit")
	}
	// The upstream commits every 100 ms; late at 300 ms, but its next
	// epoch began writing at 250 ms: held until that commit.
	p.Started(t0.Add(150 * time.Millisecond))
	p.Committed(t0.Add(200 * time.Millisecond))
	if h.Hold(t0.Add(201 * time.Millisecond)) {
		t.Fatal("held after a local commit while nothing was in flight")
	}
	p.Started(t0.Add(250 * time.Millisecond))
	if !h.Hold(t0.Add(310 * time.Millisecond)) {
		t.Fatal("a late upstream writing its next epoch did not hold the downstream")
	}
	// Not beyond the delay after the local epoch began.
	if h.Hold(t0.Add(1250 * time.Millisecond)) {
		t.Fatal("held for longer than the delay after the local epoch began")
	}
	// An epoch in flight that ends without a commit (a failure, a
	// replay that writes nothing) wakes the downstream and stops holding.
	p.Started(t0.Add(1300 * time.Millisecond))
	if !h.Hold(t0.Add(1310 * time.Millisecond)) {
		t.Fatal("not held while the local upstream writes")
	}
	woken = p.Next()
	p.Ended()
	select {
	case <-woken:
	default:
		t.Fatal("an epoch that ended without a commit did not wake the downstream")
	}
	if h.Hold(t0.Add(1320 * time.Millisecond)) {
		t.Fatal("held after the local epoch ended (the upstream inactive since 200 ms)")
	}
	// An upstream that plans again and again without committing (its
	// epochs fail before its sink runs) holds the downstream at most the
	// delay after the hold began, not for good.
	stuck := kafka.NewHopPacerForTest(p, time.Second)
	if stuck.Hold(t0.Add(1500 * time.Millisecond)) { // let through: seen is now the current count
		t.Fatal("held with nothing in flight")
	}
	for i := range 30 {
		now := t0.Add(1600*time.Millisecond + time.Duration(i)*100*time.Millisecond)
		p.Started(now.Add(-10 * time.Millisecond)) // planned again
		if held := stuck.Hold(now); held != (i < 10) {
			t.Fatalf("at %v after the hold began: held %v; want held for the delay (1s) only", now.Sub(t0.Add(1600*time.Millisecond)), held)
		}
		if i >= 10 {
			break
		}
	}
	p.Ended()
	// A local commit since the last downstream epoch lets it through even
	// while the next local epoch is in flight: one instance never waits.
	one := kafka.NewHopPacerForTest(p, time.Second)
	p.Committed(t0.Add(2000 * time.Millisecond))
	p.Started(t0.Add(2001 * time.Millisecond))
	if one.Hold(t0.Add(2002 * time.Millisecond)) {
		t.Fatal("held after a local commit since the last epoch")
	}
}

// TestHopPacerLongLocalEpochOneDownstreamPerDelay: a local upstream
// epoch that outlasts maxDelay lets one downstream epoch through at the
// delay, then holds the next for the delay after that one (not through
// at once: at three instances in backlog each other writer's commit ran
// a downstream epoch of its own while the long local epoch was in
// flight), and its commit lets the next through.
func TestHopPacerLongLocalEpochOneDownstreamPerDelay(t *testing.T) {
	p := kafka.NewHopPaceForTest()
	h := kafka.NewHopPacerForTest(p, time.Second)
	t0 := time.Unix(1000, 0)
	p.Committed(t0.Add(-500 * time.Millisecond))
	if h.Hold(t0.Add(-499 * time.Millisecond)) {
		t.Fatal("held after a local commit")
	}
	p.Started(t0)
	if !h.Hold(t0.Add(10 * time.Millisecond)) {
		t.Fatal("not held while the local upstream writes")
	}
	if h.Hold(t0.Add(1001 * time.Millisecond)) {
		t.Fatal("held past the delay after the local epoch was planned")
	}
	// Another writer commits while the same local epoch is in flight.
	if !h.Hold(t0.Add(1400 * time.Millisecond)) {
		t.Fatal("a second downstream epoch let through while the same local epoch is in flight, 0.4 s after the first")
	}
	if d := h.UntilDeadline(t0.Add(1400 * time.Millisecond)); d != 601*time.Millisecond {
		t.Fatalf("until deadline %v, want 601ms (the delay after the last downstream epoch)", d)
	}
	if h.Hold(t0.Add(2001 * time.Millisecond)) {
		t.Fatal("held past the delay after the last downstream epoch")
	}
	p.Committed(t0.Add(2100 * time.Millisecond))
	if h.Hold(t0.Add(2101 * time.Millisecond)) {
		t.Fatal("held after the local commit")
	}
}

// TestClusterPacedHopListsAtLocalCommits: while the paced downstream
// would hold an epoch for its local upstream's commit anyway, it does not
// list the hop's ends at every idle poll (20 to 100 ms apart): it lists
// when that commit wakes it (or at the pacing deadline). With the
// upstream committing every ~300 ms (minOffsetsPerTrigger out of reach,
// maxTriggerDelay 300ms) the downstream listed about four times per epoch
// before, about once now. The counts stay exact.
func TestClusterPacedHopListsAtLocalCommits(t *testing.T) {
	if testing.Short() {
		t.Skip("cluster groups take seconds to form (-short)")
	}
	c := newCluster(t, 12, "ev")
	bl := brokers(c)
	a, ca := newPacedClusterSession(t, t.TempDir(), bl, "c1", "127.0.0.1:1001", 5*time.Second)
	defer a.close(t)
	a.SetConf(arrowstream.ConfShufflePartitions, "6")
	if err := a.RegisterSource("ks", "kafka", nil, map[string]string{"kafka.bootstrap.servers": bl, "subscribe": "ev", "startingOffsets": "earliest",
		"minOffsetsPerTrigger": "1000000", "maxTriggerDelay": "300ms"}); err != nil {
		t.Fatal(err)
	}
	q, err := a.ReadStream("ks").
		Select(fmt.Sprintf("CAST(CAST(substring(CAST(value AS STRING), 2) AS INT) %% %d AS INT) AS u", hopBuckets)).
		GroupBy("u").Count().
		WriteStream().Format("memory").OutputMode(arrowstream.Complete).QueryName("agg").Start(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	defer q.Stop()
	waitGroup(t, ca, "agg", 1, 12)
	waitGroup(t, ca, "agg-repartition-0", 1, 6)
	const per = 24
	produce(t, c, "ev", 12, "a", 0, per)
	waitAgg(t, wantAgg(per), a)

	down, up := activeQuery(t, a, "agg"), activeQuery(t, a, "agg-repartition-0")
	epochs, upEpochs, listings := len(dataEpochs(down)), len(dataEpochs(up)), kafka.ListingsOf(ca, "agg-repartition-0")
	// Input all along for about 3 s: the upstream commits every ~300 ms.
	const rounds = 50
	for i := 1; i <= rounds; i++ {
		produce(t, c, "ev", 12, "a", i*per, per)
		time.Sleep(60 * time.Millisecond) // the input's pace, not a wait for progress
	}
	waitAgg(t, wantAgg((rounds+1)*per), a)
	de, dl := len(dataEpochs(down))-epochs, kafka.ListingsOf(ca, "agg-repartition-0")-listings
	ue := len(dataEpochs(up)) - upEpochs
	t.Logf("downstream: %d data epochs, %d listings of the hop; upstream: %d data epochs", de, dl, ue)
	if de < 3 {
		t.Fatalf("%d downstream data epochs: want the input read in several", de)
	}
	// About two listings per epoch measured (63 for 31 epochs), four
	// before the pacing: a loaded machine under -race adds a
	// few where a hold reaches its deadline (83 for 37 epochs at load
	// 25–30), so the bound sits between the two rates.
	if dl > 2*int64(de)+int64(de)/2+4 {
		t.Fatalf("downstream: %d listings for %d data epochs (upstream %d); want about one per local upstream commit", dl, de, ue)
	}
}

// TestHopPacerWaitsForLocalUpstreamHeldForMinimum: a local upstream that
// holds its input for minOffsetsPerTrigger holds the downstream as an
// epoch in flight does (until its next commit, at most the delay after
// the hold began), where it was taken for late: after two epochs back to
// back its last interval was short, and a downstream epoch ran between
// every two of its commits; at the start of a burst, holding its first
// rows, it had not committed yet and did not hold the downstream at all.
func TestHopPacerWaitsForLocalUpstreamHeldForMinimum(t *testing.T) {
	t0 := time.Unix(1000, 0)
	p := kafka.NewHopPaceForTest()
	h := kafka.NewHopPacerForTest(p, time.Second)
	// The start of a burst: the local upstream holds its first rows (it
	// never committed); another writer's first commit waits for it.
	p.Held(t0.Add(500 * time.Millisecond))
	if !h.Hold(t0.Add(10 * time.Millisecond)) {
		t.Fatal("first epoch let through while the local upstream holds its first rows")
	}
	p.Started(t0.Add(500 * time.Millisecond))
	p.Committed(t0.Add(600 * time.Millisecond))
	if h.Hold(t0.Add(601 * time.Millisecond)) {
		t.Fatal("held after the local commit")
	}
	// Two epochs back to back (a backlog past the minimum): the last
	// interval is 50 ms. Then it holds for the minimum until 1,200 ms.
	p.Started(t0.Add(600 * time.Millisecond))
	p.Committed(t0.Add(650 * time.Millisecond))
	if h.Hold(t0.Add(651 * time.Millisecond)) {
		t.Fatal("held after the local commit")
	}
	p.Held(t0.Add(1200 * time.Millisecond))
	for _, ms := range []int{700, 800, 1000, 1200, 1400} {
		if !h.Hold(t0.Add(time.Duration(ms) * time.Millisecond)) {
			t.Fatalf("let through at %d ms while the local upstream holds its input (its last interval 50 ms)", ms)
		}
	}
	if d := h.UntilDeadline(t0.Add(1400 * time.Millisecond)); d != 300*time.Millisecond {
		t.Fatalf("until deadline %v, want 300ms (the delay after the hold began at 700 ms)", d)
	}
	// Not beyond the delay after the hold began.
	if h.Hold(t0.Add(1700 * time.Millisecond)) {
		t.Fatal("held for longer than the delay after the hold began")
	}
	// Nothing held any more (its planning found nothing waiting): the
	// rules without it apply, an upstream inactive for the delay holds
	// nothing.
	p.Held(time.Time{})
	if h.Hold(t0.Add(2700 * time.Millisecond)) {
		t.Fatal("held with nothing held or in flight, the upstream inactive")
	}
	// A local commit since the last downstream epoch lets it through
	// while the upstream holds its next input: one instance never waits.
	p.Committed(t0.Add(2800 * time.Millisecond))
	p.Held(t0.Add(3300 * time.Millisecond))
	if h.Hold(t0.Add(2801 * time.Millisecond)) {
		t.Fatal("held after a local commit since the last epoch")
	}
}
