package stateful

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/apache/arrow/go/v17/arrow"
	"github.com/apache/arrow/go/v17/arrow/array"

	"github.com/arrowstream/arrowstream/arrowstream/stream"
	"github.com/arrowstream/arrowstream/plan"
	"github.com/arrowstream/arrowstream/vector"
)

// Sliding windows by panes (Flink's sliding-window panes). A sliding
// window of width S and slide L puts each row into S/L windows; Spark
// expands the row into all of them and aggregates each. In Append mode
// the aggregation instead runs over the windows' panes — the tumbling
// windows of width L — so that each row updates one group, and combines
// a window's S/L panes when the window is emitted (its end at or below
// the watermark). The answer is Spark's:
//
//   - A pane [p, p+L) lies in the windows ending at p+L, p+2L, …, p+S.
//   - Batch N emits the windows whose end is in (W_late, W_evict]: those
//     at or below W_late were emitted by an earlier batch (W_late is the
//     previous batch's W_evict), and a row whose window ends there is
//     late for that window (Spark drops that copy of the row), so adding
//     the row to its pane changes only windows not yet emitted.
//   - A row is dropped when all its windows are late: its pane's last
//     window end p+S ≤ W_late. A pane leaves the state once its last
//     window is emitted.
//   - Only aggregates whose partial states combine exactly in any
//     grouping are computed this way (plan.PanesFor); the others, and
//     Update and Complete mode, keep the expanded rows.
//
// A state group whose window is not a pane (a whole window of width S:
// state written before panes, or an epoch that ran with panes turned
// off) counts in that window only, so that both kinds mix in one state.
// The numRowsDroppedByWatermark metric counts dropped pane rows, not
// dropped window copies.

// ConfSlidingPanes turns the pane computation of sliding windows off
// ("false"): the aggregation then runs over the expanded rows, as Spark
// does. It is read each epoch; state written either way reads the other.
const ConfSlidingPanes = "arrowstream.streaming.slidingWindowPanes"

// paneMode is a sliding window aggregation's pane parameters.
type paneMode struct {
	width, slide int64     // µs; slide divides width
	start        int64     // µs: windows and panes start and end at start + j·slide
	input        plan.Node // the aggregation's input over panes
	on           bool      // the current epoch's input is by panes
}

// InputChooser is a stateful operator that may run over another input
// than its plan node's children: ChildNodes returns the nodes to build
// for the epoch (kids: the node's own children).
type InputChooser interface {
	ChildNodes(kids []plan.Node, conf map[string]string) []plan.Node
}

// ChildNodes implements InputChooser: the pane input when panes are on
// for the epoch (state kept live in memory, not turned off by
// ConfSlidingPanes).
func (s *statefulAggregate) ChildNodes(kids []plan.Node, conf map[string]string) []plan.Node {
	if s.panes == nil {
		return kids
	}
	s.panes.on = false
	if strings.EqualFold(strings.TrimSpace(conf[ConfSlidingPanes]), "false") {
		return kids
	}
	if _, bounded, err := liveStateBudget(conf); err != nil || bounded {
		// The bounded (Pebble) path keeps its groups partly out of
		// memory and evicts them whole.
		return kids
	}
	s.panes.on = true
	return []plan.Node{s.panes.input}
}

// lastEnd is the end of the last window a group of window [start, end)
// counts in (µs).
func (p *paneMode) lastEnd(start, end int64) int64 {
	if end-start == p.slide {
		return start + p.width
	}
	return end
}

// windowEnds is the ends of the windows a group of window [start, end)
// counts in (µs): first, first+step, … up to last. A pane counts in every
// window ending a slide apart from its own end on; a whole window only in
// its own.
func (p *paneMode) windowEnds(start, end int64) (first, step, last int64) {
	first, step = end, p.slide
	if end-start != p.slide {
		step = end - start + 1 // a whole window: its own end only
	}
	return first, step, p.lastEnd(start, end)
}

// boundIn reports whether a window or pane bound (start + j·slide) lies
// in (lo, hi] (µs).
func (p *paneMode) boundIn(lo, hi int64) bool {
	if hi <= lo {
		return false
	}
	m := (p.start - (lo + 1)) % p.slide
	if m < 0 {
		m += p.slide
	}
	return lo+1+m <= hi
}

// windowBounds returns the start and end (µs) columns of a window key
// column and the array whose validity says which are null.
func windowBounds(col arrow.Array) (starts, ends []arrow.Timestamp, valid arrow.Array) {
	st := col.(*array.Struct)
	return st.Field(0).(*array.Timestamp).TimestampValues(), st.Field(1).(*array.Timestamp).TimestampValues(), st.Field(1)
}

// anyLate reports whether a valid row of the watermark key column col is
// late at the late watermark wmMs: every window it counts in ends at or
// before it.
func (s *statefulAggregate) anyLate(col arrow.Array, wmMs int64) bool {
	if s.panes == nil {
		return s.anyAtOrBelow(col, wmMs)
	}
	starts, ends, valid := windowBounds(col)
	limit := wmMs * 1000
	for i := range ends {
		if s.panes.lastEnd(int64(starts[i]), int64(ends[i])) <= limit && valid.IsValid(i) {
			return true
		}
	}
	return false
}

