package kafka

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"strconv"
	"sync"
	"time"

	"github.com/apache/arrow/go/v17/arrow"
	"github.com/apache/arrow/go/v17/arrow/array"
	"github.com/apache/arrow/go/v17/arrow/memory"
	"github.com/klauspost/compress/zstd"

	"github.com/arrowstream/arrowstream/arrowstream/stream"
	"github.com/arrowstream/arrowstream/vector"
)

// hopSource is the downstream stage of a repartition hop: a cluster-mode
// Kafka source over the hop topic (group <cluster>-<table>-repartition-<n>,
// so the hop's partitions are assigned among the instances exactly as a
// table's input partitions are, with the same claims) that reads
// committed transactions only and decodes the Arrow IPC records back to
// the upstream stage's rows. Its watermark is the event time every input
// partition reached in the hop (EventTimeMaxMs, hop_watermark.go).
type hopSource struct {
	inner  *Source
	mem    memory.Allocator
	spec   stream.HopSpec
	topic  string
	schema *arrow.Schema
	idle   time.Duration
	now    func() time.Time

	mu       sync.Mutex
	wm       *hopWatermark // the input partitions' event times (hop_watermark.go)
	wmUs     int64         // the watermark's event time computed at the last planning
	wmHold   bool          // no event time yet: hold the watermark
	wmAt     time.Time     // when the view was last fetched (monotonic)
	wmFailed error         // the last fetch's error, logged once
	wmSeen   int64         // the event time EventTimeMaxMs last reported (µs)
	gate     hopGate       // candidates waiting for the hop's consumption (hop_watermark_gate.go)

	mover *stateMover // the downstream stage's state (state_move.go)

	pacer hopPacer // waits for the local upstream's commits (hop_pace.go)
	paced uint64   // the local upstream's commits at the last planning

	codec hopCodec // the epochs' zstd decoder, schema message and scratch
}

// hopCodec is what a hop source's epochs decode with, kept for the
// source's life. Each epoch made its own zstd decoder (its history and
// block buffers, about 170 KiB, grown anew: fresh pages, faulted in)
// and encoded the schema message again; at k instances the downstream
// runs about k times the epochs in all, so that fixed work grew with
// the instance count. The decoder serves epochs one after another or
// at once (DecodeAll is safe for concurrent use); the scratch buffer of
// decompressed bytes goes to one epoch at a time (take, put back).
type hopCodec struct {
	mu      sync.Mutex
	dec     *zstd.Decoder // nil: not made yet, or closed
	msg     []byte        // the schema's IPC message (hopSchemaMessage)
	scratch []byte        // the spare decompression buffer (nil: lent or none)
	closed  bool
}

// hopScratchKeep bounds the decompression buffer kept between records
// and epochs: a larger one (a record of very wide rows) is dropped.
const hopScratchKeep = 4 << 20

// take returns the decoder, the schema message and a scratch buffer for
// one epoch, making the decoder at first use.
func (c *hopCodec) take(mem memory.Allocator, schema *arrow.Schema) (*zstd.Decoder, []byte, []byte, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closed {
		return nil, nil, nil, errors.New("kafka: repartition source closed")
	}
	if c.dec == nil {
		msg, err := hopSchemaMessage(mem, schema)
		if err != nil {
			return nil, nil, nil, err
		}
		dec, err := newHopDecoder()
		if err != nil {
			return nil, nil, nil, err
		}
		c.dec, c.msg = dec, msg
	}
	buf := c.scratch
	c.scratch = nil
	return c.dec, c.msg, buf, nil
}

