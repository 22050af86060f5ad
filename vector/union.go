package vector

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/apache/arrow/go/v17/arrow"
	"github.com/apache/arrow/go/v17/arrow/array"
	"github.com/apache/arrow/go/v17/arrow/memory"
)

// Union concatenates its inputs (SQL's UNION ALL): every row of the first
// input, then every row of the second, and so on. Columns match by
// position; the output takes its names from the first input, and a column
// is nullable when it is in any input. Each input is closed as soon as it
// is exhausted.
type Union struct {
	inputs []Operator
	schema *arrow.Schema
	cur    int
	err    error
	closed bool
}

// NewUnion returns the Union of inputs, which must have the same number of
// columns with equal types position by position. On success the Union owns
// every input.
func NewUnion(_ memory.Allocator, inputs ...Operator) (*Union, error) {
	if len(inputs) == 0 {
		return nil, errors.New("vector: union needs at least one input")
	}
	first := inputs[0].Schema()
	fields := append([]arrow.Field(nil), first.Fields()...)
	for i, in := range inputs[1:] {
		s := in.Schema()
		if s.NumFields() != first.NumFields() {
			return nil, fmt.Errorf("vector: union input %d %s has %d columns but input 0 %s has %d",
				i+1, sqlSchema(s), s.NumFields(), sqlSchema(first), first.NumFields())
		}
		for c, f := range s.Fields() {
			if !arrow.TypeEqual(f.Type, fields[c].Type) {
				return nil, fmt.Errorf("vector: union input %d %s does not match input 0 %s: column %d is %s, not %s: %w",
					i+1, sqlSchema(s), sqlSchema(first), c+1, TypeName(f.Type), TypeName(fields[c].Type), ErrType)
			}
			fields[c].Nullable = fields[c].Nullable || f.Nullable
		}
	}
	md := first.Metadata()
	return &Union{inputs: inputs, schema: arrow.NewSchema(fields, &md)}, nil
}

// sqlSchema renders a schema in SQL words: (a: bigint, b: string).
func sqlSchema(s *arrow.Schema) string {
	parts := make([]string, s.NumFields())
	for i, f := range s.Fields() {
		parts[i] = QuoteIdent(f.Name) + ": " + TypeName(f.Type)
	}
	return "(" + strings.Join(parts, ", ") + ")"
}

// Schema implements Operator.
func (u *Union) Schema() *arrow.Schema { return u.schema }

// Next implements Operator.
func (u *Union) Next(ctx context.Context) (arrow.Record, error) {
	for u.err == nil {
		if u.cur == len(u.inputs) {
			u.err = io.EOF
			break
		}
		rec, err := u.inputs[u.cur].Next(ctx)
		if errors.Is(err, io.EOF) {
			// Release the exhausted input now rather than at Close.
			if err := u.inputs[u.cur].Close(); err != nil {
				u.err = err
			}
			u.inputs[u.cur] = nil
			u.cur++
			continue
		}
		if err != nil {
			u.err = err
			break
		}
		if rec.NumRows() == 0 {
			rec.Release() // empty batches are not passed on
			continue
		}
		if rec.Schema().Equal(u.schema) {
			return rec, nil
		}
		out := array.NewRecord(u.schema, rec.Columns(), rec.NumRows())
		rec.Release()
		return out, nil
	}
	return nil, u.err
}

// Close implements Operator; it closes every input not yet closed and
// returns the first error.
func (u *Union) Close() error {
	if u.closed {
		return nil
	}
	u.closed = true
	if u.err == nil {
		u.err = errOpClosed
	}
	var first error
	for i, in := range u.inputs {
		if in == nil {
			continue
		}
		if err := in.Close(); err != nil && first == nil {
			first = err
		}
		u.inputs[i] = nil
	}
	return first
}
