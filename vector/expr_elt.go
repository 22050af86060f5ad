package vector

import (
	"context"
	"fmt"

	"github.com/apache/arrow/go/v17/arrow"
	"github.com/apache/arrow/go/v17/arrow/array"
	"github.com/apache/arrow/go/v17/arrow/memory"
)

// elt(n, input1, input2, ...) is Spark's Elt: the n-th input (1-based).
// The index is an INT (another integer type or a string is cast to INT,
// as Spark's coercion does); a NULL index gives NULL. The inputs are BINARY when all
// of them are, else each is cast to STRING. An index outside 1..count is
// NULL without ANSI and [INVALID_ARRAY_INDEX] under ANSI, as Spark.
func eltCall(a []Expr) Expr { return &FuncExpr{Name: "elt", Args: a, bind: bindElt} }

func bindElt(f *FuncExpr, in *arrow.Schema, mem memory.Allocator, args []Evaluator) (Evaluator, error) {
	idx := args[0]
	it := Unwrap(idx.DataType())
	switch {
	case it.ID() == arrow.NULL || it.ID() == arrow.INT32:
	case IsIntegral(it) || IsStringLike(it):
		c, err := (&CastExpr{X: f.Args[0], To: Int32, Mode: f.Mode}).Bind(in, mem)
		if err != nil {
			return nil, err
		}
		idx = c
	default:
		return nil, fmt.Errorf("the first argument of elt must be an integer, not %s: %w", TypeName(it), ErrType)
	}
	allBinary := true
	for _, a := range args[1:] {
		dt := Unwrap(a.DataType())
		allBinary = allBinary && (dt.ID() == arrow.BINARY || dt.ID() == arrow.NULL)
	}
	out := arrow.DataType(String)
	if allBinary {
		out = arrow.BinaryTypes.Binary
	}
	inputs := make([]Evaluator, len(args)-1)
	for i, a := range args[1:] {
		dt := Unwrap(a.DataType())
		switch {
		case dt.ID() == arrow.NULL || arrow.TypeEqual(dt, out):
			inputs[i] = Plain(a, mem)
		default:
			c, err := (&CastExpr{X: f.Args[i+1], To: out, Mode: f.Mode, Loc: f.Loc}).Bind(in, mem)
			if err != nil {
				return nil, err
			}
			inputs[i] = Plain(c, mem)
		}
	}
	if it.ID() == arrow.NULL {
		return fnNullResult(out, mem), nil
	}
	e := &eltEval{f: f, idx: Plain(idx, mem), inputs: inputs, dt: out, mem: mem}
	return fnFoldConstant(f, in, mem, e, args...)
}

type eltEval struct {
	f      *FuncExpr
	idx    Evaluator
	inputs []Evaluator
	dt     arrow.DataType
	mem    memory.Allocator
}

func (e *eltEval) DataType() arrow.DataType { return e.dt }

// Eval picks, per row, the bytes of the chosen input's row.
func (e *eltEval) Eval(ctx context.Context, rec arrow.Record) (arrow.Array, error) {
	idxArr, err := e.idx.Eval(ctx, rec)
	if err != nil {
		return nil, err
	}
	defer idxArr.Release()
	cols := make([]arrow.Array, len(e.inputs))
	defer func() {
		for _, c := range cols {
			if c != nil {
				c.Release()
			}
		}
	}()
	for i, in := range e.inputs {
		if cols[i], err = in.Eval(ctx, rec); err != nil {
			return nil, err
		}
	}
	n := int(rec.NumRows())
	b := array.NewBinaryBuilder(e.mem, arrow.BinaryTypes.Binary)
	defer b.Release()
	b.Reserve(n)
	idx := fnRawValues[int32](idxArr)
	for r := 0; r < n; r++ {
		if idxArr.IsNull(r) {
			b.AppendNull()
			continue
		}
		k := int(idx[r])
		if k < 1 || k > len(cols) {
			if e.f.Mode == ModeANSI {
				return nil, &EvalError{Expr: e.f.String(), Row: r, Err: fmt.Errorf("[INVALID_ARRAY_INDEX] The index %d is out of bounds. The array has %d elements. If necessary set \"spark.sql.ansi.enabled\" to \"false\" to bypass this error: %w", k, len(cols), ErrInvalidInput)}
			}
			b.AppendNull()
			continue
		}
		c := cols[k-1]
		if c.IsNull(r) {
			b.AppendNull()
			continue
		}
		switch v := c.(type) {
		case *array.String:
			b.AppendString(v.Value(r))
		case *array.Binary:
			b.Append(v.Value(r))
		default:
			b.AppendNull() // a NULL-typed input
		}
	}
	res := b.NewArray()
	if e.dt.ID() == arrow.BINARY {
		return res, nil
	}
	defer res.Release()
	data := array.NewData(e.dt, res.Len(), res.Data().Buffers(), nil, res.NullN(), res.Data().Offset())
	defer data.Release()
	return array.MakeFromData(data), nil
}

func init() {
	functions["elt"] = funcSpec{2, -1, eltCall}
}
