package kafka

import (
	"context"
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/apache/arrow/go/v17/arrow"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
)

// reader is the operator Read returns: it fetches its ranges by offset
// with the source's consumer (no consumer group; kept across epochs,
// reader_client.go) and turns the records into Arrow records of up to
// BatchRows rows.
type reader struct {
	src     *Source
	client  *kgo.Client
	kept    bool // client is the source's kept consumer (reader_client.go)
	ranges  map[string]map[int32]*partitionRange
	open    int // ranges not finished
	b       *recordBuilder
	pending []*kgo.Record // fetched, in range, not yet built
	pos     int
	closed  bool

	// A goroutine polls one fetch ahead, so that Kafka fetches the next
	// records while Next builds Arrow columns from the last ones (kgo
	// issues a broker's next fetch only once the previous one was taken).
	fetched chan kgo.Fetches
	cancel  context.CancelFunc
	unsent  kgo.Fetches // taken by pollLoop when the reader was released

	// With the kept client: records fetched past a finished range's end
	// (carried to the next epoch's reader, reader_client.go), and the
	// records carried to this one, taken before the first poll.
	carried map[string]map[int32][]*kgo.Record
	carryIn kgo.Fetches
}

// readerFetchMaxPartitionBytes bounds what one fetch of a reader brings
// of each partition, and readerFetchMaxBytes what it brings over all of
// them. The ranges are known to exist, so a bigger fetch only saves
// round trips; but a fetch is decoded at once into records that live
// until built, so its size sets the reader's working set: with 8 MiB a
// partition, an instance's held epoch of 150K records arrived in one
// fetch and was decoded on fresh pages. Bounded, the records of a fetch
// fit the source's pool and go round (reader_pool.go). Kafka returns at
// least one batch of a partition however large. 64 KiB a partition
// measured best on loopback against 256 KiB and 1 MiB (docs/cluster.md,
// sessions 29 and 35).
//
// The whole fetch may carry four partitions' worth: each fetch answered
// is a wake-up of a process that waited for it (its network poller, the
// runtime's monitor thread restarting its 20 µs polling, franz-go's
// connection and fetch goroutines), and an instance that decodes faster
// than the broker answers pays one per fetch. At 64 KiB a fetch, three
// instances catching up on a backlog paid about twice the single
// instance's context switches for the same input and were at 0.6 of its
// events per CPU-second; at 256 KiB over at least four partitions, 0.8
// (docs/cluster.md, session 37). A reader of one partition fetches as
// before. Over a network with a long round trip the bounds limit a
// partition's rate to 64 KiB per round trip: the options
// kafka.fetch.max.bytes and kafka.max.partition.fetch.bytes
// (SourceOptions) raise them.
const (
	readerFetchMaxBytes          = 256 << 10
	readerFetchMaxPartitionBytes = 64 << 10
)

func newReader(s *Source, ranges []*partitionRange) (*reader, error) {
	consume := map[string]map[int32]kgo.Offset{}
	byTP := map[string]map[int32]*partitionRange{}
	for _, r := range ranges {
		if consume[r.topic] == nil {
			consume[r.topic] = map[int32]kgo.Offset{}
			byTP[r.topic] = map[int32]*partitionRange{}
		}
		consume[r.topic][r.partition] = kgo.NewOffset().At(r.next)
		byTP[r.topic][r.partition] = r
	}
	cl, kept, carryIn, pending, err := s.borrowConsumer(consume)
	if err != nil {
		return nil, err
	}
	// pending holds one fetch's records at a time (fetches are bounded,
	// reader_client.go); with the kept client it is the last reader's,
	// kept with the client, else it grows to the largest fetch.
	return &reader{src: s, client: cl, kept: kept, carryIn: carryIn, ranges: byTP, open: len(ranges), b: newRecordBuilder(s.mem, s.opts.IncludeHeaders),
		pending: pending}, nil
}

// Schema implements vector.Operator.
func (r *reader) Schema() *arrow.Schema { return r.b.schema }

