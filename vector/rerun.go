package vector

import (
	"context"
	"errors"
	"fmt"
	"io"

	"github.com/apache/arrow/go/v17/arrow"
)

// Rerunner is an operator that can run again after a run ended (io.EOF,
// an error, or a consumer that stopped early): Rerun forgets the run —
// the sticky end or error, a pending batch — and reruns its inputs, so
// that an operator tree built once, with its expressions bound, is pulled
// again over new input. A streaming query compiles its stateless
// operators once and reruns them every epoch over the epoch's data fed
// through Slots, instead of building and binding them again.
//
// Rerun fails for a closed operator and for one with an input that cannot
// run again; the caller then builds the tree afresh.
type Rerunner interface {
	Operator
	Rerun() error
}

// ErrCannotRerun is returned (wrapped) by Rerun for an operator that does
// not implement Rerunner or is closed.
var ErrCannotRerun = errors.New("operator cannot run again")

// Rerun reruns op (see Rerunner).
func Rerun(op Operator) error {
	r, ok := op.(Rerunner)
	if !ok {
		return fmt.Errorf("vector: %T: %w", op, ErrCannotRerun)
	}
	return r.Rerun()
}

// Slot is the input of a tree compiled once and run many times: an
// operator of a fixed schema whose input is set before each run (Set) and
// closed after it (CloseInput). Between runs it is at its end. It
// implements Rerunner; Rerun leaves its input alone.
type Slot struct {
	schema *arrow.Schema
	in     Operator
	closed bool
}

// NewSlot returns an empty Slot of schema.
func NewSlot(schema *arrow.Schema) *Slot { return &Slot{schema: schema} }

// Set makes in the Slot's input for the next run; the Slot owns it (and
// closes it on error). in must have the Slot's schema (the caller checks
// equality: the operators above were bound to it); a Slot that still has
// an input, or is closed, refuses.
func (s *Slot) Set(in Operator) error {
	switch {
	case s.closed:
		in.Close()
		return fmt.Errorf("vector: slot: %w", errOpClosed)
	case s.in != nil:
		in.Close()
		return fmt.Errorf("vector: slot: input set twice for one run")
	}
	s.in = in
	return nil
}

// CloseInput closes the run's input (if any): the Slot is at its end until
// the next Set.
func (s *Slot) CloseInput() error {
	in := s.in
	s.in = nil
	if in == nil {
		return nil
	}
	return in.Close()
}

// Schema implements Operator.
func (s *Slot) Schema() *arrow.Schema { return s.schema }

// Next implements Operator: the input's next record, io.EOF without one.
func (s *Slot) Next(ctx context.Context) (arrow.Record, error) {
	if s.closed {
		return nil, errOpClosed
	}
	if s.in == nil {
		return nil, io.EOF
	}
	return s.in.Next(ctx)
}

// Rerun implements Rerunner: the input is the caller's to replace.
func (s *Slot) Rerun() error {
	if s.closed {
		return fmt.Errorf("vector: slot: %w", ErrCannotRerun)
	}
	return nil
}

// Close implements Operator; it closes the input.
func (s *Slot) Close() error {
	if s.closed {
		return nil
	}
	s.closed = true
	return s.CloseInput()
}
