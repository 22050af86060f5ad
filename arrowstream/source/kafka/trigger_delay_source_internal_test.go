package kafka

import (
	"context"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"testing"
	"time"

	"github.com/apache/arrow/go/v17/arrow/array"
	"github.com/apache/arrow/go/v17/arrow/memory"
	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/arrowstream/arrowstream/arrowstream/stream"
	"github.com/arrowstream/arrowstream/internal/testutil"
)

// delayStep is one trigger of a scripted run: the clock moves on by
// advance, the records of produce (per partition of the 3) are added,
// then the source plans an epoch as the engine does (LatestOffset, then
// LatestOffsetFrom from the last epoch's end) and the epoch is read. read
// is how many records of each partition the epoch reads (zero: no epoch,
// the source held the data or had none).
type delayStep struct {
	advance time.Duration
	produce [3]int
	read    [3]int64
}

// delayCase is a scripted run of minOffsetsPerTrigger and
// maxTriggerDelay (and maxOffsetsPerTrigger when max > 0).
type delayCase struct {
	name     string
	min, max int64
	delay    time.Duration
	initial  [3]int // records in the topic before the query starts
	steps    []delayStep
}

// sparkDelayCases: the first two are KafkaMicroBatchSourceSuite's
// "minOffsetsPerTrigger" and "compositeReadLimit" (Spark 3.3), step by
// step with the records their CheckAnswers expect per trigger; the
// others follow from the same delayBatch rule (KafkaMicroBatchStream),
// which is consulted at every trigger, with data or without: an expired
// delay lets that trigger through and restarts, so after an idle spell
// the first records wait for the minimum or for the delay measured from
// the last trigger that found it expired.
var sparkDelayCases = []delayCase{
	{
		name: "minOffsetsPerTrigger", min: 15, delay: 5 * time.Second,
		initial: [3]int{10, 5, 1},
		steps: []delayStep{
			{read: [3]int64{10, 5, 1}},                                                             // the first batch is always processed
			{advance: 100 * time.Millisecond, produce: [3]int{0, 6, 0}},                            // 6 < 15: held
			{advance: 100 * time.Millisecond, produce: [3]int{11, 0, 1}, read: [3]int64{11, 6, 1}}, // 18 >= 15
			{advance: 100 * time.Millisecond, produce: [3]int{5, 5, 0}},                            // 10 < 15: held
			{advance: 5 * time.Second, read: [3]int64{5, 5, 0}},                                    // the delay expired
			{advance: 100 * time.Millisecond},                                                      // nothing new
			{advance: 100 * time.Millisecond, produce: [3]int{20, 0, 0}, read: [3]int64{20, 0, 0}}, // >= 15 at once
		},
	},
	{
		name: "compositeReadLimit", min: 15, max: 20, delay: 5 * time.Second,
		initial: [3]int{21, 11, 1},
		steps: []delayStep{
			{read: [3]int64{12, 6, 1}},        // through, cut to 20 (Spark's proration)
			{advance: 100 * time.Millisecond}, // 14 pending < 15: held
			{advance: 100 * time.Millisecond, produce: [3]int{8, 10, 1}, read: [3]int64{10, 9, 1}}, // 33 pending, 20 read
			{advance: 100 * time.Millisecond},                   // 13 pending: held
			{advance: 5 * time.Second, read: [3]int64{7, 6, 0}}, // the delay expired
		},
	},
	{
		// An idle trigger after the delay expired restarts it: records
		// that arrive then wait.
		name: "idle trigger restarts the delay", min: 15, delay: 5 * time.Second,
		initial: [3]int{10, 5, 1},
		steps: []delayStep{
			{read: [3]int64{10, 5, 1}},
			{advance: time.Second}, {advance: time.Second}, {advance: time.Second}, {advance: time.Second},
			{advance: time.Second}, // 5 s after the last batch, no data: the delay restarts here
			{advance: 100 * time.Millisecond, produce: [3]int{3, 3, 0}}, // held (a small epoch before)
			{advance: 4800 * time.Millisecond},                          // 4.9 s after the restart: held
			{advance: 100 * time.Millisecond, read: [3]int64{3, 3, 0}},  // 5 s: through
		},
	},
	{
		// The first trigger finds an empty topic: it is let through (no
		// epoch) and the delay runs from it.
		name: "empty start", min: 15, delay: 5 * time.Second,
		steps: []delayStep{
			{},
			{advance: 100 * time.Millisecond, produce: [3]int{2, 2, 2}}, // held
			{advance: 4 * time.Second, produce: [3]int{1, 0, 0}},        // held
			{advance: 900 * time.Millisecond, read: [3]int64{3, 2, 2}},  // 5 s after the first trigger
		},
	},
	{
		// Idle triggers before the delay expires do not restart it: it
		// runs from the last let-through.
		name: "idle triggers within the delay", min: 15, delay: 5 * time.Second,
		initial: [3]int{20, 0, 0},
		steps: []delayStep{
			{read: [3]int64{20, 0, 0}},
			{advance: 2 * time.Second}, {advance: 2 * time.Second},
			{advance: 500 * time.Millisecond, produce: [3]int{0, 4, 0}}, // held
			{advance: 500 * time.Millisecond, read: [3]int64{0, 4, 0}},  // 5 s after the first: through
		},
	},
}