// Next implements vector.Operator.
func (r *reader) Next(ctx context.Context) (arrow.Record, error) {
	if r.closed {
		return nil, io.EOF
	}
	for {
		if r.pos < len(r.pending) {
			return r.build(), nil
		}
		r.pending, r.pos = r.pending[:0], 0
		if r.open == 0 {
			r.release()
			return nil, io.EOF
		}
		if r.carryIn != nil {
			in := r.carryIn
			r.carryIn = nil
			if err := r.take(ctx, in); err != nil {
				return nil, err
			}
			continue
		}
		if err := r.poll(ctx); err != nil {
			return nil, err
		}
	}
}

// build turns up to BatchRows pending records into an Arrow record.
func (r *reader) build() arrow.Record {
	chunk := r.pending[r.pos:min(len(r.pending), r.pos+r.src.opts.BatchRows)]
	r.pos += len(chunk)
	rec := r.b.build(chunk)
	// The Arrow columns hold copies of the records' bytes: the records
	// (and the decompressed batch their keys and values point into) go
	// back to the source's pool for the next fetches (reader_pool.go).
	recycle(chunk)
	return rec
}

// pollLoop runs in its own goroutine until the reader is released. A
// fetch it took when the reader was released is kept in unsent (read
// after fetched is closed): with the kept client, its records beyond the
// ranges are the next epoch's (the client's position moved past them).
func (r *reader) pollLoop(ctx context.Context) {
	defer close(r.fetched)
	for {
		fs := r.client.PollFetches(ctx)
		select {
		case r.fetched <- fs:
		case <-ctx.Done():
			r.unsent = fs
			return
		}
		if ctx.Err() != nil {
			return
		}
	}
}

// poll takes one fetch and queues the records that are in range.
func (r *reader) poll(ctx context.Context) error {
	if r.fetched == nil {
		pctx, cancel := context.WithCancel(context.Background())
		r.fetched, r.cancel = make(chan kgo.Fetches, 1), cancel
		go r.pollLoop(pctx)
	}
	timer := time.NewTimer(r.src.opts.PollTimeout)
	defer timer.Stop()
	var fetches kgo.Fetches
	select {
	case fetches = <-r.fetched:
	case <-ctx.Done():
		return ctx.Err()
	case <-timer.C:
		return r.timedOut()
	}
	return r.take(ctx, fetches)
}

// take queues the records of fetches that are in range. With the kept
// client, records past a range's end are kept for the next epoch
// (carry).
func (r *reader) take(ctx context.Context, fetches kgo.Fetches) error {
	for _, fe := range fetches.Errors() {
		switch {
		case errors.Is(fe.Err, kerr.OffsetOutOfRange): // defensive: the reset policy normally hides it
			rng := r.ranges[fe.Topic][fe.Partition]
			if rng == nil {
				continue
			}
			if err := r.src.reportDataLoss("offsets [%d, %d) of %s-%d are out of range in Kafka (deleted while reading)", rng.next, rng.end, fe.Topic, fe.Partition); err != nil {
				return err
			}
			r.finish(rng)
			rng.done = -1 // the client's position reset: not carried on
		default:
			return fmt.Errorf("kafka: fetch %s-%d: %w", fe.Topic, fe.Partition, fe.Err)
		}
	}
	for _, f := range fetches {
		for ti := range f.Topics {
			ft := &f.Topics[ti]
			tr := r.ranges[ft.Topic]
			for pi := range ft.Partitions {
				fp := &ft.Partitions[pi]
				rng := tr[fp.Partition]
				if rng == nil {
					recycle(fp.Records)
					continue
				}
				if rng.next >= rng.end {
					r.carry(rng, fp.Records) // fetched ahead of a finished range
					continue
				}
				for i, rec := range fp.Records {
					if rec.Offset < rng.next {
						rec.Recycle()
						continue
					}
					if !rng.started && rec.Offset > rng.next {
						if err := r.checkJump(ctx, rng, rec.Offset); err != nil {
							return err
						}
					}
					rng.started = true
					if rec.Offset >= rng.end {
						// Offsets the log skips (compaction, transaction
						// markers) may end the range without a record at end-1.
						rng.next = rng.end
						r.carry(rng, fp.Records[i:])
						break
					}
					rng.next = rec.Offset + 1
					if !rec.Attrs.IsControl() {
						r.pending = append(r.pending, rec)
					} else {
						rec.Recycle() // a transaction marker (zeroed: read before)
					}
				}
				if rng.next >= rng.end {
					r.finish(rng)
				}
			}
		}
	}
	return nil
}

