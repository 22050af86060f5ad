package memory

import (
	"context"
	"fmt"
	"strconv"
	"sync"

	"github.com/apache/arrow/go/v17/arrow"
	"github.com/apache/arrow/go/v17/arrow/array"
	"github.com/apache/arrow/go/v17/arrow/memory"

	"github.com/arrowstream/arrowstream/arrowstream/stream"
	"github.com/arrowstream/arrowstream/vector"
)

// Stream is an in-memory source for tests and demos (Spark's
// MemoryStream): every AddData call appends one block and advances the
// offset by one, even when the block is empty. Offsets are bare integers
// starting at 0 for the first block. It replays only while the object
// lives. Safe for concurrent use.
type Stream struct {
	schema *arrow.Schema
	mem    memory.Allocator

	mu      sync.Mutex
	blocks  []arrow.Record // blocks[i] has offset base+i
	base    int64
	current int64 // -1: no data yet
	// maxPerTrigger bounds the blocks one epoch reads (0: all available).
	maxPerTrigger int64
	// arrived is closed (and replaced) when a block is added; nil until
	// someone asks (DataAvailable).
	arrived chan struct{}
	// lostThrough is the highest offset known lost with an earlier
	// process (Resume); -1: none. Offsets up to it that the stream does
	// not hold read as empty.
	lostThrough int64
	// readThrough is the highest offset a Read has served (-1: none).
	readThrough int64
	// readers are the open Readers and the offset each committed (-1:
	// none yet); a block is dropped once all of them committed it.
	readers map[*Reader]int64
}

// DataAvailable implements NotifyingSource.
func (s *Stream) DataAvailable() <-chan struct{} {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.arrived == nil {
		s.arrived = make(chan struct{})
	}
	return s.arrived
}

// SetMaxOffsetsPerTrigger makes every epoch read at most n blocks (n <= 0:
// all that are available), as Kafka's maxOffsetsPerTrigger.
func (s *Stream) SetMaxOffsetsPerTrigger(n int64) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.maxPerTrigger = n
}

