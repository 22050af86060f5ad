package kafka

import (
	"context"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"testing"
	"time"

	"github.com/apache/arrow/go/v17/arrow/memory"
	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/arrowstream/arrowstream/arrowstream/stream"
	"github.com/arrowstream/arrowstream/internal/testutil"
)

// TestClusterBatchHoldScripted runs the cluster batch hold through a
// cluster input's planning on a scripted clock against a broker: two
// members share a 6-partition topic (k = 2), and the scripted member's
// plannings are held (k - 1) x its last epoch's duration after that
// epoch while offsets keep arriving, never past the cap (the option
// clusterBatchHold, 150 ms here), and let through at the first listing
// that finds nothing new arrived; every record is read once.
func TestClusterBatchHoldScripted(t *testing.T) {
	if testing.Short() {
		t.Skip("a cluster group takes seconds to form (-short)")
	}
	const topic, parts = "hold", 6
	c, err := kfake.NewCluster(kfake.NumBrokers(1), kfake.SeedTopics(parts, topic))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	ctx, cancel := context.WithTimeout(context.Background(), testutil.Scaled(3*time.Minute))
	defer cancel()
	prod, err := kgo.NewClient(kgo.SeedBrokers(c.ListenAddrs()...), kgo.RecordPartitioner(kgo.ManualPartitioner()))
	if err != nil {
		t.Fatal(err)
	}
	defer prod.Close()
	produced := map[int32]int64{}
	produce := func(n int) {
		var recs []*kgo.Record
		for p := range int32(parts) {
			for range n {
				recs = append(recs, &kgo.Record{Topic: topic, Partition: p, Value: fmt.Appendf(nil, "%d-%d", p, produced[p])})
				produced[p]++
			}
		}
		if err := prod.ProduceSync(ctx, recs...).FirstErr(); err != nil {
			t.Fatal(err)
		}
	}

	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	var srcs []*Source
	for i, addr := range []string{"127.0.0.1:1001", "127.0.0.1:1002"} {
		cl, err := NewCluster(ClusterOptions{Name: "c1", Brokers: c.ListenAddrs(), Address: addr, SessionTimeout: 6 * time.Second})
		if err != nil {
			t.Fatal(err)
		}
		s, err := NewSource(mem, SourceOptions{Brokers: c.ListenAddrs(), Subscribe: []string{topic}, StartingOffsets: OffsetSpec{Kind: "earliest"},
			PollTimeout: testutil.Scaled(time.Minute), Cluster: cl, ClusterBatchHold: 150 * time.Millisecond})
		if err != nil {
			t.Fatal(err)
		}
		defer s.Close()
		if err := s.SetCheckpointDir(filepath.Join(t.TempDir(), fmt.Sprint(i), "q", "sources", "0")); err != nil {
			t.Fatal(err)
		}
		srcs = append(srcs, s)
	}
	s := srcs[0]
	now := time.Unix(1_000_000, 0)
	s.now = func() time.Time { return now }
	deadline := time.Now().Add(testutil.Scaled(time.Minute))
	for len(srcs[0].member.ownedNow()[topic]) != parts/2 || len(srcs[1].member.ownedNow()[topic]) != parts/2 {
		if time.Now().After(deadline) {
			t.Fatalf("the members own %v and %v of %s's %d partitions", srcs[0].member.ownedNow(), srcs[1].member.ownedNow(), topic, parts)
		}
		time.Sleep(20 * time.Millisecond)
	}
	owned := map[int32]bool{}
	for _, p := range s.member.ownedNow()[topic] {
		owned[p] = true
	}

	var start stream.Offset
	var read int64
	// step advances the clock, produces n records per partition, plans
	// as the engine does and, when the plan is let through, reads the
	// epoch at once and advances the clock by its duration. It returns
	// the rows read (-1: held).
	step := func(advance time.Duration, n int, dur time.Duration) int64 {
		t.Helper()
		now = now.Add(advance)
		if n > 0 {
			produce(n)
		}
		if _, err := s.LatestOffset(ctx); err != nil {
			t.Fatal(err)
		}
		end, err := s.LatestOffsetFrom(ctx, start)
		if err != nil {
			t.Fatal(err)
		}
		if end == nil || end.Equal(start) {
			return -1
		}
		rows := readHoldEpoch(ctx, t, s, start, end, owned)
		start = end
		read += rows
		now = now.Add(dur)
		return rows
	}
	held := func(what string, got int64) {
		t.Helper()
		if got != -1 {
			t.Fatalf("%s: read %d rows, want the epoch held", what, got)
		}
		if !s.idle.held {
			t.Fatalf("%s: held without pacing the listing (idleBackoff.holding)", what)
		}
	}
	through := func(what string, got, want int64) {
		t.Helper()
		if got != want {
			t.Fatalf("%s: read %d rows, want %d (held: -1)", what, got, want)
		}
	}

	// The engine plans again right after an epoch: the epoch's duration
	// is from its Read to that planning (a step with no advance).
	through("the first epoch", step(0, 10, 100*time.Millisecond), 30)
	// k = 2: held 1 x 100 ms after the epoch ended, while rows arrive.
	held("right after a 100 ms epoch", step(0, 10, 0))
	held("50 ms after", step(50*time.Millisecond, 10, 0))
	held("99 ms after", step(49*time.Millisecond, 10, 0))
	through("100 ms after", step(time.Millisecond, 0, 400*time.Millisecond), 90)
	// A 400 ms epoch: (k - 1) x 400 ms, capped at 150 ms.
	held("right after a 400 ms epoch", step(0, 10, 0))
	held("100 ms after", step(100*time.Millisecond, 10, 0))
	through("150 ms after: the cap", step(50*time.Millisecond, 0, 400*time.Millisecond), 60)
	// Rows that stop arriving go through at the next listing, before the
	// window ends.
	held("rows after a 400 ms epoch", step(0, 10, 0))
	through("the next listing finds nothing new", step(idleBackoffMax, 0, 50*time.Millisecond), 30)
	// Nothing waiting, then rows after a quiet spell longer than the
	// window: through at once.
	if got := step(10*time.Millisecond, 0, 0); got != -1 || s.idle.held {
		t.Fatalf("nothing waiting: read %d, held %v", got, s.idle.held)
	}
	through("rows after a quiet second", step(time.Second, 10, 10*time.Millisecond), 30)

	var want int64
	for p, n := range produced {
		if owned[p] {
			want += n
		}
	}
	if read != want {
		t.Fatalf("read %d of the %d records on the member's partitions", read, want)
	}
}

// readHoldEpoch reads the epoch (start, end] and counts its records,
// checking that they come from the member's partitions.
func readHoldEpoch(ctx context.Context, t *testing.T, s *Source, start, end stream.Offset, owned map[int32]bool) int64 {
	t.Helper()
	op, err := s.Read(ctx, start, end)
	if err != nil {
		t.Fatal(err)
	}
	defer op.Close()
	var n int64
	for {
		rec, err := op.Next(ctx)
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		ps := rec.Column(3).(interface{ Value(int) int32 })
		for j := range int(rec.NumRows()) {
			if !owned[ps.Value(j)] {
				t.Fatalf("read a record of partition %d, not the member's", ps.Value(j))
			}
		}
		n += rec.NumRows()
		rec.Release()
	}
	return n
}
