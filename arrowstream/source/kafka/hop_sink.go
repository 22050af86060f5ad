package kafka

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"path/filepath"
	"strconv"
	"sync"
	"time"

	"github.com/apache/arrow/go/v17/arrow"
	"github.com/apache/arrow/go/v17/arrow/array"
	"github.com/apache/arrow/go/v17/arrow/memory"
	"github.com/klauspost/compress/zstd"
	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/arrowstream/arrowstream/arrowstream/stream"
	"github.com/arrowstream/arrowstream/vector"
)

// hopSink is the upstream stage of a repartition hop: it writes each
// epoch's rows, hashed on the key into the hop topic's partitions, as
// Arrow IPC records, in one Kafka transaction per epoch (transactional
// id <group>-w-<writer>, so a restarted writer fences and aborts what its
// previous run left open). The same transaction commits epoch+1 as the
// offset of the writer's bookkeeping group (<topic>-w-<writer>, topic
// partition 0 of the hop topic): a replay of an epoch that already
// committed finds it and writes nothing. Downstream readers read
// committed transactions only, so each row crosses the hop exactly once.
type hopSink struct {
	mem    memory.Allocator
	spec   stream.HopSpec
	topic  string
	writer string      // stable id of the upstream stage's checkpoint
	group  string      // bookkeeping group of this writer
	client *kgo.Client // nil after a failed transaction: newClient makes another
	admin  *kadm.Client
	logger interface {
		Info(msg string, args ...any)
		Warn(msg string, args ...any)
	}
	// newClient makes the transactional producer with a timeout; each
	// one's InitProducerID fences the writer's earlier producers.
	newClient func(timeout time.Duration) (*kgo.Client, error)
	timeout   txnTimeout  // hop_fence.go
	outcome   *txnOutcome // the clients' logger: whether a commit was accepted

	once      sync.Once
	ready     error
	closeOnce sync.Once
	topicID   [16]byte // TxnOffsetCommit v6+ names topics by id
	enc       *zstd.Encoder
	// ipcBuf is the IPC stream of the record being encoded, kept across
	// records and epochs (encodeHopBatchWith resets it; what is produced
	// is zstd's own copy).
	ipcBuf   bytes.Buffer
	maxEvent int64 // the largest event time sent (markers)
	// written is the last epoch this sink committed (valid with
	// writtenKnown): see AddBatch.
	written      int64
	writtenKnown bool

	reads      *stageReads         // the stage's source's ranges (hop_mark.go)
	inputIDs   map[string][16]byte // input topic ids, for the marks
	epochEvent int64               // the largest event time of the epoch's rows
	faults     TxnFaults
	pace       *hopPace // wakes the local downstream stage after a commit (hop_pace.go)
}

// HopTopic is the internal topic of hop n of table in cluster name.
func HopTopic(cluster, table string, n int) string {
	return cluster + "-" + table + "-repartition-" + strconv.Itoa(n)
}

// HopSink implements stream.Repartitioner.
func (c *Cluster) HopSink(mem memory.Allocator, spec stream.HopSpec) (stream.Sink, error) {
	if err := checkHopSpec(spec); err != nil {
		return nil, err
	}
	writer, err := loadInstanceID(filepath.Join(spec.CheckpointDir, "hop-writer"))
	if err != nil {
		return nil, err
	}
	topic := HopTopic(c.opts.Name, spec.Table, spec.Hop)
	txn := topic + "-w-" + writer
	logger := c.opts.Logger.With("cluster", c.opts.Name, "topic", topic, "writer", writer)
	outcome := newTxnOutcome(logger) // every client's: one at a time
	newClient := func(timeout time.Duration) (*kgo.Client, error) {
		cl, err := kgo.NewClient(
			kgo.SeedBrokers(c.opts.Brokers...),
			kgo.TransactionalID(txn),
			kgo.TransactionTimeout(timeout),
			kgo.RecordPartitioner(kgo.ManualPartitioner()),
			kgo.ProducerBatchMaxBytes(16<<20),
			kgo.MaxBufferedRecords(1<<16),
			kgo.ClientID("arrowstream-"+c.opts.Name),
			kgo.DisableClientMetrics(), // nothing reads them (a push per interval per instance)
			kgo.WithLogger(outcome),    // what EndTransaction did (txn_outcome.go)
		)
		if err != nil {
			return nil, fmt.Errorf("kafka: repartition sink %s: %w", topic, err)
		}
		return cl, nil
	}
	timeout := newTxnTimeout(c.opts)
	cl, err := newClient(timeout.cur)
	if err != nil {
		return nil, err
	}
	enc, err := newHopEncoder()
	if err != nil {
		cl.Close()
		return nil, fmt.Errorf("kafka: repartition sink %s: %w", topic, err)
	}
	pace := c.hopPace(topic)
	c.reads.link(spec.CheckpointDir, pace) // the stage's source tells it when an epoch is planned
	return &hopSink{mem: mem, spec: spec, topic: topic, writer: writer, group: txn, client: cl, admin: kadm.NewClient(cl), enc: enc,
		logger: logger, outcome: outcome, maxEvent: math.MinInt64,
		reads: &c.reads, inputIDs: map[string][16]byte{}, faults: c.opts.Faults, pace: pace,
		newClient: newClient, timeout: timeout}, nil
}

