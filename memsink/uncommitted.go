package memsink

import (
	"context"
	"fmt"
	"slices"

	"github.com/apache/arrow/go/v17/arrow"

	"github.com/arrowstream/arrowstream/arrowstream/stream"
)

var _ stream.ArrivalSink = (*Table)(nil)

// AddUncommitted implements arrowstream.ArrivalSink for continuous queries
// with continuous.visibility=arrival: rec (retained) becomes visible in
// the table's current contents at once, as part of the open epoch, before
// that epoch commits — as Spark's continuous memory sink shows rows as they
// arrive. The epoch's AddBatch replaces these rows with the committed ones;
// readers that need only committed data use time travel (AsOf) or the
// epoch columns. Uncommitted rows are never persisted, never in history,
// and vanish if the query fails before the commit (the epoch is replayed on
// restart). Views and Complete-mode tables do not support it.
func (t *Table) AddUncommitted(ctx context.Context, epoch int64, rec arrow.Record) error {
	if t.view != nil || t.info.Mode == stream.Complete {
		return fmt.Errorf("memsink: table %q: uncommitted rows are supported only by Append and Update tables that are not views", t.Name())
	}
	if rec.NumRows() == 0 {
		return nil
	}
	rec.Retain()
	rec, err := t.adopt(rec)
	if err != nil {
		return fmt.Errorf("memsink: table %q: epoch %d: %w", t.Name(), epoch, err)
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	old := t.cur.Load()
	if t.closed.Load() || epoch <= old.latest {
		rec.Release()
		if t.closed.Load() {
			return fmt.Errorf("memsink: table %q: epoch %d: %w", t.Name(), epoch, ErrClosed)
		}
		return nil // already committed: the committed rows are shown
	}
	seg := newSegment(EpochInfo{Epoch: epoch, Rows: rec.NumRows(), CommitTime: t.now().UTC()}, appendSplit(nil, rec))
	v := newVersion(old.latest, old.evicted, old.segs, nil, nil)
	v.pend = append(slices.Clone(old.pend), seg) // seg's creator reference moves to v
	for _, p := range old.pend {
		p.refs.Add(1)
	}
	t.publish(v)
	return nil
}

// DiscardUncommitted implements arrowstream.ArrivalSink: the rows shown by
// AddUncommitted since the last commit disappear.
func (t *Table) DiscardUncommitted() {
	t.mu.Lock()
	defer t.mu.Unlock()
	old := t.cur.Load()
	if len(old.pend) == 0 || t.view != nil {
		return
	}
	t.publish(newVersion(old.latest, old.evicted, old.segs, nil, nil))
}

// keepPending carries the uncommitted rows of epochs after committed over
// to v (a continuous query shows epoch N+1's rows while epoch N commits).
func (v *version) keepPending(pend []*segment, committed int64) {
	for _, p := range pend {
		if p.info.Epoch > committed {
			p.refs.Add(1)
			v.pend = append(v.pend, p)
		}
	}
}
