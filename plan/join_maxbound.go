package plan

import (
	"math"

	"github.com/apache/arrow/go/v17/arrow"

	"github.com/arrowstream/arrowstream/vector"
)

// JoinMaxBound describes a stream-stream inner join whose one input (the
// rows side) is joined to the per-window maximum of the same stream (the
// max side): `R JOIN (SELECT max(x) AS m, <window end ± c> AS rt FROM R
// GROUP BY window(t, …)) M ON R.x = M.m AND R.t' BETWEEN M.rt − a AND
// M.rt + b` (Nexmark q7). A stored row r of the rows side can match only
// an M row of a window whose end lies in [r.t' + Lo, r.t' + Hi], and the
// max of such a window is at least the largest x of the rows side seen so
// far in that window, since the aggregation reads a superset of the rows
// side (the same source, without the rows side's filters). So a row whose
// x is below that running maximum in every window it can still join can
// never match a later M row: the join need not keep it. JoinMaxBoundFor
// proves these facts on the plan; the join applies them
// (stateful/stateful_join_prune.go, docs/architecture.md).
type JoinMaxBound struct {
	// Side is the rows side: 0 left, 1 right.
	Side int
	// ValueCol is the rows side's column compared with the max (an
	// integral column: the same source column as the max's argument).
	ValueCol int
	// WindowTimeCol is the rows side's column that the aggregation's
	// window assignment reads (the same source column).
	WindowTimeCol int
	// Width, Slide and Start are the aggregation's window (µs).
	Width, Slide, Start int64
	// RangeCol is the rows side's timestamp column the range condition
	// bounds: a row at time t joins only windows whose end e has
	// t + Lo ≤ e ≤ t + Hi (µs).
	RangeCol int
	Lo, Hi   int64
}

// maxBoundWindows bounds the windows a row may join for the bound to
// apply: past that, checking them costs more than the row's storage.
const maxBoundWindows = 64

// JoinMaxBoundFor reports the max bound of j when its preconditions are
// proven: an inner join; an equality (not null-safe) between an integral
// column of one side and a column of the other that is, through
// projections and filters, max(c) of an aggregation grouped by one
// window of a timestamp column over a chain of projections and event-time
// watermarks down to a streaming scan; the first side reads the same scan
// (by name and read kind) through projections, filters and watermarks,
// its column being c and its window time column the window's; and the
// remaining condition bounds a timestamp column of the first side from
// both sides by the window's end (a shift of window.end or window.start).
func JoinMaxBoundFor(j *Join) (JoinMaxBound, bool) {
	if j == nil || j.Type != InnerJoin || !j.Left.IsStreaming() || !j.Right.IsStreaming() {
		return JoinMaxBound{}, false
	}
	lk, rk, nullSafe, residual := EquiJoinKeys(j)
	nl := j.Left.Schema().NumFields()
	var found JoinMaxBound
	ok := eachColumnKeySide(j, lk, rk, nullSafe, func(_, side int, rows, other Node, rc, mc *ColumnRef) bool {
		b, ok := maxBoundOf(rows, other, rc.Index, mc.Index)
		if !ok {
			return false
		}
		b.Side = side
		if b.Lo, b.Hi, b.RangeCol, ok = rangeOfEnds(residual, side, nl, rows, other); !ok {
			return false
		}
		if b.Hi < b.Lo || (b.Hi-b.Lo)/b.Slide+1 > maxBoundWindows {
			return false
		}
		found = b
		return true
	})
	return found, ok
}

// eachColumnKeySide calls f for every equi key i of j (lk, rk, nullSafe
// from EquiJoinKeys) that is not null-safe and is a column on both
// sides, twice: with the left input as the rows side (side 0, rc its
// key column, mc the right's) and with the right (side 1); it stops at
// the first call that returns true and says whether one did. Both
// planner rules that match a side of a join against an aggregate of the
// other (JoinMaxBoundFor, JoinSelfMaxFor) walk the keys this way.
func eachColumnKeySide(j *Join, lk, rk []Expr, nullSafe []bool, f func(i, side int, rows, other Node, rc, mc *ColumnRef) bool) bool {
	for i := range lk {
		if nullSafe[i] {
			continue
		}
		for side := 0; side < 2; side++ {
			rowsKey, maxKey := lk[i], rk[i]
			rows, other := j.Left, j.Right
			if side == 1 {
				rowsKey, maxKey = rk[i], lk[i]
				rows, other = j.Right, j.Left
			}
			rc, ok1 := rowsKey.(*ColumnRef)
			mc, ok2 := maxKey.(*ColumnRef)
			if ok1 && ok2 && f(i, side, rows, other, rc, mc) {
				return true
			}
		}
	}
	return false
}