// notLate returns the rows of rec (partial layout) that are not late at
// the late watermark wmMs.
func (s *statefulAggregate) notLate(rec arrow.Record, wmMs int64) []int32 {
	if s.panes == nil {
		keep, _ := s.selectByTime(rec, wmMs, false)
		return keep
	}
	starts, ends, valid := windowBounds(rec.Column(s.timeKey))
	limit := wmMs * 1000
	keep := make([]int32, 0, len(ends))
	for i := range ends {
		if !valid.IsValid(i) || s.panes.lastEnd(int64(starts[i]), int64(ends[i])) > limit {
			keep = append(keep, int32(i))
		}
	}
	return keep
}

// evictPanes emits the windows whose end is in (lateMs, wmMs] from the
// panes (and whole windows) that lie in them, and removes the groups
// whose last window it emitted. It returns the windows' partial states,
// one row per key and window (nil when none).
func (s *statefulAggregate) evictPanes(ctx context.Context, lateMs, wmMs int64) (arrow.Record, error) {
	start := time.Now()
	l := s.live
	for _, g := range l.due(wmMs * 1000) {
		l.indexed[g] = true // held in open: not indexed again
		l.open = append(l.open, g)
	}
	lo, hi := lateMs*1000, wmMs*1000
	if len(l.open) == 0 || !s.panes.boundIn(lo, hi) {
		// No window ends in (lo, hi]: none to emit, and no group's
		// last window either (an epoch whose watermark moved less
		// than a slide reads nothing).
		return nil, nil
	}
	out, gone, ok, err := s.evictBySlot(ctx, lo, hi)
	if !ok && err == nil {
		out, gone, err = s.evictByState(ctx, lo, hi)
	}
	if err != nil {
		return nil, err
	}
	if err := s.removeGroups(gone); err != nil {
		if out != nil {
			out.Release()
		}
		return nil, err
	}
	for _, g := range gone {
		l.indexed[g] = false
	}
	s.progress.AllRemovalsTimeMs += time.Since(start).Milliseconds()
	return out, nil
}

// evictByState is evictPanes' emission when the panes are not combined
// by slot (evictBySlot): the open panes' state read whole, keys and
// window included, and combined by key and window. It returns the
// windows' partial states and the groups whose last window it emitted
// (in the live state's scratch, valid until the next evicting epoch).
func (s *statefulAggregate) evictByState(ctx context.Context, lo, hi int64) (arrow.Record, []int32, error) {
	l := s.live
	l.panes.slots.forget() // l.open is cut below without the slots
	st, err := l.agg.State(l.open)
	if err != nil {
		return nil, nil, err
	}
	defer st.Release()
	starts, ends, _ := windowBounds(st.Column(s.timeKey))
	// The slices are the live state's, reused each evicting epoch; none
	// outlives this call (windowArray and removeGroups copy what they
	// keep).
	take, wStarts, wEnds, gone := l.panes.take[:0], l.panes.starts[:0], l.panes.ends[:0], l.panes.gone[:0]
	defer func() {
		l.panes.take, l.panes.starts, l.panes.ends, l.panes.gone = take, wStarts, wEnds, gone
	}()
	keep := l.open[:0]
	for i, g := range l.open {
		a, b := int64(starts[i]), int64(ends[i])
		first, step, last := s.panes.windowEnds(a, b)
		for e := first; e <= last; e += step {
			if e > lo && e <= hi {
				take = append(take, int32(i))
				wStarts = append(wStarts, arrow.Timestamp(e-s.panes.width))
				wEnds = append(wEnds, arrow.Timestamp(e))
			}
		}
		if last <= hi {
			gone = append(gone, g)
		} else {
			keep = append(keep, g)
		}
	}
	l.open = keep
	if len(take) == 0 {
		return nil, gone, nil
	}
	out, err := s.combinePanes(ctx, st, take, wStarts, wEnds)
	if err != nil {
		return nil, nil, err
	}
	return out, gone, nil
}

// combinePanes returns the partial state of each (key, window) from the
// pane rows take of st, each given its window's bounds: the rows of the
// same key and window merged (a scratch live aggregation, whose merge is
// the state's own). The scratch is kept in the live state between
// evicting epochs, emptied, so that its hash table and accumulators keep
// the size the last combination reached instead of growing from the
// smallest again every epoch; it holds no group between calls.
func (s *statefulAggregate) combinePanes(ctx context.Context, st arrow.Record, take []int32, starts, ends []arrow.Timestamp) (arrow.Record, error) {
	if out, ok, err := s.combineByEnd(ctx, st, take, ends); ok || err != nil {
		if err != nil {
			return nil, fmt.Errorf("arrowstream: state of operator %d: combine panes: %w", s.opID, err)
		}
		return out, nil
	}
	return s.combineByWindow(ctx, st, take, starts, ends)
}

