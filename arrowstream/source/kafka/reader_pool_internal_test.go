package kafka

import (
	"context"
	"errors"
	"fmt"
	"io"
	"sync"
	"testing"
	"time"

	"github.com/apache/arrow/go/v17/arrow"
	"github.com/apache/arrow/go/v17/arrow/array"
	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/arrowstream/arrowstream/internal/testutil"
	"github.com/arrowstream/arrowstream/internal/testutil/poisonmem"
)

// poolCluster is a one-partition topic "t" holding, in snappy batches of
// about 100 records, the values prefix-0..prefix-(n-1) (headers carry the
// value too).
func poolCluster(t *testing.T, n int, prefix string) *kfake.Cluster {
	t.Helper()
	c, err := kfake.NewCluster(kfake.NumBrokers(1), kfake.SeedTopics(1, "t"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Close)
	poolProduce(t, c, n, prefix)
	return c
}

// poolProduce appends prefix-0..prefix-(n-1) to t-0, as poolCluster.
func poolProduce(t *testing.T, c *kfake.Cluster, n int, prefix string) {
	t.Helper()
	prod, err := kgo.NewClient(kgo.SeedBrokers(c.ListenAddrs()...), kgo.ProducerBatchCompression(kgo.SnappyCompression()))
	if err != nil {
		t.Fatal(err)
	}
	defer prod.Close()
	ctx, cancel := context.WithTimeout(context.Background(), testutil.Scaled(2*time.Minute))
	defer cancel()
	for from := 0; from < n; from += 100 {
		var recs []*kgo.Record
		for i := from; i < min(n, from+100); i++ {
			v := fmt.Appendf(nil, "%s-%d", prefix, i)
			recs = append(recs, &kgo.Record{Topic: "t", Key: v, Value: v, Headers: []kgo.RecordHeader{{Key: "h", Value: v}}})
		}
		if err := prod.ProduceSync(ctx, recs...).FirstErr(); err != nil {
			t.Fatal(err)
		}
	}
}

// readRange reads [lo, hi) of t-0 with a reader of s and returns its
// Arrow records (owned by the caller).
func readRange(t *testing.T, s *Source, lo, hi int64) []arrow.Record {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), testutil.Scaled(2*time.Minute))
	defer cancel()
	r, err := newReader(s, []*partitionRange{{topic: "t", partition: 0, next: lo, end: hi}})
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	var out []arrow.Record
	for {
		rec, err := r.Next(ctx)
		if errors.Is(err, io.EOF) {
			return out
		}
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, rec)
	}
}

// checkValues checks that recs hold offsets from, from+1, ... with key,
// value and header value want(offset).
func checkValues(t *testing.T, what string, recs []arrow.Record, from int64, n int, want func(int64) string) {
	t.Helper()
	off := from
	for _, rec := range recs {
		keys, vals := rec.Column(0).(*array.Binary), rec.Column(1).(*array.Binary)
		offs := rec.Column(4).(*array.Int64)
		hdrs := rec.Column(7).(*array.List)
		hv := hdrs.ListValues().(*array.Struct).Field(1).(*array.Binary)
		for j := range int(rec.NumRows()) {
			w := want(off)
			if offs.Value(j) != off || string(keys.Value(j)) != w || string(vals.Value(j)) != w {
				t.Fatalf("%s: row of offset %d holds offset %d, key %q, value %q; want %q", what, off, offs.Value(j), keys.Value(j), vals.Value(j), w)
			}
			start, _ := hdrs.ValueOffsets(j)
			if h := string(hv.Value(int(start))); h != w {
				t.Fatalf("%s: row of offset %d holds header %q, want %q", what, off, h, w)
			}
			off++
		}
	}
	if off != from+int64(n) {
		t.Fatalf("%s: %d rows, want %d", what, off-from, n)
	}
}

func releaseAll(recs []arrow.Record) {
	for _, r := range recs {
		r.Release()
	}
}