// maxBoundOf matches column mcol of other as max(c) per window of a scan
// that rows reads too, c being rows' column rcol.
func maxBoundOf(rows, other Node, rcol, mcol int) (JoinMaxBound, bool) {
	if !vector.IsIntegral(rows.Schema().Field(rcol).Type) {
		return JoinMaxBound{}, false
	}
	agg, aggCol, ok := toAggregateOutput(other, mcol, true)
	if !ok || len(agg.GroupBy) != 1 || aggCol < 1 {
		return JoinMaxBound{}, false
	}
	a := agg.Aggs[aggCol-1]
	if a.Func != vector.AggMax || len(a.Args) != 1 {
		return JoinMaxBound{}, false
	}
	wa, ok := agg.Input.(*WindowAssign)
	if !ok || wa.Width <= 0 || wa.Slide <= 0 {
		return JoinMaxBound{}, false
	}
	if g, ok := agg.GroupBy[0].Expr.(*ColumnRef); !ok || g.Index != wa.Input.Schema().NumFields() {
		return JoinMaxBound{}, false
	}
	if _, ok := WatermarkDelay(agg.Schema().Field(0)); !ok {
		return JoinMaxBound{}, false // no eviction: windows never close
	}
	arg, ok1 := a.Args[0].(*ColumnRef)
	wt, ok2 := wa.Time.(*ColumnRef)
	if !ok1 || !ok2 || !arrow.TypeEqual(wt.DataType(), vector.Timestamp) {
		return JoinMaxBound{}, false
	}
	// The aggregation's input must hold every row of the rows side: no
	// filter on its way down to the scan.
	aScan, aArg, ok1 := toScanColumn(wa.Input, arg.Index, false)
	_, aTime, ok2 := toScanColumn(wa.Input, wt.Index, false)
	if !ok1 || !ok2 {
		return JoinMaxBound{}, false
	}
	rScan, rArg, ok := toScanColumn(rows, rcol, true)
	if !ok || !sameScan(aScan, rScan) || rArg != aArg {
		return JoinMaxBound{}, false
	}
	if !arrow.TypeEqual(rows.Schema().Field(rcol).Type, arg.DataType()) {
		return JoinMaxBound{}, false
	}
	wcol := -1
	for c := 0; c < rows.Schema().NumFields(); c++ {
		if s, sc, ok := toScanColumn(rows, c, true); ok && s == rScan && sc == aTime {
			wcol = c
			break
		}
	}
	if wcol < 0 {
		return JoinMaxBound{}, false
	}
	return JoinMaxBound{ValueCol: rcol, WindowTimeCol: wcol, Width: wa.Width, Slide: wa.Slide, Start: wa.Start}, true
}

// toScanColumn follows column col of n down through projections (a
// column passed on), watermarks, aliases and, when filters is set,
// filters, to a streaming scan and its table column.
func toScanColumn(n Node, col int, filters bool) (*Scan, int, bool) {
	for {
		switch x := n.(type) {
		case *Project:
			c, ok := x.Exprs[col].Expr.(*ColumnRef)
			if !ok {
				return nil, 0, false
			}
			n, col = x.Input, c.Index
		case *EventTimeWatermark:
			n = x.Input
		case *SubqueryAlias:
			n = x.Input
		case *Filter:
			if !filters {
				return nil, 0, false
			}
			n = x.Input
		case *Scan:
			if !x.Streaming || (!filters && len(x.Filters) > 0) {
				return nil, 0, false
			}
			if x.Columns != nil {
				if col >= len(x.Columns) {
					return nil, 0, false
				}
				col = x.Columns[col]
			}
			return x, col, true
		default:
			return nil, 0, false
		}
	}
}

// sameScan: two scans of one source in one query read the same rows.
func sameScan(a, b *Scan) bool {
	return a.Name == b.Name && a.Streaming && b.Streaming && a.Read == b.Read &&
		a.Version == b.Version && a.From == b.From && a.To == b.To
}

