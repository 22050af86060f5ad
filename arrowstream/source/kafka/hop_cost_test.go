package kafka_test

import (
	"context"
	"fmt"
	"os"
	"runtime"
	"strconv"
	"syscall"
	"testing"
	"time"

	"github.com/arrowstream/arrowstream/arrowstream"
	"github.com/arrowstream/arrowstream/internal/testutil"
	"github.com/arrowstream/arrowstream/vector"
	vt "github.com/arrowstream/arrowstream/vector/vectortest"
)

// hopCostEnv turns on TestHopCost (a measurement, not a check).
const hopCostEnv = "ARROWSTREAM_HOP_COST"

// TestHopCost measures the repartition hop's cost per event end to end,
// in one process with an in-process kfake broker (whose CPU counts too):
// the process CPU time (user + system) to read N events and compute their
// key in a stateless query (whose filter keeps none), against the CPU time of the count by that
// key in cluster mode, which sends every event through the hop (produce
// in a transaction, fetch, decode, aggregate). The difference per event is
// the hop's cost. It logs the figures and asserts nothing about speed.
// Run it with ARROWSTREAM_HOP_COST=200000.
func TestHopCost(t *testing.T) {
	n, _ := strconv.Atoi(os.Getenv(hopCostEnv))
	if n <= 0 {
		t.Skipf("a measurement: set %s=<events> to run it", hopCostEnv)
	}
	c := newCluster(t, 12, "ev")
	bl := brokers(c)
	produce(t, c, "ev", 12, "a", 0, n)
	key := fmt.Sprintf("CAST(CAST(substring(CAST(value AS STRING), 2) AS INT) %% %d AS INT) AS u", hopBuckets)

	// Stateless: the key per event, no hop, and (as the count) almost no
	// output: only the rows' processing is compared.
	s1, _ := newClusterSession(t, t.TempDir(), bl, "plain", "127.0.0.1:1001")
	defer s1.close(t)
	if err := s1.RegisterSource("ks", "kafka", nil, map[string]string{"kafka.bootstrap.servers": bl, "subscribe": "ev", "startingOffsets": "earliest"}); err != nil {
		t.Fatal(err)
	}
	runtime.GC() // the producer's garbage is not the query's
	cpu0, wall0 := processCPU(), time.Now()
	q, err := s1.ReadStream("ks").Select(key).Where("u < 0").WriteStream().Format("memory").QueryName("out").
		Trigger(arrowstream.ProcessingTime(20 * time.Millisecond)).Start(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(testutil.Scaled(10 * time.Minute))
	for {
		read := int64(0)
		for _, p := range q.RecentProgress() {
			read += p.NumInputRows
		}
		if read >= int64(n) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the stateless query read %d of %d events", read, n)
		}
		time.Sleep(20 * time.Millisecond)
	}
	plainCPU, plainWall := processCPU()-cpu0, time.Since(wall0)
	q.Stop() // its polling would count in the next measurement

	// Stateful: the count by key, through the hop.
	s2, _ := newClusterSession(t, t.TempDir(), bl, "hop", "127.0.0.1:1002")
	defer s2.close(t)
	runtime.GC()
	cpu0, wall0 = processCPU(), time.Now()
	startHopAggregation(t, s2, bl)
	waitSum(t, s2, "SELECT sum(count) FROM agg", int64(n))
	hopCPU, hopWall := processCPU()-cpu0, time.Since(wall0)

	t.Logf("%d events: stateless key %v CPU (%v wall, %.0f ns CPU/event); count by key through the hop %v CPU (%v wall, %.0f ns CPU/event); the hop and the aggregation cost %.0f ns CPU/event",
		n, plainCPU.Round(time.Millisecond), plainWall.Round(time.Millisecond), float64(plainCPU.Nanoseconds())/float64(n),
		hopCPU.Round(time.Millisecond), hopWall.Round(time.Millisecond), float64(hopCPU.Nanoseconds())/float64(n),
		float64((hopCPU-plainCPU).Nanoseconds())/float64(n))
}

// waitSum waits until query's single value reaches want.
func waitSum(t *testing.T, s *testSession, query string, want int64) {
	t.Helper()
	deadline := time.Now().Add(testutil.Scaled(10 * time.Minute))
	for {
		var got int64
		if res, err := s.SQL(context.Background(), query); err == nil {
			recs, err := vector.Drain(context.Background(), res.Op)
			res.Close()
			if err == nil {
				for _, r := range vt.RowsOf(recs...) {
					if v, ok := r[0].(int64); ok {
						got = v
					}
				}
			}
			for _, r := range recs {
				r.Release()
			}
		}
		if got >= want {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s: %d, want %d", query, got, want)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// processCPU is the process's user + system CPU time so far.
func processCPU() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
