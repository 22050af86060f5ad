package kafka

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"sync"
	"syscall"

	"github.com/apache/arrow/go/v17/arrow"
	"github.com/apache/arrow/go/v17/arrow/array"
	"github.com/apache/arrow/go/v17/arrow/memory"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/arrowstream/arrowstream/vector"
)

var errUserSchema = errors.New("kafka: source does not support a user-specified schema (its schema is fixed: key, value, topic, partition, offset, timestamp, timestampType[, headers])")

// SinkOptions configure the Kafka sink.
type SinkOptions struct {
	// Brokers are the bootstrap servers (kafka.bootstrap.servers).
	Brokers []string
	// Control, when set, vets the address of every broker connection
	// (net.Dialer.Control; a session's access policy).
	Control func(network, address string, c syscall.RawConn) error
	// Topic, when set, is the topic of every row (it overrides a topic
	// column, as Spark's topic option does).
	Topic string
}

// SinkOptionKeys are the options ParseSinkOptions reads, the refused
// serializer settings included (refused with their own message).
func SinkOptionKeys() []string {
	return []string{"kafka.bootstrap.servers", "topic", "kafka.key.serializer", "kafka.value.serializer"}
}

// ParseSinkOptions reads Spark's Kafka sink options; other writer options
// (checkpointLocation, ...) are ignored.
func ParseSinkOptions(opts map[string]string) (SinkOptions, error) {
	var o SinkOptions
	for k, v := range opts {
		switch strings.ToLower(k) {
		case "kafka.bootstrap.servers":
			for _, s := range strings.Split(v, ",") {
				if s = strings.TrimSpace(s); s != "" {
					o.Brokers = append(o.Brokers, s)
				}
			}
		case "topic":
			o.Topic = strings.TrimSpace(v)
			if o.Topic == "" {
				return o, fmt.Errorf("kafka: option topic is empty")
			}
		case "kafka.key.serializer", "kafka.value.serializer":
			return o, fmt.Errorf("kafka: option %s is not supported: keys and values are written as bytes", k)
		}
	}
	if len(o.Brokers) == 0 {
		return o, fmt.Errorf("kafka: option kafka.bootstrap.servers must be specified")
	}
	return o, nil
}

// Sink writes each epoch's rows to Kafka: the value column (string or
// binary, required), key (string or binary), topic (string, unless the
// topic option is set), partition (int; null or absent: the producer's
// partitioner) and headers (array<struct<key: string, value: binary>>).
//
// The producer is idempotent (no duplicates from its own retries), and
// AddBatch returns only after every record is acknowledged. An epoch
// replayed after a crash is written again: at-least-once, as Spark's.
type Sink struct {
	mem    memory.Allocator
	client *kgo.Client
	topic  string
	cols   sinkColumns
	recs   []kgo.Record // reused from epoch to epoch

	closeOnce sync.Once
}

// sinkColumns are the positions of the sink's columns (-1: absent).
type sinkColumns struct{ key, value, topic, partition, headers int }

// NewSink checks the schema and returns a sink; it connects on the first
// AddBatch.
func NewSink(mem memory.Allocator, schema *arrow.Schema, o SinkOptions) (*Sink, error) {
	cols, err := sinkColumnsOf(schema, o.Topic != "")
	if err != nil {
		return nil, err
	}
	opts := append([]kgo.Opt{kgo.SeedBrokers(o.Brokers...), kgo.RequiredAcks(kgo.AllISRAcks())}, dialOpts(o.Control)...)
	if cols.partition >= 0 {
		opts = append(opts, kgo.RecordPartitioner(columnPartitioner{kgo.StickyKeyPartitioner(nil)}))
	}
	cl, err := kgo.NewClient(opts...)
	if err != nil {
		return nil, fmt.Errorf("kafka: producer for %s: %w", strings.Join(o.Brokers, ","), err)
	}
	return &Sink{mem: mem, client: cl, topic: o.Topic, cols: cols}, nil
}

func sinkColumnsOf(schema *arrow.Schema, haveTopic bool) (sinkColumns, error) {
	c := sinkColumns{key: -1, value: -1, topic: -1, partition: -1, headers: -1}
	for i, f := range schema.Fields() {
		switch strings.ToLower(f.Name) {
		case "key":
			c.key = i
		case "value":
			c.value = i
		case "topic":
			c.topic = i
		case "partition":
			c.partition = i
		case "headers":
			c.headers = i
		default:
			continue
		}
		if err := checkSinkType(f); err != nil {
			return c, err
		}
	}
	if c.value < 0 {
		return c, fmt.Errorf("kafka: sink: required attribute 'value' not found (columns: %s)", columnNames(schema))
	}
	if c.topic < 0 && !haveTopic {
		return c, fmt.Errorf("kafka: sink: topic option required when no 'topic' attribute is present (columns: %s)", columnNames(schema))
	}
	return c, nil
}

