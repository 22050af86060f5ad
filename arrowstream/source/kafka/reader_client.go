package kafka

import (
	"fmt"
	"sync"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
)

// keptConsumer is the consumer client a Source's readers share across
// epochs. A client per epoch cost every epoch a connection, an
// ApiVersions and Metadata round trip, a new fetch session and the
// client's goroutines; in cluster mode each instance paid that per epoch
// whatever its share of the input, the largest per-epoch item left in
// the profiles at three instances (docs/cluster.md, figures).
//
// Between epochs the client fetches nothing: every partition it knows is
// paused (franz-go drops a paused partition's buffered data without
// moving its position). A reader's fetches run one ahead, so when a range
// finishes the client has usually delivered records past its end: the
// reader keeps them (carried) and the client's position stays after
// them. The next epoch's range of that partition normally starts where
// the last one ended; then the reader takes the carried records first
// and the partition just resumes, the fetch session going on. Any other
// start (a replay, a partition that moved away and back) moves the
// partition with SetOffsets, which drops what the client buffered or had
// in flight (and reconnects when a fetch was in flight: franz-go cancels
// a request by closing its connection). A partition the client never
// consumed is added. A partition whose range did not finish (the reader
// stopped early) is removed: its position is unknown.
type keptConsumer struct {
	mu     sync.Mutex
	client *kgo.Client
	hop    bool // the client reads committed transactions (hop downstream)
	busy   bool
	closed bool // the source closed: the client closes when given back
	parts  map[string]map[int32]*keptPartition
	// pending is the last reader's queue of fetched records (empty),
	// handed to the next reader: one fetch's pointers, kept rather than
	// allocated afresh every epoch.
	pending []*kgo.Record
}

// maxKeptPending bounds the pending queue kept across epochs (pointers): a
// rare huge fetch does not leave its queue behind.
const maxKeptPending = 1 << 18

// keptPartition is what the kept client knows of a partition.
type keptPartition struct {
	// end: the end of the last range read (the client's position is at
	// or past it, with carried holding the records delivered from it on);
	// -1 when unknown (SetOffsets before the next read).
	end     int64
	carried []*kgo.Record
}

// readerFetchMaxWait is how long the broker holds a reader's fetch that
// has no data yet.
const readerFetchMaxWait = 10 * time.Millisecond

// consumerOpts are the options of a reader's consumer client (without
// the partitions it consumes).
func (s *Source) consumerOpts() []kgo.Opt {
	opts := []kgo.Opt{
		kgo.SeedBrokers(s.opts.Brokers...),
		// Out-of-range offsets are data loss, not a reason to jump.
		// An offset that went out of range resets to the log start (the
		// default); poll notices the jump and checks for lost data. (With
		// NoResetOffset every read starts measurably slower.)
		// Unset, the whole fetch's bound is at least a partition's (franz-go
		// caps a partition's at the fetch's).
		kgo.FetchMaxBytes(orDefault(s.opts.FetchMaxBytes, max(readerFetchMaxBytes, s.opts.FetchMaxPartitionBytes))),
		kgo.FetchMaxPartitionBytes(orDefault(s.opts.FetchMaxPartitionBytes, readerFetchMaxPartitionBytes)),
		// Pushing client metrics (KIP-714) costs a subscription request
		// and a compressed push per interval; a reader's client needs none
		// (it cost 2-9% of an instance's CPU when a client lived for one
		// epoch: docs/cluster.md, figures).
		kgo.DisableClientMetrics(),
		// A reader's ranges exist, so a fetch waits only at their end: the
		// fetch in flight when the last range finishes. Stopping the fetch
		// session for the next epoch cancels that fetch, and franz-go
		// cancels by closing the connection; a short wait lets it return
		// before (the default 5 s made most epochs reconnect).
		kgo.FetchMaxWait(readerFetchMaxWait),
	}
	if s.pool != nil {
		opts = append(opts, kgo.WithPools(s.pool))
	}
	if s.hop {
		// Aborted transactions are skipped; the commit markers come as
		// records so that a range ending at one finishes (poll drops them).
		opts = append(opts, kgo.FetchIsolationLevel(kgo.ReadCommitted()), kgo.KeepControlRecords())
	}
	return append(opts, dialOpts(s.opts.Control)...)
}

