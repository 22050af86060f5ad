package vector

import (
	"context"
	"errors"
	"fmt"
	"math/bits"

	"github.com/apache/arrow/go/v17/arrow"
	"github.com/apache/arrow/go/v17/arrow/array"
	"github.com/apache/arrow/go/v17/arrow/memory"
)

// LogicOp is AND or OR.
type LogicOp uint8

// The logical connectives.
const (
	LogicAnd LogicOp = iota
	LogicOr
)

// String is AND or OR.
func (op LogicOp) String() string {
	if op == LogicAnd {
		return "AND"
	}
	return "OR"
}

// Logical is AND or OR with SQL's three-valued logic: false AND null is
// false, true OR null is true, otherwise a null operand makes the result
// null. It works a word (64 rows) at a time on the operands' value and
// validity bitmaps.
//
// Like Spark, the right operand is only needed where the left one does not
// decide the row (not false for AND, not true for OR). It is evaluated over
// the whole batch first; if that raises a row error, it is evaluated again
// over just the rows that need it, so (b <> 0 AND a / b > 1) does not fail
// on b = 0. When the left operand decides every row, the right one is not
// evaluated at all.
type Logical struct {
	Op          LogicOp
	Left, Right Expr
}

// And returns (l AND r).
func And(l, r Expr) Expr { return &Logical{Op: LogicAnd, Left: l, Right: r} }

// Or returns (l OR r).
func Or(l, r Expr) Expr { return &Logical{Op: LogicOr, Left: l, Right: r} }

// String renders (l AND r) or (l OR r).
func (g *Logical) String() string {
	return "(" + g.Left.String() + " " + g.Op.String() + " " + g.Right.String() + ")"
}

func isBoolOrNull(dt arrow.DataType) bool { return dt.ID() == arrow.BOOL || dt.ID() == arrow.NULL }

// Bind implements Expr.
func (g *Logical) Bind(in *arrow.Schema, mem memory.Allocator) (Evaluator, error) {
	l, err := g.Left.Bind(in, mem)
	if err != nil {
		return nil, err
	}
	r, err := g.Right.Bind(in, mem)
	if err != nil {
		return nil, err
	}
	if !isBoolOrNull(l.DataType()) || !isBoolOrNull(r.DataType()) {
		return nil, newBindError(g, in, fmt.Errorf("cannot apply %s to %s and %s: %w", g.Op, TypeName(l.DataType()), TypeName(r.DataType()), ErrType))
	}
	return bindLogical(g.Op, l, r, mem), nil
}

// bindLogical simplifies constant operands away where the result does not
// depend on the other side.
func bindLogical(op LogicOp, l, r Evaluator, mem memory.Allocator) Evaluator {
	lv, lc := constValue(l)
	rv, rc := constValue(r)
	if lc && rc {
		return newConst(Boolean, logic3(op, lv, rv), mem)
	}
	// The deciding value: false for AND, true for OR.
	decides := op == LogicOr
	if rc {
		switch rv {
		case decides:
			return newConst(Boolean, decides, mem)
		case !decides:
			return asBoolean(l, mem)
		}
	}
	if lc {
		switch lv {
		case decides:
			// Spark does not evaluate the right side at all here.
			return newConst(Boolean, decides, mem)
		case !decides:
			return asBoolean(r, mem)
		}
	}
	return &logicEval{op: op, l: l, r: r, rConst: rc, lConst: lc, mem: mem}
}

// asBoolean types a Null-typed evaluator as boolean (x AND true = x).
func asBoolean(ev Evaluator, mem memory.Allocator) Evaluator {
	if ev.DataType().ID() == arrow.NULL {
		return &nullAsEval{dt: Boolean, mem: mem}
	}
	return ev
}

// logic3 is three-valued AND/OR of two constants (nil: null).
func logic3(op LogicOp, a, b any) any {
	decides := op == LogicOr
	if a == decides || b == decides {
		return decides
	}
	if a == nil || b == nil {
		return nil
	}
	return !decides
}

// logicEval evaluates AND / OR; at most one operand is a constant NULL
// (the others were simplified at bind time).
type logicEval struct {
	op             LogicOp
	l, r           Evaluator
	lConst, rConst bool
	mem            memory.Allocator
}

func (e *logicEval) DataType() arrow.DataType { return Boolean }

