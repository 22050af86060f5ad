package stateful

import (
	"context"
	"slices"

	"github.com/apache/arrow/go/v17/arrow"
	"github.com/apache/arrow/go/v17/arrow/array"
	"github.com/apache/arrow/go/v17/arrow/memory"

	"github.com/arrowstream/arrowstream/vector"
)

// Panes combined by slot: one key build per pane. A pane stays open for
// the S/L windows it lies in (Nexmark q5: 5), and combining by window end
// (stateful_agg_panes_bykey.go) read each open pane's keys back from the
// state (State: the auction and the window rebuilt from the words) and
// hashed its other keys again for every one of those windows. Here a
// pane's keys are read once, when it opens: its window bounds are kept
// and its other keys get a group — its slot — in the by-key scratch
// aggregation, kept across evicting epochs. Each window end then folds
// the panes' state columns (Values: no keys) into their slots (MergeAt:
// no hashing), reads the slots' state out in the order the panes first
// reach them (the order combineEnd's Merge gives its groups), and
// empties them again (Delete). The slots of panes that left stay in the
// table until it holds more than twice the open panes (plus a floor);
// then it is emptied and the open panes slotted again (each pane's keys
// read a second time at most once per such rebuild, amortized).

// minSlotRebuild is the number of stale slots below which the slot table
// is not rebuilt.
const minSlotRebuild = 4096

// paneSlots is, by position in the live state's open list, each open
// pane's window bounds and its slot in the by-key aggregation of; n is
// how many of the open panes have them (the panes opened since are
// slotted at the next evicting epoch). Kept between evicting epochs;
// derived from the state, never written to a checkpoint.
type paneSlots struct {
	of           *vector.LiveAggregate
	n            int
	starts, ends []arrow.Timestamp
	slot         []int32
	// Scratch of combineBySlot, kept for its capacity: the taken
	// panes' groups, slots and window ends, a selection's slots, the
	// distinct slots of an end and a stamp by slot; nulls are all-null
	// key columns of the by-key layout (MergeAt does not read keys,
	// but a record needs them), cut to each use.
	gids, slots, sel, selSlots, distinct []int32
	wEnds                                []arrow.Timestamp
	seen                                 []uint32
	stamp                                uint32
	nulls                                []arrow.Array
	// floor is the stale-slot floor of a rebuild, minSlotRebuild when 0
	// (tests set it low to rebuild often).
	floor int
}

// forget drops the slots (the open list is changed without them, or the
// aggregation they are of is gone).
func (p *paneSlots) forget() {
	p.of, p.n = nil, 0
	p.starts, p.ends, p.slot = p.starts[:0], p.ends[:0], p.slot[:0]
}

// release frees the placeholder key columns.
func (p *paneSlots) release() {
	releaseArrays(p.nulls)
	p.nulls = nil
	p.forget()
}

func (p *paneSlots) bytes() int64 {
	return int64(cap(p.starts)+cap(p.ends)+cap(p.wEnds))*8 +
		int64(cap(p.slot)+cap(p.gids)+cap(p.slots)+cap(p.sel)+cap(p.selSlots)+cap(p.distinct)+cap(p.seen))*4
}

// evictBySlot is evictPanes' emission by slot (see above): ok is false
// when the by-key layout does not apply (the caller uses evictByState).
// It returns the windows' partial states (nil when none) and the groups
// whose last window it emitted (valid until the next evicting epoch).
func (s *statefulAggregate) evictBySlot(ctx context.Context, lo, hi int64) (_ arrow.Record, gone []int32, ok bool, err error) {
	agg, ok, err := s.paneByKeyScratch()
	if !ok || err != nil {
		return nil, nil, ok, err
	}
	if err := s.slotOpen(ctx, agg); err != nil {
		return nil, nil, true, err
	}
	l := s.live
	p := &l.panes.slots
	gids, slots, wEnds, gone := p.gids[:0], p.slots[:0], p.wEnds[:0], l.panes.gone[:0]
	defer func() { p.gids, p.slots, p.wEnds, l.panes.gone = gids, slots, wEnds, gone }()
	keep := 0
	for i, g := range l.open {
		a, b := int64(p.starts[i]), int64(p.ends[i])
		first, step, last := s.panes.windowEnds(a, b)
		for e := first; e <= last; e += step {
			if e > lo && e <= hi {
				gids = append(gids, g)
				slots = append(slots, p.slot[i])
				wEnds = append(wEnds, arrow.Timestamp(e))
			}
		}
		if last <= hi {
			gone = append(gone, g)
			continue
		}
		l.open[keep], p.starts[keep], p.ends[keep], p.slot[keep] = g, p.starts[i], p.ends[i], p.slot[i]
		keep++
	}
	l.open, p.starts, p.ends, p.slot, p.n = l.open[:keep], p.starts[:keep], p.ends[:keep], p.slot[:keep], keep
	if len(gids) == 0 {
		return nil, gone, true, nil
	}
	out, err := s.combineBySlot(ctx, agg, gids, slots, wEnds)
	if err != nil {
		// A failed fold may leave slots part-filled: the next epoch
		// binds a fresh scratch and slots the open panes again.
		l.dropPaneScratch()
		return nil, nil, true, err
	}
	return out, gone, true, nil
}

