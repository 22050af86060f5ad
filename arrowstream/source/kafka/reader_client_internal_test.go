package kafka

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"sync/atomic"
	"testing"
	"time"

	"github.com/apache/arrow/go/v17/arrow/array"
	"github.com/apache/arrow/go/v17/arrow/memory"
	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/arrowstream/arrowstream/internal/testutil"
)

// TestKeptConsumerRanges reads random ranges of random partitions epoch
// after epoch, as the engine does (ranges move forward, go back for a
// replay, skip partitions, and a reader is sometimes closed before it
// finished), and checks each reader against the model: exactly the
// records of its ranges, each once, nothing from another epoch. It also
// counts the consumer connections: one client kept across the epochs
// opens a handful, a client per epoch (the code before it) opens one or
// more per epoch.
func TestKeptConsumerRanges(t *testing.T) {
	const parts, perPart, epochs = 4, 1000, 40
	c, err := kfake.NewCluster(kfake.NumBrokers(1), kfake.SeedTopics(parts, "t"))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	var apiVersions atomic.Int64 // one per new connection
	c.ControlKey(int16(kmsg.ApiVersions), func(kmsg.Request) (kmsg.Response, error, bool) {
		c.KeepControl()
		apiVersions.Add(1)
		return nil, nil, false
	})
	ctx, cancel := context.WithTimeout(context.Background(), testutil.Scaled(5*time.Minute))
	defer cancel()
	prod, err := kgo.NewClient(kgo.SeedBrokers(c.ListenAddrs()...), kgo.RecordPartitioner(kgo.ManualPartitioner()))
	if err != nil {
		t.Fatal(err)
	}
	var recs []*kgo.Record
	for p := range parts {
		for o := range perPart {
			recs = append(recs, &kgo.Record{Topic: "t", Partition: int32(p), Value: fmt.Appendf(nil, "%d-%d", p, o)})
		}
	}
	if err := prod.ProduceSync(ctx, recs...).FirstErr(); err != nil {
		t.Fatal(err)
	}
	prod.Close()

	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	s, err := NewSource(mem, SourceOptions{Brokers: c.ListenAddrs(), Subscribe: []string{"t"}, BatchRows: 7, PollTimeout: testutil.Scaled(2 * time.Minute)})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	rnd := rand.New(rand.NewPCG(23, 1))
	pos := make([]int64, parts) // where the last range of a partition ended; -1 none
	for p := range pos {
		pos[p] = -1
	}
	// epoch reads one epoch: mostly the engine's pattern (a partition's
	// range starts where its last ended), with jumps (replays, moves),
	// partitions left out and readers stopped early when mixed.
	epoch := func(i int, mixed bool) {
		var ranges []*partitionRange
		want := map[[2]int64]bool{}
		for p := range parts {
			if mixed && rnd.IntN(4) == 0 {
				continue // not read this epoch
			}
			lo := pos[p]
			if lo < 0 || lo >= perPart-1 || (mixed && rnd.IntN(5) == 0) {
				lo = rnd.Int64N(perPart - 1)
			}
			hi := lo + 1 + rnd.Int64N(min(10, perPart-lo-1))
			ranges = append(ranges, &partitionRange{topic: "t", partition: int32(p), next: lo, end: hi})
			for o := lo; o < hi; o++ {
				want[[2]int64{int64(p), o}] = true
			}
			pos[p] = hi
		}
		if len(ranges) == 0 {
			return
		}
		early := mixed && rnd.IntN(5) == 0 // closed after its first record batch
		r, err := newReader(s, ranges)
		if err != nil {
			t.Fatal(err)
		}
		got := map[[2]int64]bool{}
		for {
			rec, err := r.Next(ctx)
			if errors.Is(err, io.EOF) {
				break
			}
			if err != nil {
				t.Fatalf("epoch %d: %v", i, err)
			}
			ps := rec.Column(3).(*array.Int32)
			offs := rec.Column(4).(*array.Int64)
			vals := rec.Column(1).(*array.Binary)
			for j := range int(rec.NumRows()) {
				k := [2]int64{int64(ps.Value(j)), offs.Value(j)}
				if !want[k] {
					t.Fatalf("epoch %d: record %d-%d is outside the epoch's ranges", i, k[0], k[1])
				}
				if got[k] {
					t.Fatalf("epoch %d: record %d-%d read twice", i, k[0], k[1])
				}
				if v := fmt.Sprintf("%d-%d", k[0], k[1]); string(vals.Value(j)) != v {
					t.Fatalf("epoch %d: record %d-%d holds %q", i, k[0], k[1], vals.Value(j))
				}
				got[k] = true
			}
			rec.Release()
			if early {
				break
			}
		}
		if err := r.Close(); err != nil {
			t.Fatal(err)
		}
		if early {
			for _, rg := range ranges {
				pos[rg.partition] = -1 // the engine replays the epoch
			}
			return
		}
		if len(got) != len(want) {
			t.Fatalf("epoch %d: read %d records, want %d", i, len(got), len(want))
		}
	}
	for i := range epochs {
		epoch(i, true)
	}
	epoch(epochs, false) // moves the partitions the mixed epochs left elsewhere
	before := apiVersions.Load()
	for i := range epochs {
		epoch(epochs+1+i, false)
	}
	// Connections in the engine's pattern: none once the kept client is
	// connected; a client per epoch opens two or three each epoch.
	n := apiVersions.Load() - before
	t.Logf("%d new connections over %d epochs reading on", n, epochs)
	if n > 3 {
		t.Fatalf("%d consumer connections over %d epochs: the readers do not share a client", n, epochs)
	}
}