// rangeOfEnds reads, from the residual condition's conjuncts that compare
// a timestamp column of the rows side with a column of the max side
// derived from the window's end (each plus a constant), the ends e a row
// at time t can join: t + lo ≤ e ≤ t + hi. Strict comparisons are read
// as non-strict (a wider range: fewer rows dropped, never a wrong one).
func rangeOfEnds(residual Expr, side, nl int, rows, other Node) (lo, hi int64, col int, ok bool) {
	lo, hi, col = math.MinInt64, math.MaxInt64, -1
	for _, c := range splitConjuncts(residual) {
		call, isCall := c.(*Call)
		if !isCall {
			continue
		}
		var cmps []*Call
		switch call.Func {
		case "between":
			if len(call.Args) != 3 {
				continue
			}
			cmps = []*Call{{Func: ">=", Args: []Expr{call.Args[0], call.Args[1]}}, {Func: "<=", Args: []Expr{call.Args[0], call.Args[2]}}}
		case "<", "<=", ">", ">=":
			cmps = []*Call{call}
		}
		for _, cmp := range cmps {
			a, ca, oka := shiftedColumn(cmp.Args[0])
			b, cb, okb := shiftedColumn(cmp.Args[1])
			if !oka || !okb {
				continue
			}
			op := cmp.Func
			aRows := (a.Index < nl) == (side == 0)
			bRows := (b.Index < nl) == (side == 0)
			if aRows == bRows {
				continue
			}
			if !aRows { // b OP a ⇔ a flip(OP) b
				a, ca, b, cb = b, cb, a, ca
				op = map[string]string{"<": ">", "<=": ">=", ">": "<", ">=": "<="}[op]
			}
			rc, mc := a.Index, b.Index
			if side == 0 {
				mc -= nl
			} else {
				rc -= nl
			}
			if !arrow.TypeEqual(rows.Schema().Field(rc).Type, vector.Timestamp) {
				continue
			}
			sh, okEnd := endShift(other, mc)
			if !okEnd {
				continue
			}
			if col >= 0 && col != rc {
				continue // one range column (the first bounded one)
			}
			// t + ca OP e + sh + cb ⇔ t − e OP k.
			k := sh + cb - ca
			switch op {
			case "<", "<=": // e ≥ t − k
				if -k > lo {
					lo = -k
				}
			default: // e ≤ t − k
				if -k < hi {
					hi = -k
				}
			}
			col = rc
		}
	}
	return lo, hi, col, col >= 0 && lo != math.MinInt64 && hi != math.MaxInt64
}

// shiftedColumn matches e as a column plus a constant day-time interval.
func shiftedColumn(e Expr) (*ColumnRef, int64, bool) {
	switch x := e.(type) {
	case *ColumnRef:
		return x, 0, true
	case *Call:
		if (x.Func != "+" && x.Func != "-") || len(x.Args) != 2 {
			return nil, 0, false
		}
		l, ok := x.Args[1].(*Literal)
		if !ok {
			return nil, 0, false
		}
		d, ok := l.Value.(arrow.Duration)
		if !ok {
			return nil, 0, false
		}
		c, s, ok := shiftedColumn(x.Args[0])
		if !ok {
			return nil, 0, false
		}
		if x.Func == "-" {
			return c, s - int64(d), true
		}
		return c, s + int64(d), true
	}
	return nil, 0, false
}

// endShift matches column col of n as the end of the aggregation's window
// plus a constant (µs), following projections, filters and aliases.
func endShift(n Node, col int) (int64, bool) {
	for {
		switch x := n.(type) {
		case *Project:
			return endShiftExpr(x.Input, x.Exprs[col].Expr, 0)
		case *Filter:
			n = x.Input
		case *SubqueryAlias:
			n = x.Input
		default:
			return 0, false
		}
	}
}

// endShiftExpr matches e over n's columns as window end + a constant:
// window.end, window.start (+ the width), ± day-time interval literals,
// and columns passed on from below.
func endShiftExpr(n Node, e Expr, depth int) (int64, bool) {
	if depth > maxShiftDepth {
		return 0, false
	}
	switch x := e.(type) {
	case *ColumnRef:
		switch in := n.(type) {
		case *Project:
			return endShiftExpr(in.Input, in.Exprs[x.Index].Expr, depth+1)
		case *Filter:
			return endShiftExpr(in.Input, x, depth+1)
		case *SubqueryAlias:
			return endShiftExpr(in.Input, x, depth+1)
		}
		return 0, false
	case *GetField:
		c, ok := x.X.(*ColumnRef)
		if !ok {
			return 0, false
		}
		agg, col, isAgg := toAggregateOutput(n, c.Index, true)
		if !isAgg || col != 0 || len(agg.GroupBy) != 1 {
			return 0, false
		}
		wa, ok := agg.Input.(*WindowAssign)
		if !ok {
			return 0, false
		}
		switch x.Name {
		case "end":
			return 0, true
		case "start":
			return -wa.Width, true
		}
		return 0, false
	case *Call:
		if (x.Func != "+" && x.Func != "-") || len(x.Args) != 2 || !arrow.TypeEqual(x.Args[0].DataType(), vector.Timestamp) {
			return 0, false
		}
		l, ok := x.Args[1].(*Literal)
		if !ok {
			return 0, false
		}
		d, ok := l.Value.(arrow.Duration)
		if !ok {
			return 0, false
		}
		s, ok := endShiftExpr(n, x.Args[0], depth+1)
		if !ok {
			return 0, false
		}
		if x.Func == "-" {
			return s - int64(d), true
		}
		return s + int64(d), true
	}
	return 0, false
}
