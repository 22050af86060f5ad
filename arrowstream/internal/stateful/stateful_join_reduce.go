package stateful

import (
	"github.com/apache/arrow/go/v17/arrow"
	"github.com/apache/arrow/go/v17/arrow/bitutil"

	"github.com/arrowstream/arrowstream/plan"
	"github.com/arrowstream/arrowstream/vector"
)

// An inner stream-stream join read only by a max (or min) aggregation
// grouped by columns of one side (Nexmark q4: max(B.price) per auction)
// needs to emit, of the pairs of one row of that side, only the one with
// the largest (smallest) value: the aggregation's groups, their state and
// their output are the same, since every pair of one such row falls into
// one group and the max of a group is the max of its rows' maxima. The
// join then gathers one row per matched row of the side instead of one per
// pair, and the aggregation groups those: of q4's 126.9 K passing pairs
// of a FullSize run, 12.1 K rows (session 24, q4f; the gather and the
// aggregation had been about a third of its epoch).
//
// The join's state, its changelog and its eviction are untouched: only the
// epoch's output pairs are reduced, and only those the epoch would emit
// (after the residual). An emitted row is one of the pairs, whole.

// joinReduce is the reduction of an inner join's output pairs (nil: none).
type joinReduce struct {
	side int  // the side whose rows the aggregation's keys are columns of
	col  int  // the aggregated column, a joined ordinal
	max  bool // keep the largest value (false: the smallest)
	// hashed makes every reduction use the hash table (tests: the dense
	// numbering's oracle).
	hashed bool
}

// ReduceJoinForAggregate lets join, a stream-stream join whose only reader
// is the aggregation a (over join's node directly), emit of each row of
// one side only the pair the aggregation's max or min keeps. It does
// nothing unless both operators and a qualify: an inner join, a plain
// (non-session) streaming aggregation grouped by column references of one
// side only, whose aggregates are all max or all min of one integer
// column (the reduction compares its stored integers; a float's NaN and a
// string's collation stay the aggregation's). It reports whether the join
// reduces.
func ReduceJoinForAggregate(join, agg Op, a *plan.Aggregate) bool {
	j, ok := join.(*statefulJoin)
	if !ok || j.typ != plan.InnerJoin {
		return false
	}
	if _, ok := agg.(*statefulAggregate); !ok {
		return false
	}
	jn, ok := a.Input.(*plan.Join)
	if !ok || len(a.GroupBy) == 0 || len(a.Aggs) == 0 {
		return false
	}
	nl := jn.Left.Schema().NumFields()
	side := -1
	for _, k := range a.GroupBy {
		c, ok := k.Expr.(*plan.ColumnRef)
		if !ok {
			return false
		}
		s := 0
		if c.Index >= nl {
			s = 1
		}
		if side >= 0 && s != side {
			return false
		}
		side = s
	}
	r := &joinReduce{side: side, col: -1}
	for i, ag := range a.Aggs {
		if (ag.Func != vector.AggMax && ag.Func != vector.AggMin) || len(ag.Args) != 1 {
			return false
		}
		c, ok := ag.Args[0].(*plan.ColumnRef)
		if !ok || !reducibleType(jn.Schema().Field(c.Index).Type) {
			return false
		}
		if i == 0 {
			r.col, r.max = c.Index, ag.Func == vector.AggMax
		} else if c.Index != r.col || (ag.Func == vector.AggMax) != r.max {
			return false
		}
	}
	j.reduce = r
	return true
}

// reducibleType: the types whose order is their stored signed integers'.
func reducibleType(t arrow.DataType) bool {
	switch t.ID() {
	case arrow.INT64, arrow.TIMESTAMP, arrow.DATE64, arrow.INT32, arrow.DATE32:
		return true
	}
	return false
}

// joinReduceScratch is the reduction's temporaries, kept across epochs.
type joinReduceScratch struct {
	keys      []uint64 // open-addressing table: side record << 32 | row
	slot      []int32  // the table's entries' slots
	bestG     []int32  // per slot: the pair group of its best pair
	bestX     []int32  // and the pair's position in the group
	bestV     []int64  // and its value
	bestNull  []bool   // the best pair's value is null
	count     []int32  // per pair group: its slots (then the first's place)
	li, ri    []int32  // the reduced pairs' rows
	recs      map[arrow.Record]uint64
	outGroups []joinOutPairs
	vals64    []int64 // a group's values (int32 columns widened)
	base      []int32 // per pair group: its side record's first dense number
	dense     []int32 // per dense number: its slot, -1 for none yet
}