func columnNames(schema *arrow.Schema) string {
	names := make([]string, schema.NumFields())
	for i, f := range schema.Fields() {
		names[i] = f.Name
	}
	return strings.Join(names, ", ")
}

func checkSinkType(f arrow.Field) error {
	dt := f.Type
	if d, ok := dt.(*arrow.DictionaryType); ok {
		dt = d.ValueType
	}
	ok := false
	want := ""
	switch strings.ToLower(f.Name) {
	case "key", "value":
		ok, want = dt.ID() == arrow.STRING || dt.ID() == arrow.BINARY, "string or binary"
	case "topic":
		ok, want = dt.ID() == arrow.STRING, "string"
	case "partition":
		ok, want = dt.ID() == arrow.INT32, "int"
	case "headers":
		ok, want = arrow.TypeEqual(dt, vector.ListOf(HeaderType)), "array<struct<key: string, value: binary>>"
	}
	if !ok {
		return fmt.Errorf("kafka: sink: %s attribute type must be %s, not %s", f.Name, want, vector.TypeName(f.Type))
	}
	return nil
}

// Description names the sink in progress reports.
func (s *Sink) Description() string { return "KafkaSink" }

// AddBatch implements arrowstream.Sink: it produces every row and waits
// until Kafka has acknowledged all of them.
func (s *Sink) AddBatch(ctx context.Context, epoch int64, data vector.Operator) error {
	defer data.Close()
	for {
		rec, err := data.Next(ctx)
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return err
		}
		err = s.produce(ctx, s.mem, rec)
		rec.Release()
		if err != nil {
			return fmt.Errorf("kafka: sink: epoch %d: %w", epoch, err)
		}
	}
}

// produce writes one Arrow record and flushes. The Kafka records do not
// point into the record's buffers: their bytes are copied out, one copy
// of each column's bytes per record, because a failed flush (the context
// ends while the broker refuses or does not answer) leaves records in
// the client, which sends or fails them later, after the caller has
// released (and a poisoning allocator overwritten) the Arrow buffers.
// Aborting them instead (kgo's AbortBufferedRecords) waits for every
// batch in flight or being retried, which with a broker that keeps
// refusing did not end; the records of such an epoch may still reach
// Kafka later, intact, and the replayed epoch writes them again
// (at-least-once, as Spark's sink).
func (s *Sink) produce(ctx context.Context, mem memory.Allocator, rec arrow.Record) error {
	n := int(rec.NumRows())
	if n == 0 {
		return nil
	}
	cols := make([]arrow.Array, rec.NumCols())
	for i := range cols {
		c := rec.Column(i)
		if c.DataType().ID() == arrow.DICTIONARY {
			plain, err := vector.DecodeDictionary(mem, c)
			if err != nil {
				return err
			}
			defer plain.Release()
			c = plain
		}
		cols[i] = c
	}
	if cap(s.recs) < n {
		s.recs = make([]kgo.Record, n)
	}
	recs := s.recs[:n]
	clear(recs)
	value := newBytesColumn(cols[s.cols.value])
	var key, topic bytesColumn
	if s.cols.key >= 0 {
		key = newBytesColumn(cols[s.cols.key])
	}
	if s.cols.topic >= 0 && s.topic == "" {
		topic = newBytesColumn(cols[s.cols.topic])
	}
	var part *array.Int32
	if s.cols.partition >= 0 {
		part = cols[s.cols.partition].(*array.Int32)
	}
	var (
		hdrs     *array.List
		hdrPairs *array.Struct
		hdrKeys  *array.String
		hdrVals  bytesColumn
	)
	if s.cols.headers >= 0 {
		hdrs = cols[s.cols.headers].(*array.List)
		hdrPairs = hdrs.ListValues().(*array.Struct)
		hdrKeys = hdrPairs.Field(0).(*array.String)
		hdrVals = newBytesColumn(hdrPairs.Field(1))
	}
	for i := range recs {
		r := &recs[i]
		r.Value = value.at(i)
		if key.data != nil {
			r.Key = key.at(i)
		}
		if s.topic != "" {
			r.Topic = s.topic
		} else if t := topic.at(i); t != nil {
			r.Topic = string(t)
		} else {
			return fmt.Errorf("null topic in row %d: set the topic option or fill the topic column", i)
		}
		r.Partition = -1
		if part != nil && part.IsValid(i) {
			r.Partition = part.Value(i)
		}
		if hdrs != nil && hdrs.IsValid(i) {
			r.Headers = headersAt(hdrs, hdrPairs, hdrKeys, hdrVals, i)
		}
	}
	var (
		mu       sync.Mutex
		firstErr error
	)
	var wg sync.WaitGroup
	wg.Add(n)
	for i := range recs {
		s.client.Produce(ctx, &recs[i], func(r *kgo.Record, err error) {
			if err != nil {
				mu.Lock()
				if firstErr == nil {
					firstErr = fmt.Errorf("produce to %s-%d: %w", r.Topic, r.Partition, err)
				}
				mu.Unlock()
			}
			wg.Done()
		})
	}
	if err := s.client.Flush(ctx); err != nil {
		// The client still holds pointers to some of the slots: the next
		// record gets slots of its own.
		s.recs = nil
		return err
	}
	wg.Wait()
	return firstErr
}

