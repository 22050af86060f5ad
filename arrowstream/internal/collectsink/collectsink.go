// Package collectsink is a test sink for the engine's and the session's
// tests: it keeps each epoch's rows and ignores replays of committed
// epochs, as the memory sink does.
package collectsink

import (
	"context"
	"sync"

	"github.com/arrowstream/arrowstream/vector"
	vt "github.com/arrowstream/arrowstream/vector/vectortest"
)

// Sink collects the rows of every epoch. The zero value is ready; Fail,
// when set, can fail an epoch after its rows were read. Safe for
// concurrent use.
type Sink struct {
	Fail func(epoch int64) error

	mu     sync.Mutex
	epochs map[int64][]vt.Row
	order  []int64
}

// AddBatch implements stream.Sink.
func (s *Sink) AddBatch(ctx context.Context, epoch int64, data vector.Operator) error {
	defer data.Close()
	recs, err := vector.Drain(ctx, data)
	if err != nil {
		return err
	}
	rows := vt.RowsOf(recs...)
	vector.ReleaseRecords(recs)
	if s.Fail != nil {
		if err := s.Fail(epoch); err != nil {
			return err
		}
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.epochs == nil {
		s.epochs = map[int64][]vt.Row{}
	}
	if len(s.order) > 0 && epoch <= s.order[len(s.order)-1] {
		return nil
	}
	s.epochs[epoch] = rows
	s.order = append(s.order, epoch)
	return nil
}

// All returns the rows of every committed epoch, in epoch order.
func (s *Sink) All() []vt.Row {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []vt.Row
	for _, e := range s.order {
		out = append(out, s.epochs[e]...)
	}
	return out
}

// Epoch returns the rows of one epoch.
func (s *Sink) Epoch(id int64) []vt.Row {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.epochs[id]
}

// Order returns the committed epoch ids, in order.
func (s *Sink) Order() []int64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]int64(nil), s.order...)
}

// Last returns the rows of the last committed epoch.
func (s *Sink) Last() []vt.Row {
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.order) == 0 {
		return nil
	}
	return s.epochs[s.order[len(s.order)-1]]
}
