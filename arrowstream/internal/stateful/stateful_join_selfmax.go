package stateful

import (
	"github.com/apache/arrow/go/v17/arrow"
	"github.com/apache/arrow/go/v17/arrow/array"
	"github.com/apache/arrow/go/v17/arrow/memory"

	"github.com/arrowstream/arrowstream/plan"
	"github.com/arrowstream/arrowstream/vector"
)

// joinSelfMax drops, from an epoch's new rows of the rows side of a join
// with the per-window max of the same aggregation's output
// (plan.JoinSelfMax, Nexmark q5), every row whose value is below the
// largest value of its window among the epoch's rows: the window's max is
// at least that value, so the row can never pass `value >= max`. Rows
// with a null value or window never pass either. Ties at the largest
// value are all kept. Nothing is kept between epochs but scratch, so a
// restart needs nothing: the join's state just holds the rows that can
// still match (q5: one or a few per window instead of every auction).
type joinSelfMax struct {
	b plan.JoinSelfMax
	// dropped counts the rows the last epoch dropped.
	dropped int64
	vals    []int64
	keep    []int32
	win     []int32 // per row: its window's index in ends, -1 when dropped
	ends    []selfMaxWindow
	// byWin indexes ends once an epoch holds many windows.
	byWin map[[2]int64]int
}

// selfMaxWindow is one distinct window of an epoch and its largest value.
type selfMaxWindow struct {
	start, end, max int64
}

// filter returns rec's rows that can still pass, as a new record (rec
// itself, retained, when every row can), in rec's order. rec has the rows
// side's codec schema.
func (p *joinSelfMax) filter(mem memory.Allocator, rec arrow.Record) (arrow.Record, error) {
	p.dropped = 0
	n := int(rec.NumRows())
	if n < 2 {
		// One row is its window's max; none: nothing to do.
		rec.Retain()
		return rec, nil
	}
	vals, valid := intColumn(rec.Column(p.b.ValueCol), p.vals)
	p.vals = vals
	ws, ok := rec.Column(p.b.WindowCol).(*array.Struct)
	if !ok || ws.NumField() != 2 {
		rec.Retain()
		return rec, nil
	}
	st, ok1 := ws.Field(0).(*array.Timestamp)
	et, ok2 := ws.Field(1).(*array.Timestamp)
	if !ok1 || !ok2 {
		rec.Retain()
		return rec, nil
	}
	starts, endsV := st.TimestampValues(), et.TimestampValues()
	nulls := ws.NullN() > 0 || st.NullN() > 0 || et.NullN() > 0
	win := int32s(&p.win, n)
	p.ends = p.ends[:0]
	clear(p.byWin)
	last := -1
	// First pass: each row's window (rows come in runs of one window) and
	// each window's largest value.
	for i := 0; i < n; i++ {
		if (valid != nil && !valid[i]) || (nulls && (ws.IsNull(i) || st.IsNull(i) || et.IsNull(i))) {
			win[i] = -1 // never passes: a null value or window
			continue
		}
		s, e, v := int64(starts[i]), int64(endsV[i]), vals[i]
		if last < 0 || p.ends[last].start != s || p.ends[last].end != e {
			last = p.windowOf(s, e, v)
		}
		if w := &p.ends[last]; v > w.max {
			w.max = v
		}
		win[i] = int32(last)
	}
	keep := int32s(&p.keep, n)[:0]
	for i := 0; i < n; i++ {
		if w := win[i]; w >= 0 && vals[i] == p.ends[w].max {
			keep = append(keep, int32(i))
		}
	}
	p.keep = keep
	p.dropped = int64(n - len(keep))
	if len(keep) == n {
		rec.Retain()
		return rec, nil
	}
	return vector.TakeRecord(mem, rec, keep)
}

// windowOf returns the index of window (s, e) in p.ends, added with max v
// when new. An epoch holds few windows (those its watermark closed).
func (p *joinSelfMax) windowOf(s, e, v int64) int {
	if len(p.ends) <= selfMaxScan {
		for k := range p.ends {
			if p.ends[k].start == s && p.ends[k].end == e {
				return k
			}
		}
	} else {
		if p.byWin == nil {
			p.byWin = map[[2]int64]int{}
		}
		if len(p.byWin) == 0 {
			for k, w := range p.ends {
				p.byWin[[2]int64{w.start, w.end}] = k
			}
		}
		if k, ok := p.byWin[[2]int64{s, e}]; ok {
			return k
		}
		p.byWin[[2]int64{s, e}] = len(p.ends)
	}
	p.ends = append(p.ends, selfMaxWindow{start: s, end: e, max: v})
	return len(p.ends) - 1
}

// selfMaxScan is the most windows searched one by one; past it a map.
const selfMaxScan = 16
