package stateful

import (
	"math"

	"github.com/apache/arrow/go/v17/arrow"
	"github.com/apache/arrow/go/v17/arrow/array"

	"github.com/arrowstream/arrowstream/plan"
)

// joinPrune keeps out of an inner join's state the rows of its rows side
// that can never match (plan.JoinMaxBound: the other side is the
// per-window maximum of the same stream). It keeps, per open window end,
// the largest value of the rows side seen in that window; a new row is
// not stored when, in every window it can still join, that running
// maximum exceeds its value: the window's max, emitted later, is at least
// the running maximum (the aggregation reads a superset of these rows and
// drops none of them as late while the window is open) and so is not the
// row's value. The row still probes the epoch's and the stored rows of
// the other side as any other. A window whose end is at or below the
// epoch's watermark is closed: the aggregation emitted its row in this
// epoch or before (Append mode), so it is no reason to keep a row.
//
// The maxima are an optimisation's memory, not state: an epoch's are
// staged and kept only once it commits; after a restart they are read
// again from the stored rows (seed), a subset of the rows seen, so at
// most the maxima before the restart: storage, never an answer.
type joinPrune struct {
	b plan.JoinMaxBound
	// max: window end (µs) → largest value seen in committed epochs;
	// staged: the running epoch's raises.
	max, staged map[int64]int64
	// wmUs is the running epoch's watermark (µs): windows ending at or
	// below it are dropped from max when the epoch commits.
	wmUs int64
	// skipped counts the rows the epoch did not store.
	skipped int64
	vals    []int64 // scratch
	// unstored is mark's flags, kept between epochs: the epoch's rows
	// hold them until they are released (sideRows.unstored), and a fresh
	// slice an epoch was fresh pages to fault in.
	unstored []bool
	// ends caches seen by window end for raise and mark (below).
	ends endCache
	// lookups counts the calls of seen (a test checks the cache); runs
	// the runs of rows raiseRuns and markRuns took (a test checks that
	// rows in time order take few).
	lookups, runs int64
}

// endCache is a direct-mapped cache of the running maxima by window end.
// The rows of an epoch come mostly in event-time order, so consecutive
// rows fall in the same few windows: without it each row made about five
// lookups and a store in the two maps (about a tenth of a Nexmark q7
// epoch, 10K bids against one or two open windows).
type endCache struct {
	slots [endCacheSlots]endSlot
	// last is the slot found last: most rows ask for it again, and finding
	// a slot costs a 64-bit division.
	last *endSlot
}

const endCacheSlots = 64

type endSlot struct {
	end, max int64
	// used: the slot holds end; ok: end has a maximum; dirty: raised
	// since it was loaded, to be stored.
	used, ok, dirty bool
}

// slot returns the slot of end, loaded from p (seen) on a miss, the
// slot's previous end stored in into first when it was raised.
func (p *joinPrune) slot(end int64, into map[int64]int64) *endSlot {
	if l := p.ends.last; l != nil && l.used && l.end == end {
		return l
	}
	e := &p.ends.slots[uint64(end/p.b.Slide)%endCacheSlots]
	p.ends.last = e
	if e.used && e.end == end {
		return e
	}
	if e.dirty {
		into[e.end] = e.max
	}
	m, ok := p.seen(end)
	*e = endSlot{end: end, max: m, used: true, ok: ok}
	return e
}

// flushEnds stores the raised slots in into; the slots stay loaded (they
// equal seen until the maps change).
func (p *joinPrune) flushEnds(into map[int64]int64) {
	for k := range p.ends.slots {
		e := &p.ends.slots[k]
		if e.dirty {
			into[e.end] = e.max
			e.dirty = false
		}
	}
}

func newJoinPrune(b plan.JoinMaxBound) *joinPrune {
	return &joinPrune{b: b, max: map[int64]int64{}, staged: map[int64]int64{}, wmUs: minTime}
}

// seen is the running maximum of the window ending at end.
func (p *joinPrune) seen(end int64) (int64, bool) {
	p.lookups++
	m, ok := p.max[end]
	if s, sok := p.staged[end]; sok && (!ok || s > m) {
		return s, true
	}
	return m, ok
}

// mark raises the running maxima with the epoch's new rows r of the rows
// side and marks in r.unstored those it need not store. ep is the epoch.
func (p *joinPrune) mark(r *sideRows, ep Epoch) {
	p.skipped = 0
	// The watermark first: an epoch without rows closes windows too.
	p.wmUs = minTime
	if ep.HasWatermark {
		p.wmUs = ep.WatermarkMs * 1000
	}
	n := int(r.rec.NumRows())
	if n == 0 {
		return
	}
	vals, valid := p.raise(r.rec, 0, n, p.staged)
	rt := timesOf(r.rec.Column(p.b.RangeCol))
	unstored := bools(&p.unstored, n)
	if valid == nil && rt.valid == nil {
		p.markRuns(rt.ts, vals, unstored)
		r.unstored = unstored
		return
	}
	width, slide, start := p.b.Width, p.b.Slide, p.b.Start
	align := floorMod(start+width, slide) // every window end ≡ align (mod slide)
	var first firstEnd
	for j := 0; j < n; j++ {
		t, ok := rt.at(j)
		if !ok || (valid != nil && !valid[j]) {
			continue // the join's own rules decide (no match ever)
		}
		x := vals[j]
		lo := t + p.b.Lo
		keep := false
		for e := first.at(lo, align, slide); e <= t+p.b.Hi; e += slide {
			if e <= p.wmUs {
				continue // closed: its max row was emitted already
			}
			if c := p.slot(e, nil); !c.ok || c.max <= x {
				keep = true
				break
			}
		}
		if !keep {
			unstored[j] = true
			p.skipped++
		}
	}
	r.unstored = unstored
}

