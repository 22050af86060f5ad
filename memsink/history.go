package memsink

import (
	"errors"
	"fmt"
	"sort"
	"time"

	"github.com/apache/arrow/go/v17/arrow"
	"github.com/apache/arrow/go/v17/arrow/array"
	"github.com/apache/arrow/go/v17/arrow/memory"

	"github.com/arrowstream/arrowstream/arrowstream/stream"
)

// ErrNotRetained is returned (wrapped, with the epoch and the retained
// range) when a read needs an epoch the table does not hold: not yet
// committed, or evicted by retention.
var ErrNotRetained = errors.New("epoch not retained")

// EpochInfo describes one committed epoch.
type EpochInfo struct {
	// Epoch is the epoch (batch) id.
	Epoch int64
	// Rows and Bytes are what the epoch committed (rows written, Arrow
	// buffer bytes held).
	Rows  int64
	Bytes int64
	// CommitTime is when the epoch became visible (UTC).
	CommitTime time.Time
	// Replaced is set when the epoch replaced the whole table (Complete
	// mode) rather than adding to it.
	Replaced bool
	// Superseded is set when a later epoch replaced this one's rows; they
	// are still readable with AsOf.
	Superseded bool
}

// History lists the epochs the table retains (those AsOf can read),
// oldest first.
func (t *Table) History() []EpochInfo {
	v := t.acquire()
	defer v.release()
	if len(v.states) > 0 {
		out := make([]EpochInfo, len(v.states))
		for i, s := range v.states {
			out[i] = s.info
		}
		return out
	}
	out := make([]EpochInfo, 0, v.held.Epochs)
	for i, s := range v.segs {
		for j := range s.numEpochs() {
			e := s.epochInfo(j)
			e.Superseded = i < v.live
			out = append(out, e)
		}
	}
	return out
}

// retainedRange describes the retained epochs for messages.
func (v *version) retainedRange() string {
	switch {
	case len(v.states) > 0:
		return fmt.Sprintf("retained epochs %d..%d", v.states[0].info.Epoch, v.latest)
	case len(v.segs) > 0:
		return fmt.Sprintf("retained epochs %d..%d", v.segs[0].info.Epoch, v.latest)
	}
	return "no epoch retained"
}

// epochAt returns the index of the last of n entries whose epoch is at or
// below epoch, or -1.
func epochAt(n int, epochOf func(int) int64, epoch int64) int {
	return sort.Search(n, func(i int) bool { return epochOf(i) > epoch }) - 1
}

// AsOf returns the table as it was when epoch was committed (time
// travel): for Append and Update tables the retained epochs up to it, for
// Complete tables the result of the last epoch at or before it, for views
// the view at that epoch. epoch may be any id from the oldest retained
// epoch to the latest; otherwise the error wraps ErrNotRetained and names
// the retained range. The caller releases the snapshot.
func (t *Table) AsOf(epoch int64) (*Snapshot, error) {
	v := t.acquire()
	s, err := t.asOf(v, epoch)
	if err != nil {
		v.release()
		return nil, fmt.Errorf("table %s: %w", t.Name(), err) // err names the epoch
	}
	return s, nil
}

func (t *Table) asOf(v *version, epoch int64) (*Snapshot, error) {
	if epoch > v.latest {
		if v.latest < 0 {
			return nil, fmt.Errorf("no epoch committed yet: %w", ErrNotRetained)
		}
		return nil, fmt.Errorf("epoch %d is not committed yet (%s): %w", epoch, v.retainedRange(), ErrNotRetained)
	}
	if len(v.states) > 0 {
		j := epochAt(len(v.states), func(i int) int64 { return v.states[i].info.Epoch }, epoch)
		if j < 0 {
			return nil, fmt.Errorf("epoch %d is not retained (%s): %w", epoch, v.retainedRange(), ErrNotRetained)
		}
		st := v.states[j]
		return newSnapshot(v, t.schema, st.info.Epoch, stateParts(st), nil), nil
	}
	at, ok := locate(v.segs, epoch)
	if !ok {
		return nil, fmt.Errorf("epoch %d is not retained (%s): %w", epoch, v.retainedRange(), ErrNotRetained)
	}
	i := 0
	for k := at.seg; k >= 0; k-- {
		if v.segs[k].info.Replaced {
			i = k // Replaced segments hold one epoch
			break
		}
	}
	parts, owned := rangeParts(v.segs, pos{i, 0}, at)
	return newSnapshot(v, t.schema, v.segs[at.seg].epochID(at.ep), parts, owned), nil
}