func checkHopSpec(spec stream.HopSpec) error {
	switch {
	case spec.Schema == nil:
		return errors.New("kafka: repartition hop without a schema")
	case spec.Partitions <= 0 || spec.Partitions > 1<<16:
		return fmt.Errorf("kafka: repartition hop of %s: %d partitions (spark.sql.shuffle.partitions must be in 1..65536)", spec.Table, spec.Partitions)
	case spec.CheckpointDir == "":
		return fmt.Errorf("kafka: repartition hop of %s needs a checkpoint directory", spec.Table)
	}
	for _, k := range spec.KeyColumns {
		if k < 0 || k >= spec.Schema.NumFields() {
			return fmt.Errorf("kafka: repartition hop of %s: key column %d out of range", spec.Table, k)
		}
		if !vector.HashRowsSupported(spec.Schema.Field(k).Type) {
			return fmt.Errorf("kafka: repartition hop of %s: key column %s of type %s cannot be hashed", spec.Table, spec.Schema.Field(k).Name, spec.Schema.Field(k).Type)
		}
	}
	return nil
}

// ensureTopic creates the hop topic with spec.Partitions partitions (an
// existing topic must have that many).
func ensureHopTopic(ctx context.Context, admin *kadm.Client, topic string, partitions int) ([16]byte, error) {
	resp, err := admin.CreateTopics(ctx, int32(partitions), 1, nil, topic)
	if err != nil {
		return [16]byte{}, fmt.Errorf("kafka: create repartition topic %s: %w", topic, err)
	}
	for _, r := range resp {
		if r.Err != nil && !errors.Is(r.Err, kerr.TopicAlreadyExists) {
			return [16]byte{}, fmt.Errorf("kafka: create repartition topic %s: %w", topic, r.Err)
		}
	}
	details, err := admin.ListTopics(ctx, topic)
	if err != nil {
		return [16]byte{}, fmt.Errorf("kafka: repartition topic %s: %w", topic, err)
	}
	d, ok := details[topic]
	if !ok || d.Err != nil {
		return [16]byte{}, fmt.Errorf("kafka: repartition topic %s: not found after creating it", topic)
	}
	if len(d.Partitions) != partitions {
		return [16]byte{}, fmt.Errorf("kafka: repartition topic %s has %d partitions, the query wants %d (spark.sql.shuffle.partitions changed? delete the topic or restore the setting)", topic, len(d.Partitions), partitions)
	}
	return d.ID, nil
}