// reduceDenseRows bounds the dense numbering of the reduced side's rows:
// it is used while their records hold at most this many rows per pair
// (and below reduceDenseMax), as clearing it costs a word a row.
const (
	reduceDenseRows = 4
	reduceDenseMax  = 1 << 22
)

const reduceEmpty = ^uint64(0)

// reducePairs returns the pairs the aggregation needs: of the pairs of
// each row of the reduced side, the one with the largest (smallest) value
// of the column, a non-null one before a null. The returned groups borrow
// pairs' records (the caller releases pairs) and the join's scratch lists
// (read until the gather). Pairs come back as they are when nothing is
// reduced or a record's column is of an unexpected layout.
func (s *statefulJoin) reducePairs(pairs []joinOutPairs) []joinOutPairs {
	r := s.reduce
	if r == nil || len(pairs) == 0 {
		return pairs
	}
	n := 0
	for _, p := range pairs {
		n += len(p.li)
	}
	if n < 2 {
		return pairs
	}
	nl := int(pairs[0].l.NumCols())
	for _, p := range pairs {
		if !reducibleType(valueColumn(p, r.col, nl).DataType()) {
			return pairs
		}
	}
	sc := &s.reduceScratch
	if sc.recs == nil {
		sc.recs = map[arrow.Record]uint64{}
	}
	clear(sc.recs)
	// The side's records numbered in order of first sight, and their rows
	// in all (a record's rows are numbered from its base on).
	base := int32s(&sc.base, len(pairs))
	rows := 0
	for g, p := range pairs {
		rec := p.l
		if r.side == 1 {
			rec = p.r
		}
		id, ok := sc.recs[rec]
		if !ok {
			id = uint64(rows)<<32 | uint64(len(sc.recs))
			sc.recs[rec] = id
			rows += int(rec.NumRows())
		}
		base[g] = int32(id >> 32)
	}
	bestG, bestX := int32s(&sc.bestG, n)[:0], int32s(&sc.bestX, n)[:0]
	if cap(sc.bestV) < n {
		sc.bestV, sc.bestNull = make([]int64, n), make([]bool, n)
	}
	best := reduceBest{g: bestG, x: bestX, v: sc.bestV[:0], null: sc.bestNull[:0], max: r.max}
	if !r.hashed && rows <= reduceDenseRows*n && rows < reduceDenseMax {
		s.reduceDense(pairs, base, rows, nl, &best)
	} else {
		s.reduceHashed(pairs, n, nl, &best)
	}
	bestG, bestX = best.g, best.x
	m := len(bestG)
	if m == n {
		return pairs
	}
	// The kept pairs by group (a counting sort of the slots by bestG), as
	// groups of the same records.
	count := int32s(&sc.count, len(pairs))
	clear(count)
	for _, g := range bestG {
		count[g]++
	}
	at := int32(0)
	for g, c := range count {
		count[g] = at
		at += c
	}
	li, ri := int32s(&sc.li, m), int32s(&sc.ri, m)
	for b, g := range bestG {
		x, p := bestX[b], pairs[g]
		li[count[g]], ri[count[g]] = p.li[x], p.ri[x]
		count[g]++
	}
	out := sc.outGroups[:0]
	from := int32(0)
	for g, p := range pairs {
		to := count[g]
		if to > from {
			out = append(out, joinOutPairs{l: p.l, r: p.r, li: li[from:to:to], ri: ri[from:to:to]})
		}
		from = to
	}
	sc.outGroups = out
	return out
}

// reduceBest is the kept pair of each slot (a reduced-side row): its
// pair group, its place in the group, its value and whether it is null.
type reduceBest struct {
	g, x []int32
	v    []int64
	null []bool
	max  bool
}

// add opens a slot for the pair (g, x) and returns its number.
func (b *reduceBest) add(g, x int, v int64, null bool) int32 {
	b.g, b.x = append(b.g, int32(g)), append(b.x, int32(x))
	b.v, b.null = append(b.v, v), append(b.null, null)
	return int32(len(b.g) - 1)
}

// offer keeps the pair (g, x) in slot k when its value is better: a
// non-null value before a null, then the larger (smaller); a tie keeps
// the pair seen first.
func (b *reduceBest) offer(k int32, g, x int, v int64, null bool) {
	switch {
	case null:
	case b.null[k], b.max && v > b.v[k], !b.max && v < b.v[k]:
		b.g[k], b.x[k], b.v[k], b.null[k] = int32(g), int32(x), v, false
	}
}

