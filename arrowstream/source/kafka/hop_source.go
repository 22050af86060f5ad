package kafka

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"math"
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
// the upstream stage's rows. Watermark markers give the event time each
// upstream writer reached (EventTimeMaxMs).
type hopSource struct {
	inner  *Source
	mem    memory.Allocator
	spec   stream.HopSpec
	topic  string
	schema *arrow.Schema
	idle   time.Duration
	now    func() time.Time

	mu      sync.Mutex
	writers map[string]writerMark // upstream writers, from their markers

	mover *stateMover // the downstream stage's state (state_move.go)
}

// writerMark is the progress of one upstream writer: the largest event
// time it sent (microseconds; math.MinInt64 before any) and when its
// last marker was read.
type writerMark struct {
	maxUs int64
	seen  time.Time
}

// noteMarker records a writer's marker.
func (s *hopSource) noteMarker(writer string, maxUs int64) {
	s.mu.Lock()
	defer s.mu.Unlock()
	m, ok := s.writers[writer]
	if !ok || maxUs > m.maxUs {
		m.maxUs = maxUs
	}
	m.seen = s.now()
	s.writers[writer] = m
}

// noEventTimeMs is reported while an active writer has sent no event
// time: low enough that the watermark does not move, far from overflow
// when the delay is subtracted.
const noEventTimeMs = math.MinInt64 / 4

// EventTimeMaxMs implements stream.EventTimeSource: the minimum over the
// writers heard from within the idle timeout of the largest event time
// each has sent.
func (s *hopSource) EventTimeMaxMs() (int64, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	now := s.now()
	found := false
	minMs := int64(math.MaxInt64)
	for _, m := range s.writers {
		if now.Sub(m.seen) > s.idle {
			continue // idle: does not hold the watermark back
		}
		ms := int64(noEventTimeMs)
		if m.maxUs != math.MinInt64 {
			ms = m.maxUs / 1000
			if m.maxUs < 0 && m.maxUs%1000 != 0 {
				ms-- // floor
			}
		}
		minMs = min(minMs, ms)
		found = true
	}
	return minMs, found
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
	return &hopSource{inner: inner, mem: mem, spec: spec, topic: topic, schema: spec.Schema,
		idle: c.opts.IdleTimeout, now: c.opts.Now, writers: map[string]writerMark{}, mover: inner.mover}, nil
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
	return s.inner.LatestOffset(ctx)
}

func (s *hopSource) LatestOffsetFrom(ctx context.Context, start stream.Offset) (stream.Offset, error) {
	return s.inner.LatestOffsetFrom(ctx, start)
}

func (s *hopSource) Commit(ctx context.Context, end stream.Offset) error {
	return s.inner.Commit(ctx, end)
}

func (s *hopSource) Close() error {
	s.mover.close()
	return s.inner.Close()
}

// Read reads the epoch's claimed ranges of the hop topic and decodes them.
func (s *hopSource) Read(ctx context.Context, start, end stream.Offset) (vector.Operator, error) {
	op, err := s.inner.Read(ctx, start, end)
	if err != nil {
		return nil, err
	}
	msg, err := hopSchemaMessage(s.mem, s.schema)
	if err != nil {
		op.Close()
		return nil, err
	}
	dec, err := newHopDecoder()
	if err != nil {
		op.Close()
		return nil, err
	}
	return &hopDecoder{in: op, mem: s.mem, dec: dec, schema: s.schema, schemaMsg: msg, topic: s.topic, marker: s.noteMarker}, nil
}

// hopDecoder turns the Kafka rows of a hop topic into the rows they carry.
type hopDecoder struct {
	in        vector.Operator
	mem       memory.Allocator
	schema    *arrow.Schema
	schemaMsg []byte
	dec       *zstd.Decoder
	topic     string
	marker    func(writer string, maxUs int64)
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
			maxUs, writer, err := decodeHopMarker(vals.Value(i))
			if err != nil {
				return fmt.Errorf("kafka: %s-%d offset %d: %w", d.topic, parts.Value(i), offs.Value(i), err)
			}
			d.marker(writer, maxUs)
		case bytes.Equal(k, hopKeyData):
			recs, err := decodeHopBatch(d.mem, d.dec, d.schema, d.schemaMsg, vals.Value(i))
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
	d.dec.Close()
	return d.in.Close()
}

var (
	_ stream.Repartitioner      = (*Cluster)(nil)
	_ stream.PartitionedSource  = (*hopSource)(nil)
	_ stream.CheckpointedSource = (*hopSource)(nil)
	_ stream.EventTimeSource    = (*hopSource)(nil)
	_ stream.ClusterTableSource = (*Source)(nil)
)

// Metrics implements arrowstream.MetricsSource: the hop's offsets behind
// latest, per partition too (cluster_metrics.go).
func (s *hopSource) Metrics() map[string]string { return s.inner.Metrics() }
