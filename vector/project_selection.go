package vector

import (
	"context"

	"github.com/apache/arrow/go/v17/arrow"
	"github.com/apache/arrow/go/v17/arrow/array"
	"github.com/apache/arrow/go/v17/arrow/memory"
)

// selectingInput is an operator that can hand out a batch with a selection
// of rows instead of gathering them (Filter).
type selectingInput interface {
	nextSelected(ctx context.Context) (arrow.Record, []int32, error)
}

// projPlan says how Project computes one expression from a batch and a
// selection, without gathering the whole batch first.
type projPlan struct {
	kind projKind
	col  int     // projColumn, projFloatArith: the input column
	op   ArithOp // projFloatArith
	c    float64 // projFloatArith: the constant
	left bool    // projFloatArith: the constant is the left operand
}

type projKind int

const (
	projGeneral    projKind = iota // evaluate over the gathered batch
	projColumn                     // gather one column
	projFloatArith                 // gather a double column and apply `op c` in the same pass
)

// planSelection classifies expressions for the selection path.
func planSelection(in *arrow.Schema, mem memory.Allocator, exprs []NamedExpr, evs []Evaluator) []projPlan {
	plans := make([]projPlan, len(exprs))
	for i, ne := range exprs {
		if bc, ok := evs[i].(bareColumn); ok {
			if col, top := bc.Column(); top {
				plans[i] = projPlan{kind: projColumn, col: col}
				continue
			}
		}
		plans[i] = planFloatArith(in, mem, ne.Expr)
	}
	return plans
}

// planFloatArith recognizes `double column ± × constant`.
func planFloatArith(in *arrow.Schema, mem memory.Allocator, e Expr) projPlan {
	a, ok := e.(*Arithmetic)
	if !ok || (a.Op != ArithAdd && a.Op != ArithSub && a.Op != ArithMul) {
		return projPlan{}
	}
	colExpr, constExpr, left := a.Left, a.Right, false
	if _, isConst := bindConst(a.Left, in, mem); isConst {
		colExpr, constExpr, left = a.Right, a.Left, true
	}
	ev, err := colExpr.Bind(in, mem)
	if err != nil || ev.DataType().ID() != arrow.FLOAT64 {
		return projPlan{}
	}
	bc, ok := ev.(bareColumn)
	if !ok {
		return projPlan{}
	}
	col, top := bc.Column()
	v, isConst := bindConst(constExpr, in, mem)
	c, isFloat := v.(float64)
	if !top || !isConst || !isFloat {
		return projPlan{}
	}
	return projPlan{kind: projFloatArith, col: col, op: a.Op, c: c, left: left}
}

// projectSelected computes the projection of the selected rows of rec.
func (p *Project) projectSelected(ctx context.Context, rec arrow.Record, sel []int32) (arrow.Record, error) {
	cols := make([]arrow.Array, len(p.evs))
	var gathered arrow.Record
	defer func() {
		if gathered != nil {
			gathered.Release()
		}
	}()
	for i, pl := range p.plans {
		var (
			a   arrow.Array
			err error
		)
		switch pl.kind {
		case projColumn:
			a, err = gather(p.mem, rec.Column(pl.col), sel)
		case projFloatArith:
			a = gatherFloatArith(p.mem, rec.Column(pl.col), sel, pl)
		default:
			if gathered == nil {
				if gathered, err = gatherRows(p.mem, rec, sel); err != nil {
					break
				}
			}
			a, err = p.evs[i].Eval(ctx, gathered)
		}
		if err != nil {
			releaseArrays(cols[:i])
			return nil, err
		}
		cols[i] = a
	}
	defer releaseArrays(cols)
	return array.NewRecord(p.schema, cols, int64(len(sel))), nil
}

// gatherFloatArith gathers the selected values of a double column and
// applies the arithmetic in the same pass.
func gatherFloatArith(mem memory.Allocator, arr arrow.Array, sel []int32, pl projPlan) arrow.Array {
	in := arr.(*array.Float64).Float64Values()
	buf := memory.NewResizableBuffer(mem)
	buf.Resize(len(sel) * 8)
	out := arrow.Float64Traits.CastFromBytes(buf.Bytes())[:len(sel)]
	c := pl.c
	switch {
	case pl.op == ArithAdd:
		for k, i := range sel {
			out[k] = in[i] + c
		}
	case pl.op == ArithMul:
		for k, i := range sel {
			out[k] = in[i] * c
		}
	case pl.op == ArithSub && pl.left:
		for k, i := range sel {
			out[k] = c - in[i]
		}
	default: // ArithSub, column on the left
		for k, i := range sel {
			out[k] = in[i] - c
		}
	}
	validity, nulls := gatherValidity(mem, arr, sel)
	data := array.NewData(Float64, len(sel), []*memory.Buffer{validity, buf}, nil, nulls, 0)
	buf.Release()
	if validity != nil {
		validity.Release()
	}
	defer data.Release()
	return array.MakeFromData(data)
}
