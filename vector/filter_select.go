package vector

import (
	"bytes"

	"github.com/apache/arrow/go/v17/arrow"
	"github.com/apache/arrow/go/v17/arrow/bitutil"
	"github.com/apache/arrow/go/v17/arrow/memory"
)

// selNode is a filter condition that selects rows without a boolean mask:
// refine narrows a selection to the rows for which the condition is true
// (false and null rows are dropped, as WHERE drops them). A conjunction
// refines its operands' selections one after the other, so each operand
// reads only the rows the previous ones kept, and a disjunction unites
// theirs; neither materialises the boolean columns of its operands (the
// general path evaluates every operand over the whole batch into a mask,
// then combines the masks, then reads the final one).
//
// Three-valued logic needs no masks here: a row passes (a AND b) when both
// are true and (a OR b) when either is, whatever the other is; only NOT
// turns a null into something else, and it is not served.
//
// Filter uses it for batches of at most selTreeMaxRows rows, where the
// masks' allocations (fresh memory in a short-lived query) cost more than
// their word-at-a-time kernels save; a row at a time, this path is slower
// than those kernels (BenchmarkFilterSelectionTree/all, q3's persons'
// condition, load 50: 22 µs against 33 µs for 256 rows, 56–126 µs against
// 21–72 µs for 1024, about 2× slower for 4096 and 64K), so larger batches
// keep the masks.
type selNode interface {
	// refine returns the rows of rec that pass: out of every row when all
	// (sel's storage then has room for every row of rec), else out of the
	// rows sel holds (increasing). The result is in sel's storage and
	// increasing.
	refine(rec arrow.Record, sel []int32, all bool) []int32
}

// selTreeMaxRows is the largest batch Filter selects through a selNode.
const selTreeMaxRows = 512

// newSelNode returns the mask-free selection of pred, or nil when some
// part of it is not served (then the predicate is evaluated as a mask).
// Served: comparisons of a top-level integer-like column with a constant
// (directCompare), = and <> of a top-level string column with a string
// constant, IS [NOT] NULL of a top-level column, and AND and OR of served
// conditions.
func newSelNode(pred Expr, in *arrow.Schema, mem memory.Allocator) selNode {
	switch p := pred.(type) {
	case *Comparison:
		if d := newDirectCompare(p, in, mem); d != nil {
			return d
		}
		return newStringCompare(p, in, mem)
	case *NullTest:
		col, ok := topColumn(p.Child, in, mem)
		if !ok {
			return nil
		}
		return &nullSel{col: col, notNull: p.Negated}
	case *Logical:
		l := newSelNode(p.Left, in, mem)
		if l == nil {
			return nil
		}
		r := newSelNode(p.Right, in, mem)
		if r == nil {
			return nil
		}
		if p.Op == LogicAnd {
			return &andSel{kids: append(andKids(l), andKids(r)...)}
		}
		return &orSel{kids: append(orKids(l), orKids(r)...)}
	}
	return nil
}

// andKids and orKids flatten nested connectives of the same kind, so that
// a chain of n ORs unites n selections once.
func andKids(n selNode) []selNode {
	if a, ok := n.(*andSel); ok {
		return a.kids
	}
	return []selNode{n}
}

func orKids(n selNode) []selNode {
	if o, ok := n.(*orSel); ok {
		return o.kids
	}
	return []selNode{n}
}

// topColumn reports the ordinal of e when it reads one top-level column
// as it is (no cast, no field access).
func topColumn(e Expr, in *arrow.Schema, mem memory.Allocator) (int, bool) {
	ev, err := e.Bind(in, mem)
	if err != nil {
		return 0, false
	}
	bc, ok := ev.(bareColumn)
	if !ok {
		return 0, false
	}
	col, top := bc.Column()
	return col, top
}

// allRows fills sel's storage with every row of an n-row batch.
func allRows(sel []int32, n int) []int32 {
	sel = sel[:n]
	for i := range sel {
		sel[i] = int32(i)
	}
	return sel
}

// dropNulls removes the rows of sel where arr is null.
func dropNulls(arr arrow.Array, sel []int32) []int32 {
	if arr.NullN() == 0 {
		return sel
	}
	bm, off := arr.NullBitmapBytes(), arr.Data().Offset()
	k := 0
	for _, i := range sel {
		sel[k] = i
		k += int(b2u(bitutil.BitIsSet(bm, off+int(i))))
	}
	return sel[:k]
}

// nullSel is (column IS NULL) or (column IS NOT NULL).
type nullSel struct {
	col     int
	notNull bool
}

