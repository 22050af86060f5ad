package memsink

import (
	"context"
	"errors"
	"fmt"
	"io"

	"github.com/apache/arrow/go/v17/arrow"
	"github.com/apache/arrow/go/v17/arrow/array"
	"github.com/apache/arrow/go/v17/arrow/memory"
)

// ErrBehind is returned (wrapped, naming the epochs) when a subscription
// needs an epoch that retention has already evicted: the subscriber read
// more slowly than the table evicts, or asked for history it no longer
// holds.
var ErrBehind = errors.New("subscription fell behind the table's retention")

// ErrDropped ends a subscription whose table was dropped, replaced or
// closed.
var ErrDropped = errors.New("table was dropped")

// nextEpoch returns the rows committed by the first epoch after "after"
// (see EpochRows), or nil when no later epoch is committed yet. The error
// wraps ErrBehind when that epoch is no longer retained.
func (t *Table) nextEpoch(after int64) (*Snapshot, error) {
	v := t.acquire()
	if v.latest <= after {
		v.release()
		return nil, nil
	}
	s, err := t.epochAfter(v, after)
	if err != nil {
		v.release()
		return nil, fmt.Errorf("table %s: %w", t.Name(), err)
	}
	return s, nil
}

func (t *Table) epochAfter(v *version, after int64) (*Snapshot, error) {
	if len(v.states) > 0 {
		j := epochAt(len(v.states), func(i int) int64 { return v.states[i].info.Epoch }, after) + 1
		st := v.states[j] // exists: v.latest > after
		if j == 0 && st.info.Epoch > after+1 {
			return nil, fmt.Errorf("the epochs after %d up to %d were evicted (%s): %w", after, st.info.Epoch-1, v.retainedRange(), ErrBehind)
		}
		// A state at epoch e holds rows of epochs up to e: those after
		// e-1 are exactly the keys e updated.
		parts, owned, err := t.filterView(st, st.info.Epoch-1)
		if err != nil {
			return nil, err
		}
		return newSnapshot(v, t.schema, st.info.Epoch, parts, owned), nil
	}
	if after < v.evicted || len(v.segs) > 0 && v.segs[0].info.Epoch > after+1 {
		return nil, fmt.Errorf("the epochs after %d were evicted (%s): %w", after, v.retainedRange(), ErrBehind)
	}
	from := pos{}
	if at, ok := locate(v.segs, after); ok {
		from = at.next(v.segs)
	}
	if from.seg >= len(v.segs) {
		// Committed but holding no segment (the table was cleared).
		return newSnapshot(v, t.schema, v.latest, nil, nil), nil
	}
	parts, owned := rangeParts(v.segs, from, from)
	return newSnapshot(v, t.schema, v.segs[from.seg].epochID(from.ep), parts, owned), nil
}

// KeyColumns are the columns that identify a row of an Update-mode
// table (SinkInfo.KeyColumns; none for other modes or when unknown).
func (t *Table) KeyColumns() []string { return t.info.KeyColumns }

// Subscription follows a table: a vector.Operator whose Next returns the
// rows of each committed epoch, in commit order, as the epoch commits,
// and blocks while no new epoch is committed. Each epoch gives at least
// one record (an empty one when the epoch committed no rows), every
// record holds rows of one epoch only, and carries EpochColumn and
// CommitTimestampColumn (schema WithEpochSchema). What an epoch's rows
// are depends on the table's output mode: Append, the rows it added;
// Complete, the whole result it replaced the table with; Update, the rows
// it updated (for a keyed view, the keys it changed, as of that epoch).
//
// A subscription holds no reference to the table's data between calls:
// one epoch's records at most, until the caller has taken them. A reader
// slower than retention is told so (ErrBehind) instead of being served
// from memory the table has given up; a dropped or closed table ends it
// with ErrDropped.
type Subscription struct {
	t       *Table
	mem     memory.Allocator
	schema  *arrow.Schema
	after   int64
	pending []arrow.Record
	closed  bool
}