// slotOpen gives the open panes not slotted yet their window bounds and
// slots in agg, rebuilding the slot table first when stale slots fill
// most of it.
func (s *statefulAggregate) slotOpen(ctx context.Context, agg *vector.LiveAggregate) error {
	l := s.live
	p := &l.panes.slots
	if p.of != agg {
		p.forget()
		p.of = agg
	}
	floor := p.floor
	if floor == 0 {
		floor = minSlotRebuild
	}
	if p.n > 0 && agg.NumGroups() > 2*len(l.open)+floor {
		if err := agg.Reset(); err != nil {
			l.dropPaneScratch()
			return err
		}
		p.forget()
		p.of = agg
	}
	if p.n == len(l.open) {
		return nil
	}
	keys, err := l.agg.Keys(l.open[p.n:])
	if err != nil {
		return err
	}
	defer releaseArrays(keys)
	starts, ends, _ := windowBounds(keys[s.timeKey])
	other := slices.Delete(slices.Clone(keys), s.timeKey, s.timeKey+1)
	slot, err := agg.Groups(ctx, other)
	if err != nil {
		l.dropPaneScratch()
		return err
	}
	p.starts = append(p.starts[:p.n], starts...)
	p.ends = append(p.ends[:p.n], ends...)
	p.slot = append(p.slot[:p.n], slot...)
	p.n = len(l.open)
	return nil
}

// combineBySlot returns the partial state of each window from the open
// panes gids given window ends ends, each pane folded into its slot
// slots[i]: one record per window end, ascending, concatenated — the rows
// combineByEnd gives for the same panes.
func (s *statefulAggregate) combineBySlot(ctx context.Context, agg *vector.LiveAggregate, gids, slots []int32, ends []arrow.Timestamp) (arrow.Record, error) {
	vals, err := s.live.agg.Values(gids)
	if err != nil {
		return nil, err
	}
	defer releaseArrays(vals)
	p := &s.live.panes.slots
	keys := p.nullKeys(s.mem, agg.Schema(), s.nKeys-1, len(gids))
	defer releaseArrays(keys)
	rec := array.NewRecord(agg.Schema(), append(keys, vals...), int64(len(gids)))
	defer rec.Release()

	var parts []arrow.Record
	defer func() {
		for _, part := range parts {
			part.Release()
		}
	}()
	one := allEqual(ends)
	for _, e := range distinctEnds(ends) {
		in, sl := rec, slots
		if !one {
			p.sel, p.selSlots = p.sel[:0], p.selSlots[:0]
			for i, end := range ends {
				if end == e {
					p.sel = append(p.sel, int32(i))
					p.selSlots = append(p.selSlots, slots[i])
				}
			}
			if in, err = vector.TakeRecord(s.mem, rec, p.sel); err != nil {
				return nil, err
			}
			sl = p.selSlots
		}
		part, err := s.foldSlots(ctx, agg, in, sl, e)
		if in != rec {
			in.Release()
		}
		if err != nil {
			return nil, err
		}
		parts = append(parts, part)
	}
	if len(parts) == 1 {
		out := parts[0]
		parts = nil
		return out, nil
	}
	return vector.ConcatRecordsContext(ctx, s.mem, s.partialSchema, parts)
}

// foldSlots folds the rows of in (by-key layout, keys not read) into the
// slots sl, returns the slots' partial states in first-fold order with
// the window ending at e, and empties the slots again.
func (s *statefulAggregate) foldSlots(ctx context.Context, agg *vector.LiveAggregate, in arrow.Record, sl []int32, e arrow.Timestamp) (arrow.Record, error) {
	if err := agg.MergeAt(ctx, in, sl); err != nil {
		return nil, err
	}
	p := &s.live.panes.slots
	groups := p.firstSeen(sl, agg.NumGroups())
	merged, err := agg.State(groups)
	if err != nil {
		return nil, err
	}
	defer merged.Release()
	agg.Delete(groups)
	return s.withWindowEnd(merged, e), nil
}

// firstSeen returns the distinct slots of sl in order of first
// appearance, in p's scratch (valid until the next call).
func (p *paneSlots) firstSeen(sl []int32, groups int) []int32 {
	p.seen = growTo(p.seen, groups)
	p.stamp++
	if p.stamp == 0 { // wrapped: old stamps could look current
		clear(p.seen)
		p.stamp = 1
	}
	out := p.distinct[:0]
	for _, g := range sl {
		if p.seen[g] != p.stamp {
			p.seen[g] = p.stamp
			out = append(out, g)
		}
	}
	p.distinct = out
	return out
}

// nullKeys returns the first n columns of schema as all-null arrays of
// rows rows, cut from columns kept in p (grown when too short); the
// caller releases them.
func (p *paneSlots) nullKeys(mem memory.Allocator, schema *arrow.Schema, n, rows int) []arrow.Array {
	if len(p.nulls) != n || (n > 0 && p.nulls[0].Len() < rows) {
		size := rows
		if len(p.nulls) == n && n > 0 {
			size = max(rows, 2*p.nulls[0].Len())
		}
		releaseArrays(p.nulls)
		p.nulls = make([]arrow.Array, n)
		for i := range n {
			p.nulls[i] = array.MakeArrayOfNull(mem, schema.Field(i).Type, size)
		}
	}
	out := make([]arrow.Array, n)
	for i, a := range p.nulls {
		out[i] = array.NewSlice(a, 0, int64(rows))
	}
	return out
}