// doneThrough returns the last epoch this writer committed (-1: none). It
// first makes sure the producer id is initialised, which fences an
// earlier run of the writer and completes or aborts its open
// transaction, and asks for stable offsets.
func (s *hopSink) doneThrough(ctx context.Context) (int64, error) {
	if _, _, err := s.client.ProducerID(ctx); err != nil {
		return 0, fmt.Errorf("kafka: repartition sink %s: init producer: %w", s.topic, err)
	}
	req := kmsg.NewPtrOffsetFetchRequest()
	req.Group = s.group
	req.RequireStable = true
	rt := kmsg.NewOffsetFetchRequestTopic()
	rt.Topic, rt.Partitions = s.topic, []int32{0}
	req.Topics = []kmsg.OffsetFetchRequestTopic{rt}
	rg := kmsg.NewOffsetFetchRequestGroup()
	rg.Group = s.group
	rgt := kmsg.NewOffsetFetchRequestGroupTopic()
	rgt.Topic, rgt.TopicID, rgt.Partitions = s.topic, s.topicID, []int32{0}
	rg.Topics = []kmsg.OffsetFetchRequestGroupTopic{rgt}
	req.Groups = []kmsg.OffsetFetchRequestGroup{rg}
	resp, err := req.RequestWith(ctx, s.client)
	if err != nil {
		return 0, fmt.Errorf("kafka: repartition sink %s: fetch the writer's epoch: %w", s.topic, err)
	}
	if err := kerr.ErrorForCode(resp.ErrorCode); err != nil && !errors.Is(err, kerr.GroupIDNotFound) {
		return 0, fmt.Errorf("kafka: repartition sink %s: fetch the writer's epoch: %w", s.topic, err)
	}
	at := int64(-1)
	visit := func(code int16, off int64) error {
		if err := kerr.ErrorForCode(code); err != nil {
			if errors.Is(err, kerr.GroupIDNotFound) || errors.Is(err, kerr.UnknownTopicOrPartition) {
				return nil
			}
			return err
		}
		if off > at {
			at = off
		}
		return nil
	}
	for _, t := range resp.Topics {
		for _, p := range t.Partitions {
			if err := visit(p.ErrorCode, p.Offset); err != nil {
				return 0, fmt.Errorf("kafka: repartition sink %s: fetch the writer's epoch: %w", s.topic, err)
			}
		}
	}
	for _, g := range resp.Groups {
		if err := kerr.ErrorForCode(g.ErrorCode); err != nil && !errors.Is(err, kerr.GroupIDNotFound) {
			return 0, fmt.Errorf("kafka: repartition sink %s: fetch the writer's epoch: %w", s.topic, err)
		}
		for _, t := range g.Topics {
			for _, p := range t.Partitions {
				if err := visit(p.ErrorCode, p.Offset); err != nil {
					return 0, fmt.Errorf("kafka: repartition sink %s: fetch the writer's epoch: %w", s.topic, err)
				}
			}
		}
	}
	if at < 0 {
		return -1, nil
	}
	return at - 1, nil
}

// EpochIdempotent implements stream.EpochIdempotentSink: an epoch whose
// transaction committed is never written again (AddBatch skips every
// epoch up to the writer's bookkeeping offset, fetched with
// RequireStable by a new sink), so a commit record lost in a crash only
// re-runs the epoch, which writes nothing. The engine then writes the
// commit record of epoch N with the offsets of epoch N+1: one fdatasync
// per upstream epoch instead of two. Each fdatasync also wakes the Go
// runtime's sysmon and hands the P off while it blocks, a cost every
// instance pays per epoch, so with k instances running k times the
// epochs (docs/cluster.md, figures) it grew with the instance count.
func (s *hopSink) EpochIdempotent() bool { return true }