// Subscribe follows t from the epoch after since; since nil starts after
// the latest committed epoch (only epochs committed from now on), -1
// replays every retained epoch first. The error wraps ErrBehind when
// epochs after since were evicted. mem allocates the epoch columns.
func (t *Table) Subscribe(since *int64, mem memory.Allocator) (*Subscription, error) {
	if mem == nil {
		mem = t.mem
	}
	s := &Subscription{t: t, mem: mem, schema: WithEpochSchema(t.schema), after: t.LatestEpoch()}
	if since != nil {
		s.after = *since
		if s.after == -1 {
			s.after = t.oldestRetained() - 1
		}
		if err := s.checkRetained(); err != nil {
			return nil, err
		}
	}
	return s, nil
}

// oldestRetained is the oldest epoch the table retains (0 when none).
func (t *Table) oldestRetained() int64 {
	v := t.acquire()
	defer v.release()
	switch {
	case len(v.states) > 0:
		return v.states[0].info.Epoch
	case len(v.segs) > 0:
		return v.segs[0].info.Epoch
	}
	return max(v.evicted+1, 0)
}

// checkRetained reports ErrBehind now when the first epoch asked for is
// gone, rather than at the first Next.
func (s *Subscription) checkRetained() error {
	snap, err := s.t.nextEpoch(s.after)
	if snap != nil {
		snap.Release()
	}
	return err
}

// Schema implements vector.Operator.
func (s *Subscription) Schema() *arrow.Schema { return s.schema }

// After is the last epoch whose rows Next has returned in full (or the
// starting point).
func (s *Subscription) After() int64 { return s.after }

// Next implements vector.Operator: the next record of the next epoch,
// waiting for a commit when there is none. It never returns io.EOF: a
// subscription ends with ctx, ErrDropped or ErrBehind.
func (s *Subscription) Next(ctx context.Context) (arrow.Record, error) {
	if s.closed {
		return nil, io.EOF
	}
	for {
		if len(s.pending) > 0 {
			r := s.pending[0]
			s.pending[0] = nil
			s.pending = s.pending[1:]
			return r, nil
		}
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		// Take the channel before looking, so that a commit between the
		// look and the wait is not missed.
		changed := s.t.Changed()
		if s.t.closed.Load() {
			return nil, fmt.Errorf("memsink: subscription to %s: %w", s.t.Name(), ErrDropped)
		}
		snap, err := s.t.nextEpoch(s.after)
		if err != nil {
			return nil, fmt.Errorf("memsink: subscription: %w", err)
		}
		if snap != nil {
			err := s.load(snap)
			snap.Release()
			if err != nil {
				return nil, err
			}
			continue
		}
		select {
		case <-changed:
		case <-ctx.Done():
			return nil, context.Cause(ctx)
		}
	}
}

// load queues the records of one epoch's snapshot with epoch columns.
func (s *Subscription) load(snap *Snapshot) error {
	recs, err := snap.RecordsWithEpoch(s.mem)
	if err != nil {
		return fmt.Errorf("memsink: subscription to %s: epoch %d: %w", s.t.Name(), snap.LatestEpoch(), err)
	}
	s.after = snap.LatestEpoch()
	kept := recs[:0]
	for _, r := range recs {
		if r.NumRows() == 0 {
			r.Release()
			continue
		}
		kept = append(kept, r)
	}
	if len(kept) == 0 {
		kept = append(kept, s.emptyRecord())
	}
	s.pending = kept
	return nil
}

// emptyRecord is the zero-row record that marks an epoch without rows.
func (s *Subscription) emptyRecord() arrow.Record {
	b := array.NewRecordBuilder(s.mem, s.schema)
	defer b.Release()
	return b.NewRecord()
}

// Close implements vector.Operator: it releases the records not yet
// returned. It is idempotent.
func (s *Subscription) Close() error {
	if s.closed {
		return nil
	}
	s.closed = true
	releaseAll(s.pending)
	s.pending = nil
	return nil
}