// reduceDense finds each reduced-side row's slot by its dense number (its
// record's base plus its row): an index, where reduceHashed probes a
// table. q4's reduced side is the live auctions, a few hundred rows a
// record against thousands of pairs, so the numbering is smaller than the
// table and every lookup one read. Both open the slots in the same order
// and keep the same pairs.
func (s *statefulJoin) reduceDense(pairs []joinOutPairs, base []int32, total, nl int, best *reduceBest) {
	sc := &s.reduceScratch
	dense := int32s(&sc.dense, total)
	for i := range dense {
		dense[i] = -1
	}
	side := s.reduce.side
	for g, p := range pairs {
		rows := p.li
		if side == 1 {
			rows = p.ri
		}
		d := dense[base[g]:]
		vals, valid, off, vrows := s.reduceValues(p, s.reduce.col, nl)
		for x, row := range rows {
			vr := int(vrows[x])
			v := vals[vr]
			null := valid != nil && !bitutil.BitIsSet(valid, off+vr)
			if k := d[row]; k >= 0 {
				best.offer(k, g, x, v, null)
			} else {
				d[row] = best.add(g, x, v, null)
			}
		}
	}
}

// reduceHashed finds each reduced-side row's slot in an open-addressing
// table of (record number, row) keys.
func (s *statefulJoin) reduceHashed(pairs []joinOutPairs, n, nl int, best *reduceBest) {
	sc := &s.reduceScratch
	size := 1
	for size < 2*n {
		size <<= 1
	}
	if cap(sc.keys) < size {
		sc.keys, sc.slot = make([]uint64, size), make([]int32, size)
	}
	keys, slot := sc.keys[:size], sc.slot[:size]
	for i := range keys {
		keys[i] = reduceEmpty
	}
	mask := uint64(size - 1)
	side := s.reduce.side
	for g, p := range pairs {
		rec, rows := p.l, p.li
		if side == 1 {
			rec, rows = p.r, p.ri
		}
		id := sc.recs[rec] & (1<<32 - 1)
		vals, valid, off, vrows := s.reduceValues(p, s.reduce.col, nl)
		for x, row := range rows {
			vr := int(vrows[x])
			v := vals[vr]
			null := valid != nil && !bitutil.BitIsSet(valid, off+vr)
			k := id<<32 | uint64(uint32(row))
			h := (k * 0x9E3779B97F4A7C15) >> 20 & mask
			for keys[h] != reduceEmpty && keys[h] != k {
				h = (h + 1) & mask
			}
			if keys[h] == reduceEmpty {
				keys[h] = k
				slot[h] = best.add(g, x, v, null)
				continue
			}
			best.offer(slot[h], g, x, v, null)
		}
	}
}

// valueColumn is the joined column col of pair group p (nl: the left
// side's columns).
func valueColumn(p joinOutPairs, col, nl int) arrow.Array {
	if col < nl {
		return p.l.Column(col)
	}
	return p.r.Column(col - nl)
}

// reduceValues returns the values of column col of p's records as int64s,
// their validity bitmap (nil: no nulls) and its offset, and the rows of
// the values of p's pairs (li or ri).
func (s *statefulJoin) reduceValues(p joinOutPairs, col, nl int) (vals []int64, valid []byte, off int, rows []int32) {
	a := valueColumn(p, col, nl)
	rows = p.li
	if col >= nl {
		rows = p.ri
	}
	d := a.Data()
	if a.NullN() > 0 {
		valid, off = d.Buffers()[0].Bytes(), d.Offset()
	}
	n := d.Offset() + d.Len()
	switch a.DataType().ID() {
	case arrow.INT32, arrow.DATE32:
		v32 := arrow.Int32Traits.CastFromBytes(d.Buffers()[1].Bytes())[:n]
		w := s.reduceScratch.vals64
		if cap(w) < n {
			w = make([]int64, n)
			s.reduceScratch.vals64 = w
		}
		w = w[:n]
		for _, r := range rows {
			w[r+int32(d.Offset())] = int64(v32[r+int32(d.Offset())])
		}
		return w[d.Offset():], valid, off, rows
	default:
		return arrow.Int64Traits.CastFromBytes(d.Buffers()[1].Bytes())[d.Offset():n], valid, off, rows
	}
}