// TestReaderRecycledRecordsAreCopies reads an epoch, keeps its Arrow
// records, then reads other data that franz-go decodes into the records
// and decompression buffers the first epoch gave back to the pool: the
// first epoch's output must be unchanged (the built columns own copies of
// the keys, values and headers; a record recycled is not read again), and
// the second epoch must not see the first's bytes. The checked allocator
// poisons released Arrow memory.
func TestReaderRecycledRecordsAreCopies(t *testing.T) {
	const n = 2000
	c := poolCluster(t, n, "first")
	mem := poisonmem.NewChecked(t)
	s, err := NewSource(mem, SourceOptions{Brokers: c.ListenAddrs(), Subscribe: []string{"t"}, BatchRows: 64, IncludeHeaders: true, PollTimeout: testutil.Scaled(2 * time.Minute)})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	first := readRange(t, s, 0, n)
	defer releaseAll(first)
	if recs, bufs, _ := s.pool.stats(); recs == 0 || bufs == 0 {
		t.Fatalf("after the first epoch the pool holds %d record bytes and %d decompression bytes: the reader recycled nothing", recs, bufs)
	}
	// Produced after the first epoch: decoded into the pool's memory.
	poolProduce(t, c, n, "second")
	_, _, before := s.pool.stats()
	second := readRange(t, s, n, 2*n)
	defer releaseAll(second)
	if _, _, after := s.pool.stats(); after == before {
		t.Fatal("the second epoch took nothing from the pool: the test does not reuse the first epoch's memory")
	}
	checkValues(t, "first epoch after the second", first, 0, n, func(o int64) string { return fmt.Sprintf("first-%d", o) })
	checkValues(t, "second epoch", second, n, n, func(o int64) string { return fmt.Sprintf("second-%d", o-n) })
}

// TestReaderCarriedRecordsSurviveRecycling reads a partition in small
// epochs: the reader's fetch runs ahead, so most epochs end with records
// of the next carried over, whose batches were partly recycled (the
// records before the range's end) and whose memory must stay theirs until
// the next epoch builds them.
func TestReaderCarriedRecordsSurviveRecycling(t *testing.T) {
	const n, step = 3000, 170
	c := poolCluster(t, n, "v")
	mem := poisonmem.NewChecked(t)
	s, err := NewSource(mem, SourceOptions{Brokers: c.ListenAddrs(), Subscribe: []string{"t"}, BatchRows: 50, IncludeHeaders: true, PollTimeout: testutil.Scaled(2 * time.Minute)})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	carried := 0
	for lo := int64(0); lo < n; lo += step {
		hi := min(lo+step, n)
		recs := readRange(t, s, lo, hi)
		checkValues(t, fmt.Sprintf("epoch [%d, %d)", lo, hi), recs, lo, int(hi-lo), func(o int64) string { return fmt.Sprintf("v-%d", o) })
		releaseAll(recs)
		s.kept.mu.Lock()
		if kp := s.kept.parts["t"][0]; kp != nil && len(kp.carried) > 0 {
			carried++
		}
		s.kept.mu.Unlock()
	}
	if carried == 0 {
		t.Fatal("no epoch carried records to the next: the test does not exercise carrying")
	}
	t.Logf("%d of %d epochs carried records to the next", carried, (n+step-1)/step)
}

