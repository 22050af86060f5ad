package vector

import (
	"context"
	"fmt"
	"io"

	"github.com/apache/arrow/go/v17/arrow"
	"github.com/apache/arrow/go/v17/arrow/memory"
)

// Limit passes on the first n rows of its input after skipping offset rows
// (SQL's LIMIT n OFFSET m). Batches are cut with zero-copy slices. Once n
// rows have been produced it stops pulling and closes its input, so that an
// upstream operator's memory is released as early as possible.
type Limit struct {
	input     Operator
	skip      int64 // rows still to skip
	left      int64 // rows still to produce
	err       error
	closeErr  error
	inputDone bool
	closed    bool
}

// NewLimit returns a Limit producing at most n rows of input. On success the
// Limit owns input.
func NewLimit(mem memory.Allocator, input Operator, n int64) (*Limit, error) {
	return NewLimitOffset(mem, input, n, 0)
}

// NewLimitOffset returns a Limit that skips the first offset rows of input
// and then produces at most n rows. n and offset must not be negative. On
// success the Limit owns input.
func NewLimitOffset(_ memory.Allocator, input Operator, n, offset int64) (*Limit, error) {
	if n < 0 {
		return nil, fmt.Errorf("vector: limit must not be negative, got %d", n)
	}
	if offset < 0 {
		return nil, fmt.Errorf("vector: offset must not be negative, got %d", offset)
	}
	return &Limit{input: input, skip: offset, left: n}, nil
}

// Schema implements Operator; it is the input's schema.
func (l *Limit) Schema() *arrow.Schema { return l.input.Schema() }

// Next implements Operator.
func (l *Limit) Next(ctx context.Context) (arrow.Record, error) {
	for l.err == nil {
		if l.left == 0 {
			l.finish()
			break
		}
		rec, err := l.input.Next(ctx)
		if err != nil {
			l.err = err
			break
		}
		n := rec.NumRows()
		if l.skip >= n {
			l.skip -= n
			rec.Release()
			continue
		}
		start := l.skip
		end := start + min(n-start, l.left) // start+l.left may overflow (OFFSET without LIMIT)
		l.skip = 0
		l.left -= end - start
		if start == 0 && end == n {
			return rec, nil
		}
		out := rec.NewSlice(start, end)
		rec.Release()
		return out, nil
	}
	return nil, l.err
}

// finish closes the input early once the limit is reached.
func (l *Limit) finish() {
	l.err = io.EOF
	if !l.inputDone {
		l.inputDone = true
		l.closeErr = l.input.Close()
	}
}

// Close implements Operator; it closes the input (if the limit has not
// already done so) and reports an error from either close.
func (l *Limit) Close() error {
	if l.closed {
		return nil
	}
	l.closed = true
	if l.err == nil {
		l.err = errOpClosed
	}
	if !l.inputDone {
		l.inputDone = true
		l.closeErr = l.input.Close()
	}
	return l.closeErr
}