func (e *logicEval) Eval(ctx context.Context, rec arrow.Record) (arrow.Array, error) {
	n := int(rec.NumRows())
	first, second := e.l, e.r
	if e.lConst {
		// NULL op x: only x needs evaluating.
		first, second = e.r, e.l
	}
	la, err := first.Eval(ctx, rec)
	if err != nil {
		return nil, err
	}
	defer la.Release()
	lv, lx := validityWords(la), boolValueWords(la)
	rv, rx := constWords(false), constWords(false) // a NULL constant
	if !e.lConst && !e.rConst {
		// The rows the left side does not decide.
		need := make([]uint64, words64(n))
		pending := uint64(0)
		for w := range need {
			decided := lv.word(w) & ^lx.word(w)
			if e.op == LogicOr {
				decided = lv.word(w) & lx.word(w)
			}
			need[w] = ^decided
			pending |= need[w] & wordMask(w, n)
		}
		if pending == 0 && la.DataType().ID() == arrow.BOOL {
			la.Retain()
			return la, nil
		}
		ra, err := evalWhere(ctx, second, rec, need, n, e.mem)
		if err != nil {
			return nil, err
		}
		defer ra.Release()
		rv, rx = validityWords(ra), boolValueWords(ra)
	}
	return logicCombine(e.mem, e.op, n, lv, lx, rv, rx), nil
}

// logicCombine applies three-valued AND / OR to operands given as
// validity and value words.
func logicCombine(mem memory.Allocator, op LogicOp, n int, lv, lx, rv, rx wordSource) arrow.Array {
	vbuf, vals := newBitmap(mem, n)
	mbuf, valid := newBitmap(mem, n)
	for w := range vals {
		a, x, b, y := lv.word(w), lx.word(w), rv.word(w), rx.word(w)
		if op == LogicAnd {
			// Valid when both are, or when either is a valid false.
			valid[w] = a&b | a&^x | b&^y
			vals[w] = x & y
		} else {
			valid[w] = a&b | a&x | b&y
			vals[w] = x | y
		}
	}
	validity, nulls := finishValidity(mbuf, valid, n)
	return boolArrayOwning(n, vbuf, validity, nulls)
}

// wordMask is the mask of the rows of word w that exist in an n-row batch.
func wordMask(w, n int) uint64 {
	if (w+1)*64 <= n {
		return ^uint64(0)
	}
	return tailMask(n)
}

// evalWhere evaluates ev for the rows of rec whose bit is set in need (a
// word bitmap); rows not needed may come back with any value, or null.
//
// It evaluates the whole batch first, which is cheapest when nothing goes
// wrong. If that fails with a row error (*EvalError) in a row that is not
// needed, it evaluates again over just the needed rows (gathered with
// TakeRecord) and scatters the result back, so that per-row laziness (a
// CASE branch, the right side of AND) is honoured as in Spark. Errors of
// that second evaluation name the row of rec.
func evalWhere(ctx context.Context, ev Evaluator, rec arrow.Record, need []uint64, n int, mem memory.Allocator) (arrow.Array, error) {
	arr, err := ev.Eval(ctx, rec)
	if err == nil {
		return arr, nil
	}
	return evalNeeded(ctx, ev, rec, need, n, mem, err)
}

// evalNeeded is evalWhere after the evaluation of the whole batch failed
// with err.
func evalNeeded(ctx context.Context, ev Evaluator, rec arrow.Record, need []uint64, n int, mem memory.Allocator, err error) (arrow.Array, error) {
	var ee *EvalError
	if !errors.As(err, &ee) || (ee.Row >= 0 && ee.Row < n && wordBit(need, ee.Row)) {
		return nil, err
	}
	idx := setBitIndices(need, n)
	if len(idx) == 0 {
		return array.MakeArrayOfNull(mem, ev.DataType(), n), nil
	}
	sub, err := TakeRecord(mem, rec, idx)
	if err != nil {
		return nil, err
	}
	part, err := ev.Eval(ctx, sub)
	sub.Release()
	if err != nil {
		if errors.As(err, &ee) && ee.Row >= 0 && ee.Row < len(idx) {
			moved := *ee
			moved.Row = int(idx[ee.Row])
			return nil, &moved
		}
		return nil, err
	}
	defer part.Release()
	pos := make([]int32, n)
	for i := range pos {
		pos[i] = -1
	}
	for j, i := range idx {
		pos[i] = int32(j)
	}
	return Take(mem, part, pos)
}