// TestFetchPoolBound checks the pool's contract: a get returns a slice of
// the capacity asked for, reuses what was put back, and the pool keeps no
// more than its bound of each kind; concurrent use is safe (-race).
func TestFetchPoolBound(t *testing.T) {
	const bound = 1 << 20
	p := newFetchPool(bound)
	for _, n := range []int{1, 63, 64, 65, 100, 1000, 1023, 1024, 1025, 5000} {
		if s := p.GetRecords(n); cap(s) < n || len(s) != 0 {
			t.Fatalf("GetRecords(%d): len %d cap %d", n, len(s), cap(s))
		}
		if b := p.GetDecompressBytes(make([]byte, n), kgo.CodecLz4); cap(b) < 2*n || len(b) != 0 {
			t.Fatalf("GetDecompressBytes(%d bytes): len %d cap %d", n, len(b), cap(b))
		}
	}
	// A snappy block's decoded length is read from its header.
	if b := p.GetDecompressBytes([]byte{0xe8, 0x07, 0}, kgo.CodecSnappy); cap(b) < 1000 {
		t.Fatalf("GetDecompressBytes(snappy of 1000 bytes): cap %d", cap(b))
	}
	s := p.GetRecords(900)
	p.PutRecords(s)
	if again := p.GetRecords(800); &again[:1][0] != &s[:1][0] {
		t.Fatal("a slice put back was not reused for a batch it holds")
	}
	if recs, _, _ := p.stats(); recs != 0 {
		t.Fatalf("after the get the pool holds %d record bytes, want 0", recs)
	}
	// Far more than the bound put back: the pool keeps at most the bound.
	for range 100 {
		p.PutRecords(make([]kgo.Record, 0, 1000))
		p.PutDecompressBytes(make([]byte, 0, 100<<10))
	}
	recs, bufs, _ := p.stats()
	if recs > bound || bufs > bound || recs < bound/2 || bufs < bound/2 {
		t.Fatalf("pool holds %d record bytes and %d buffer bytes, want at most (and near) %d each", recs, bufs, bound)
	}
	// A buffer below the smallest class is not kept.
	p2 := newFetchPool(bound)
	p2.PutDecompressBytes(make([]byte, 0, 1<<minPoolClass-1))
	if _, bufs, _ := p2.stats(); bufs != 0 {
		t.Fatalf("a buffer below the smallest class was kept (%d bytes)", bufs)
	}
	var wg sync.WaitGroup
	for g := range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range 500 {
				n := 50 + (g*500+i)%3000
				s := p.GetRecords(n)
				s = s[:n]
				s[n-1].Offset = int64(i)
				p.PutRecords(s)
				b := p.GetDecompressBytes(make([]byte, n), kgo.CodecZstd)
				p.PutDecompressBytes(b)
			}
		}()
	}
	wg.Wait()
	if recs, bufs, _ := p.stats(); recs > bound || bufs > bound {
		t.Fatalf("after concurrent use the pool holds %d and %d bytes, over its bound %d", recs, bufs, bound)
	}
}

// TestReaderReadCommittedMarkersRecycled reads transactions as the hop's
// downstream does (read committed, control records kept): a range ends
// at a commit marker, which the reader recycles. Recycling zeroes a
// record, so the marker's offset must be taken before; taken after, the
// range never finished and the reader timed out.
func TestReaderReadCommittedMarkersRecycled(t *testing.T) {
	const txns, per = 5, 40
	c, err := kfake.NewCluster(kfake.NumBrokers(1), kfake.SeedTopics(1, "t"))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	ctx, cancel := context.WithTimeout(context.Background(), testutil.Scaled(2*time.Minute))
	defer cancel()
	prod, err := kgo.NewClient(kgo.SeedBrokers(c.ListenAddrs()...), kgo.TransactionalID("w"), kgo.DefaultProduceTopic("t"))
	if err != nil {
		t.Fatal(err)
	}
	defer prod.Close()
	for i := range txns {
		if err := prod.BeginTransaction(); err != nil {
			t.Fatal(err)
		}
		var recs []*kgo.Record
		for j := range per {
			v := fmt.Appendf(nil, "v-%d", i*per+j)
			recs = append(recs, &kgo.Record{Key: v, Value: v, Headers: []kgo.RecordHeader{{Key: "h", Value: v}}})
		}
		if err := prod.ProduceSync(ctx, recs...).FirstErr(); err != nil {
			t.Fatal(err)
		}
		if err := prod.EndTransaction(ctx, kgo.TryCommit); err != nil {
			t.Fatal(err)
		}
	}
	mem := poisonmem.NewChecked(t)
	s, err := NewSource(mem, SourceOptions{Brokers: c.ListenAddrs(), Subscribe: []string{"t"}, BatchRows: 16, IncludeHeaders: true, PollTimeout: testutil.Scaled(20 * time.Second)})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	s.hop = true
	// Each transaction is per records and a marker: offsets
	// [i*(per+1), (i+1)*(per+1)), the last one the marker.
	for i := range txns {
		lo, hi := int64(i*(per+1)), int64((i+1)*(per+1))
		recs := readRange(t, s, lo, hi)
		n := 0
		for _, rec := range recs {
			vals := rec.Column(1).(*array.Binary)
			for j := range int(rec.NumRows()) {
				if w := fmt.Sprintf("v-%d", i*per+n); string(vals.Value(j)) != w {
					t.Fatalf("transaction %d: row %d holds %q, want %q", i, n, vals.Value(j), w)
				}
				n++
			}
		}
		releaseAll(recs)
		if n != per {
			t.Fatalf("transaction %d: %d rows, want %d", i, n, per)
		}
	}
}
