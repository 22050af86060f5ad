package stateful

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/apache/arrow/go/v17/arrow"
	"github.com/apache/arrow/go/v17/arrow/array"

	"github.com/arrowstream/arrowstream/plan"
	"github.com/arrowstream/arrowstream/vector"
)

// One partition's epoch of the stream-stream join over its live state
// (stateful_join_live.go): the new rows of each side probe the other
// side's key index and each other, the residual condition filters the
// candidate pairs batch by batch, the state rows at or below a side's
// eviction threshold are evicted (an outer side's unmatched ones emitted
// with nulls) and the new rows that stay become one batch per side.

// joinLivePart is one partition's live state.
type joinLivePart[K joinKey] struct {
	sides [2]*joinSideLive[K]
	// heads is newPairs' scratch: a probing row's chain head.
	heads []int32
	// rows chains a side's new rows by key for a probe (newPairs,
	// scanPending); made at the first.
	rows *joinRowHash[K]
	// keep is joinEpoch's scratch: the new rows of a side to store.
	keep []int32
	// pairs are newPairs' scratch: the new rows' pairs (probe, build),
	// read until the epoch's output is gathered (joinPartitions).
	pairs [2][]int32
	// matched and arrival are joinEpoch's scratch (bools clears them):
	// a side's new rows matched this epoch, and the left rows matched by
	// a stored right row (a semi join's).
	matched [2][]bool
	arrival []bool
}

// rowHash returns the partition's row hash, chaining keys.
func (lp *joinLivePart[K]) rowHash(keys []K, keyNull, excluded []bool) *joinRowHash[K] {
	if lp.rows == nil {
		lp.rows = newJoinRowHash[K]()
	}
	lp.rows.build(keys, keyNull, excluded)
	return lp.rows
}

func (lp *joinLivePart[K]) release() {
	for _, s := range lp.sides {
		if s != nil {
			s.release()
		}
	}
}

// joinPairs are candidate pairs between two sources of rows, a side's new
// rows (batch nil) or one of its stored batches; li and ri index the
// sources' records.
type joinPairs[K joinKey] struct {
	l, r   *joinBatch[K]
	li, ri []int32
}

// keysOf returns r's keys in the index's form.
func keysOf[K joinKey](r *sideRows) []K {
	var zero K
	if _, ok := any(zero).(uint64); ok {
		return any(r.words).([]K)
	}
	return any(r.keys).([]K)
}

