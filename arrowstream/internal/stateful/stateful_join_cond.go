package stateful

import (
	"github.com/apache/arrow/go/v17/arrow"
	"github.com/apache/arrow/go/v17/arrow/array"

	"github.com/arrowstream/arrowstream/plan"
)

// The stream-stream join's reading of its condition: state watermarks
// (key and range-condition value watermarks, docs/semantics.md §7) and the
// parts of the condition over one side only.

// findEviction derives each side's state watermark: a key watermark when
// a join key pair is an event-time column, else value watermarks from
// range conditions over the two event-time columns.
func (s *statefulJoin) findEviction(lk, rk []plan.Expr, residual plan.Expr, nl int) {
	for i := range lk {
		l, lok := lk[i].(*plan.ColumnRef)
		r, rok := rk[i].(*plan.ColumnRef)
		if !lok || !rok {
			continue
		}
		_, lw := plan.WatermarkDelay(s.sides[0].schema.Field(l.Index))
		_, rw := plan.WatermarkDelay(s.sides[1].schema.Field(r.Index))
		if lw || rw {
			s.sides[0].evict, s.sides[0].evictCol = evictKey, l.Index
			s.sides[1].evict, s.sides[1].evictCol = evictKey, r.Index
			return
		}
	}
	if residual == nil {
		return
	}
	// used[i] is the other side's column whose bound evicts side i.
	var used [2]struct {
		col   int
		shift int64
		late  bool // a derived column: the other side drops rows behind its bound
	}
	for _, c := range rangeConjuncts(residual) {
		// c: a OP b with OP in < <= > >=.
		la, ca, oka := timeTerm(c.Args[0])
		lb, cb, okb := timeTerm(c.Args[1])
		if !oka || !okb {
			continue
		}
		op := c.Func
		sa, sb := la.Index < nl, lb.Index < nl
		if sa == sb {
			continue
		}
		if !sa { // make a the left term: b OP a ⇔ a flip(OP) b
			la, ca, lb, cb = lb, cb, la, ca
			op = map[string]string{"<": ">", "<=": ">=", ">": "<", ">=": "<="}[op]
		}
		lcol, rcol := la.Index, lb.Index-nl
		// Each column is an event-time column (shift 0) or derived from
		// one (plan.WatermarkShiftKey): future rows exceed W + shift.
		lf, rf := s.sides[0].schema.Field(lcol), s.sides[1].schema.Field(rcol)
		ls, lok := plan.WatermarkBound(lf)
		rs, rok := plan.WatermarkBound(rf)
		if !lok || !rok {
			continue
		}
		// L + ca OP R + cb ⇔ L − R OP c.
		c := cb - ca
		strict := op == "<" || op == ">"
		adj := int64(0)
		if !strict {
			adj = -1000
		}
		var i, col, other int
		var off, shift int64
		var otherField arrow.Field
		switch op {
		case ">", ">=": // L > R + c, R > W + rs → L > W + rs + c
			i, off, col, other, shift, otherField = 0, rs+c+adj, lcol, rcol, rs, rf
		default: // L < R + c → R > L − c > W + ls − c
			i, off, col, other, shift, otherField = 1, ls-c+adj, rcol, lcol, ls, lf
		}
		side := s.sides[i]
		if side.evict == evictValue && side.offset <= off {
			continue
		}
		side.evict, side.offset, side.evictCol = evictValue, off, col
		_, real := plan.WatermarkDelay(otherField)
		used[i].col, used[i].shift, used[i].late = other, shift, !real
	}
	for i, u := range used {
		if s.sides[i].evict == evictValue && u.late {
			o := s.sides[1-i]
			o.derivedLate = &derivedLate{col: u.col, shiftUs: u.shift}
		}
	}
}

// derivedLate is a derived column (plan.WatermarkShiftKey) whose bound
// evicts the other side's state: a row at or behind the late-event
// watermark + shift is dropped as late, as a row is by its event time, so
// that no row the evicted state could have matched arrives afterwards.
type derivedLate struct {
	col     int
	shiftUs int64
}

