package kafka_test

import (
	"context"
	"testing"

	"github.com/arrowstream/arrowstream/arrowstream"
	"github.com/arrowstream/arrowstream/arrowstream/source/kafka"
	"github.com/arrowstream/arrowstream/internal/testutil/poisonmem"
	"github.com/arrowstream/arrowstream/vector"
)

// TestSourceMetricsOffsetsBehindLatest: after each read, the metrics say
// how far the read end is behind the newest listed offsets, per
// partition (min, max, avg), as Spark's Kafka source reports them.
func TestSourceMetricsOffsetsBehindLatest(t *testing.T) {
	c := newCluster(t, 3, "t")
	produce(t, c, "t", 3, "a", 0, 300) // 100 per partition
	mem := poisonmem.New()
	defer mem.AssertSize(t, 0)
	o, err := kafka.ParseSourceOptions(map[string]string{"kafka.bootstrap.servers": brokers(c), "subscribe": "t",
		"startingOffsets": "earliest", "maxOffsetsPerTrigger": "30"})
	if err != nil {
		t.Fatal(err)
	}
	src, err := kafka.NewSource(mem, o)
	if err != nil {
		t.Fatal(err)
	}
	defer src.Close()
	ctx := context.Background()
	if got := src.Metrics(); len(got) != 0 {
		t.Fatalf("metrics before any read: %v", got)
	}
	// step lists the newest offsets, reads one rate-limited batch from
	// start and returns its end.
	step := func(start arrowstream.Offset) arrowstream.Offset {
		t.Helper()
		if _, err := src.LatestOffset(ctx); err != nil {
			t.Fatal(err)
		}
		end, err := src.LatestOffsetFrom(ctx, start)
		if err != nil {
			t.Fatal(err)
		}
		op, err := src.Read(ctx, start, end)
		if err != nil {
			t.Fatal(err)
		}
		recs, err := vector.Drain(ctx, op)
		op.Close()
		for _, r := range recs {
			r.Release()
		}
		if err != nil {
			t.Fatal(err)
		}
		return end
	}
	cases := []struct {
		name    string
		produce func()
		want    map[string]string
	}{
		// 30 offsets over 3 equal backlogs: 10 each, 90 behind each.
		{"balanced", func() {}, map[string]string{"minOffsetsBehindLatest": "90", "maxOffsetsBehindLatest": "90", "avgOffsetsBehindLatest": "90.0"}},
		// 30 more on partition 0: backlogs 120, 90, 90 get 12, 9, 9.
		{"skewed", func() { produce(t, c, "t", 1, "b", 0, 30) }, map[string]string{"minOffsetsBehindLatest": "81", "maxOffsetsBehindLatest": "108", "avgOffsetsBehindLatest": "90.0"}},
		// One more on partition 0: the backlog 109, 81, 81 gets the
		// floored shares 12, 8, 8 (30 × 81/271 = 8.97).
		{"floored shares", func() { produce(t, c, "t", 1, "c", 0, 1) }, map[string]string{"minOffsetsBehindLatest": "73", "maxOffsetsBehindLatest": "97", "avgOffsetsBehindLatest": "81.0"}},
		// Two more on partition 0: the backlog 99, 73, 73 gets 12, 8, 8;
		// 87, 65, 65 behind.
		{"fractional average", func() { produce(t, c, "t", 1, "d", 0, 2) }, map[string]string{"minOffsetsBehindLatest": "65", "maxOffsetsBehindLatest": "87", "avgOffsetsBehindLatest": "72.33333333333333"}},
	}
	var start arrowstream.Offset
	for _, tc := range cases {
		tc.produce()
		start = step(start)
		got := src.Metrics()
		if len(got) != len(tc.want) {
			t.Fatalf("%s: metrics %v, want %v", tc.name, got, tc.want)
		}
		for k, v := range tc.want {
			if got[k] != v {
				t.Fatalf("%s: metrics %v, want %v", tc.name, got, tc.want)
			}
		}
	}
}

// TestSourceMetricsInProgress: the metrics reach the query's progress.
func TestSourceMetricsInProgress(t *testing.T) {
	c := newCluster(t, 3, "events")
	produce(t, c, "events", 3, "a", 0, 90)
	s := newTestSession(t, t.TempDir())
	defer s.close(t)
	if err := s.RegisterSource("ks", "kafka", nil, map[string]string{"kafka.bootstrap.servers": brokers(c),
		"subscribe": "events", "startingOffsets": "earliest"}); err != nil {
		t.Fatal(err)
	}
	q := startCopy(t, s, "out")
	processAll(t, q)
	var found bool
	for _, p := range q.RecentProgress() {
		if len(p.Sources) == 1 && p.Sources[0].NumInputRows > 0 {
			m := p.Sources[0].Metrics
			if m["minOffsetsBehindLatest"] != "0" || m["maxOffsetsBehindLatest"] != "0" || m["avgOffsetsBehindLatest"] != "0.0" {
				t.Fatalf("source metrics %v", m)
			}
			found = true
		}
	}
	if !found {
		t.Fatal("no progress of a batch that read records")
	}
}