// joinEpoch runs partition p's epoch over its new rows of each side
// (owned by the caller; never nil).
func joinEpoch[K joinKey](ctx context.Context, s *statefulJoin, ep Epoch, p int, lp *joinLivePart[K], fresh [2]*sideRows) (res joinPartResult, err error) {
	defer func() {
		if err != nil {
			releaseRecords(res.out)
			res.out = nil
			releaseOutPairs(res.pairs)
			res.pairs = nil
		}
	}()
	start := time.Now()
	keys := [2][]K{keysOf[K](fresh[0]), keysOf[K](fresh[1])}
	// The new rows' flags are the partition's scratch, cleared here:
	// nothing reads them after the epoch (a stored batch copies its
	// matched flags), and made fresh they were memory first touched in
	// every epoch.
	var newMatched [2][]bool
	for i := range fresh {
		newMatched[i] = bools(&lp.matched[i], fresh[i].count())
	}
	arrival := bools(&lp.arrival, fresh[0].count())
	semi := s.typ == plan.LeftSemiJoin

	// The epoch's growth is reserved as it happens (stateful_join_growth.go).
	meter := newGrowthMeter(&s.acct, lp.heap(), len(s.parts))
	if err := meter.note(lp.heap() + lp.pendingRefBytes()); err != nil {
		return res, err
	}
	segs, err := candidates(lp, fresh, keys)
	if err != nil {
		return res, s.sideErr(p, err)
	}
	if err := meter.note(lp.heap()); err != nil {
		return res, err
	}
	// hit[i]: how many of side i's stored batches the epoch's probes read
	// (a merge of the side is worth its copy only when probes read
	// several: stateful_join_merge.go).
	var hit [2]int
	for _, sg := range segs {
		if sg.l != nil {
			hit[0]++
		}
		if sg.r != nil {
			hit[1]++
		}
	}
	// flips are the stored left rows of a semi join matched for the first
	// time, by batch.
	var flips []*joinPairs[K]
	flipOf := map[*joinBatch[K]]*joinPairs[K]{}
	for _, sg := range segs {
		lrec, rrec := srcRecord(fresh[0], sg.l), srcRecord(fresh[1], sg.r)
		// The pairs are gathered here only for a residual condition whose
		// answer the partition needs (a side's matched flags); otherwise
		// the pairs are gathered with all partitions' at once, and the
		// residual filters them there (stateful_join_output.go).
		var joined arrow.Record
		var keep []bool
		if s.residual != nil && !s.residualDeferred() {
			// The pairs' rows in the records (the sources may be views).
			lrows, rrows := selRows(srcSel(fresh[0], sg.l), sg.li), selRows(srcSel(fresh[1], sg.r), sg.ri)
			var err error
			joined, err = s.pairs(lrec, rrec, lrows, rrows, s.joined)
			if err != nil {
				return res, err
			}
			keep, err = s.residualMask(ctx, joined)
			if err != nil {
				joined.Release()
				return res, err
			}
		}
		// kept lists the passing pairs only when a residual was evaluated
		// here (its rows are taken from joined); otherwise every pair
		// passes and only their count is needed.
		var kept []int32
		nkept := 0
		if keep != nil {
			kept = make([]int32, 0, countTrue(keep))
		}
		for k := range sg.li {
			if keep != nil && !keep[k] {
				continue
			}
			nkept++
			if keep != nil {
				kept = append(kept, int32(k))
			}
			l, r := sg.li[k], sg.ri[k]
			if sg.l == nil {
				newMatched[0][l] = true
				if sg.r != nil {
					arrival[l] = true
				}
			} else if b := sg.l; b.matched != nil && !b.matched[l] {
				b.matched[l], b.dirty = true, true
				lp.sides[0].mark(b)
				if semi {
					f := flipOf[b]
					if f == nil {
						f = &joinPairs[K]{l: b}
						flipOf[b] = f
						flips = append(flips, f)
					}
					f.li = append(f.li, l)
				}
			}
			if sg.r == nil {
				newMatched[1][r] = true
			} else if b := sg.r; b.matched != nil && !b.matched[r] {
				b.matched[r], b.dirty = true, true
				lp.sides[1].mark(b)
			}
		}
		if semi || nkept == 0 {
			if joined != nil {
				joined.Release()
			}
			continue
		}
		if joined == nil {
			// The pairs' rows in the records (the sources may be views),
			// mapped in place: the segment's lists are the epoch's own
			// and read no more (a copy of each was a tenth of q4's
			// Go-heap bytes, session 22).
			selRowsInPlace(srcSel(fresh[0], sg.l), sg.li)
			selRowsInPlace(srcSel(fresh[1], sg.r), sg.ri)
			lrec.Retain()
			rrec.Retain()
			res.pairs = append(res.pairs, joinOutPairs{l: lrec, r: rrec, li: sg.li, ri: sg.ri})
			continue
		}
		out := joined
		var err error
		if keep != nil && len(kept) < len(sg.li) {
			out, err = vector.TakeRecord(s.mem, joined, kept)
			joined.Release()
			if err != nil {
				return res, err
			}
		}
		res.out = append(res.out, array.NewRecord(s.out, out.Columns(), out.NumRows()))
		out.Release()
	}
	if semi {
		var rows []int32
		for i, m := range newMatched[0] {
			if m {
				rows = append(rows, int32(i))
			}
		}
		if err := s.emitSide(&res, 0, fresh[0].rec, selRows(fresh[0].sel, rows)); err != nil {
			return res, err
		}
		for _, f := range flips {
			if err := s.emitSide(&res, 0, f.l.rec, selRows(f.l.sel, f.li)); err != nil {
				return res, err
			}
		}
	}
	res.updateNs = int64(time.Since(start))
	removeStart := time.Now()
	for i, side := range s.sides {
		live := lp.sides[i]
		thr, evict := s.evictThreshold(ep, side)
		// Eviction of the stored rows (after matching: rows at the
		// threshold still joined this epoch's new rows).
		for evict && live.due.due(thr) {
			b := live.due.pop().v
			if b.rec == nil {
				continue // dropped meanwhile
			}
			from := live.evict(b, thr)
			res.removed += int64(b.cursor - from)
			if side.outer {
				var rows []int32
				for r := from; r < b.cursor; r++ {
					if !b.matched[r-b.base] {
						rows = append(rows, r-b.base)
					}
				}
				if err := s.emitNulls(&res, i, b.rec, selRows(b.sel, rows)); err != nil {
					return res, err
				}
			}
			if b.cursor >= b.end {
				if err := s.dropBatch(p, byte(i), b.id, b.storedRec, b.storedMeta); err != nil {
					return res, err
				}
				live.drop(b)
				continue
			}
			live.schedule(b)
			if b.shouldCompact() {
				if err := live.compact(s.keep, b); err != nil {
					return res, err
				}
			} else if b.in != nil && b.in.sparse() {
				// Its input record is mostly dead: the batch's rows
				// copied out, the store untouched (stateful_join_view.go).
				if err := live.copyOut(s.keep, b); err != nil {
					return res, err
				}
			}
		}
		// Merged before the new batch is added: a new batch is pending
		// (not indexed) and a tail merges only when all its batches are
		// indexed or all pending (stateful_join_merge.go).
		if s.mergeable(i) && (hit[i] >= mergeMinHits || live.crowded()) {
			if _, err := live.mergeTail(s.keep); err != nil {
				return res, err
			}
			if err := meter.note(lp.heap()); err != nil {
				return res, err
			}
		}
		// The new rows: stored, dropped, or emitted with nulls.
		var tcol joinTimes
		if side.evict != evictNever {
			tcol = timesOf(fresh[i].rec.Column(side.evictCol))
		}
		// keep is sized for every new row (most are stored): grown
		// row by row it was reallocated about log2(rows) times, a tenth
		// of q7's join CPU. It is the partition's scratch: the batch
		// built copies what it keeps of it.
		keep := int32s(&lp.keep, len(newMatched[i]))[:0]
		var nulls []int32
		for j := range newMatched[i] {
			switch {
			case fresh[i].excluded[j]:
				if side.outer {
					nulls = append(nulls, int32(j))
				}
				continue
			case semi && i == 0 && arrival[j]:
				continue
			case fresh[i].unstored != nil && fresh[i].unstored[j]:
				continue
			}
			if evict {
				if t, ok := tcol.at(selRow(fresh[i].sel, j)); ok && t <= thr {
					if side.outer && !newMatched[i][j] {
						nulls = append(nulls, int32(j))
					}
					continue
				}
			}
			keep = append(keep, int32(j))
		}
		if err := s.emitNulls(&res, i, fresh[i].rec, selRows(fresh[i].sel, nulls)); err != nil {
			return res, err
		}
		if len(keep) > 0 {
			var matched []bool
			if s.tracksMatches(i) {
				matched = newMatched[i]
			}
			if err := meter.note(lp.heap() + newBatchHeap(keys[i], keep, side.evict != evictNever, s.tracksMatches(i))); err != nil {
				return res, err
			}
			b, err := buildJoinBatch(s, i, uint64(ep.ID)<<8, fresh[i], keep, keys[i], matched)
			if err != nil {
				return res, err
			}
			live.addPending(b)
			b.rewrite = true
			live.mark(b)
			res.updated += int64(len(keep))
		}
		if err := s.writeChanges(p, byte(i), live); err != nil {
			return res, err
		}
	}
	res.removeNs = int64(time.Since(removeStart))
	return res, nil
}