// put gives an epoch's scratch buffer back.
func (c *hopCodec) put(buf []byte) {
	if cap(buf) > hopScratchKeep {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if !c.closed && cap(buf) > cap(c.scratch) {
		c.scratch = buf
	}
}

// close closes the decoder; an epoch still decoding then fails.
func (c *hopCodec) close() {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.dec != nil {
		c.dec.Close()
	}
	c.dec, c.scratch, c.closed = nil, nil, true
}

// noEventTimeMs is reported while an input partition that holds the
// watermark has no event time yet: low enough that the watermark does
// not move, far from overflow when the delay is subtracted.
const noEventTimeMs = math.MinInt64 / 4

// wmRefresh bounds how often planning fetches the marks: a view fetched
// before an earlier listing of the hop's ends is still a valid bound.
const wmRefresh = 50 * time.Millisecond

// refreshWatermark fetches the marks before the epoch's hop ranges are
// planned (the order hop_watermark.go relies on). A failed fetch keeps
// the previous value: the watermark waits.
func (s *hopSource) refreshWatermark(ctx context.Context) {
	if s.spec.EventTimeColumn < 0 {
		return
	}
	s.mu.Lock()
	fresh := !s.wmAt.IsZero() && time.Since(s.wmAt) < wmRefresh
	s.mu.Unlock()
	if fresh {
		return
	}
	fctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	v, err := fetchMarkView(fctx, s.inner.admin, s.inner.cluster.GroupID(s.spec.Table), s.topic)
	s.mu.Lock()
	defer s.mu.Unlock()
	if err != nil {
		if s.wmFailed == nil || s.wmFailed.Error() != err.Error() {
			s.inner.cluster.opts.Logger.Warn("cluster: repartition watermark not updated", "topic", s.topic, "err", err)
		}
		s.wmFailed = err
		return
	}
	cand, hold := s.wm.update(v, s.now())
	s.mu.Unlock()
	// The candidate is released once the hop's group has consumed every
	// row it counts (hop_watermark_gate.go): the stable ends are listed
	// after the marks were fetched, the consumption after that.
	var ends, consumed map[int32]int64
	if !hold {
		ends, err = hopStableEnds(fctx, s.inner.admin, s.topic)
	}
	if err == nil {
		consumed, err = hopConsumed(fctx, s.inner.admin, s.topic, s.inner.cluster.GroupID(s.inner.groupTable))
	}
	s.mu.Lock()
	if err != nil {
		if s.wmFailed == nil || s.wmFailed.Error() != err.Error() {
			s.inner.cluster.opts.Logger.Warn("cluster: repartition watermark not updated", "topic", s.topic, "err", err)
		}
		s.wmFailed = err
		return
	}
	s.wmFailed = nil
	s.wmAt = time.Now()
	if !hold {
		s.gate.offer(cand, ends)
	}
	us, released := s.gate.release(consumed)
	s.wmUs, s.wmHold = us, !released
}

// EventTimeMaxMs implements stream.EventTimeSource: the event time every
// active input partition has reached in the hop, as of the last planning.
func (s *hopSource) EventTimeMaxMs() (int64, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.wmHold {
		return noEventTimeMs, true
	}
	s.wmSeen = s.wmUs
	ms := s.wmUs / 1000
	if s.wmUs < 0 && s.wmUs%1000 != 0 {
		ms-- // floor
	}
	return ms, true
}

// HopSource implements stream.Repartitioner.
func (c *Cluster) HopSource(mem memory.Allocator, spec stream.HopSpec) (stream.Source, error) {
	if spec.CheckpointDir == "" {
		spec.CheckpointDir = "-" // the source's own directory comes with SetCheckpointDir
	}
	if err := checkHopSpec(spec); err != nil {
		return nil, err
	}
	topic := HopTopic(c.opts.Name, spec.Table, spec.Hop)
	inner, err := NewSource(mem, SourceOptions{
		Brokers: c.opts.Brokers, Subscribe: []string{topic},
		StartingOffsets: OffsetSpec{Kind: "earliest"}, EndingOffsets: OffsetSpec{Kind: "latest"},
		FailOnDataLoss: true, PollTimeout: 120e9, BatchRows: 1024, Cluster: c, Logger: c.opts.Logger,
	})
	if err != nil {
		return nil, err
	}
	inner.hop = true
	inner.groupTable = spec.Table + "-repartition-" + fmt.Sprint(spec.Hop)
	inner.mover = newStateMover(c, mem, spec, inner)
	inner.watchHop(c.hopPace(topic)) // cluster_watch.go
	return &hopSource{inner: inner, mem: mem, spec: spec, topic: topic, schema: spec.Schema,
		idle: c.opts.IdleTimeout, now: c.opts.Now, wm: newHopWatermark(c.opts.IdleTimeout), wmHold: true, wmSeen: math.MinInt64, mover: inner.mover,
		pacer: hopPacer{pace: c.hopPace(topic), maxDelay: c.opts.HopPaceMaxDelay}}, nil
}

func (s *hopSource) Schema() *arrow.Schema { return s.schema }

// Description names the source in progress reports.
func (s *hopSource) Description() string { return "KafkaRepartition[" + s.topic + "]" }

// ClusterPartitioned implements stream.PartitionedSource.
func (s *hopSource) ClusterPartitioned() bool { return true }

// SetCheckpointDir creates the hop topic if needed and joins the hop's
// group.
func (s *hopSource) SetCheckpointDir(dir string) error {
	ctx, cancel := context.WithTimeout(context.Background(), 60e9)
	defer cancel()
	if _, err := ensureHopTopic(ctx, s.inner.admin, s.topic, s.spec.Partitions); err != nil {
		return err
	}
	return s.inner.SetCheckpointDir(dir)
}

func (s *hopSource) LatestOffset(ctx context.Context) (stream.Offset, error) {
	s.refreshWatermark(ctx)
	return s.inner.LatestOffset(ctx)
}

func (s *hopSource) LatestOffsetFrom(ctx context.Context, start stream.Offset) (stream.Offset, error) {
	s.refreshWatermark(ctx)
	if n, _, _ := s.pacer.pace.state(); n != s.paced {
		// The local upstream committed since the last planning: its rows
		// are in the hop now, whatever the idle backoff's last listing
		// says.
		s.paced = n
		s.inner.idle.relist()
	}
	if start != nil && s.spec.EventTimeColumn < 0 && s.pacer.holds(time.Now()) {
		// Whatever a listing finds now would wait for the local
		// upstream's commit, which wakes the query, or for the pacing
		// deadline (IdlePollDelay): list then, not every idle poll
		// meanwhile. A stage with an event time lists on, for the
		// epochs that only move its watermark.
		return start, nil
	}
	end, err := s.inner.LatestOffsetFrom(ctx, start)
	if err != nil || start == nil {
		return end, err
	}
	if !end.Equal(start) {
		if s.pacer.hold(time.Now()) {
			return start, nil // planned again at the local upstream's next commit (hop_pace.go)
		}
		return end, nil
	}
	// No hop data, but the input partitions moved the watermark on since
	// the last epoch took it (the rows came in an epoch planned before
	// their marks were fetched): an epoch that reads nothing hands it to
	// the engine, whose no-data batch then closes what it passed.
	s.mu.Lock()
	moved := !s.wmHold && s.wmUs > s.wmSeen
	us := s.wmUs
	s.mu.Unlock()
	if !moved || s.inner.member == nil || len(s.inner.member.ownedNow()[s.topic]) == 0 {
		return end, nil // no state here to close windows of
	}
	var b bytes.Buffer
	b.WriteString(`{"v":1,"from":{},"end":{},"wm":`)
	b.WriteString(strconv.FormatInt(us, 10))
	b.WriteByte('}')
	return stream.Offset(b.Bytes()), nil
}

// IdlePollDelay implements stream.IdlePollSource: the inner source's
// delay, no longer than the watermark's refresh when the stage has an
// event time (a watermark that moves with no new rows runs an epoch).
func (s *hopSource) IdlePollDelay() time.Duration {
	d := s.inner.IdlePollDelay()
	if h := s.pacer.untilDeadline(time.Now()); h > 0 {
		// Held for the local upstream, whose commit wakes the query
		// (DataAvailable); the deadline lets the epoch through anyway.
		d = h
	}
	if s.spec.EventTimeColumn >= 0 {
		d = min(d, wmRefresh)
	}
	return d
}

// DataAvailable implements stream.NotifyingSource: the local upstream's
// next commit wakes the idle downstream query at once (an epoch held for
// it, or the idle backoff's listing that would notice its rows later).
// With the inner source's watcher, its channel, which forwards those
// commits and wakes at any instance's committed hop records too
// (cluster_watch.go).
func (s *hopSource) DataAvailable() <-chan struct{} {
	if s.inner.watch != nil {
		return s.inner.watch.next()
	}
	return s.pacer.pace.next()
}

func (s *hopSource) Commit(ctx context.Context, end stream.Offset) error {
	return s.inner.Commit(ctx, end)
}

func (s *hopSource) Close() error {
	s.mover.close()
	s.codec.close()
	return s.inner.Close()
}

// Read reads the epoch's claimed ranges of the hop topic and decodes them.
func (s *hopSource) Read(ctx context.Context, start, end stream.Offset) (vector.Operator, error) {
	op, err := s.inner.Read(ctx, start, end)
	if err != nil {
		return nil, err
	}
	return s.decodeEpoch(op)
}

// decodeEpoch decodes an epoch's Kafka rows of the hop topic (op, which
// it closes) with the source's codec.
func (s *hopSource) decodeEpoch(op vector.Operator) (vector.Operator, error) {
	dec, msg, scratch, err := s.codec.take(s.mem, s.schema)
	if err != nil {
		op.Close()
		return nil, fmt.Errorf("kafka: repartition topic %s: %w", s.topic, err)
	}
	return &hopDecoder{in: op, mem: s.mem, dec: dec, schema: s.schema, schemaMsg: msg, scratch: scratch, codec: &s.codec, topic: s.topic}, nil
}

// hopDecoder turns the Kafka rows of a hop topic into the rows they carry.
type hopDecoder struct {
	in        vector.Operator
	mem       memory.Allocator
	schema    *arrow.Schema
	schemaMsg []byte
	dec       *zstd.Decoder // the source's (hopCodec): not closed here
	scratch   []byte        // decompressed bytes of the record being decoded
	codec     *hopCodec     // takes scratch back at Close
	topic     string
	queue     []arrow.Record
	done      bool
}

func (d *hopDecoder) Schema() *arrow.Schema { return d.schema }

func (d *hopDecoder) Next(ctx context.Context) (arrow.Record, error) {
	for len(d.queue) == 0 {
		if d.done {
			return nil, io.EOF
		}
		rec, err := d.in.Next(ctx)
		if errors.Is(err, io.EOF) {
			d.done = true
			continue
		}
		if err != nil {
			return nil, err
		}
		err = d.decode(rec)
		rec.Release()
		if err != nil {
			return nil, err
		}
	}
	out := d.queue[0]
	d.queue[0] = nil
	d.queue = d.queue[1:]
	return out, nil
}

// decode queues the rows of the data records of one batch of Kafka rows.
func (d *hopDecoder) decode(rec arrow.Record) error {
	keys, ok1 := rec.Column(0).(*array.Binary)
	vals, ok2 := rec.Column(1).(*array.Binary)
	offs, ok3 := rec.Column(4).(*array.Int64)
	parts, ok4 := rec.Column(3).(*array.Int32)
	if !ok1 || !ok2 || !ok3 || !ok4 {
		return fmt.Errorf("kafka: repartition topic %s: unexpected Kafka row types", d.topic)
	}
	for i := 0; i < int(rec.NumRows()); i++ {
		k := keys.Value(i)
		switch {
		case bytes.Equal(k, hopKeyMarker):
			// A marker makes every hop partition move each epoch, so
			// that each downstream instance runs an epoch and takes the
			// new watermark; the watermark itself comes from the marks
			// (hop_watermark.go).
			if _, _, err := decodeHopMarker(vals.Value(i)); err != nil {
				return fmt.Errorf("kafka: %s-%d offset %d: %w", d.topic, parts.Value(i), offs.Value(i), err)
			}
		case bytes.Equal(k, hopKeyData):
			recs, kept, err := decodeHopBatchInto(d.mem, d.dec, d.schema, d.schemaMsg, vals.Value(i), d.scratch)
			d.scratch = kept
			if err != nil {
				return fmt.Errorf("kafka: %s-%d offset %d: %w", d.topic, parts.Value(i), offs.Value(i), err)
			}
			for _, r := range recs {
				if r.NumRows() == 0 {
					r.Release()
					continue
				}
				d.queue = append(d.queue, r)
			}
		default:
			return fmt.Errorf("kafka: %s-%d offset %d: not a repartition record (key %q)", d.topic, parts.Value(i), offs.Value(i), k)
		}
	}
	return nil
}

func (d *hopDecoder) Close() error {
	for _, r := range d.queue {
		r.Release()
	}
	d.queue = nil
	if d.codec != nil {
		d.codec.put(d.scratch)
		d.codec = nil
	}
	d.scratch = nil
	return d.in.Close()
}

var (
	_ stream.Repartitioner      = (*Cluster)(nil)
	_ stream.PartitionedSource  = (*hopSource)(nil)
	_ stream.CheckpointedSource = (*hopSource)(nil)
	_ stream.EventTimeSource    = (*hopSource)(nil)
	_ stream.NotifyingSource    = (*hopSource)(nil)
	_ stream.ClusterTableSource = (*Source)(nil)
)

// Metrics implements arrowstream.MetricsSource: the hop's offsets behind
// latest, per partition too (cluster_metrics.go).
func (s *hopSource) Metrics() map[string]string { return s.inner.Metrics() }
