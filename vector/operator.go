package vector

import (
	"context"
	"errors"
	"fmt"
	"io"

	"github.com/apache/arrow/go/v17/arrow"
)

// Operator is a pull-based batch operator.
//
// Next returns the next non-empty record, owned by the caller, or (nil,
// io.EOF) once the input is exhausted; after io.EOF or an error every further
// call returns the same result. Close releases everything the operator holds,
// including its inputs, and is idempotent. An Operator is used by one
// goroutine at a time.
type Operator interface {
	Schema() *arrow.Schema
	Next(ctx context.Context) (arrow.Record, error)
	Close() error
}

// Scan is an Operator over in-memory records. It retains the records it is
// given and returns them, one at a time, skipping empty ones.
type Scan struct {
	schema  *arrow.Schema
	records []arrow.Record
	pos     int
	closed  bool
}

// NewScan returns a Scan over records, which must all have schema. The
// records are borrowed: Scan retains them until they are returned or Close.
func NewScan(schema *arrow.Schema, records ...arrow.Record) (*Scan, error) {
	for i, r := range records {
		if !r.Schema().Equal(schema) {
			return nil, fmt.Errorf("vector: scan record %d has schema %s, want %s", i, r.Schema(), schema)
		}
	}
	kept := make([]arrow.Record, len(records))
	for i, r := range records {
		r.Retain()
		kept[i] = r
	}
	return &Scan{schema: schema, records: kept}, nil
}

// Schema implements Operator.
func (s *Scan) Schema() *arrow.Schema { return s.schema }

// Next implements Operator.
func (s *Scan) Next(ctx context.Context) (arrow.Record, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	for s.pos < len(s.records) {
		r := s.records[s.pos]
		s.records[s.pos] = nil
		s.pos++
		if r.NumRows() == 0 {
			r.Release()
			continue
		}
		return r, nil
	}
	return nil, io.EOF
}

// Close implements Operator.
func (s *Scan) Close() error {
	if s.closed {
		return nil
	}
	s.closed = true
	for i, r := range s.records[s.pos:] {
		if r != nil {
			r.Release()
		}
		s.records[s.pos+i] = nil
	}
	return nil
}

// Drain pulls op until io.EOF and returns every record (owned by the caller).
// It does not close op. On error the records read so far are released.
func Drain(ctx context.Context, op Operator) ([]arrow.Record, error) {
	var out []arrow.Record
	for {
		rec, err := op.Next(ctx)
		if errors.Is(err, io.EOF) {
			return out, nil
		}
		if err != nil {
			for _, r := range out {
				r.Release()
			}
			return nil, err
		}
		out = append(out, rec)
	}
}
