package plan

import (
	"github.com/apache/arrow/go/v17/arrow"

	"github.com/arrowstream/arrowstream/vector"
)

// JoinSelfMax describes an inner stream-stream join of a windowed
// aggregation's output with the per-window maximum of one of its own
// value columns (Nexmark q5: `counts c JOIN (SELECT window AS w, max(num)
// AS maxn FROM counts GROUP BY window) m ON c.window = m.w AND c.num >=
// m.maxn`). In Append mode the aggregation X emits every group once, and
// all groups of one window in one epoch (its eviction key is the window);
// the max side reads all of X's output (no filter on its way), groups it
// by that window and drops late rows by window, so it drops a window's
// rows all or none. Hence the max of a window, when it reaches the join,
// is at least every row of X's output with that window, and a rows-side
// row whose value is below the largest value of its window among the
// epoch's rows can never satisfy `value >= max` (nor `value = max`): the
// join need not read it at all. JoinSelfMaxFor proves these facts on the
// plan; the join applies them (stateful/stateful_join_selfmax.go).
type JoinSelfMax struct {
	// Side is the rows side: 0 left, 1 right.
	Side int
	// ValueCol is the rows side's column compared with the max; WindowCol
	// its window column (a struct of start and end timestamps), both
	// ordinals of the rows side's input.
	ValueCol, WindowCol int
}

// JoinSelfMaxFor reports j's self max when its preconditions are proven:
// an inner join of two streaming inputs; an equality (not null-safe)
// between a column of one side (the rows side) and a column of the other
// that is, through projections, filters and aliases, the only grouping key
// of an aggregation A; a condition conjunct `r >= m`, `m <= r` or an
// equality `r = m` between an integral column r of the rows side and a
// column m that is max(a) of A; A's input and the rows side each lead,
// through projections that pass columns on and aliases (the rows side
// also through filters), to one aggregation X (the same node, or an equal
// subplan); A's key and the rows side's key column are the same column of
// X, a window struct that is X's first event-time key (its eviction key);
// a and r are the same integral value column of X. X must not be a
// session window aggregation. The caller checks Append mode.
func JoinSelfMaxFor(j *Join) (JoinSelfMax, bool) {
	if j == nil || j.Type != InnerJoin || !j.Left.IsStreaming() || !j.Right.IsStreaming() {
		return JoinSelfMax{}, false
	}
	lk, rk, nullSafe, residual := EquiJoinKeys(j)
	nl := j.Left.Schema().NumFields()
	var found JoinSelfMax
	ok := eachColumnKeySide(j, lk, rk, nullSafe, func(i, side int, rows, other Node, rc, mc *ColumnRef) bool {
		a, acol, ok := toAggregateOutput(other, mc.Index, true)
		if !ok || acol != 0 || len(a.GroupBy) != 1 {
			return false
		}
		// The value comparisons: equi keys and residual conjuncts.
		var pairs [][2]int // (rows column, other column)
		for k := range lk {
			if k == i || nullSafe[k] {
				continue
			}
			r, ok1 := lk[k].(*ColumnRef)
			m, ok2 := rk[k].(*ColumnRef)
			if ok1 && ok2 {
				if side == 1 {
					r, m = m, r
				}
				pairs = append(pairs, [2]int{r.Index, m.Index})
			}
		}
		pairs = append(pairs, atLeastPairs(residual, side, nl)...)
		for _, p := range pairs {
			if b, ok := selfMaxOf(rows, other, a, rc.Index, p[0], p[1]); ok {
				b.Side = side
				found = b
				return true
			}
		}
		return false
	})
	return found, ok
}

// atLeastPairs lists the conjuncts of residual that read `r >= m` (or
// `m <= r`, or `r = m`) for a column r of the rows side and m of the
// other, as (r, m) ordinals of their sides' inputs.
func atLeastPairs(residual Expr, side, nl int) [][2]int {
	var out [][2]int
	for _, c := range splitConjuncts(residual) {
		call, ok := c.(*Call)
		if !ok || len(call.Args) != 2 {
			continue
		}
		a, ok1 := call.Args[0].(*ColumnRef)
		b, ok2 := call.Args[1].(*ColumnRef)
		if !ok1 || !ok2 {
			continue
		}
		switch call.Func {
		case ">=", "=":
		case "<=":
			a, b = b, a
		default:
			continue
		}
		aRows := (a.Index < nl) == (side == 0)
		bRows := (b.Index < nl) == (side == 0)
		if !aRows || bRows {
			continue
		}
		r, m := a.Index, b.Index
		if side == 0 {
			m -= nl
		} else {
			r -= nl
		}
		out = append(out, [2]int{r, m})
	}
	return out
}