// setBitIndices lists the rows (< n) whose bit is set.
func setBitIndices(words []uint64, n int) []int32 {
	var idx []int32
	for w, word := range words {
		word &= wordMask(w, n)
		for word != 0 {
			idx = append(idx, int32(w*64+bits.TrailingZeros64(word)))
			word &= word - 1
		}
	}
	return idx
}

// NotExpr is (NOT x): null stays null.
type NotExpr struct {
	Child Expr
}

// Not returns (NOT e).
func Not(e Expr) Expr { return &NotExpr{Child: e} }

// String renders (NOT x).
func (n *NotExpr) String() string { return "(NOT " + n.Child.String() + ")" }

// Bind implements Expr.
func (n *NotExpr) Bind(in *arrow.Schema, mem memory.Allocator) (Evaluator, error) {
	c, err := n.Child.Bind(in, mem)
	if err != nil {
		return nil, err
	}
	if !isBoolOrNull(c.DataType()) {
		return nil, newBindError(n, in, fmt.Errorf("cannot apply NOT to %s: %w", TypeName(c.DataType()), ErrType))
	}
	if v, ok := constValue(c); ok {
		if v == nil {
			return newConst(Boolean, nil, mem), nil
		}
		return newConst(Boolean, !v.(bool), mem), nil
	}
	if c.DataType().ID() == arrow.NULL {
		return &nullAsEval{dt: Boolean, mem: mem}, nil
	}
	return &notEval{child: c, mem: mem}, nil
}

type notEval struct {
	child Evaluator
	mem   memory.Allocator
}

func (e *notEval) DataType() arrow.DataType { return Boolean }

func (e *notEval) Eval(ctx context.Context, rec arrow.Record) (arrow.Array, error) {
	arr, err := e.child.Eval(ctx, rec)
	if err != nil {
		return nil, err
	}
	defer arr.Release()
	n := arr.Len()
	vbuf, vals := newBitmap(e.mem, n)
	x := boolValueWords(arr)
	for w := range vals {
		vals[w] = ^x.word(w)
	}
	validity, nulls := copyValidity(e.mem, arr)
	return boolArrayOwning(n, vbuf, validity, nulls), nil
}

// NullTest is (x IS NULL), or (x IS NOT NULL) when Negated; it is never
// null itself.
type NullTest struct {
	Child   Expr
	Negated bool
}

// IsNull returns (e IS NULL).
func IsNull(e Expr) Expr { return &NullTest{Child: e} }

// IsNotNull returns (e IS NOT NULL).
func IsNotNull(e Expr) Expr { return &NullTest{Child: e, Negated: true} }

// String renders (x IS NULL) or (x IS NOT NULL).
func (n *NullTest) String() string {
	if n.Negated {
		return "(" + n.Child.String() + " IS NOT NULL)"
	}
	return "(" + n.Child.String() + " IS NULL)"
}

// Bind implements Expr.
func (n *NullTest) Bind(in *arrow.Schema, mem memory.Allocator) (Evaluator, error) {
	c, err := n.Child.Bind(in, mem)
	if err != nil {
		return nil, err
	}
	return foldIfConstant(&isNullEval{child: c, negate: n.Negated, mem: mem}, mem, c), nil
}

type isNullEval struct {
	child  Evaluator
	negate bool
	mem    memory.Allocator
}

func (e *isNullEval) DataType() arrow.DataType { return Boolean }

func (e *isNullEval) Eval(ctx context.Context, rec arrow.Record) (arrow.Array, error) {
	arr, err := e.child.Eval(ctx, rec)
	if err != nil {
		return nil, err
	}
	defer arr.Release()
	n := arr.Len()
	vbuf, vals := newBitmap(e.mem, n)
	v := validityWords(arr)
	flip := uint64(0)
	if !e.negate {
		flip = ^flip
	}
	for w := range vals {
		vals[w] = v.word(w) ^ flip
	}
	return boolArrayOwning(n, vbuf, nil, 0), nil
}

// nullAsEval is an all-null column of type dt (a Null-typed input used
// where dt is expected).
type nullAsEval struct {
	dt  arrow.DataType
	mem memory.Allocator
}

func (e *nullAsEval) DataType() arrow.DataType { return e.dt }

func (e *nullAsEval) Eval(_ context.Context, rec arrow.Record) (arrow.Array, error) {
	return array.MakeArrayOfNull(e.mem, e.dt, int(rec.NumRows())), nil
}
