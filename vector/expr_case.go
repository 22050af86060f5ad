package vector

import (
	"context"
	"fmt"
	"strings"

	"github.com/apache/arrow/go/v17/arrow"
	"github.com/apache/arrow/go/v17/arrow/memory"
)

// When is one WHEN cond THEN value arm of a CASE.
type When struct {
	Cond, Then Expr
}

// CaseExpr is CASE WHEN c1 THEN v1 ... ELSE e END: the value of the first
// arm whose condition is true (null counts as not true), else e, or NULL
// without ELSE. The result type is the common type of the values.
//
// Evaluation follows Spark's per-row laziness: a condition is evaluated for
// the rows no earlier arm took, and a value for the rows its arm took. Each
// is evaluated over the whole batch first (cheapest when nothing fails) and
// over just its rows only when that raises a row error, so CASE WHEN b <> 0
// THEN a / b END does not fail on b = 0. An arm that takes no row is not
// evaluated. Constant conditions are resolved at bind time.
type CaseExpr struct {
	Whens []When
	Else  Expr // nil: NULL
}

// Case returns CASE WHEN ... THEN ... [ELSE elseExpr] END; elseExpr may be
// nil.
func Case(whens []When, elseExpr Expr) Expr { return &CaseExpr{Whens: whens, Else: elseExpr} }

// If returns CASE WHEN cond THEN a ELSE b END (Spark's if(cond, a, b)).
func If(cond, a, b Expr) Expr { return Case([]When{{Cond: cond, Then: a}}, b) }

// String renders CASE WHEN ... THEN ... ELSE ... END.
func (c *CaseExpr) String() string {
	var b strings.Builder
	b.WriteString("CASE")
	for _, w := range c.Whens {
		b.WriteString(" WHEN " + w.Cond.String() + " THEN " + w.Then.String())
	}
	if c.Else != nil {
		b.WriteString(" ELSE " + c.Else.String())
	}
	b.WriteString(" END")
	return b.String()
}

// Bind implements Expr.
func (c *CaseExpr) Bind(in *arrow.Schema, mem memory.Allocator) (Evaluator, error) {
	if len(c.Whens) == 0 {
		return nil, newBindError(c, in, fmt.Errorf("CASE needs at least one WHEN: %w", ErrType))
	}
	var conds, values []Evaluator
	for _, w := range c.Whens {
		cond, err := w.Cond.Bind(in, mem)
		if err != nil {
			return nil, err
		}
		if !isBoolOrNull(cond.DataType()) {
			return nil, newBindError(c, in, fmt.Errorf("WHEN %s must be boolean, not %s: %w", w.Cond, TypeName(cond.DataType()), ErrType))
		}
		v, err := w.Then.Bind(in, mem)
		if err != nil {
			return nil, err
		}
		conds, values = append(conds, cond), append(values, v)
	}
	var elseEv Evaluator
	if c.Else != nil {
		var err error
		if elseEv, err = c.Else.Bind(in, mem); err != nil {
			return nil, err
		}
		values = append(values, elseEv)
	}
	dt, err := branchType("CASE", values)
	if err != nil {
		return nil, newBindError(c, in, err)
	}
	if elseEv == nil {
		elseEv = newConst(dt, nil, mem)
		values = append(values, elseEv)
	}
	for i, v := range values {
		if values[i], err = widenBranch(v, dt, mem, textOf(c)); err != nil {
			return nil, newBindError(c, in, err)
		}
	}
	// Resolve constant conditions: a true one ends the CASE there, false
	// and null ones drop their arm.
	var keepConds, keepValues []Evaluator
	for i, cond := range conds {
		if v, ok := constValue(cond); ok {
			if v == true {
				values[len(values)-1] = values[i]
				break
			}
			continue
		}
		keepConds, keepValues = append(keepConds, cond), append(keepValues, values[i])
	}
	if len(keepConds) == 0 {
		return values[len(values)-1], nil
	}
	return &caseEval{conds: keepConds, values: append(keepValues, values[len(values)-1]), dt: dt, mem: mem}, nil
}

// branchType is the common type of the branch values (ignoring NULLs).
func branchType(what string, values []Evaluator) (arrow.DataType, error) {
	var dt arrow.DataType = Null
	for _, v := range values {
		t := Unwrap(v.DataType())
		if t.ID() == arrow.NULL {
			continue
		}
		if dt.ID() == arrow.NULL {
			dt = t
			continue
		}
		c, ok := CommonType(dt, t)
		if !ok {
			return nil, fmt.Errorf("%s branches have incompatible types %s and %s: %w", what, TypeName(dt), TypeName(t), ErrType)
		}
		dt = c
	}
	return dt, nil
}

// widenBranch converts a branch value to the result type.
func widenBranch(v Evaluator, dt arrow.DataType, mem memory.Allocator, expr sqlText) (Evaluator, error) {
	if arrow.TypeEqual(v.DataType(), dt) {
		return v, nil
	}
	if isNullConst(v) {
		return newConst(dt, nil, mem), nil
	}
	if v.DataType().ID() == arrow.NULL {
		return &nullAsEval{dt: dt, mem: mem}, nil
	}
	return numericWiden(v, dt, mem, expr, sqlText{})
}

// caseEval evaluates a CASE with non-constant conditions; values has one
// more entry than conds, the ELSE.
type caseEval struct {
	conds, values []Evaluator
	dt            arrow.DataType
	mem           memory.Allocator
}

func (e *caseEval) DataType() arrow.DataType { return e.dt }