// combineByWindow is combinePanes over the rows expanded into their
// windows, merged by all keys (the window one of them).
func (s *statefulAggregate) combineByWindow(ctx context.Context, st arrow.Record, take []int32, starts, ends []arrow.Timestamp) (arrow.Record, error) {
	rows, err := vector.TakeRecord(s.mem, st, take)
	if err != nil {
		return nil, err
	}
	cols := make([]arrow.Array, rows.NumCols())
	copy(cols, rows.Columns())
	win := windowArray(s.mem, starts, ends)
	defer win.Release()
	cols[s.timeKey] = win
	exp := array.NewRecord(s.partialSchema, cols, int64(len(take)))
	rows.Release()
	defer exp.Release()
	agg, err := s.paneScratch()
	if err != nil {
		return nil, fmt.Errorf("arrowstream: state of operator %d: combine panes: %w", s.opID, err)
	}
	out, err := s.combineInto(ctx, agg, exp)
	if err == nil {
		err = agg.Reset()
	}
	if err != nil {
		// A failed merge (cancelled, over the memory limit) may leave
		// the scratch part-filled: the next epoch binds a fresh one.
		s.live.dropPaneScratch()
		if out != nil {
			out.Release()
		}
		return nil, fmt.Errorf("arrowstream: state of operator %d: combine panes: %w", s.opID, err)
	}
	return out, nil
}

// combineInto merges the rows of exp into the empty aggregation agg and
// returns the state of all its groups. The group list is the live
// state's, kept between evicting epochs (State copies what it reads).
func (s *statefulAggregate) combineInto(ctx context.Context, agg *vector.LiveAggregate, exp arrow.Record) (arrow.Record, error) {
	if _, err := agg.Merge(ctx, exp); err != nil {
		return nil, err
	}
	p := &s.live.panes
	p.all = identity(p.all, agg.NumGroups())
	return agg.State(p.all)
}

// identity returns 0, 1, …, n-1 in dst's storage when it has room.
func identity(dst []int32, n int) []int32 {
	dst = growCap(dst[:0], n)[:n]
	for i := range dst {
		dst[i] = int32(i)
	}
	return dst
}

// paneScratch returns the live state's empty scratch aggregation of
// combinePanes, binding it on first use.
func (s *statefulAggregate) paneScratch() (*vector.LiveAggregate, error) {
	l := s.live
	if l.panes.agg == nil {
		agg, err := vector.NewLiveAggregate(vector.ForOperator(s.mem, aggStateName), s.partialSchema, s.nKeys, s.spec.Aggregates)
		if err != nil {
			return nil, err
		}
		l.panes.agg = agg
	}
	return l.panes.agg, nil
}

// paneScratch is what evictPanes reuses from one evicting epoch to the
// next instead of building it again: the aggregation that combines panes
// into windows (empty between calls) and the row selections (cut to zero
// at each call).
type paneScratch struct {
	agg          *vector.LiveAggregate
	take, gone   []int32
	starts, ends []arrow.Timestamp
	// byKey is combineByEnd's aggregation (the layout without the
	// window column), noByKey set when that layout does not bind; sel
	// its row selection when an epoch emits several window ends.
	byKey   *vector.LiveAggregate
	noByKey bool
	sel     []int32
	// all is combineInto's list of the scratch's groups (0, 1, …);
	// winStarts and winEnds the bounds combineEnd gives its groups.
	all                []int32
	winStarts, winEnds []arrow.Timestamp
	// slots holds the open panes' bounds and slots in byKey
	// (stateful_agg_panes_slots.go).
	slots paneSlots
}

// bytes is the Go heap of the selections (the aggregations reserve their
// own through the allocator).
func (p *paneScratch) bytes() int64 {
	return int64(cap(p.take)+cap(p.gone)+cap(p.sel)+cap(p.all))*4 +
		int64(cap(p.starts)+cap(p.ends)+cap(p.winStarts)+cap(p.winEnds))*8 + p.slots.bytes()
}

// removeGroups deletes groups from the live state and the stores.
func (s *statefulAggregate) removeGroups(gids []int32) error {
	if len(gids) == 0 {
		return nil
	}
	var gone arrow.Record
	if !s.log.on() || !s.live.allStored(gids) {
		var err error
		if gone, err = s.live.agg.State(gids); err != nil {
			return err
		}
		defer gone.Release()
	}
	if err := s.dropStored(gids, gone); err != nil {
		return err
	}
	s.live.remove(gids)
	s.progress.NumRowsRemoved += int64(len(gids))
	return nil
}

// panesFor returns the pane parameters of an Append-mode aggregation over
// a sliding window key timeKey, or nil.
func panesFor(x *plan.Aggregate, mode stream.OutputMode, timeKey int) *paneMode {
	if mode != stream.Append || timeKey < 0 {
		return nil
	}
	p, ok := plan.PanesFor(x)
	if !ok || p.Key != timeKey {
		return nil
	}
	return &paneMode{width: p.Width, slide: p.Slide, start: p.Start, input: p.Input}
}
