package stateful

import (
	"context"
	"slices"

	"github.com/apache/arrow/go/v17/arrow"
	"github.com/apache/arrow/go/v17/arrow/array"

	"github.com/arrowstream/arrowstream/vector"
)

// Panes combined one window end at a time, by the other keys. The rows
// combinePanes merges are pane groups each given one window to count in;
// the rows given the same window end have the same window, so grouping
// them by the other keys alone gives the same groups as grouping by the
// keys and the window. Done per end (an evicting epoch whose watermark
// crossed one slide bound, the usual case, has one), the merge hashes the
// other keys only (Nexmark q5: one word, the auction, instead of three:
// the auction and the window's bounds), takes no copy of the pane rows
// when each is given one window in order (they are the state's rows as
// State returned them), and builds one window column per end instead of
// one window a row. Aggregations keyed by the window alone keep the
// general path.

// combineByEnd is combinePanes by window end (see above); ok is false
// when it does not apply (the window is the only key, or the key-less
// layout cannot be bound), and the caller combines by (keys, window).
func (s *statefulAggregate) combineByEnd(ctx context.Context, st arrow.Record, take []int32, ends []arrow.Timestamp) (_ arrow.Record, ok bool, err error) {
	agg, ok, err := s.paneByKeyScratch()
	if !ok || err != nil {
		return nil, ok, err
	}
	// The state without its window column: the other keys and the
	// partial states, in the by-key layout.
	cols := make([]arrow.Array, 0, st.NumCols()-1)
	for i, c := range st.Columns() {
		if i != s.timeKey {
			cols = append(cols, c)
		}
	}
	rest := array.NewRecord(agg.Schema(), cols, st.NumRows())
	defer rest.Release()

	var parts []arrow.Record
	defer func() {
		for _, p := range parts {
			p.Release()
		}
	}()
	one := allEqual(ends)
	for _, e := range distinctEnds(ends) {
		sel := take
		if !one {
			sel = selectEnd(s.live.panes.sel[:0], take, ends, e)
			s.live.panes.sel = sel
		}
		part, err := s.combineEnd(ctx, agg, rest, sel, e)
		if err != nil {
			return nil, true, err
		}
		parts = append(parts, part)
	}
	if len(parts) == 1 {
		out := parts[0]
		parts = nil
		return out, true, nil
	}
	out, err := vector.ConcatRecordsContext(ctx, s.mem, s.partialSchema, parts)
	return out, true, err
}

// combineEnd merges the rows sel of rest (the state without its window
// column) by their other keys into the empty agg and returns the groups'
// partial states with the window ending at e inserted as the time key.
// agg is emptied again.
func (s *statefulAggregate) combineEnd(ctx context.Context, agg *vector.LiveAggregate, rest arrow.Record, sel []int32, e arrow.Timestamp) (arrow.Record, error) {
	in := rest
	if !isIdentity(sel, int(rest.NumRows())) {
		var err error
		if in, err = vector.TakeRecord(s.mem, rest, sel); err != nil {
			return nil, err
		}
		defer in.Release()
	}
	merged, err := s.combineInto(ctx, agg, in)
	if err == nil {
		err = agg.Reset()
	}
	if err != nil {
		if merged != nil {
			merged.Release()
		}
		// A failed merge may leave the scratch part-filled: the next
		// epoch binds a fresh one.
		s.live.dropPaneScratch()
		return nil, err
	}
	defer merged.Release()
	return s.withWindowEnd(merged, e), nil
}

// withWindowEnd returns merged (partial states in the by-key layout) with
// the window ending at e inserted as the time key, for every row.
func (s *statefulAggregate) withWindowEnd(merged arrow.Record, e arrow.Timestamp) arrow.Record {
	// The bounds are kept between evicting epochs (windowArray copies
	// them): one window for every group.
	p := &s.live.panes
	n := int(merged.NumRows())
	p.winStarts = fillTimes(p.winStarts, n, e-arrow.Timestamp(s.panes.width))
	p.winEnds = fillTimes(p.winEnds, n, e)
	win := windowArray(s.mem, p.winStarts, p.winEnds)
	defer win.Release()
	cols := make([]arrow.Array, 0, merged.NumCols()+1)
	cols = append(cols, merged.Columns()[:s.timeKey]...)
	cols = append(cols, win)
	cols = append(cols, merged.Columns()[s.timeKey:]...)
	return array.NewRecord(s.partialSchema, cols, int64(n))
}

// paneByKeyScratch returns the live state's empty scratch aggregation of
// combineByEnd, over the partial layout without the window column, bound
// at first use; ok is false when the window is the only key or the
// layout does not bind (then it is not tried again).
func (s *statefulAggregate) paneByKeyScratch() (_ *vector.LiveAggregate, ok bool, err error) {
	l := s.live
	if l.panes.byKey != nil {
		return l.panes.byKey, true, nil
	}
	if l.panes.noByKey || s.nKeys < 2 || s.timeKey < 0 || s.timeKey >= s.nKeys {
		return nil, false, nil
	}
	fields := slices.Delete(slices.Clone(s.partialSchema.Fields()), s.timeKey, s.timeKey+1)
	agg, err := vector.NewLiveAggregate(vector.ForOperator(s.mem, aggStateName), arrow.NewSchema(fields, nil), s.nKeys-1, s.spec.Aggregates)
	if err != nil {
		// The general path serves every layout; this one is a shortcut.
		l.panes.noByKey = true
		return nil, false, nil
	}
	l.panes.byKey = agg
	return agg, true, nil
}

// fillTimes returns n copies of t in dst's storage when it has room.
func fillTimes(dst []arrow.Timestamp, n int, t arrow.Timestamp) []arrow.Timestamp {
	dst = growCap(dst[:0], n)[:n]
	for i := range dst {
		dst[i] = t
	}
	return dst
}

// distinctEnds returns the window ends of ends, ascending, once each.
func distinctEnds(ends []arrow.Timestamp) []arrow.Timestamp {
	if allEqual(ends) {
		return ends[:1]
	}
	out := slices.Clone(ends)
	slices.Sort(out)
	return slices.Compact(out)
}

// allEqual reports whether ends (at least one) are all the same end.
func allEqual(ends []arrow.Timestamp) bool {
	for _, e := range ends[1:] {
		if e != ends[0] {
			return false
		}
	}
	return true
}

// selectEnd appends to dst the rows take[i] whose ends[i] is e.
func selectEnd(dst, take []int32, ends []arrow.Timestamp, e arrow.Timestamp) []int32 {
	for i, r := range take {
		if ends[i] == e {
			dst = append(dst, r)
		}
	}
	return dst
}

// isIdentity reports whether sel is 0, 1, …, n-1.
func isIdentity(sel []int32, n int) bool {
	if len(sel) != n {
		return false
	}
	for i, r := range sel {
		if int(r) != i {
			return false
		}
	}
	return true
}