func (s *nullSel) refine(rec arrow.Record, sel []int32, all bool) []int32 {
	arr := rec.Column(s.col)
	n := arr.Len()
	if s.notNull {
		if all {
			if arr.NullN() == 0 {
				return allRows(sel, n)
			}
			return selectValid(sel[:0], arr)
		}
		return dropNulls(arr, sel)
	}
	if arr.NullN() == 0 {
		return sel[:0]
	}
	if all {
		sel = allRows(sel, n)
	}
	if arr.NullN() == n {
		return sel
	}
	bm, off := arr.NullBitmapBytes(), arr.Data().Offset()
	k := 0
	for _, i := range sel {
		sel[k] = i
		k += int(b2u(!bitutil.BitIsSet(bm, off+int(i))))
	}
	return sel[:k]
}

// stringCompare is (column = constant) or (column <> constant) over a
// top-level string column: byte equality, as the comparison kernel's.
type stringCompare struct {
	col   int
	notEq bool
	c     []byte
}

// newStringCompare serves = and <> of a plain string column and a string
// constant (either side); nil otherwise (a dictionary, a cast, ordering).
func newStringCompare(cmp *Comparison, in *arrow.Schema, mem memory.Allocator) selNode {
	if cmp.Op != CompareEq && cmp.Op != CompareNotEq {
		return nil
	}
	colExpr, constExpr := cmp.Left, cmp.Right
	if _, isConst := bindConst(cmp.Left, in, mem); isConst {
		colExpr, constExpr = cmp.Right, cmp.Left
	}
	col, ok := topColumn(colExpr, in, mem)
	if !ok || in.Field(col).Type.ID() != arrow.STRING {
		return nil
	}
	ev, err := constExpr.Bind(in, mem)
	if err != nil || ev.DataType().ID() != arrow.STRING {
		return nil
	}
	c, ok := ev.(ConstantEvaluator)
	if !ok {
		return nil
	}
	s, ok := c.Value().(string)
	if !ok {
		return nil
	}
	return &stringCompare{col: col, notEq: cmp.Op == CompareNotEq, c: []byte(s)}
}

func (s *stringCompare) refine(rec arrow.Record, sel []int32, all bool) []int32 {
	arr := rec.Column(s.col)
	offs, data := binaryValues(arr)
	c, want := s.c, !s.notEq
	k := 0
	if all {
		n := arr.Len()
		sel = sel[:n]
		for i := 0; i < n; i++ {
			b, e := offs[i], offs[i+1]
			sel[k] = int32(i)
			k += int(b2u((int(e-b) == len(c) && bytes.Equal(data[b:e], c)) == want))
		}
	} else {
		for _, i := range sel {
			b, e := offs[i], offs[i+1]
			sel[k] = i
			k += int(b2u((int(e-b) == len(c) && bytes.Equal(data[b:e], c)) == want))
		}
	}
	return dropNulls(arr, sel[:k])
}

// andSel passes the rows every operand passes, each operand reading only
// the rows the ones before it kept.
type andSel struct{ kids []selNode }

func (s *andSel) refine(rec arrow.Record, sel []int32, all bool) []int32 {
	for _, k := range s.kids {
		sel = k.refine(rec, sel, all)
		all = false
		if len(sel) == 0 {
			break
		}
	}
	return sel
}

// orSel passes the rows some operand passes: each operand refines its own
// copy of the candidates, and the candidates marked by any of them are
// kept, in order. The scratch is kept across batches.
type orSel struct {
	kids []selNode
	buf  []int32 // one operand's selection
	mark []bool  // per row of the batch: passed by some operand
}

func (s *orSel) refine(rec arrow.Record, sel []int32, all bool) []int32 {
	n := int(rec.NumRows())
	if cap(s.buf) < n {
		s.buf = make([]int32, n)
	}
	if cap(s.mark) < n {
		s.mark = make([]bool, n)
	}
	mark := s.mark[:n]
	for _, k := range s.kids {
		buf := s.buf[:n]
		if !all {
			buf = buf[:copy(buf, sel)]
		}
		for _, i := range k.refine(rec, buf, all) {
			mark[i] = true
		}
	}
	if all {
		sel = sel[:n]
		k := 0
		for i := range mark {
			sel[k] = int32(i)
			k += int(b2u(mark[i]))
			mark[i] = false
		}
		return sel[:k]
	}
	k := 0
	for _, i := range sel {
		sel[k] = i
		k += int(b2u(mark[i]))
		mark[i] = false
	}
	return sel[:k]
}