// rangeConjuncts splits e into its AND-ed comparisons (between expanded).
func rangeConjuncts(e plan.Expr) []*plan.Call {
	c, ok := e.(*plan.Call)
	if !ok {
		return nil
	}
	switch c.Func {
	case "and":
		return append(rangeConjuncts(c.Args[0]), rangeConjuncts(c.Args[1])...)
	case "between":
		return []*plan.Call{
			{Func: ">=", Args: []plan.Expr{c.Args[0], c.Args[1]}},
			{Func: "<=", Args: []plan.Expr{c.Args[0], c.Args[2]}},
		}
	case "<", "<=", ">", ">=":
		return []*plan.Call{c}
	}
	return nil
}

// timeTerm matches col, col + interval, col − interval: the column and
// the constant offset in µs.
func timeTerm(e plan.Expr) (*plan.ColumnRef, int64, bool) {
	switch x := e.(type) {
	case *plan.ColumnRef:
		return x, 0, x.Type.ID() == arrow.TIMESTAMP
	case *plan.Call:
		if (x.Func == "+" || x.Func == "-") && len(x.Args) == 2 {
			col, off, ok := timeTerm(x.Args[0])
			lit, isLit := x.Args[1].(*plan.Literal)
			if !ok || !isLit {
				return nil, 0, false
			}
			d, isDur := lit.Value.(arrow.Duration)
			if !isDur {
				return nil, 0, false
			}
			if x.Func == "-" {
				d = -d
			}
			return col, off + int64(d), true
		}
	}
	return nil, 0, false
}

// sideOnlyConditions splits the conjuncts of the residual that read one
// side only (Spark's leftSideOnly / rightSideOnly).
func (s *statefulJoin) sideOnlyConditions(residual plan.Expr, nl int) error {
	if residual == nil {
		return nil
	}
	var only [2][]plan.Expr
	var split func(e plan.Expr)
	split = func(e plan.Expr) {
		if c, ok := e.(*plan.Call); ok && c.Func == "and" {
			split(c.Args[0])
			split(c.Args[1])
			return
		}
		cols := plan.Columns(e)
		if len(cols) == 0 {
			return
		}
		l, r := false, false
		for _, c := range cols {
			l, r = l || c < nl, r || c >= nl
		}
		switch {
		case l && !r:
			only[0] = append(only[0], e)
		case r && !l:
			shifted, _ := plan.Transform(e, func(x plan.Expr) (plan.Expr, error) {
				if c, ok := x.(*plan.ColumnRef); ok {
					cp := *c
					cp.Index -= nl
					return &cp, nil
				}
				return x, nil
			})
			only[1] = append(only[1], shifted)
		}
	}
	split(residual)
	for i, es := range only {
		var conj plan.Expr
		for _, e := range es {
			if conj == nil {
				conj = e
			} else {
				conj = &plan.Call{Func: "and", Args: []plan.Expr{conj, e}, Type: arrow.FixedWidthTypes.Boolean, Null: true}
			}
		}
		if conj == nil {
			continue
		}
		v, err := plan.ToVectorExpr(conj, &plan.Env{})
		if err != nil {
			return err
		}
		s.sides[i].only = v
	}
	return nil
}

// timeAt returns the event time (µs) of row i of a timestamp column or
// the end of a window struct column.
func timeAt(a arrow.Array, i int) (int64, bool) {
	if a.IsNull(i) {
		return 0, false
	}
	switch c := a.(type) {
	case *array.Timestamp:
		return int64(c.Value(i)), true
	case *array.Struct:
		if c.NumField() >= 2 {
			if end, ok := c.Field(1).(*array.Timestamp); ok && end.IsValid(i) {
				return int64(end.Value(i)), true
			}
		}
	}
	return 0, false
}