// candidates returns the candidate pairs of the epoch: equal non-null
// keys, at least one row new, grouped by the stored batch they read. Its
// error (a side's key index out of row numbers) is a joinSideError.
func candidates[K joinKey](lp *joinLivePart[K], fresh [2]*sideRows, keys [2][]K) ([]*joinPairs[K], error) {
	var segs []*joinPairs[K]
	// settle[i]: side i's pending rows were scanned, to be indexed (when
	// due) after the probes of the index, which must not find the rows
	// the scan found.
	var settle [2]bool
	// New rows of side i against the stored rows of the other side: the
	// indexed ones through the key index, the pending ones by a scan
	// (stateful_join_scan.go).
	for i := range fresh {
		other := lp.sides[1-i]
		if len(other.pending) > 0 && len(keys[i]) > 0 {
			if int64(len(keys[i]))*joinScanRatio >= other.pendingLive() {
				if err := other.indexPending(); err != nil {
					return nil, joinSideError{side: 1 - i, err: err}
				}
			} else {
				probe := rangeOf(keys[i], fresh[i].keyNull, fresh[i].excluded)
				segs = scanPending(other, i, lp.rowHash(keys[i], fresh[i].keyNull, fresh[i].excluded), probe, segs)
				settle[1-i] = true
			}
		}
		if other.index.len() == 0 {
			continue
		}
		// A batch's segment of this probe is found through its seg field
		// (set here, cleared below), not a map lookup per pair.
		// The new rows' keys are looked up as one column.
		first := len(segs)
		x := &other.index
		for j, slot := range x.findAll(keys[i], fresh[i].keyNull) {
			if slot < 0 || fresh[i].excluded[j] {
				continue
			}
			// The key's chain of rows (stateful_join_index.go).
			for g := x.slab.at(slot).head; g >= 0; g = x.links.at(g) {
				b, row := x.locate(g)
				if b == nil || row < b.cursor {
					continue
				}
				sg := b.seg
				if sg == nil {
					sg = &joinPairs[K]{}
					if i == 0 {
						sg.r = b
					} else {
						sg.l = b
					}
					b.seg = sg
					segs = append(segs, sg)
				}
				row -= b.base
				if i == 0 {
					sg.li, sg.ri = append(sg.li, int32(j)), append(sg.ri, row)
				} else {
					sg.li, sg.ri = append(sg.li, row), append(sg.ri, int32(j))
				}
			}
		}
		for _, sg := range segs[first:] {
			if sg.l != nil {
				sg.l.seg = nil
			} else {
				sg.r.seg = nil
			}
		}
	}
	// New rows against new rows: a chained hash of the side with fewer
	// (Nexmark q4: an epoch's few auctions, not its many bids), probed by
	// the other's.
	if len(keys[0]) > 0 && len(keys[1]) > 0 {
		build := 1
		if len(keys[0]) < len(keys[1]) {
			build = 0
		}
		if nn := newPairs(lp, keys, fresh, build); nn != nil {
			segs = append(segs, nn)
		}
	}
	for i, due := range settle {
		if due {
			if err := lp.sides[i].settlePending(); err != nil {
				return nil, joinSideError{side: i, err: err}
			}
		}
	}
	return segs, nil
}