// LatestOffsetFrom implements AdmissionControlSource.
func (s *Stream) LatestOffsetFrom(_ context.Context, start stream.Offset) (stream.Offset, error) {
	from, err := stream.LongOffset(start)
	if err != nil {
		return nil, fmt.Errorf("arrowstream: memory stream: %w", err)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.current < 0 {
		return nil, nil
	}
	end := s.current
	if s.maxPerTrigger > 0 && from+s.maxPerTrigger < end {
		end = from + s.maxPerTrigger
	}
	return stream.Offset(strconv.AppendInt(nil, end, 10)), nil
}

// New returns an empty stream of schema.
func New(mem memory.Allocator, schema *arrow.Schema) *Stream {
	return &Stream{schema: schema, mem: mem, current: -1, lostThrough: -1, readThrough: -1}
}

// Schema implements Source.
func (s *Stream) Schema() *arrow.Schema { return s.schema }

// AddRecord appends one block (rec is retained) and returns its offset.
func (s *Stream) AddRecord(rec arrow.Record) (stream.Offset, error) {
	return s.AddRecords(rec)
}

// AddRecords appends one block per record (each retained) at once: a
// reader's latest offset includes all of them or none (INSERT INTO a
// memory table). It returns the offset after the last one.
func (s *Stream) AddRecords(recs ...arrow.Record) (stream.Offset, error) {
	for _, rec := range recs {
		if !rec.Schema().Equal(s.schema) {
			return nil, fmt.Errorf("arrowstream: memory stream: record schema %s differs from the stream's %s", rec.Schema(), s.schema)
		}
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, rec := range recs {
		rec.Retain()
		s.blocks = append(s.blocks, rec)
		s.current++
	}
	if s.arrived != nil {
		close(s.arrived)
		s.arrived = nil
	}
	return stream.Offset(strconv.AppendInt(nil, s.current, 10)), nil
}

// AddData appends one block built from rows of Go values (as
// vector.AppendValue accepts them) and returns its offset. No rows still
// adds an (empty) block.
func (s *Stream) AddData(rows ...[]any) (stream.Offset, error) {
	builders := make([]array.Builder, s.schema.NumFields())
	for i, f := range s.schema.Fields() {
		builders[i] = array.NewBuilder(s.mem, f.Type)
	}
	defer func() {
		for _, b := range builders {
			b.Release()
		}
	}()
	for r, row := range rows {
		if len(row) != len(builders) {
			return nil, fmt.Errorf("arrowstream: memory stream: row %d has %d values, the schema has %d columns", r, len(row), len(builders))
		}
		for c, v := range row {
			if err := vector.AppendValue(builders[c], v); err != nil {
				return nil, fmt.Errorf("arrowstream: memory stream: row %d column %s: %w", r, s.schema.Field(c).Name, err)
			}
		}
	}
	cols := make([]arrow.Array, len(builders))
	for i, b := range builders {
		cols[i] = b.NewArray()
	}
	rec := array.NewRecord(s.schema, cols, int64(len(rows)))
	for _, c := range cols {
		c.Release()
	}
	defer rec.Release()
	return s.AddRecord(rec)
}

// LatestOffset implements Source.
func (s *Stream) LatestOffset(context.Context) (stream.Offset, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.current < 0 {
		return nil, nil
	}
	return stream.Offset(strconv.AppendInt(nil, s.current, 10)), nil
}

// Read implements Source: the blocks start+1 .. end, in order.
func (s *Stream) Read(_ context.Context, start, end stream.Offset) (vector.Operator, error) {
	from, err := stream.LongOffset(start)
	if err != nil {
		return nil, fmt.Errorf("arrowstream: memory stream: %w", err)
	}
	to, err := stream.LongOffset(end)
	if err != nil {
		return nil, fmt.Errorf("arrowstream: memory stream: %w", err)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if from+1 < s.base && s.base <= s.lostThrough+1 && to >= s.base-1 && to <= s.current {
		from = s.base - 1 // (from, base-1] was lost with an earlier process: empty
	}
	if from+1 < s.base || to > s.current || from > to {
		return nil, fmt.Errorf("arrowstream: memory stream: cannot read (%d, %d]: it holds offsets %d..%d (data before %d was committed, or the stream was recreated after a restart)", from, to, s.base, s.current, s.base)
	}
	recs := s.blocks[from+1-s.base : to+1-s.base]
	s.readThrough = max(s.readThrough, to)
	return vector.NewScan(s.schema, recs...)
}

// Resume implements ResumableSource. A stream that holds data past end
// (it lived through the query's restart) is left as it is. One that is
// behind end was recreated: the blocks it holds, which no query has read
// yet, are renumbered to follow end, and (its first offset, end] reads as
// empty. If a query has already read some of them under their old numbers
// (another query reading the stream resumed from an earlier offset and
// ran), renumbering would show them twice, so Resume fails instead.
func (s *Stream) Resume(end stream.Offset) error {
	n, err := stream.LongOffset(end)
	if err != nil {
		return fmt.Errorf("arrowstream: memory stream: resume: %w", err)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if n <= s.current {
		return nil
	}
	if len(s.blocks) > 0 && s.readThrough >= s.base {
		return fmt.Errorf("arrowstream: memory stream: cannot resume a query at offset %d: the stream was recreated (it holds offsets %d..%d) and another query has already read some of them; recreate the table reading it with CREATE OR REPLACE", n, s.base, s.current)
	}
	s.base = n + 1
	s.current = n + int64(len(s.blocks))
	s.lostThrough = n
	return nil
}

// Commit implements Source: blocks up to end are dropped (whatever the
// Readers committed: a stream that several queries read is committed
// through its Readers).
func (s *Stream) Commit(_ context.Context, end stream.Offset) error {
	to, err := stream.LongOffset(end)
	if err != nil {
		return fmt.Errorf("arrowstream: memory stream: %w", err)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.dropThroughLocked(to)
	return nil
}

// dropThroughLocked releases the blocks up to offset to.
func (s *Stream) dropThroughLocked(to int64) {
	n := 0
	for s.base <= to && n < len(s.blocks) {
		s.blocks[n].Release()
		s.blocks[n] = nil
		s.base++
		n++
	}
	if n > 0 {
		// Drop the committed prefix. Appends reallocate once the
		// capacity left after it runs out, copying only the live
		// blocks, so the backing array does not keep growing with a
		// stream that is fed and committed forever; moving the live
		// blocks to the front at every commit instead cost a copy of
		// every queued block per epoch.
		s.blocks = s.blocks[n:]
		if len(s.blocks) == 0 {
			s.blocks = nil
		}
	}
}

// Close implements Source and releases every block.
func (s *Stream) Close() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, b := range s.blocks {
		b.Release()
	}
	s.blocks = nil
	return nil
}