func (e *caseEval) Eval(ctx context.Context, rec arrow.Record) (arrow.Array, error) {
	n := int(rec.NumRows())
	nw := words64(n)
	remaining := make([]uint64, nw)
	fillWords(remaining, true)
	taken := make([][]uint64, len(e.values))
	for k, cond := range e.conds {
		if !anyBit(remaining, n) {
			break
		}
		ca, err := evalWhere(ctx, cond, rec, remaining, n, e.mem)
		if err != nil {
			return nil, err
		}
		cv, cx := validityWords(ca), boolValueWords(ca)
		t := make([]uint64, nw)
		for w := range t {
			t[w] = remaining[w] & cv.word(w) & cx.word(w)
			remaining[w] &^= t[w]
		}
		ca.Release()
		taken[k] = t
	}
	taken[len(e.values)-1] = remaining
	return mergeEvaluated(ctx, e.mem, e.dt, rec, e.values, taken)
}

// anyBit reports whether any of the first n bits is set.
func anyBit(words []uint64, n int) bool {
	for w, x := range words {
		if x&wordMask(w, n) != 0 {
			return true
		}
	}
	return false
}

// mergeEvaluated evaluates each value for the rows it took (lazily, see
// evalWhere) and merges them into one column; rows no value took are null.
func mergeEvaluated(ctx context.Context, mem memory.Allocator, dt arrow.DataType, rec arrow.Record, values []Evaluator, taken [][]uint64) (arrow.Array, error) {
	n := int(rec.NumRows())
	srcs := make([]caseSource, len(values))
	defer func() {
		for _, s := range srcs {
			releaseAll(s.arr)
		}
	}()
	for k, v := range values {
		if taken[k] == nil || !anyBit(taken[k], n) {
			taken[k] = nil
			continue
		}
		if c, ok := constValue(v); ok {
			srcs[k] = caseSource{konst: true, v: c}
			continue
		}
		arr, err := evalWhere(ctx, v, rec, taken[k], n, mem)
		if err != nil {
			return nil, err
		}
		srcs[k] = caseSource{arr: arr}
	}
	return mergeBranches(mem, dt, n, srcs, taken)
}

// CoalesceExpr is coalesce(a, b, ...): the first non-null argument. The
// result type is the arguments' common type. Like Spark it is lazy: an
// argument is only needed for the rows all earlier ones left null (see
// CaseExpr for how that is honoured).
type CoalesceExpr struct {
	Args []Expr
}

// Coalesce returns coalesce(args...).
func Coalesce(args ...Expr) Expr { return &CoalesceExpr{Args: args} }

// String renders coalesce(a, b, ...).
func (c *CoalesceExpr) String() string {
	parts := make([]string, len(c.Args))
	for i, a := range c.Args {
		parts[i] = a.String()
	}
	return "coalesce(" + strings.Join(parts, ", ") + ")"
}

// Bind implements Expr.
func (c *CoalesceExpr) Bind(in *arrow.Schema, mem memory.Allocator) (Evaluator, error) {
	if len(c.Args) == 0 {
		return nil, newBindError(c, in, fmt.Errorf("coalesce needs at least one argument: %w", ErrType))
	}
	args := make([]Evaluator, 0, len(c.Args))
	for _, a := range c.Args {
		ev, err := a.Bind(in, mem)
		if err != nil {
			return nil, err
		}
		args = append(args, ev)
	}
	dt, err := branchType("coalesce", args)
	if err != nil {
		return nil, newBindError(c, in, err)
	}
	var keep []Evaluator
	for _, a := range args {
		a, err := widenBranch(a, dt, mem, textOf(c))
		if err != nil {
			return nil, newBindError(c, in, err)
		}
		if v, ok := constValue(a); ok {
			if v == nil {
				continue // a NULL argument never contributes
			}
			keep = append(keep, a)
			break // nothing after a non-null constant is reached
		}
		keep = append(keep, a)
	}
	switch len(keep) {
	case 0:
		return newConst(dt, nil, mem), nil
	case 1:
		return keep[0], nil
	}
	return &coalesceEval{args: keep, dt: dt, mem: mem}, nil
}

type coalesceEval struct {
	args []Evaluator
	dt   arrow.DataType
	mem  memory.Allocator
}

func (e *coalesceEval) DataType() arrow.DataType { return e.dt }

func (e *coalesceEval) Eval(ctx context.Context, rec arrow.Record) (arrow.Array, error) {
	n := int(rec.NumRows())
	nw := words64(n)
	remaining := make([]uint64, nw)
	fillWords(remaining, true)
	taken := make([][]uint64, len(e.args))
	srcs := make([]caseSource, len(e.args))
	defer func() {
		for _, s := range srcs {
			releaseAll(s.arr)
		}
	}()
	for k, arg := range e.args {
		if !anyBit(remaining, n) {
			break
		}
		if c, ok := constValue(arg); ok {
			srcs[k], taken[k] = caseSource{konst: true, v: c}, remaining
			remaining = make([]uint64, nw)
			break
		}
		arr, err := evalWhere(ctx, arg, rec, remaining, n, e.mem)
		if err != nil {
			return nil, err
		}
		srcs[k] = caseSource{arr: arr}
		v := validityWords(arr)
		t := make([]uint64, nw)
		for w := range t {
			t[w] = remaining[w] & v.word(w)
			remaining[w] &^= t[w]
		}
		taken[k] = t
	}
	return mergeBranches(e.mem, e.dt, n, srcs, taken)
}