// joinSideError is an error of one side's live state (0 left, 1 right).
type joinSideError struct {
	side int
	err  error
}

func (e joinSideError) Error() string { return e.err.Error() }
func (e joinSideError) Unwrap() error { return e.err }

// sideErr names the join's operator, partition p and, for a
// joinSideError, the side in err.
func (s *statefulJoin) sideErr(p int, err error) error {
	var se joinSideError
	if errors.As(err, &se) {
		return fmt.Errorf("arrowstream: stream-stream join of operator %d partition %d, %s side: %w", s.state.opID, p, s.sides[se.side].name, se.err)
	}
	return fmt.Errorf("arrowstream: stream-stream join of operator %d partition %d: %w", s.state.opID, p, err)
}

// newPairs joins the new rows of the two sides by key through a chained
// hash of side build's: nil for no pair. The map is probed once per row
// of the other side, each hit's chain head kept in *heads (scratch kept
// across epochs), so that the pairs are counted before they are written:
// li and ri are sized once, slices of the partition's scratch (lp.pairs,
// valid until its next epoch). Grown by append they were copied about
// log2(pairs) times, the largest of the join's allocations in Nexmark
// q4, whose pairs are nearly all of this kind (bids on the epoch's own
// auctions); fresh each epoch, their pages were faulted in again.
func newPairs[K joinKey](lp *joinLivePart[K], keys [2][]K, fresh [2]*sideRows, build int) *joinPairs[K] {
	probe := 1 - build
	rh := lp.rowHash(keys[build], fresh[build].keyNull, fresh[build].excluded)
	next := rh.next
	hs := resizeInt32(lp.heads, len(keys[probe]))
	rh.firstAll(keys[probe], fresh[probe].keyNull, hs)
	n := 0
	for i, h := range hs {
		if h >= 0 && fresh[probe].excluded[i] {
			hs[i], h = -1, -1
		}
		for j := h; j >= 0; j = next[j] {
			n++
		}
	}
	lp.heads = hs
	if cap(hs) > maxKeptHeads {
		lp.heads = nil // an outsized epoch's scratch is not kept
	}
	if n == 0 {
		return nil
	}
	// The pairs' lists are the partition's scratch (lp.pairs): nothing
	// reads them after the epoch's output is gathered.
	pi, bi := int32s(&lp.pairs[0], n)[:0:n], int32s(&lp.pairs[1], n)[:0:n]
	for i, h := range hs {
		for j := h; j >= 0; j = next[j] {
			pi, bi = append(pi, int32(i)), append(bi, j)
		}
	}
	if build == 1 {
		return &joinPairs[K]{li: pi, ri: bi}
	}
	return &joinPairs[K]{li: bi, ri: pi}
}