// raise raises the running maxima in into with rows [lo, hi) of rec (the
// rows side's codec schema) and returns the values read and their
// validity (nil: all valid).
func (p *joinPrune) raise(rec arrow.Record, lo, hi int, into map[int64]int64) ([]int64, []bool) {
	col := rec.Column(p.b.ValueCol)
	vals, valid := intColumn(col, p.vals)
	if _, inPlace := col.(*array.Int64); !inPlace {
		p.vals = vals // kept for the next batch; an in-place view is not
	}
	p.ends = endCache{} // the maps may have changed since the last call
	wt := timesOf(rec.Column(p.b.WindowTimeCol))
	if valid == nil && wt.valid == nil {
		p.raiseRuns(wt.ts, vals, lo, hi, into)
		p.flushEnds(into)
		return vals, valid
	}
	width, slide, start := p.b.Width, p.b.Slide, p.b.Start
	// The largest window start ≤ t is the smallest value ≥ t-slide+1
	// that is ≡ start (mod slide): last.at(t-slide+1, align, slide).
	var last firstEnd
	align := floorMod(start, slide)
	for j := lo; j < hi; j++ {
		t, ok := wt.at(j)
		if !ok || (valid != nil && !valid[j]) {
			continue
		}
		x := vals[j]
		// The windows containing t: starts s = start + k·slide with
		// s ≤ t < s + width.
		for s := last.at(t-slide+1, align, slide); s > t-width; s -= slide {
			if c := p.slot(s+width, into); !c.ok || x > c.max {
				c.max, c.ok, c.dirty = x, true, true
			}
		}
	}
	p.flushEnds(into)
	return vals, valid
}

// raiseRuns is raise over rows without nulls, by runs: consecutive rows
// whose times lie in the same windows (rows mostly in time order: an
// epoch of Nexmark q7's bids is one or two runs) raise those windows once
// with the run's largest value. The run's bounds are where the set of
// windows containing t changes: the latest start ≤ t (sLast) and the
// earliest start > t-width (sFirst) stay the same for t in
// [max(sLast, sFirst-slide+width), min(sLast+slide, sFirst+width)).
// The maxima come out as raise's per-row loop leaves them (a maximum does
// not depend on the order it is taken in).
func (p *joinPrune) raiseRuns(ts []arrow.Timestamp, vals []int64, lo, hi int, into map[int64]int64) {
	width, slide := p.b.Width, p.b.Slide
	align := floorMod(p.b.Start, slide)
	var last firstEnd
	for j := lo; j < hi; {
		t := int64(ts[j])
		sLast := last.at(t-slide+1, align, slide)
		sFirst := sLast
		for sFirst-slide > t-width {
			sFirst -= slide
		}
		loT := max(sLast, sFirst-slide+width)
		hiT := min(satAdd(sLast, slide), satAdd(sFirst, width))
		x := vals[j]
		k := j + 1
		for ; k < hi; k++ {
			u := int64(ts[k])
			if u < loT || u >= hiT {
				break
			}
			x = max(x, vals[k])
		}
		p.runs++
		for s := sLast; s >= sFirst; s -= slide {
			if c := p.slot(s+width, into); !c.ok || x > c.max {
				c.max, c.ok, c.dirty = x, true, true
			}
		}
		j = k
	}
}

