package vector

import (
	"context"

	"github.com/apache/arrow/go/v17/arrow"
)

// Consecutive masked sums folded in one pass. q17's three rank counts are
// three masked sums in a row; folded one by one, each read the batch's
// group ids again and chose its constant by a branch on the condition's
// bit, which a random price mispredicts about half the time. A run of
// such calls is folded here together: the conditions are evaluated as
// before (one bitmap each), then one pass over the rows reads each row's
// group once and adds, for every call of the run, its THEN or ELSE
// constant picked without a branch. Only a run of calls with nothing in
// between is folded so, so that a failing condition is the same error
// the call-by-call fold gives. A sum that would overflow undoes the run's
// adds of the batch (integer adds that did not overflow are exact to
// undo) and folds the run call by call, which gives the error of the
// call-by-call fold: the first call of the run that overflows, at its
// first overflowing row.

// maskedLane is one call of a run being folded.
type maskedLane struct {
	s      *sumAcc
	m      *maskedSum
	cond   arrow.Array // the condition over the batch (owned)
	cv, cx wordSource  // its validity and value bits
	sel    int64       // then ^ els: y = els ^ (sel & -bit)
	word   uint64      // the current 64 rows' true bits
}

// maskedRunEnd returns the end (exclusive) of the run of masked sums
// starting at call i that foldMaskedRun folds together, or i when fewer
// than two do.
func (r *LiveRaw) maskedRunEnd(i int) int {
	j := i
	for j < len(r.masked) && r.masked[j] != nil {
		s, ok := r.l.b.aggs[j].acc.(*sumAcc)
		if !ok || s.kind != sumInt || s.avg {
			break
		}
		j++
	}
	if j-i < 2 {
		return i
	}
	return j
}

// foldMaskedRun folds the calls [lo, hi) of the batch, each a masked
// integer sum (maskedRunEnd), whose accumulators hold groups groups.
func (r *LiveRaw) foldMaskedRun(ctx context.Context, rec arrow.Record, gids []int32, groups, lo, hi int) error {
	l := r.l
	n := len(gids)
	lanes := r.lanes[:0]
	defer func() {
		for k := range lanes {
			lanes[k].cond.Release()
		}
		clear(lanes)
		r.lanes = lanes[:0]
	}()
	for i := lo; i < hi; i++ {
		acc := l.b.aggs[i].acc
		if err := resizeContext(ctx, acc, groups); err != nil {
			return err
		}
		m := r.masked[i]
		cond, err := evalWhere(ctx, m.cond, rec, r.allRows(n), n, l.mem)
		if err != nil {
			return err
		}
		lanes = append(lanes, maskedLane{s: acc.(*sumAcc), m: m, cond: cond,
			cv: validityWords(cond), cx: boolValueWords(cond), sel: m.then ^ m.els})
	}
	row, lane := foldLanes(lanes, gids)
	if row < 0 {
		return nil
	}
	unfoldLanes(lanes, gids, row, lane)
	for k := range lanes {
		if _, err := lanes[k].m.update(ctx, lanes[k].s, rec, gids, r.allRows(n), l.mem); err != nil {
			return err
		}
	}
	return nil // (the overflow is found again above)
}

// foldLanes adds every row's constant of each lane to its group's sum
// (and counts the row where the counts are not implied). It stops before
// the first add that overflows and returns its row and lane, or -1.
func foldLanes(lanes []maskedLane, gids []int32) (row, lane int) {
	n := len(gids)
	for base := 0; base < n; base += 64 {
		w := base >> 6
		for k := range lanes {
			ln := &lanes[k]
			ln.word = ln.cv.word(w) & ln.cx.word(w)
		}
		for i := base; i < min(base+64, n); i++ {
			g := gids[i]
			sh := uint(i - base)
			for k := range lanes {
				ln := &lanes[k]
				y := ln.m.els ^ (ln.sel & -int64(ln.word>>sh&1))
				sums := ln.s.ints
				x := sums[g]
				r := x + y
				if (x^r)&(y^r) < 0 {
					return i, k
				}
				sums[g] = r
				if !ln.s.byRows {
					ln.s.counts[g]++
				}
			}
		}
	}
	return -1, 0
}

// unfoldLanes undoes foldLanes's adds before (row, lane): every lane's
// adds of the rows before row, and those of the lanes before lane at row.
func unfoldLanes(lanes []maskedLane, gids []int32, row, lane int) {
	for k := range lanes {
		ln := &lanes[k]
		end := row
		if k < lane {
			end = row + 1
		}
		for i := 0; i < end; i++ {
			g := gids[i]
			y := ln.m.els
			if ln.cv.bit(i) && ln.cx.bit(i) {
				y = ln.m.then
			}
			ln.s.ints[g] -= y
			if !ln.s.byRows {
				ln.s.counts[g]--
			}
		}
	}
}