// AddBatch implements stream.Sink: the epoch's rows and the writer's
// epoch mark go to Kafka in one transaction, or (a replay of an epoch
// that committed) nothing is written.
func (s *hopSink) AddBatch(ctx context.Context, epoch int64, data vector.Operator) error {
	defer data.Close()
	// However it ends: a downstream held for this epoch (planned by the
	// stage's source) waits no more (hop_pace.go).
	defer s.pace.ended()
	if s.client == nil {
		cl, err := s.newClient(s.timeout.cur)
		if err != nil {
			return err
		}
		s.client, s.admin = cl, kadm.NewClient(cl)
	}
	s.once.Do(func() { s.topicID, s.ready = ensureHopTopic(ctx, s.admin, s.topic, s.spec.Partitions) })
	if s.ready != nil {
		err := s.ready
		s.once = sync.Once{} // try again next epoch
		return err
	}
	// The writer's bookkeeping offset moves only by this writer's own
	// transactions (its group and transactional id are this checkpoint's
	// alone), so after a transaction this client committed, the last
	// epoch written is known without an OffsetFetch each epoch. A fenced
	// producer fails its next transaction, which drops what is known; a
	// new sink (a restart) fetches. A replay of the committed epoch in
	// this process is still skipped (TestHopSinkExactlyOnce).
	done := s.written
	if !s.writtenKnown {
		var err error
		if done, err = s.doneThrough(ctx); err != nil {
			if errors.Is(err, kerr.InvalidTransactionTimeout) && s.timeout.refused() {
				// Grown past the broker's transaction.max.timeout.ms.
				s.resetClient()
			}
			return err
		}
	}
	s.writtenKnown = false // until this epoch's outcome is known
	// The local downstream waits for this epoch's commit rather than
	// run an epoch for part of a round (hop_pace.go).
	s.pace.writingFrom(time.Now())
	if epoch <= done {
		s.written, s.writtenKnown = done, true
		s.logger.Info("cluster: repartition: epoch already written by this writer; skipped", "epoch", epoch)
		return nil
	}
	if f, ok := s.faults.(TxnBeginFaults); ok {
		if err := f.BeforeTxnBegin(s.spec.Table, "repartition", epoch); err != nil {
			return fmt.Errorf("kafka: repartition sink %s: epoch %d: %w", s.topic, epoch, err)
		}
	}
	began := time.Now()
	if err := s.client.BeginTransaction(); err != nil {
		s.failedTxn(epoch, began, err)
		return fmt.Errorf("kafka: repartition sink %s: epoch %d: begin transaction: %w", s.topic, epoch, err)
	}
	if err := s.writeEpoch(ctx, epoch, data); err != nil {
		if !txnFenced(err) {
			abortCtx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 30e9)
			defer cancel()
			if aerr := s.client.AbortBufferedRecords(abortCtx); aerr == nil {
				_ = s.client.EndTransaction(abortCtx, kgo.TryAbort)
			}
		}
		s.failedTxn(epoch, began, err)
		return fmt.Errorf("kafka: repartition sink %s: epoch %d: %w", s.topic, epoch, err)
	}
	if err := commitTxn(ctx, s.client, s.outcome); err != nil {
		s.failedTxn(epoch, began, err)
		return fmt.Errorf("kafka: repartition sink %s: epoch %d: commit transaction: %w", s.topic, epoch, err)
	}
	s.written, s.writtenKnown = epoch, true
	s.pace.committed(time.Now())
	if s.faults != nil {
		if err := s.faults.AfterTxnCommit(s.spec.Table, "repartition", epoch); err != nil {
			return fmt.Errorf("kafka: repartition sink %s: epoch %d: %w", s.topic, epoch, err)
		}
	}
	return nil
}

// failedTxn drops the producer after a transaction that did not commit:
// the next epoch (the stage runs this one again from its checkpoint)
// makes another, whose InitProducerID aborts whatever this one left open
// and fences it, and reads the writer's bookkeeping offset with
// RequireStable, so an epoch whose commit's outcome was unknown is
// written again only if it did not commit. A transaction fenced by the
// broker is logged with its cause (hop_fence.go).
func (s *hopSink) failedTxn(epoch int64, began time.Time, err error) {
	if txnFenced(err) {
		elapsed := time.Since(began)
		if s.timeout.fenced(elapsed) {
			s.logger.Warn("cluster: repartition: the writer's transaction outlived its timeout and was aborted by the broker; "+
				"the epoch runs again with a new producer and a longer timeout",
				"epoch", epoch, "elapsed", elapsed.Round(time.Millisecond), "nextTimeout", s.timeout.cur, "err", err)
		} else {
			s.logger.Warn("cluster: repartition: the writer's producer was fenced by another with its transactional id; "+
				"the epoch runs again with a new producer", "epoch", epoch, "elapsed", elapsed.Round(time.Millisecond), "err", err)
		}
	}
	s.resetClient()
}

// resetClient closes the producer; AddBatch makes another.
func (s *hopSink) resetClient() {
	if s.client != nil {
		s.client.Close()
	}
	s.client, s.admin, s.writtenKnown = nil, nil, false
}

// hopHoldBytes bounds the encoded records an upstream epoch holds in
// memory before it produces them (writeEpoch).
const hopHoldBytes = 64 << 20