// TestTriggerDelayScriptedAsSpark runs sparkDelayCases through the
// source's planning on a scripted clock against a broker, outside and in
// cluster mode (one instance owning the 3 partitions), and checks what
// each trigger reads. In cluster mode an idle planning did not consult
// the delay before: the first records after an idle spell, or after an
// empty first trigger, went through at once.
func TestTriggerDelayScriptedAsSpark(t *testing.T) {
	for _, mode := range []string{"single", "cluster"} {
		for i, tc := range sparkDelayCases {
			t.Run(mode+"/"+tc.name, func(t *testing.T) {
				if mode == "cluster" && testing.Short() {
					t.Skip("a cluster group takes seconds to form (-short)")
				}
				runDelayCase(t, mode == "cluster", fmt.Sprintf("t%d", i), tc)
			})
		}
	}
}

func runDelayCase(t *testing.T, cluster bool, topic string, tc delayCase) {
	c, err := kfake.NewCluster(kfake.NumBrokers(1), kfake.SeedTopics(3, topic))
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
	produced := [3]int64{}
	produce := func(n [3]int) {
		var recs []*kgo.Record
		for p, k := range n {
			for range k {
				recs = append(recs, &kgo.Record{Topic: topic, Partition: int32(p), Value: fmt.Appendf(nil, "%d-%d", p, produced[p])})
				produced[p]++
			}
		}
		if len(recs) > 0 {
			if err := prod.ProduceSync(ctx, recs...).FirstErr(); err != nil {
				t.Fatal(err)
			}
		}
	}
	produce(tc.initial)

	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	opts := SourceOptions{Brokers: c.ListenAddrs(), Subscribe: []string{topic}, StartingOffsets: OffsetSpec{Kind: "earliest"},
		MinOffsetsPerTrigger: tc.min, MaxOffsetsPerTrigger: tc.max, MaxTriggerDelay: tc.delay, PollTimeout: testutil.Scaled(time.Minute)}
	if cluster {
		cl, err := NewCluster(ClusterOptions{Name: "c1", Brokers: c.ListenAddrs(), Address: "127.0.0.1:1001", SessionTimeout: 6 * time.Second})
		if err != nil {
			t.Fatal(err)
		}
		opts.Cluster = cl
	}
	s, err := NewSource(mem, opts)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	now := time.Unix(1_000_000, 0)
	s.now = func() time.Time { return now }
	if err := s.SetCheckpointDir(filepath.Join(t.TempDir(), "q", "sources", "0")); err != nil {
		t.Fatal(err)
	}
	var start stream.Offset
	if cluster {
		deadline := time.Now().Add(testutil.Scaled(time.Minute))
		for len(s.member.ownedNow()[topic]) < 3 {
			if time.Now().After(deadline) {
				t.Fatalf("the only member owns %v of %s's 3 partitions", s.member.ownedNow(), topic)
			}
			time.Sleep(20 * time.Millisecond)
		}
	} else {
		start = s.InitialOffset()
	}
	readTotal := [3]int64{}
	for i, st := range tc.steps {
		now = now.Add(st.advance)
		produce(st.produce)
		if _, err := s.LatestOffset(ctx); err != nil {
			t.Fatal(err)
		}
		end, err := s.LatestOffsetFrom(ctx, start)
		if err != nil {
			t.Fatal(err)
		}
		got := [3]int64{}
		if end != nil && !end.Equal(start) {
			got = readEpoch(ctx, t, s, start, end)
			start = end
		}
		if got != st.read {
			t.Fatalf("trigger %d (%v after the start): read %v, want %v (Spark's delayBatch: min %d, delay %v)",
				i, now.Sub(time.Unix(1_000_000, 0)), got, st.read, tc.min, tc.delay)
		}
		for p := range got {
			readTotal[p] += got[p]
		}
	}
	if readTotal != produced {
		t.Fatalf("read %v of %v records in all", readTotal, produced)
	}
}

// readEpoch reads the epoch (start, end] and counts its records per
// partition, checking that each partition's records come in order from
// where the last epoch left off.
func readEpoch(ctx context.Context, t *testing.T, s *Source, start, end stream.Offset) [3]int64 {
	t.Helper()
	op, err := s.Read(ctx, start, end)
	if err != nil {
		t.Fatal(err)
	}
	defer op.Close()
	var n [3]int64
	for {
		rec, err := op.Next(ctx)
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		ps := rec.Column(3).(*array.Int32)
		for j := range int(rec.NumRows()) {
			n[ps.Value(j)]++
		}
		rec.Release()
	}
	return n
}