// borrowConsumer returns a client consuming the given partitions from the
// given offsets, whether it is the source's kept client (to be given back
// with returnConsumer) rather than one of its own (to be closed), and the
// records carried from the last epoch that the reader takes first.
func (s *Source) borrowConsumer(consume map[string]map[int32]kgo.Offset) (*kgo.Client, bool, kgo.Fetches, []*kgo.Record, error) {
	k := &s.kept
	k.mu.Lock()
	defer k.mu.Unlock()
	if k.busy || k.closed || (k.client != nil && k.hop != s.hop) {
		// Another reader holds it (the engine reads one epoch at a time,
		// so this is a reader not closed yet), or the source changed
		// isolation: a client of its own.
		cl, err := kgo.NewClient(append(s.consumerOpts(), kgo.ConsumePartitions(consume))...)
		if err != nil {
			return nil, false, nil, nil, fmt.Errorf("kafka: consumer: %w", err)
		}
		return cl, false, nil, nil, nil
	}
	if k.client == nil {
		cl, err := kgo.NewClient(append(s.consumerOpts(), kgo.ConsumePartitions(consume))...)
		if err != nil {
			return nil, false, nil, nil, fmt.Errorf("kafka: consumer: %w", err)
		}
		k.client, k.hop, k.busy, k.parts = cl, s.hop, true, map[string]map[int32]*keptPartition{}
		return cl, true, nil, k.takePending(), nil
	}
	set := map[string]map[int32]kgo.EpochOffset{}
	add := map[string]map[int32]kgo.Offset{}
	resume := map[string][]int32{}
	var carry kgo.FetchTopic
	var carryIn kgo.Fetches
	for t, ps := range consume {
		carry = kgo.FetchTopic{Topic: t}
		for p, off := range ps {
			resume[t] = append(resume[t], p)
			kp := k.parts[t][p]
			switch {
			case kp == nil:
				if add[t] == nil {
					add[t] = map[int32]kgo.Offset{}
				}
				add[t][p] = off
			case kp.end >= 0 && kp.end == off.EpochOffset().Offset:
				if len(kp.carried) > 0 {
					carry.Partitions = append(carry.Partitions, kgo.FetchPartition{Partition: p, Records: kp.carried})
				}
			default:
				if set[t] == nil {
					set[t] = map[int32]kgo.EpochOffset{}
				}
				set[t][p] = off.EpochOffset()
			}
			if kp != nil {
				if kp.end != off.EpochOffset().Offset {
					recycle(kp.carried) // the partition moves: dropped
				}
				kp.end, kp.carried = -1, nil // until the range finishes
			}
		}
		if len(carry.Partitions) > 0 {
			carryIn = append(carryIn, kgo.Fetch{Topics: []kgo.FetchTopic{carry}})
		}
	}
	// Carried records of partitions this epoch does not read are stale
	// (the partition moved away or is read from elsewhere): dropped, and
	// the partition is moved before it is read again.
	for t, ps := range k.parts {
		for p, kp := range ps {
			if _, ok := consume[t][p]; !ok && (kp.end >= 0 && len(kp.carried) > 0) {
				recycle(kp.carried)
				kp.end, kp.carried = -1, nil
			}
		}
	}
	// SetOffsets before resuming: it stops the client's fetch session,
	// dropping buffered and in-flight fetches, before any partition
	// fetches again.
	k.client.SetOffsets(set)
	k.client.ResumeFetchPartitions(resume)
	k.client.AddConsumePartitions(add)
	k.busy = true
	return k.client, true, carryIn, k.takePending(), nil
}

// takePending hands the kept pending queue to a reader (k.mu held).
func (k *keptConsumer) takePending() []*kgo.Record {
	p := k.pending
	k.pending = nil
	return p
}

// returnConsumer gives the kept client back after a reader: its
// partitions are paused; a finished range's partition is kept with the
// records carried past its end, the others are removed.
func (s *Source) returnConsumer(ranges map[string]map[int32]*partitionRange, carried map[string]map[int32][]*kgo.Record, pending []*kgo.Record) {
	k := &s.kept
	k.mu.Lock()
	defer k.mu.Unlock()
	k.busy = false
	if k.closed {
		k.client.Close()
		k.client, k.parts = nil, nil
		return
	}
	if cap(pending) <= maxKeptPending {
		clear(pending[:cap(pending)]) // no record outlives its reader here
		k.pending = pending[:0]
	}
	pause := map[string][]int32{}
	remove := map[string][]int32{}
	for t, ps := range ranges {
		for p, rng := range ps {
			pause[t] = append(pause[t], p)
			if rng.end == -1 { // finished: the client has a position
				if k.parts[t] == nil {
					k.parts[t] = map[int32]*keptPartition{}
				}
				kp := &keptPartition{end: rng.done}
				if rng.done >= 0 {
					kp.carried = carried[t][p]
				} else {
					recycle(carried[t][p])
				}
				k.parts[t][p] = kp
				continue
			}
			remove[t] = append(remove[t], p)
			delete(k.parts[t], p)
		}
	}
	k.client.PauseFetchPartitions(pause)
	k.client.RemoveConsumePartitions(remove)
}

// closeConsumer closes the kept client (Source.Close), or has the
// reader holding it close it when done.
func (s *Source) closeConsumer() {
	k := &s.kept
	k.mu.Lock()
	defer k.mu.Unlock()
	k.closed = true
	if k.client != nil && !k.busy {
		k.client.Close()
		k.client, k.parts = nil, nil
	}
}

// orDefault is v, or def when v is 0 (not set).
func orDefault(v, def int32) int32 {
	if v == 0 {
		return def
	}
	return v
}