// bytesColumn reads a string or binary column from a copy of its bytes
// (one allocation per column, see produce).
type bytesColumn struct {
	arr  arrow.Array
	offs []int32
	base int32 // offs[0]: data starts at the first row's bytes
	data []byte
}

func newBytesColumn(a arrow.Array) bytesColumn {
	offs, data := vector.BinaryParts(a)
	var base int32
	if len(offs) > 0 {
		base = offs[0]
		data = bytes.Clone(data[offs[0]:offs[len(offs)-1]])
	}
	if data == nil {
		data = []byte{}
	}
	return bytesColumn{arr: a, offs: offs, base: base, data: data}
}

// at returns row i's bytes (nil for null; empty for an empty value).
func (c bytesColumn) at(i int) []byte {
	if c.arr.IsNull(i) {
		return nil
	}
	// BinaryParts' offsets already account for the array's slice offset.
	from, to := c.offs[i]-c.base, c.offs[i+1]-c.base
	return c.data[from:to:to]
}

// headersAt returns the headers of row i of l, whose pairs st hold keys
// and vals.
func headersAt(l *array.List, st *array.Struct, keys *array.String, vals bytesColumn, i int) []kgo.RecordHeader {
	start, end := l.ValueOffsets(i)
	if end == start {
		return nil
	}
	out := make([]kgo.RecordHeader, 0, end-start)
	for j := int(start); j < int(end); j++ {
		if st.IsNull(j) {
			continue
		}
		// Value(j) aliases the Arrow buffer: the client may keep the key.
		out = append(out, kgo.RecordHeader{Key: strings.Clone(keys.Value(j)), Value: vals.at(j)})
	}
	return out
}

// Close closes the producer (AddBatch already waited for every record).
// It is safe to call more than once; AddBatch fails afterwards.
func (s *Sink) Close() error {
	s.closeOnce.Do(s.client.Close)
	return nil
}

// CloseSink implements arrowstream.ClosingSink: the engine closes the
// producer when the query ends, so that its connections and goroutines do
// not outlive it.
func (s *Sink) CloseSink() error { return s.Close() }

// columnPartitioner sends a row to its partition column's value and
// leaves rows without one to Kafka's default (murmur2 of the key, sticky
// for keyless rows).
type columnPartitioner struct{ def kgo.Partitioner }

func (p columnPartitioner) ForTopic(topic string) kgo.TopicPartitioner {
	return columnTopicPartitioner{p.def.ForTopic(topic)}
}

type columnTopicPartitioner struct{ def kgo.TopicPartitioner }

func (p columnTopicPartitioner) RequiresConsistency(r *kgo.Record) bool {
	return r.Partition >= 0 || p.def.RequiresConsistency(r)
}

func (p columnTopicPartitioner) Partition(r *kgo.Record, n int) int {
	if r.Partition >= 0 {
		return int(r.Partition)
	}
	return p.def.Partition(r, n)
}

func (p columnTopicPartitioner) OnNewBatch() {
	if o, ok := p.def.(interface{ OnNewBatch() }); ok {
		o.OnNewBatch()
	}
}