// maxKeptHeads bounds the probe scratch a partition keeps between epochs
// (int32s; 1 MiB).
const maxKeptHeads = 1 << 18

// srcSel is the selection of a pairs source's rows in its record (nil:
// the identity).
func srcSel[K joinKey](fresh *sideRows, b *joinBatch[K]) []int32 {
	if b == nil {
		return fresh.sel
	}
	return b.sel
}

// srcRecord is the record of a pairs source.
func srcRecord[K joinKey](fresh *sideRows, b *joinBatch[K]) arrow.Record {
	if b == nil {
		return fresh.rec
	}
	return b.rec
}

// residualMask evaluates the residual condition over joined pairs: nil
// when every pair passes.
func (s *statefulJoin) residualMask(ctx context.Context, joined arrow.Record) ([]bool, error) {
	if s.residual == nil || joined.NumRows() == 0 {
		return nil, nil
	}
	return s.conditionMask(ctx, s.residual, s.joined, joined)
}

// conditionMask evaluates the join condition expr, bound to schema, over
// rec: true where a row passes (a NULL result does not).
func (s *statefulJoin) conditionMask(ctx context.Context, expr vector.Expr, schema *arrow.Schema, rec arrow.Record) ([]bool, error) {
	ev, err := expr.Bind(schema, s.mem)
	if err != nil {
		return nil, err
	}
	res, err := ev.Eval(ctx, rec)
	if err != nil {
		return nil, err
	}
	defer res.Release()
	b, ok := res.(*array.Boolean)
	if !ok {
		return nil, fmt.Errorf("arrowstream: join condition %s is %s, not boolean", s.residual, vector.TypeName(res.DataType()))
	}
	keep := make([]bool, b.Len())
	for k := range keep {
		keep[k] = b.IsValid(k) && b.Value(k)
	}
	return keep, nil
}

// emitSide adds rows of side i's record (the left side of a semi join)
// to the output.
func (s *statefulJoin) emitSide(res *joinPartResult, i int, rec arrow.Record, rows []int32) error {
	if len(rows) == 0 {
		return nil
	}
	out, err := s.pairs(rec, nil, rows, nil, s.out)
	if err != nil {
		return err
	}
	res.out = append(res.out, out)
	return nil
}

// emitNulls adds rows of side i's record to the output with nulls for
// the other side.
func (s *statefulJoin) emitNulls(res *joinPartResult, i int, rec arrow.Record, rows []int32) error {
	if len(rows) == 0 {
		return nil
	}
	t, err := vector.TakeRecord(s.mem, rec, rows)
	if err != nil {
		return err
	}
	defer t.Release()
	other := s.sides[1-i].codec.schema
	nulls := make([]arrow.Array, other.NumFields())
	for c, f := range other.Fields() {
		nulls[c] = array.MakeArrayOfNull(s.mem, f.Type, len(rows))
	}
	defer func() {
		for _, a := range nulls {
			a.Release()
		}
	}()
	var cols []arrow.Array
	if i == 0 {
		cols = append(append(cols, t.Columns()...), nulls...)
	} else {
		cols = append(append(cols, nulls...), t.Columns()...)
	}
	res.out = append(res.out, array.NewRecord(s.out, cols, int64(len(rows))))
	return nil
}