// markRuns is mark's loop over rows without nulls, by runs: consecutive
// rows whose join ranges [t+Lo, t+Hi] hold the same window ends share
// the decision's threshold, the smallest running maximum of those
// windows still open (a window without one keeps every row): a row is
// stored when its value is at least the threshold, and never when every
// window it can join is closed. The ends are e0 (the first ≥ t+Lo) to
// eLast (the last ≤ t+Hi), the same for t in
// [max(e0-slide-Lo+1, eLast-Hi), min(e0-Lo+1, eLast+slide-Hi)); with no
// end in the range, the upper bound is e0-Hi.
func (p *joinPrune) markRuns(ts []arrow.Timestamp, vals []int64, unstored []bool) {
	width, slide, start := p.b.Width, p.b.Slide, p.b.Start
	align := floorMod(start+width, slide) // every window end ≡ align (mod slide)
	var first firstEnd
	n := len(vals)
	for j := 0; j < n; {
		t := int64(ts[j])
		e0 := first.at(t+p.b.Lo, align, slide)
		loT, hiT := e0-slide-p.b.Lo+1, min(e0-p.b.Lo+1, e0-p.b.Hi)
		open, thr := false, int64(0)
		if e0 <= t+p.b.Hi {
			eLast := e0
			for eLast+slide <= t+p.b.Hi {
				eLast += slide
			}
			loT = max(loT, eLast-p.b.Hi)
			hiT = min(e0-p.b.Lo+1, satAdd(eLast, slide)-p.b.Hi)
			for e := e0; e <= eLast; e += slide {
				if e <= p.wmUs {
					continue // closed: its max row was emitted already
				}
				c := p.slot(e, nil)
				m := c.max
				if !c.ok {
					m = minTime // no maximum yet: every row is kept
				}
				if !open || m < thr {
					thr = m
				}
				open = true
			}
		}
		if t < loT || t >= hiT { // bounds past the int64 range: the row alone
			if !open || vals[j] < thr {
				unstored[j] = true
				p.skipped++
			}
			j++
			continue
		}
		p.runs++
		k := j
		if !open {
			for ; k < n; k++ {
				if u := int64(ts[k]); u < loT || u >= hiT {
					break
				}
				unstored[k] = true
			}
			p.skipped += int64(k - j)
		} else {
			skipped := int64(0)
			for ; k < n; k++ {
				if u := int64(ts[k]); u < loT || u >= hiT {
					break
				}
				if vals[k] < thr {
					unstored[k] = true
					skipped++
				}
			}
			p.skipped += skipped
		}
		j = k
	}
}

// satAdd is a+b for b ≥ 0, at most the largest int64.
func satAdd(a, b int64) int64 {
	if a > math.MaxInt64-b {
		return math.MaxInt64
	}
	return a + b
}

// seed raises the kept maxima with the rows the live state holds of the
// rows side (after it was rebuilt from the store).
func (s *statefulJoin) seedPrune() {
	p := s.prune
	for _, jp := range s.parts {
		switch {
		case jp.words != nil:
			for _, b := range jp.words.sides[p.b.Side].batches {
				p.raise(b.rec, int(b.cursor), int(b.end), p.max)
			}
		case jp.strs != nil:
			for _, b := range jp.strs.sides[p.b.Side].batches {
				p.raise(b.rec, int(b.cursor), int(b.end), p.max)
			}
		}
	}
}

// commit keeps the epoch's maxima and forgets the closed windows.
func (p *joinPrune) commit() {
	for e, m := range p.staged {
		if old, ok := p.max[e]; !ok || m > old {
			p.max[e] = m
		}
	}
	clear(p.staged)
	for e := range p.max {
		if e <= p.wmUs {
			delete(p.max, e)
		}
	}
}

// abort forgets the epoch's maxima.
func (p *joinPrune) abort() { clear(p.staged) }

const minTime = -1 << 63

// firstEnd is the smallest e ≥ lo with e ≡ align (mod slide), for rows
// that come mostly in time order: the last answer is kept, and a lo in
// the slide below it has the same answer, without the 64-bit division of
// floorMod (two of them a row were about a third of the bound's cost in
// Nexmark q7, 10K bids an epoch over one or two windows).
type firstEnd struct {
	e  int64
	ok bool
}

func (f *firstEnd) at(lo, align, slide int64) int64 {
	// lo ≤ e < lo+slide, in unsigned arithmetic: e-lo may overflow.
	if f.ok && lo <= f.e && uint64(f.e-lo) < uint64(slide) {
		return f.e
	}
	f.e, f.ok = lo+floorMod(align-lo, slide), true
	return f.e
}

// floorMod is a mod m in [0, m) for m > 0.
func floorMod(a, m int64) int64 {
	r := a % m
	if r < 0 {
		r += m
	}
	return r
}

// intColumn reads an integral column as int64s, with its validity (nil:
// every row valid). An Int64 column's values are returned in place (the
// caller reads them only while it holds the array and must not keep the
// slice or write to it); narrower types are widened into buf.
func intColumn(a arrow.Array, buf []int64) ([]int64, []bool) {
	n := a.Len()
	buf = buf[:0]
	switch c := a.(type) {
	case *array.Int64:
		buf = c.Int64Values()
	case *array.Int32:
		for _, v := range c.Int32Values() {
			buf = append(buf, int64(v))
		}
	case *array.Int16:
		for _, v := range c.Int16Values() {
			buf = append(buf, int64(v))
		}
	case *array.Int8:
		for _, v := range c.Int8Values() {
			buf = append(buf, int64(v))
		}
	default:
		// Not an integral column: every row invalid, nothing pruned.
		return buf, make([]bool, n)
	}
	if a.NullN() == 0 {
		return buf, nil
	}
	valid := make([]bool, n)
	for i := range valid {
		valid[i] = a.IsValid(i)
	}
	return buf, valid
}
