package kafka

import (
	"bytes"
	"context"
	"errors"
	"io"
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

// TestReaderFetchBytesOptions: a reader's consumer fetches 256 KiB over
// all its partitions and 64 KiB of each by default (readerFetchMaxBytes,
// readerFetchMaxPartitionBytes) and what kafka.fetch.max.bytes and
// kafka.max.partition.fetch.bytes say when they are set.
func TestReaderFetchBytesOptions(t *testing.T) {
	for _, c := range []struct {
		name          string
		opts          map[string]string
		total, perPar int32
	}{
		{"default", nil, 256 << 10, 64 << 10},
		{"both", map[string]string{"kafka.fetch.max.bytes": "52428800", "KAFKA.MAX.PARTITION.FETCH.BYTES": "1048576"}, 50 << 20, 1 << 20},
		// franz-go caps a partition's bound at the whole fetch's.
		{"total only", map[string]string{"kafka.fetch.max.bytes": "4096"}, 4096, 4096},
		// A partition's bound alone raises the whole fetch's to it.
		{"partition only", map[string]string{"kafka.max.partition.fetch.bytes": "8388608"}, 8 << 20, 8 << 20},
		{"partition only, below the whole's default", map[string]string{"kafka.max.partition.fetch.bytes": "131072"}, 256 << 10, 128 << 10},
	} {
		t.Run(c.name, func(t *testing.T) {
			raw := map[string]string{"kafka.bootstrap.servers": "127.0.0.1:1", "subscribe": "t"}
			for k, v := range c.opts {
				raw[k] = v
			}
			o, err := ParseSourceOptions(raw)
			if err != nil {
				t.Fatal(err)
			}
			s, err := NewSource(memory.NewGoAllocator(), o)
			if err != nil {
				t.Fatal(err)
			}
			defer s.Close()
			cl, err := kgo.NewClient(s.consumerOpts()...)
			if err != nil {
				t.Fatal(err)
			}
			defer cl.Close()
			if got := cl.OptValue(kgo.FetchMaxBytes); got != c.total {
				t.Errorf("fetch max bytes %v, want %d", got, c.total)
			}
			if got := cl.OptValue(kgo.FetchMaxPartitionBytes); got != c.perPar {
				t.Errorf("fetch max partition bytes %v, want %d", got, c.perPar)
			}
		})
	}
}

// TestReaderFetchesSeveralPartitionsAtOnce reads a backlog of 4
// partitions (about 670 KB each, in record batches of at most 16 KiB) as
// one epoch, and counts the fetch requests the broker answered until the
// reader's last record: a fetch brings up to 64 KiB of each partition
// and 256 KiB in all, so the 2.7 MB come in about 11 fetches, where a
// bound of 64 KiB a fetch (before session 37) takes at least 33 (64 KiB
// and at most one batch more each; each fetch answered is a wake-up of a
// process that waited for it). Read alone, one partition still takes a
// fetch per 64 KiB: at least 9. The bounds leave room for the fetches a
// loaded machine adds (up to 15 seen where 8 were usual at 1.4 MB).
// Every record is read once.
func TestReaderFetchesSeveralPartitionsAtOnce(t *testing.T) {
	const parts, perPart = 4, 6000
	c, err := kfake.NewCluster(kfake.NumBrokers(1), kfake.SeedTopics(parts, "t"))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	var fetches atomic.Int64
	c.ControlKey(int16(kmsg.Fetch), func(kmsg.Request) (kmsg.Response, error, bool) {
		c.KeepControl()
		fetches.Add(1)
		return nil, nil, false
	})
	ctx, cancel := context.WithTimeout(context.Background(), testutil.Scaled(5*time.Minute))
	defer cancel()
	prod, err := kgo.NewClient(kgo.SeedBrokers(c.ListenAddrs()...), kgo.RecordPartitioner(kgo.ManualPartitioner()),
		kgo.ProducerBatchCompression(kgo.NoCompression()), kgo.ProducerBatchMaxBytes(16<<10))
	if err != nil {
		t.Fatal(err)
	}
	value := bytes.Repeat([]byte("v"), 100)
	var recs []*kgo.Record
	for p := range parts {
		for range perPart {
			recs = append(recs, &kgo.Record{Topic: "t", Partition: int32(p), Value: value})
		}
	}
	if err := prod.ProduceSync(ctx, recs...).FirstErr(); err != nil {
		t.Fatal(err)
	}
	prod.Close()

	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	// read reads the whole of the given partitions as one epoch with a
	// source of its own, and returns the fetch requests until the last
	// record.
	read := func(ps ...int32) int64 {
		t.Helper()
		s, err := NewSource(mem, SourceOptions{Brokers: c.ListenAddrs(), Subscribe: []string{"t"}, PollTimeout: testutil.Scaled(2 * time.Minute)})
		if err != nil {
			t.Fatal(err)
		}
		defer s.Close()
		var ranges []*partitionRange
		for _, p := range ps {
			ranges = append(ranges, &partitionRange{topic: "t", partition: p, next: 0, end: perPart})
		}
		before := fetches.Load()
		r, err := newReader(s, ranges)
		if err != nil {
			t.Fatal(err)
		}
		defer r.Close()
		seen := map[[2]int64]bool{}
		for {
			rec, err := r.Next(ctx)
			if errors.Is(err, io.EOF) {
				break
			}
			if err != nil {
				t.Fatal(err)
			}
			pcol, ocol := rec.Column(3).(*array.Int32), rec.Column(4).(*array.Int64)
			for j := range int(rec.NumRows()) {
				k := [2]int64{int64(pcol.Value(j)), ocol.Value(j)}
				if seen[k] {
					t.Fatalf("record %d-%d read twice", k[0], k[1])
				}
				seen[k] = true
			}
			rec.Release()
		}
		n := fetches.Load() - before
		if len(seen) != len(ps)*perPart {
			t.Fatalf("partitions %v: read %d records, want %d", ps, len(seen), len(ps)*perPart)
		}
		return n
	}
	// 4 × 6,000 records of about 110 bytes each in the log: 2.7 MB, at
	// least 10.1 fetches of 256 KiB and 33 of 80 KiB.
	if n := read(0, 1, 2, 3); n > 24 {
		t.Errorf("4 partitions of about 670 KB each read in %d fetches, want at most 24 (a fetch carries up to 256 KiB, 64 KiB of each partition)", n)
	} else {
		t.Logf("4 partitions: %d fetches", n)
	}
	// One partition: 670 KB, at least 8.2 fetches of 80 KiB (2.6 of 256).
	if n := read(0); n < 8 {
		t.Errorf("one partition of about 670 KB read in %d fetches, want at least 8 (64 KiB of a partition a fetch)", n)
	} else {
		t.Logf("1 partition: %d fetches", n)
	}
}