// writeEpoch produces the epoch's rows, one marker per partition and the
// writer's epoch mark, all inside the open transaction.
//
// The records are held until the epoch's rows are all read, hashed and
// encoded (up to hopHoldBytes of them; past that they are produced as
// they come), and produced then: the transaction begins on the broker at
// its first produce (AddPartitionsToTxn), so it lasts the sends and
// commits, not the epoch's reading. Under load a large epoch (a backlog
// read at once) spent longer than the transaction timeout reading, the
// broker aborted the transaction and the next produce failed with
// INVALID_PRODUCER_EPOCH (hop_fence.go). Nothing is visible downstream
// before the commit either way.
func (s *hopSink) writeEpoch(ctx context.Context, epoch int64, data vector.Operator) error {
	var (
		mu       sync.Mutex
		firstErr error
	)
	promise := func(_ *kgo.Record, err error) {
		if err != nil {
			mu.Lock()
			if firstErr == nil {
				firstErr = err
			}
			mu.Unlock()
		}
	}
	var (
		held      []*kgo.Record
		heldBytes int
		holding   = true
		sent      bool // a record of the epoch was encoded (the read hook ran)
	)
	release := func() {
		for _, r := range held {
			s.client.Produce(ctx, r, promise)
		}
		held, holding = nil, false
	}
	send := func(r *kgo.Record) {
		if !holding {
			s.client.Produce(ctx, r, promise)
			return
		}
		held = append(held, r)
		if heldBytes += len(r.Value); heldBytes >= hopHoldBytes {
			release()
		}
	}
	s.epochEvent = math.MinInt64
	pending := make([][]arrow.Record, s.spec.Partitions)
	rows := make([]int, s.spec.Partitions)
	defer func() {
		for _, rs := range pending {
			for _, r := range rs {
				r.Release()
			}
		}
	}()
	flush := func(p int) error {
		if len(pending[p]) == 0 {
			return nil
		}
		v, err := encodeHopBatchWith(&s.ipcBuf, s.mem, s.enc, s.spec.Schema, pending[p]...)
		if s.ipcBuf.Cap() > hopScratchKeep {
			s.ipcBuf = bytes.Buffer{} // a record of very wide rows: not kept
		}
		for _, r := range pending[p] {
			r.Release()
		}
		pending[p], rows[p] = pending[p][:0], 0
		if err != nil {
			return err
		}
		send(&kgo.Record{Topic: s.topic, Partition: int32(p), Key: hopKeyData, Value: v})
		if f, ok := s.faults.(TxnReadFaults); ok && !sent {
			f.WhileReading(s.spec.Table, "repartition", epoch)
		}
		sent = true
		return nil
	}
	var hashes []int32
	idx := make([][]int32, s.spec.Partitions)
	for {
		rec, err := data.Next(ctx)
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return err
		}
		n := int(rec.NumRows())
		if n == 0 {
			rec.Release()
			continue
		}
		s.noteEventTime(rec)
		if cap(hashes) < n {
			hashes = make([]int32, n)
		}
		hashes = hashes[:n]
		if err := s.partitionRows(rec, hashes); err != nil {
			rec.Release()
			return err
		}
		for p := range idx {
			idx[p] = idx[p][:0]
		}
		for i, h := range hashes {
			idx[h] = append(idx[h], int32(i))
		}
		for p, sel := range idx {
			if len(sel) == 0 {
				continue
			}
			var part arrow.Record
			if len(sel) == n {
				rec.Retain()
				part = rec
			} else if part, err = vector.TakeRecord(s.mem, rec, sel); err != nil {
				rec.Release()
				return err
			}
			pending[p] = append(pending[p], part)
			rows[p] += len(sel)
			if rows[p] >= hopRowsPerRecord {
				if err := flush(p); err != nil {
					rec.Release()
					return err
				}
			}
		}
		rec.Release()
	}
	for p := range pending {
		if err := flush(p); err != nil {
			return err
		}
		marker := encodeHopMarker(s.maxEvent, s.writer)
		send(&kgo.Record{Topic: s.topic, Partition: int32(p), Key: hopKeyMarker, Value: marker})
	}
	release()
	if err := s.client.Flush(ctx); err != nil {
		return err
	}
	mu.Lock()
	err := firstErr
	mu.Unlock()
	if err != nil {
		return fmt.Errorf("produce: %w", err)
	}
	if err := s.commitEpochMark(ctx, epoch); err != nil {
		return err
	}
	if err := s.commitInputMarks(ctx, epoch); err != nil {
		return err
	}
	if s.faults != nil {
		return s.faults.BeforeTxnCommit(s.spec.Table, "repartition", epoch)
	}
	return nil
}

