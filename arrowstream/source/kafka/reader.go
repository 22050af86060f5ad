package kafka

import (
	"context"
	"errors"
	"fmt"
	"io"

	"github.com/apache/arrow/go/v17/arrow"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
)

// reader is the operator Read returns: it fetches its ranges by offset
// with a consumer of its own (no consumer group) and turns the records
// into Arrow records of up to BatchRows rows.
type reader struct {
	src     *Source
	client  *kgo.Client
	ranges  map[string]map[int32]*partitionRange
	open    int // ranges not finished
	b       *recordBuilder
	pending []*kgo.Record // fetched, in range, not yet built
	pos     int
	closed  bool
}

// maxPartitionFetchBytes lets one fetch return a large slice of a
// partition: the ranges are known to exist, so bigger fetches only save
// round trips.
const maxPartitionFetchBytes = 8 << 20

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
	cl, err := kgo.NewClient(
		kgo.SeedBrokers(s.opts.Brokers...),
		kgo.ConsumePartitions(consume),
		// Out-of-range offsets are data loss, not a reason to jump.
		kgo.ConsumeResetOffset(kgo.NoResetOffset()),
		kgo.FetchMaxPartitionBytes(maxPartitionFetchBytes),
	)
	if err != nil {
		return nil, fmt.Errorf("kafka: consumer: %w", err)
	}
	return &reader{src: s, client: cl, ranges: byTP, open: len(ranges), b: newRecordBuilder(s.mem, s.opts.IncludeHeaders)}, nil
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
		if err := r.poll(ctx); err != nil {
			return nil, err
		}
	}
}

// build turns up to BatchRows pending records into an Arrow record.
func (r *reader) build() arrow.Record {
	chunk := r.pending[r.pos:min(len(r.pending), r.pos+r.src.opts.BatchRows)]
	r.pos += len(chunk)
	kb, vb := 0, 0
	for _, rec := range chunk {
		kb += len(rec.Key)
		vb += len(rec.Value)
	}
	r.b.reserve(len(chunk), kb, vb)
	for _, rec := range chunk {
		r.b.add(rec)
	}
	clear(chunk) // let the fetched records go
	return r.b.record()
}

// poll fetches once and queues the records that are in range.
func (r *reader) poll(ctx context.Context) error {
	pctx, cancel := context.WithTimeout(ctx, r.src.opts.PollTimeout)
	defer cancel()
	fetches := r.client.PollFetches(pctx)
	if err := ctx.Err(); err != nil {
		return err
	}
	for _, fe := range fetches.Errors() {
		switch {
		case errors.Is(fe.Err, context.DeadlineExceeded) || errors.Is(fe.Err, context.Canceled):
			return r.timedOut()
		case errors.Is(fe.Err, kerr.OffsetOutOfRange):
			rng := r.ranges[fe.Topic][fe.Partition]
			if rng == nil {
				continue
			}
			if err := r.src.reportDataLoss("offsets [%d, %d) of %s-%d are out of range in Kafka (deleted while reading)", rng.next, rng.end, fe.Topic, fe.Partition); err != nil {
				return err
			}
			r.finish(rng)
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
				if rng == nil || rng.next >= rng.end {
					continue
				}
				for _, rec := range fp.Records {
					if rec.Offset < rng.next {
						continue
					}
					if rec.Offset >= rng.end {
						// Offsets the log skips (compaction, transaction
						// markers) may end the range without a record at end-1.
						rng.next = rng.end
						break
					}
					r.pending = append(r.pending, rec)
					rng.next = rec.Offset + 1
				}
				if rng.next >= rng.end {
					r.finish(rng)
				}
			}
		}
	}
	return nil
}

// finish stops fetching a completed range.
func (r *reader) finish(rng *partitionRange) {
	if rng.end == -1 {
		return // already finished
	}
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

// release closes the consumer and the builders (idempotent).
func (r *reader) release() {
	if r.closed {
		return
	}
	r.closed = true
	r.client.Close()
	r.b.release()
	r.pending = nil
}

// Close implements vector.Operator.
func (r *reader) Close() error {
	r.release()
	return nil
}
