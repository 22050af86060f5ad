package stateful

import (
	"context"
	"time"

	"github.com/apache/arrow/go/v17/arrow"

	"github.com/arrowstream/arrowstream/plan"
	"github.com/arrowstream/arrowstream/vector"
)

// The stream-stream join's partitions: every row belongs to the state
// partition of its join key's hash, and rows join only rows of the same
// key, so each partition's epoch (matching, state update, eviction, outer
// rows, matched flags) is independent of the others. The partitions run in
// parallel (runEachPartition: at most GOMAXPROCS at a time, as Spark runs
// one task per shuffle partition), each with its own cache, codecs and
// store; their outputs are concatenated in partition order.

// joinPart is one state partition of the join as kept between epochs.
type joinPart struct {
	caches [2]*sideCache // each side's stored rows, decoded
	codecs [2]*rowCodec  // each side's row codec, this partition's own
}

// joinPartResult is what one partition's epoch produced.
type joinPartResult struct {
	out                arrow.Record // nil: no output rows
	updated, removed   int64
	updateNs, removeNs int64
}

// ensureParts creates the partitions' codecs for n partitions.
func (s *statefulJoin) ensureParts(n int) error {
	if len(s.parts) == n {
		return nil
	}
	s.parts = make([]*joinPart, n)
	for p := range s.parts {
		jp := &joinPart{}
		for i, side := range s.sides {
			c, err := newRowCodec(s.mem, side.schema, side.codec.cols)
			if err != nil {
				return err
			}
			jp.codecs[i] = c
		}
		s.parts[p] = jp
	}
	return nil
}

// splitSide splits a side's new rows by their key's partition (entry p
// nil when partition p has none). The parts are owned by the caller.
func (s *statefulJoin) splitSide(r *sideRows, n int) ([]*sideRows, error) {
	out := make([]*sideRows, n)
	if len(r.enc) == 0 {
		return out, nil
	}
	if n == 1 {
		r.rec.Retain()
		out[0] = &sideRows{rec: r.rec, enc: r.enc, keys: r.keys, keyNull: r.keyNull, hashes: r.hashes, excluded: r.excluded}
		return out, nil
	}
	idx := make([][]int32, n)
	for j, h := range r.hashes {
		p := s.state.scheme.partition(h, n)
		idx[p] = append(idx[p], int32(j))
	}
	for p, rows := range idx {
		if len(rows) == 0 {
			continue
		}
		rec, err := vector.TakeRecord(s.mem, r.rec, rows)
		if err != nil {
			for _, part := range out {
				if part != nil {
					part.release()
				}
			}
			return nil, err
		}
		part := &sideRows{rec: rec, enc: make([][]byte, len(rows)), keys: make([]string, len(rows)),
			keyNull: make([]bool, len(rows)), hashes: make([]uint64, len(rows)), excluded: make([]bool, len(rows))}
		for k, j := range rows {
			part.enc[k], part.keys[k], part.keyNull[k] = r.enc[j], r.keys[j], r.keyNull[j]
			part.hashes[k], part.excluded[k] = r.hashes[j], r.excluded[j]
		}
		out[p] = part
	}
	return out, nil
}

// partActive tells whether partition p has work this epoch: new rows on
// either side, or stored rows at or below a side's eviction threshold.
func (s *statefulJoin) partActive(ep Epoch, p int, split [2][]*sideRows) bool {
	for i, side := range s.sides {
		if split[i][p] != nil {
			return true
		}
		if thr, evict := s.evictThreshold(ep, side); evict {
			h := s.parts[p].caches[i].byTime
			if h.Len() > 0 && h[0].time <= thr {
				return true
			}
		}
	}
	return false
}