// tracksMatches: side i's rows carry a matched flag (an outer side, and
// the left side of a semi join, whose rows are emitted once).
func (s *statefulJoin) tracksMatches(i int) bool {
	return s.sides[i].outer || (s.typ == plan.LeftSemiJoin && i == 0)
}

// buildJoinBatch makes a batch of rows rows of side i's new rows r
// (borrowed), sorted by eviction time; keys and matched (nil: untracked)
// are by row of r. When r is a view of an input record (r.in) the batch
// is a view of it too (stateful_join_view.go); otherwise its rows are
// r's record itself when they are all of it in order, else a copy.
func buildJoinBatch[K joinKey](s *statefulJoin, i int, id uint64, r *sideRows, rows []int32, keys []K, matched []bool) (*joinBatch[K], error) {
	side := s.sides[i]
	rec, keyNull := r.rec, r.keyNull
	var times []int64
	if side.evict != evictNever {
		tcol := timesOf(rec.Column(side.evictCol))
		all := make([]int64, len(rows))
		for k, j := range rows {
			t, ok := tcol.at(selRow(r.sel, int(j)))
			if !ok {
				t = noEvictTime
			}
			all[k] = t
		}
		if !slices.IsSorted(all) {
			// Sorted by (time, position): the stable order, by a typed
			// sort of the pairs (sort.SliceStable's reflection and
			// closures were a quarter of this function in Nexmark q4,
			// whose auctions come in no order of expires).
			perm := make([]timedRow, len(rows))
			for k, t := range all {
				perm[k] = timedRow{t: t, k: int32(k)}
			}
			slices.SortFunc(perm, func(x, y timedRow) int {
				if c := cmp.Compare(x.t, y.t); c != 0 {
					return c
				}
				return cmp.Compare(x.k, y.k)
			})
			sorted := make([]int32, len(rows))
			for k, p := range perm {
				sorted[k], all[k] = rows[p.k], p.t
			}
			rows = sorted
		}
		times = all
	}
	n := len(rows)
	b := &joinBatch[K]{id: id, end: int32(n), times: times}
	// A key that is a column of the rows is read from the kept record
	// (stateful_join_keycol.go), not copied.
	if deriveKeys[K](side, rec) {
		b.derived, b.keyCol = true, side.keyCol
	} else {
		b.keys, b.keyNull = make([]K, n), make([]bool, n)
		for k, j := range rows {
			b.keys[k], b.keyNull[k] = keys[j], keyNull[j]
		}
	}
	// The key range of the rows (stateful_join_zone.go) from the epoch's
	// keys, read in order here (addPending would read them again, through
	// the selection, from the record).
	identity := n == r.count() && r.sel == nil
	for k, j := range rows {
		identity = identity && int(j) == k
		if !keyNull[j] {
			b.zone.widen(keys[j])
		}
	}
	b.zone.lo, b.zone.hi = cloneKey(b.zone.lo), cloneKey(b.zone.hi)
	if s.tracksMatches(i) {
		b.matched = make([]bool, n)
		if matched != nil {
			for k, j := range rows {
				b.matched[k] = matched[j]
			}
		}
	}
	switch {
	case r.in != nil:
		// A view: the record kept (its null counts settled by the
		// split), the rows selected.
		rec.Retain()
		b.rec, b.in = rec, r.in
		if !identity {
			b.sel = selRows(r.sel, rows)
			if r.sel == nil {
				b.sel = append([]int32(nil), rows...)
			}
		}
		r.in.hold(int64(n))
		return b, nil
	case identity:
		rec.Retain()
		settleNullCounts(rec)
		b.rec = rec
		return b, nil
	}
	t, err := vector.TakeRecord(s.keep, rec, selRows(r.sel, rows))
	if err != nil {
		return nil, err
	}
	settleNullCounts(t)
	b.rec = t
	return b, nil
}

// timedRow is a new row's eviction time and position, sorted by both.
type timedRow struct {
	t int64
	k int32
}

// settleNullCounts settles the null counts of a batch the join keeps
// before the batch joins the state: the background snapshot (its IPC
// encoder asks for null counts) and a later epoch (Take of evicted rows)
// read it at once (a data race the race detector found in
// TestStreamStreamJoinLiveProperty). See vector.SettleNullCounts.
func settleNullCounts(rec arrow.Record) { vector.SettleNullCounts(rec) }
