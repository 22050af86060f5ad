package memory

import (
	"context"
	"fmt"
	"strconv"

	"github.com/apache/arrow/go/v17/arrow"

	"github.com/arrowstream/arrowstream/arrowstream/stream"
	"github.com/arrowstream/arrowstream/vector"
)

// Reader is one query's view of a Stream: it reads the stream's blocks
// as the Stream does, but its Commit records only its own position, and
// the stream releases a block once every open Reader has committed past
// it. So each query that reads a shared memory table consumes it
// independently: one that lags behind keeps the rows it has not read.
// A new Reader holds every block still in the stream until it commits;
// rows that the stream released before the Reader was opened cannot be
// read by it. Close unregisters the Reader (the engine closes it when its
// query stops). Safe for concurrent use.
type Reader struct {
	s *Stream
}

var (
	_ stream.Source                 = (*Reader)(nil)
	_ stream.AdmissionControlSource = (*Reader)(nil)
	_ stream.ResumableSource        = (*Reader)(nil)
)

// Resume implements ResumableSource (see Stream.Resume).
func (r *Reader) Resume(end stream.Offset) error { return r.s.Resume(end) }

// NewReader opens a Reader of s.
func (s *Stream) NewReader() *Reader {
	r := &Reader{s: s}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.readers == nil {
		s.readers = map[*Reader]int64{}
	}
	s.readers[r] = -1
	return r
}

// Schema implements Source.
func (r *Reader) Schema() *arrow.Schema { return r.s.Schema() }

// LatestOffset implements Source.
func (r *Reader) LatestOffset(ctx context.Context) (stream.Offset, error) {
	return r.s.LatestOffset(ctx)
}

// LatestOffsetFrom implements AdmissionControlSource.
func (r *Reader) LatestOffsetFrom(ctx context.Context, start stream.Offset) (stream.Offset, error) {
	return r.s.LatestOffsetFrom(ctx, start)
}

// DataAvailable implements NotifyingSource.
func (r *Reader) DataAvailable() <-chan struct{} { return r.s.DataAvailable() }

// Read implements Source.
func (r *Reader) Read(ctx context.Context, start, end stream.Offset) (vector.Operator, error) {
	return r.s.Read(ctx, start, end)
}

// Commit implements Source: the Reader is done with the blocks up to end;
// the stream releases those that every open Reader is done with.
func (r *Reader) Commit(_ context.Context, end stream.Offset) error {
	to, err := stream.LongOffset(end)
	if err != nil {
		return fmt.Errorf("arrowstream: memory stream: %w", err)
	}
	s := r.s
	s.mu.Lock()
	defer s.mu.Unlock()
	at, ok := s.readers[r]
	if !ok {
		return fmt.Errorf("arrowstream: memory stream: commit of %s through a closed reader", strconv.FormatInt(to, 10))
	}
	if to > at {
		s.readers[r] = to
	}
	s.dropThroughLocked(s.minCommittedLocked())
	return nil
}

// Close implements Source: the Reader no longer holds blocks. The
// stream's data stays (the Stream's Close releases it).
func (r *Reader) Close() error {
	s := r.s
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.readers, r)
	if len(s.readers) > 0 {
		s.dropThroughLocked(s.minCommittedLocked())
	}
	return nil
}

// minCommittedLocked is the lowest offset the open Readers committed (-1
// when one has committed nothing).
func (s *Stream) minCommittedLocked() int64 {
	first := true
	var lo int64 = -1
	for _, at := range s.readers {
		if first || at < lo {
			lo, first = at, false
		}
	}
	return lo
}