// checkJump tells a gap before a range's first record (compaction, or
// the partition's offsets going out of range while the query read it)
// from data loss, by the partition's log start offset.
func (r *reader) checkJump(ctx context.Context, rng *partitionRange, first int64) error {
	earliest, err := r.src.listOffsets(ctx, true, []string{rng.topic})
	if err != nil {
		return err
	}
	if lo, ok := earliest.get(rng.topic, rng.partition); ok && lo > rng.next {
		return r.src.reportDataLoss("offsets [%d, %d) of %s-%d were deleted from Kafka while they were read (its log now starts at %d)", rng.next, min(lo, first), rng.topic, rng.partition, lo)
	}
	return nil
}

// finish stops fetching a completed range.
func (r *reader) finish(rng *partitionRange) {
	if rng.end == -1 {
		return // already finished
	}
	rng.done = rng.end
	rng.next, rng.end = -1, -1
	r.open--
	r.client.PauseFetchPartitions(map[string][]int32{rng.topic: {rng.partition}})
}

// timedOut names the ranges that did not arrive within pollTimeout.
func (r *reader) timedOut() error {
	for _, tr := range r.ranges {
		for _, rng := range tr {
			if rng.end >= 0 && rng.next < rng.end {
				return fmt.Errorf("kafka: timed out after %s (kafkaConsumer.pollTimeoutMs) fetching offsets [%d, %d) of %s-%d", r.src.opts.PollTimeout, rng.next, rng.end, rng.topic, rng.partition)
			}
		}
	}
	return fmt.Errorf("kafka: timed out after %s fetching records", r.src.opts.PollTimeout)
}

// release gives the consumer back (or closes one of its own) and
// releases the builders (idempotent).
func (r *reader) release() {
	if r.closed {
		return
	}
	r.closed = true
	if r.cancel != nil {
		r.cancel()
		for fs := range r.fetched { // wait for the poller to stop
			r.carryFetches(fs)
		}
		r.carryFetches(r.unsent)
	}
	recycle(r.pending[r.pos:]) // stopped early: fetched, never built
	if r.kept {
		r.src.returnConsumer(r.ranges, r.carried, r.pending)
	} else {
		r.client.Close()
	}
	r.b.release()
	r.pending = nil
}

// carry keeps records fetched past a finished range's end for the next
// epoch (the kept client's position is past them; nothing fetches them
// again).
func (r *reader) carry(rng *partitionRange, recs []*kgo.Record) {
	if !r.kept {
		recycle(recs)
		return
	}
	if len(recs) == 0 {
		return
	}
	if r.carried == nil {
		r.carried = map[string]map[int32][]*kgo.Record{}
	}
	if r.carried[rng.topic] == nil {
		r.carried[rng.topic] = map[int32][]*kgo.Record{}
	}
	r.carried[rng.topic][rng.partition] = append(r.carried[rng.topic][rng.partition], recs...)
}

// carryFetches carries the records of fetches the reader did not take.
// Records of a range not finished are not carried: its partition is
// moved to an offset again (returnConsumer).
func (r *reader) carryFetches(fs kgo.Fetches) {
	for _, f := range fs {
		for ti := range f.Topics {
			ft := &f.Topics[ti]
			for pi := range ft.Partitions {
				fp := &ft.Partitions[pi]
				if rng := r.ranges[ft.Topic][fp.Partition]; rng != nil && rng.end == -1 {
					r.carry(rng, fp.Records)
				} else {
					recycle(fp.Records)
				}
			}
		}
	}
}

// Close implements vector.Operator.
func (r *reader) Close() error {
	r.release()
	return nil
}
