package stateful

import (
	"github.com/apache/arrow/go/v17/arrow"
	"github.com/apache/arrow/go/v17/arrow/bitutil"

	"github.com/arrowstream/arrowstream/plan"
)

// A deferred residual (stateful_join_output.go) that is a conjunction of
// comparisons between two columns of one integral type — a range join's
// condition, such as Nexmark q4's `B.dateTime BETWEEN A.dateTime AND
// A.expires` — is evaluated on the candidate pairs in place: each
// comparison reads its two columns' values at the pairs' rows straight
// from the records the pairs borrow, and drops the pairs that fail from
// the pairs' own lists. The narrow residual (stateful_join_residual.go)
// gathered the condition's columns for every candidate into a fresh
// record first (three columns of 183.9 K candidates a q4 run), evaluated
// the expression over it into a Boolean array and then a []bool; this
// reads each value once and writes nothing but the lists.
//
// A comparison is TRUE only when both values are non-null, and a
// conjunction of comparisons TRUE only when each is: exactly the pairs
// the expression keeps (a NULL result does not pass). Anything else
// (or, not, arithmetic, casts, literals, other types) is left to the
// expression.

// pairOp is a comparison of a pairCmp, its operands ordered so that only
// these three remain (a > b is b < a). An equality of two columns of the
// sides is a join key, never left in the residual.
type pairOp uint8

const (
	pairLT pairOp = iota
	pairLE
	pairNE
)

// pairCol is a column of one side of the join (0 left, 1 right): its
// ordinal in that side's records.
type pairCol struct {
	side, col int
}

// pairCmp is one comparison of the condition: a op b.
type pairCmp struct {
	op   pairOp
	a, b pairCol
	typ  arrow.DataType // both columns'
	wide bool           // 64-bit values, else 32-bit
}

// pairCond is a residual condition evaluated in place: the conjunction
// of cmps.
type pairCond struct {
	cmps []pairCmp
}

// newPairCond returns residual as a pairCond over the joined schema,
// whose first nLeft columns are the left side's; nil when it is not a
// conjunction of comparisons of two columns of one integral type.
func newPairCond(residual plan.Expr, joined *arrow.Schema, nLeft int) *pairCond {
	if residual == nil {
		return nil
	}
	pc := &pairCond{}
	if !pc.add(residual, joined, nLeft) || len(pc.cmps) == 0 {
		return nil
	}
	return pc
}

// add adds the comparisons of e, telling whether it is one of them or a
// conjunction of them.
func (pc *pairCond) add(e plan.Expr, joined *arrow.Schema, nLeft int) bool {
	c, ok := e.(*plan.Call)
	if !ok {
		return false
	}
	switch {
	case c.Func == "and" && len(c.Args) == 2:
		return pc.add(c.Args[0], joined, nLeft) && pc.add(c.Args[1], joined, nLeft)
	case c.Func == "between" && len(c.Args) == 3:
		// x BETWEEN lo AND hi is lo <= x AND x <= hi.
		return pc.cmp(pairLE, c.Args[1], c.Args[0], joined, nLeft) &&
			pc.cmp(pairLE, c.Args[0], c.Args[2], joined, nLeft)
	case len(c.Args) != 2:
		return false
	}
	a, b := c.Args[0], c.Args[1]
	switch c.Func {
	case "<":
		return pc.cmp(pairLT, a, b, joined, nLeft)
	case "<=":
		return pc.cmp(pairLE, a, b, joined, nLeft)
	case ">":
		return pc.cmp(pairLT, b, a, joined, nLeft)
	case ">=":
		return pc.cmp(pairLE, b, a, joined, nLeft)
	case "<>":
		return pc.cmp(pairNE, a, b, joined, nLeft)
	}
	return false
}

// cmp adds a op b when both are columns of one integral type.
func (pc *pairCond) cmp(op pairOp, a, b plan.Expr, joined *arrow.Schema, nLeft int) bool {
	ca, ok := a.(*plan.ColumnRef)
	if !ok {
		return false
	}
	cb, ok := b.(*plan.ColumnRef)
	if !ok {
		return false
	}
	n := joined.NumFields()
	if ca.Index < 0 || ca.Index >= n || cb.Index < 0 || cb.Index >= n {
		return false
	}
	ta, tb := joined.Field(ca.Index).Type, joined.Field(cb.Index).Type
	wide, ok := pairWidth(ta)
	if !ok || !arrow.TypeEqual(ta, tb) {
		return false
	}
	at := func(i int) pairCol {
		if i < nLeft {
			return pairCol{side: 0, col: i}
		}
		return pairCol{side: 1, col: i - nLeft}
	}
	pc.cmps = append(pc.cmps, pairCmp{op: op, a: at(ca.Index), b: at(cb.Index), typ: ta, wide: wide})
	return true
}

// pairWidth tells whether t's values compare as signed integers of one
// storage word, and whether that word is 64-bit.
func pairWidth(t arrow.DataType) (wide, ok bool) {
	switch t.ID() {
	case arrow.INT64, arrow.TIMESTAMP, arrow.DATE64, arrow.DURATION:
		return true, true
	case arrow.INT32, arrow.DATE32:
		return false, true
	}
	return false, false
}