// Since returns the rows of the current contents committed after epoch
// (Spark's dataSinceBatch), for incremental polling: pass the
// LatestEpoch of the previous poll. Parts and RecordsWithEpoch tell each
// row's epoch. For a view these are the keys whose latest row came after
// epoch (filtered, so copied). In Append and Update mode, if rows
// committed after epoch were evicted the error wraps ErrNotRetained rather
// than silently missing them.
func (t *Table) Since(epoch int64) (*Snapshot, error) {
	v := t.acquire()
	s, err := t.since(v, epoch)
	if err != nil {
		v.release()
		return nil, fmt.Errorf("memsink: table %q: since epoch %d: %w", t.Name(), epoch, err)
	}
	return s, nil
}

// DataSinceBatch is Since under Spark's name.
func (t *Table) DataSinceBatch(epoch int64) (*Snapshot, error) { return t.Since(epoch) }

func (t *Table) since(v *version, epoch int64) (*Snapshot, error) {
	if len(v.states) > 0 {
		parts, owned, err := t.filterView(v.states[len(v.states)-1], epoch)
		if err != nil {
			return nil, err
		}
		return newSnapshot(v, t.schema, v.latest, parts, owned), nil
	}
	if t.info.Mode != stream.Complete && epoch < v.evicted {
		return nil, fmt.Errorf("rows committed after epoch %d were evicted through epoch %d (%s): %w", epoch, v.evicted, v.retainedRange(), ErrNotRetained)
	}
	live := v.segs[v.live:]
	from := pos{}
	if at, ok := locate(live, epoch); ok {
		from = at.next(live)
	}
	if from.seg >= len(live) {
		return newSnapshot(v, t.schema, v.latest, nil, nil), nil
	}
	last := live[len(live)-1]
	parts, owned := rangeParts(live, from, pos{len(live) - 1, last.numEpochs() - 1})
	return newSnapshot(v, t.schema, v.latest, parts, owned), nil
}

// LatestBatchData is Spark's latestBatchData: the rows of the latest
// epoch (for a view, the keys it updated). Empty when nothing is committed.
func (t *Table) LatestBatchData() *Snapshot {
	v := t.acquire()
	if v.latest < 0 {
		return newSnapshot(v, t.schema, -1, nil, nil)
	}
	if len(v.states) > 0 {
		parts, owned, err := t.filterView(v.states[len(v.states)-1], v.latest-1)
		if err != nil {
			// filterView fails only on types Take lacks, which New rejects.
			panic(fmt.Sprintf("memsink: table %q: latest batch: %v", t.Name(), err))
		}
		return newSnapshot(v, t.schema, v.latest, parts, owned)
	}
	end := pos{len(v.segs) - 1, v.segs[len(v.segs)-1].numEpochs() - 1}
	parts, owned := rangeParts(v.segs, end, end)
	return newSnapshot(v, t.schema, v.latest, parts, owned)
}

// filterView returns the live rows of st committed after epoch: whole
// chunks where every row qualifies, filtered copies (returned as owned)
// where some do.
func (t *Table) filterView(st *viewState, epoch int64) ([]part, []arrow.Record, error) {
	var parts []part
	var owned []arrow.Record
	for _, vc := range st.chunks {
		switch {
		case vc.maxEp <= epoch:
			continue
		case vc.minEp > epoch:
			parts = append(parts, vc.part())
			continue
		}
		full, _ := vc.resolve()
		ep := full.Column(int(full.NumCols()) - 2).(*array.Int64).Int64Values()
		var idx []int32
		for i, e := range ep {
			if e > epoch {
				idx = append(idx, int32(i))
			}
		}
		if len(idx) == 0 {
			continue
		}
		f, err := takeRecord(t.mem, full, idx)
		if err != nil {
			releaseAll(owned)
			return nil, nil, err
		}
		owned = append(owned, f)
		pub := array.NewRecord(t.schema, f.Columns()[:f.NumCols()-2], f.NumRows())
		owned = append(owned, pub)
		parts = append(parts, viewPart(f, pub, recordBytes(map[*memory.Buffer]struct{}{}, f)))
	}
	return parts, owned, nil
}