// selfMaxOf matches, for the grouping aggregation a of other (keyed by
// the rows side's column wcol), rows column rcol against other's column
// mcol as max of a's input, both read from one aggregation X's columns.
func selfMaxOf(rows, other Node, a *Aggregate, wcol, rcol, mcol int) (JoinSelfMax, bool) {
	if !vector.IsIntegral(rows.Schema().Field(rcol).Type) {
		return JoinSelfMax{}, false
	}
	ma, macol, ok := toAggregateOutput(other, mcol, true)
	if !ok || ma != a || macol < 1 {
		return JoinSelfMax{}, false
	}
	ag := a.Aggs[macol-1]
	if ag.Func != vector.AggMax || len(ag.Args) != 1 || ag.Distinct {
		return JoinSelfMax{}, false
	}
	arg, ok1 := ag.Args[0].(*ColumnRef)
	key, ok2 := a.GroupBy[0].Expr.(*ColumnRef)
	if !ok1 || !ok2 {
		return JoinSelfMax{}, false
	}
	// The max side reads all of X's output: no filter on its way.
	x, xArg, ok1 := toAggregateOutput(a.Input, arg.Index, false)
	x2, xKey, ok2 := toAggregateOutput(a.Input, key.Index, false)
	if !ok1 || !ok2 || x != x2 {
		return JoinSelfMax{}, false
	}
	y, yVal, ok1 := toAggregateOutput(rows, rcol, true)
	y2, yKey, ok2 := toAggregateOutput(rows, wcol, true)
	if !ok1 || !ok2 || y != y2 || yVal != xArg || yKey != xKey || !sameSubplan(x, y) {
		return JoinSelfMax{}, false
	}
	if xArg < len(x.GroupBy) || !vector.IsIntegral(x.Schema().Field(xArg).Type) ||
		!arrow.TypeEqual(x.Schema().Field(xArg).Type, rows.Schema().Field(rcol).Type) {
		return JoinSelfMax{}, false
	}
	if SessionKey(x) >= 0 || xKey >= len(x.GroupBy) || !isWindowStruct(x.Schema().Field(xKey).Type) {
		return JoinSelfMax{}, false
	}
	// X's eviction key is its first grouping key with a watermark.
	for k := range x.GroupBy {
		if _, ok := WatermarkDelay(x.Schema().Field(k)); ok {
			if k != xKey {
				return JoinSelfMax{}, false
			}
			return JoinSelfMax{ValueCol: rcol, WindowCol: wcol}, true
		}
	}
	return JoinSelfMax{}, false
}

// toAggregateOutput follows column col of n down through projections (a
// column passed on), aliases and, when filters is set, filters, to the
// aggregation that outputs it.
func toAggregateOutput(n Node, col int, filters bool) (*Aggregate, int, bool) {
	for {
		switch x := n.(type) {
		case *Project:
			c, ok := x.Exprs[col].Expr.(*ColumnRef)
			if !ok {
				return nil, 0, false
			}
			n, col = x.Input, c.Index
		case *SubqueryAlias:
			n = x.Input
		case *Filter:
			if !filters {
				return nil, 0, false
			}
			n = x.Input
		case *Aggregate:
			return x, col, true
		default:
			return nil, 0, false
		}
	}
}

// sameSubplan: x and y are one node, or equal deterministic subplans over
// the same streaming sources (SubplanKey), which give the same rows.
func sameSubplan(x, y Node) bool {
	if x == y {
		return true
	}
	tables := map[Table]int{}
	scan := func(s *Scan) (string, bool) {
		id, ok := tables[s.Table]
		if !ok {
			id = len(tables)
			tables[s.Table] = id
		}
		return string(rune('a' + id%26)), id < 26
	}
	kx, ok1 := SubplanKey(x, scan)
	ky, ok2 := SubplanKey(y, scan)
	return ok1 && ok2 && kx == ky
}

// isWindowStruct: a struct of two timestamps (a window's start and end).
func isWindowStruct(t arrow.DataType) bool {
	st, ok := t.(*arrow.StructType)
	if !ok || st.NumFields() != 2 {
		return false
	}
	return arrow.TypeEqual(st.Field(0).Type, vector.Timestamp) && arrow.TypeEqual(st.Field(1).Type, vector.Timestamp)
}
