package vector_test

import (
	"context"
	"fmt"

	"github.com/apache/arrow/go/v17/arrow"
	"github.com/apache/arrow/go/v17/arrow/array"
	"github.com/apache/arrow/go/v17/arrow/memory"

	"github.com/arrowstream/arrowstream/vector"
	vt "github.com/arrowstream/arrowstream/vector/vectortest"
)

// cmpExpr is a test-only comparison of two bigint (or int) operands: the
// comparison kernels are written elsewhere, and the join only needs some
// boolean condition over the joined row.
type cmpExpr struct {
	op   string // "<", ">" or "fail" (an error on every non-empty batch)
	a, b vector.Expr
}

func lt(a, b vector.Expr) vector.Expr { return &cmpExpr{op: "<", a: a, b: b} }
func gt(a, b vector.Expr) vector.Expr { return &cmpExpr{op: ">", a: a, b: b} }

func (c *cmpExpr) String() string { return fmt.Sprintf("(%s %s %s)", c.a, c.op, c.b) }

func (c *cmpExpr) Bind(in *arrow.Schema, mem memory.Allocator) (vector.Evaluator, error) {
	a, err := c.a.Bind(in, mem)
	if err != nil {
		return nil, err
	}
	b, err := c.b.Bind(in, mem)
	if err != nil {
		return nil, err
	}
	for _, ev := range []vector.Evaluator{a, b} {
		if !vector.IsIntegral(ev.DataType()) {
			return nil, &vector.BindError{Expr: c.String(), Err: fmt.Errorf("cannot compare %s: %w", vector.TypeName(ev.DataType()), vector.ErrType)}
		}
	}
	return &cmpEval{c: c, a: a, b: b, mem: mem}, nil
}

type cmpEval struct {
	c    *cmpExpr
	a, b vector.Evaluator
	mem  memory.Allocator
}

func (e *cmpEval) DataType() arrow.DataType { return vector.Boolean }

func (e *cmpEval) Eval(ctx context.Context, rec arrow.Record) (arrow.Array, error) {
	if e.c.op == "fail" && rec.NumRows() > 0 {
		return nil, &vector.EvalError{Expr: e.c.String(), Row: 0, Err: vector.ErrOverflow}
	}
	x, err := e.a.Eval(ctx, rec)
	if err != nil {
		return nil, err
	}
	defer x.Release()
	y, err := e.b.Eval(ctx, rec)
	if err != nil {
		return nil, err
	}
	defer y.Release()
	b := array.NewBooleanBuilder(e.mem)
	defer b.Release()
	for i := 0; i < x.Len(); i++ {
		xv, yv := vector.ValueAt(x, i), vector.ValueAt(y, i)
		if xv == nil || yv == nil {
			b.AppendNull()
			continue
		}
		xi, yi := vt.Normalize(xv).(int64), vt.Normalize(yv).(int64)
		b.Append(e.c.op == "<" && xi < yi || e.c.op == ">" && xi > yi)
	}
	return b.NewArray(), nil
}

var allJoinTypes = []vector.JoinType{
	vector.InnerJoin, vector.LeftOuterJoin, vector.RightOuterJoin,
	vector.FullOuterJoin, vector.LeftSemiJoin, vector.LeftAntiJoin,
}

// refJoin is the nested-loop definition of every join type: it is what the
// hash join must produce, in the same order (left rows in order with their
// matches in right order, then the unmatched right rows).
func refJoin(typ vector.JoinType, left, right []vt.Row, nl, nr int, match func(l, r vt.Row) bool) []vt.Row {
	var out []vt.Row
	concat := func(l, r vt.Row) vt.Row {
		row := make(vt.Row, 0, nl+nr)
		if l == nil {
			l = make(vt.Row, nl)
		}
		if r == nil {
			r = make(vt.Row, nr)
		}
		return append(append(row, l[:nl]...), r[:nr]...)
	}
	rightMatched := make([]bool, len(right))
	for _, l := range left {
		matched := false
		for ri, r := range right {
			if !match(l, r) {
				continue
			}
			matched, rightMatched[ri] = true, true
			if typ != vector.LeftSemiJoin && typ != vector.LeftAntiJoin {
				out = append(out, concat(l, r))
			}
		}
		switch {
		case typ == vector.LeftSemiJoin && matched, typ == vector.LeftAntiJoin && !matched:
			out = append(out, l[:nl])
		case (typ == vector.LeftOuterJoin || typ == vector.FullOuterJoin) && !matched:
			out = append(out, concat(l, nil))
		}
	}
	if typ == vector.RightOuterJoin || typ == vector.FullOuterJoin {
		for ri, r := range right {
			if !rightMatched[ri] {
				out = append(out, concat(nil, r))
			}
		}
	}
	return out
}