// partitionRows sets out[i] to the hop partition of row i: Spark's
// pmod(hash(keys), partitions); every row goes to partition 0 without keys.
func (s *hopSink) partitionRows(rec arrow.Record, out []int32) error {
	if len(s.spec.KeyColumns) == 0 {
		clear(out)
		return nil
	}
	cols := make([]arrow.Array, len(s.spec.KeyColumns))
	for i, k := range s.spec.KeyColumns {
		cols[i] = rec.Column(k)
	}
	if err := vector.HashRows(cols, out); err != nil {
		return fmt.Errorf("kafka: repartition sink %s: %w", s.topic, err)
	}
	n := int32(s.spec.Partitions)
	for i, h := range out {
		out[i] = ((h % n) + n) % n
	}
	return nil
}

// noteEventTime raises maxEvent to the batch's largest event time.
func (s *hopSink) noteEventTime(rec arrow.Record) {
	if s.spec.EventTimeColumn < 0 || s.spec.EventTimeColumn >= int(rec.NumCols()) {
		return
	}
	ts, ok := rec.Column(s.spec.EventTimeColumn).(*array.Timestamp)
	if !ok {
		return
	}
	vals := ts.TimestampValues()
	for i, v := range vals {
		if ts.IsValid(i) && int64(v) > s.epochEvent {
			s.epochEvent = int64(v)
		}
	}
	if s.epochEvent > s.maxEvent {
		s.maxEvent = s.epochEvent
	}
}

// commitEpochMark adds the writer's group to the transaction and commits
// epoch+1 there (TxnOffsetCommit): it becomes visible exactly when the
// epoch's records do.
func (s *hopSink) commitEpochMark(ctx context.Context, epoch int64) error {
	id, pepoch, err := s.client.ProducerID(ctx)
	if err != nil {
		return fmt.Errorf("producer id: %w", err)
	}
	add := kmsg.NewPtrAddOffsetsToTxnRequest()
	add.TransactionalID, add.ProducerID, add.ProducerEpoch, add.Group = s.group, id, pepoch, s.group
	addResp, err := add.RequestWith(ctx, s.client)
	if err != nil {
		return fmt.Errorf("add offsets to transaction: %w", err)
	}
	if err := kerr.ErrorForCode(addResp.ErrorCode); err != nil {
		return fmt.Errorf("add offsets to transaction: %w", err)
	}
	req := kmsg.NewPtrTxnOffsetCommitRequest()
	req.TransactionalID, req.Group, req.ProducerID, req.ProducerEpoch = s.group, s.group, id, pepoch
	req.Generation, req.MemberID = -1, ""
	rt := kmsg.NewTxnOffsetCommitRequestTopic()
	rt.Topic, rt.TopicID = s.topic, s.topicID
	rp := kmsg.NewTxnOffsetCommitRequestTopicPartition()
	rp.Partition, rp.Offset, rp.LeaderEpoch = 0, epoch+1, -1
	rt.Partitions = []kmsg.TxnOffsetCommitRequestTopicPartition{rp}
	req.Topics = []kmsg.TxnOffsetCommitRequestTopic{rt}
	resp, err := req.RequestWith(ctx, s.client)
	if err != nil {
		return fmt.Errorf("commit the writer's epoch: %w", err)
	}
	for _, t := range resp.Topics {
		for _, p := range t.Partitions {
			if err := kerr.ErrorForCode(p.ErrorCode); err != nil {
				return fmt.Errorf("commit the writer's epoch: %w", err)
			}
		}
	}
	return nil
}

// CloseSink implements stream.ClosingSink.
func (s *hopSink) CloseSink() error {
	s.closeOnce.Do(func() {
		if s.client != nil {
			s.client.Close()
		}
		s.enc.Close()
	})
	return nil
}

// Description names the sink in progress reports.
func (s *hopSink) Description() string { return "KafkaRepartition[" + s.topic + "]" }