// fits tells whether every column the condition reads in pairs' records
// has the type it was planned for (their codec schemas'; a record of
// another layout is left to the expression).
func (pc *pairCond) fits(pairs []joinOutPairs) bool {
	for _, p := range pairs {
		for _, c := range pc.cmps {
			for _, o := range [2]pairCol{c.a, c.b} {
				rec := p.l
				if o.side == 1 {
					rec = p.r
				}
				if o.col >= int(rec.NumCols()) {
					return false
				}
				// The same type value is the common case; TypeEqual
				// allocates its options.
				if dt := rec.Column(o.col).DataType(); dt != c.typ && !arrow.TypeEqual(dt, c.typ) {
					return false
				}
			}
		}
	}
	return true
}

// filter moves the pairs of p that pass to the front of its lists, in
// their order, and returns how many pass. Each comparison reads only the
// pairs that passed the ones before it.
func (pc *pairCond) filter(p joinOutPairs) int {
	n := len(p.li)
	for _, c := range pc.cmps {
		if n == 0 {
			break
		}
		a, b := pairArg(p, c.a), pairArg(p, c.b)
		if c.wide {
			n = cmpPairs(c.op, a.values64(), b.values64(), a, b, c.a.side, c.b.side, p.li[:n], p.ri[:n])
		} else {
			n = cmpPairs(c.op, a.values32(), b.values32(), a, b, c.a.side, c.b.side, p.li[:n], p.ri[:n])
		}
	}
	return n
}

// pairColumn is a column read in place: its validity bitmap (nil: no
// nulls) and offset.
type pairColumn struct {
	data   arrow.ArrayData
	valid  []byte
	offset int
}

func pairArg(p joinOutPairs, o pairCol) pairColumn {
	rec := p.l
	if o.side == 1 {
		rec = p.r
	}
	d := rec.Column(o.col).Data()
	c := pairColumn{data: d, offset: d.Offset()}
	if v := d.Buffers()[0]; v != nil && v.Len() > 0 {
		c.valid = v.Bytes()
	}
	return c
}

// values64 and values32 are c's values from its first row on (empty
// for a column of no rows, whose values buffer may be absent).
func (c pairColumn) values64() []int64 {
	buf := c.data.Buffers()[1]
	if buf == nil || c.data.Len() == 0 {
		return nil
	}
	return arrow.Int64Traits.CastFromBytes(buf.Bytes())[c.offset : c.offset+c.data.Len()]
}

func (c pairColumn) values32() []int32 {
	buf := c.data.Buffers()[1]
	if buf == nil || c.data.Len() == 0 {
		return nil
	}
	return arrow.Int32Traits.CastFromBytes(buf.Bytes())[c.offset : c.offset+c.data.Len()]
}

// cmpPairs keeps the pairs (li, ri) whose values av op bv are both
// non-null and compare true, moved to the front of li and ri; a's rows
// are li's when sa is 0, else ri's (b's by sb). It returns how many.
func cmpPairs[T int32 | int64](op pairOp, av, bv []T, a, b pairColumn, sa, sb int, li, ri []int32) int {
	nulls := a.valid != nil || b.valid != nil
	m := 0
	for k, l := range li {
		r := ri[k]
		ia, ib := l, l
		if sa == 1 {
			ia = r
		}
		if sb == 1 {
			ib = r
		}
		x, y := av[ia], bv[ib]
		var ok bool
		switch op {
		case pairLT:
			ok = x < y
		case pairLE:
			ok = x <= y
		default:
			ok = x != y
		}
		if ok && nulls {
			ok = (a.valid == nil || bitutil.BitIsSet(a.valid, a.offset+int(ia))) &&
				(b.valid == nil || bitutil.BitIsSet(b.valid, b.offset+int(ib)))
		}
		if ok {
			li[m], ri[m] = l, r
			m++
		}
	}
	return m
}

// filterPairsInPlace is filterPairs with the in-place condition: the
// passing pairs of each group moved to the front of its lists (the
// epoch's, read no more after this filter), the output's columns
// gathered for them alone.
func (s *statefulJoin) filterPairsInPlace(pairs []joinOutPairs) (arrow.Record, error) {
	kept := s.scratch.kept[:0]
	total, pass := 0, 0
	for _, p := range pairs {
		total += len(p.li)
		m := s.inPlace.filter(p)
		pass += m
		if m > 0 {
			kept = append(kept, joinOutPairs{l: p.l, r: p.r, li: p.li[:m:m], ri: p.ri[:m:m]})
		}
	}
	defer func() {
		clear(kept) // the records are pairs'; the scratch keeps none
		s.scratch.kept = kept[:0]
	}()
	switch {
	case pass == 0:
		return nil, nil
	case pass == total:
		return s.gatherPairs(s.reducePairs(pairs), s.out)
	}
	return s.gatherPairs(s.reducePairs(kept), s.out)
}