// joinPartition runs partition p's epoch over its new rows of each side
// (fresh[i] nil: none; owned by the caller).
func (s *statefulJoin) joinPartition(ctx context.Context, ep Epoch, p int, fresh [2]*sideRows) (joinPartResult, error) {
	var res joinPartResult
	jp := s.parts[p]
	start := time.Now()
	var rows [2]*sideRows
	defer func() {
		for _, r := range rows {
			if r != nil {
				r.release()
			}
		}
	}()
	for i := range fresh {
		if fresh[i] == nil {
			e := &sideRows{}
			if err := s.decodeSide(jp.codecs[i], e, nil); err != nil {
				return res, err
			}
			defer e.release()
			fresh[i] = e
		}
	}
	// Each side's rows: the stored rows the epoch needs, then the new ones.
	for i, side := range s.sides {
		thr, evict := s.evictThreshold(ep, side)
		r, err := s.withState(jp.codecs[i], fresh[i], jp.relevant(i, fresh[1-i], thr, evict))
		if err != nil {
			return res, err
		}
		rows[i] = r
	}
	// rows hold copies of the new rows: free these early (peak memory).
	for _, f := range fresh {
		f.release()
		f.rec = nil
	}
	L, R := rows[0], rows[1]
	// Candidate pairs: equal non-null keys, at least one row new.
	byKey := make(map[string][]int32, len(R.keys))
	for j := range R.keys {
		if !R.keyNull[j] && !R.excluded[j] {
			byKey[R.keys[j]] = append(byKey[R.keys[j]], int32(j))
		}
	}
	var li, ri []int32
	for i := range L.keys {
		if L.keyNull[i] || L.excluded[i] {
			continue
		}
		lNew := i >= L.nState
		for _, j := range byKey[L.keys[i]] {
			if lNew || int(j) >= R.nState {
				li, ri = append(li, int32(i)), append(ri, j)
			}
		}
	}
	li, ri, err := s.applyResidual(ctx, L.rec, R.rec, li, ri)
	if err != nil {
		return res, err
	}
	// A left row that matches the right state on arrival is, in a left
	// semi join, emitted and never stored (Spark processes the left input
	// before adding this batch's right rows to the right state).
	L.arrival = make([]bool, len(L.matched))
	for k := range li {
		L.matched[li[k]] = true
		R.matched[ri[k]] = true
		if int(li[k]) >= L.nState && int(ri[k]) < R.nState {
			L.arrival[li[k]] = true
		}
	}
	var outL, outR []int32
	if s.typ == plan.LeftSemiJoin {
		for i := range L.matched {
			if L.matched[i] && !L.wasMatch[i] {
				outL = append(outL, int32(i))
			}
		}
	} else {
		outL, outR = li, ri
	}
	res.updateNs = int64(time.Since(start))
	removeStart := time.Now()
	for i, side := range s.sides {
		nulls, upd, rem, err := s.store(ep, p, byte(i), side, rows[i])
		if err != nil {
			return res, err
		}
		res.updated += upd
		res.removed += rem
		for _, n := range nulls {
			if i == 0 {
				outL, outR = append(outL, n), append(outR, -1)
			} else {
				outL, outR = append(outL, -1), append(outR, n)
			}
		}
	}
	res.removeNs = int64(time.Since(removeStart))
	if len(outL) > 0 {
		if res.out, err = s.output(L.rec, R.rec, outL, outR); err != nil {
			return res, err
		}
	}
	return res, nil
}

// joinPartitions splits both sides' new rows by partition, runs the
// active partitions in parallel and returns their outputs in partition
// order, adding their metrics to the progress.
func (s *statefulJoin) joinPartitions(ctx context.Context, ep Epoch, fresh [2]*sideRows) ([]arrow.Record, error) {
	n := len(s.state.stores)
	var split [2][]*sideRows
	defer func() {
		for _, parts := range split {
			for _, r := range parts {
				if r != nil {
					r.release()
				}
			}
		}
	}()
	for i := range fresh {
		parts, err := s.splitSide(fresh[i], n)
		if err != nil {
			return nil, err
		}
		split[i] = parts
		// The parts hold the rows now: free the whole before the
		// partitions run, so the epoch's peak memory does not hold both.
		fresh[i].release()
		fresh[i].rec = nil
	}
	results := make([]joinPartResult, n)
	errs := runEachPartition(s.state.opID, n, func(p int) bool { return s.partActive(ep, p, split) }, func(p int) error {
		var err error
		results[p], err = s.joinPartition(ctx, ep, p, [2]*sideRows{split[0][p], split[1][p]})
		return err
	})
	var out []arrow.Record
	var firstErr error
	var updateNs, removeNs int64
	for p, r := range results {
		if errs[p] != nil && firstErr == nil {
			firstErr = errs[p]
		}
		if r.out != nil {
			out = append(out, r.out)
		}
		s.progress.NumRowsUpdated += r.updated
		s.progress.NumRowsRemoved += r.removed
		updateNs += r.updateNs
		removeNs += r.removeNs
	}
	// As Spark's, the times are summed over the partitions' tasks.
	s.progress.AllUpdatesTimeMs += time.Duration(updateNs).Milliseconds()
	s.progress.AllRemovalsTimeMs += time.Duration(removeNs).Milliseconds()
	if firstErr != nil {
		releaseRecords(out)
		return nil, firstErr
	}
	return out, nil
}

// rebuildCache reads both sides' state from the open stores into the
// partitions' caches, the partitions in parallel: on the first epoch of a
// run (start or restart) and after an epoch that did not commit.
func (s *statefulJoin) rebuildCache(ctx context.Context) error {
	n := len(s.state.stores)
	if err := s.ensureParts(n); err != nil {
		return err
	}
	errs := runEachPartition(s.state.opID, n, func(int) bool { return true }, func(p int) error {
		for i := range s.sides {
			c, err := s.loadCache(ctx, p, i)
			if err != nil {
				return err
			}
			s.parts[p].caches[i] = c
		}
		return nil
	})
	for _, err := range errs {
		if err != nil {
			return err
		}
	}
	return nil
}