// keysMatch returns the equi-join predicate on left columns lc and right
// columns rc; a null key matches only a null key, and only when null-safe.
func keysMatch(lc, rc []int, nullSafe []bool) func(l, r vt.Row) bool {
	return func(l, r vt.Row) bool {
		for i := range lc {
			lv, rv := l[lc[i]], r[rc[i]]
			if lv == nil || rv == nil {
				if lv == nil && rv == nil && nullSafe != nil && nullSafe[i] {
					continue
				}
				return false
			}
			if !vt.ValueEqual(lv, rv) {
				return false
			}
		}
		return true
	}
}

// both combines an equi-join predicate with a residual one over the
// concatenated row.
func both(keys func(l, r vt.Row) bool, nl int, residual func(row vt.Row) any) func(l, r vt.Row) bool {
	return func(l, r vt.Row) bool {
		if !keys(l, r) {
			return false
		}
		row := append(append(vt.Row{}, l[:nl]...), r...)
		return residual(row) == true
	}
}

// joinScenario is a pair of inputs and a spec run for several join types,
// checked against refJoin with match.
type joinScenario struct {
	name        string
	left, right vt.Input
	spec        vector.JoinSpec // Type is set per run
	match       func(l, r vt.Row) bool
	types       []vector.JoinType // default: all
	shapes      []vt.Shape
}

func (sc joinScenario) cases() []vt.OperatorCase {
	types := sc.types
	if types == nil {
		types = allJoinTypes
	}
	nl, nr := sc.left.Schema.NumFields(), sc.right.Schema.NumFields()
	var out []vt.OperatorCase
	for _, typ := range types {
		spec := sc.spec
		spec.Type = typ
		out = append(out, vt.OperatorCase{
			Name:   sc.name + "/" + typ.String(),
			Inputs: []vt.Input{sc.left, sc.right},
			Build: func(mem memory.Allocator, in []vector.Operator) (vector.Operator, error) {
				return vector.NewHashJoin(mem, in[0], in[1], spec)
			},
			Want:       refJoin(typ, sc.left.Rows, sc.right.Rows, nl, nr, sc.match),
			Ordered:    true,
			WantSchema: wantJoinSchema(sc.left.Schema, sc.right.Schema, typ),
			Shapes:     sc.shapes,
		})
	}
	return out
}

// wantJoinSchema is the output schema a join type must declare.
func wantJoinSchema(ls, rs *arrow.Schema, typ vector.JoinType) *arrow.Schema {
	if typ == vector.LeftSemiJoin || typ == vector.LeftAntiJoin {
		return ls
	}
	var fields []arrow.Field
	for _, f := range ls.Fields() {
		f.Nullable = f.Nullable || typ == vector.RightOuterJoin || typ == vector.FullOuterJoin
		fields = append(fields, f)
	}
	for _, f := range rs.Fields() {
		f.Nullable = f.Nullable || typ == vector.LeftOuterJoin || typ == vector.FullOuterJoin
		fields = append(fields, f)
	}
	return arrow.NewSchema(fields, nil)
}

func joinSchema(fields ...arrow.Field) *arrow.Schema { return arrow.NewSchema(fields, nil) }

func field(name string, dt arrow.DataType) arrow.Field {
	return arrow.Field{Name: name, Type: dt, Nullable: true}
}

func cols(names ...string) []vector.Expr {
	out := make([]vector.Expr, len(names))
	for i, n := range names {
		out[i] = vector.Col(n)
	}
	return out
}
