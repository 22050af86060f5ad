package vector

import (
	"github.com/apache/arrow/go/v17/arrow"
	"github.com/apache/arrow/go/v17/arrow/array"
	"github.com/apache/arrow/go/v17/arrow/memory"
)

// directCompare is the fast path of Filter for `column <op> constant` over
// an integer-like column (int, bigint, date, timestamp): the selection
// vector is built in one branch-free pass over the values, with no boolean
// mask in between (the mask and the pass that reads it cost as much again).
// Floating point is left to the comparison kernels, which implement
// Spark's NaN ordering.
type directCompare struct {
	col  int
	op   CompareOp
	wide bool // int64-backed column (bigint, timestamp); else int32-backed
	c64  int64
	c32  int32
}

// newDirectCompare recognizes predicates the fast path serves; nil
// otherwise.
func newDirectCompare(pred Expr, in *arrow.Schema, mem memory.Allocator) *directCompare {
	cmp, ok := pred.(*Comparison)
	if !ok {
		return nil
	}
	op := cmp.Op
	colExpr, constExpr := cmp.Left, cmp.Right
	if _, isConst := bindConst(cmp.Left, in, mem); isConst {
		colExpr, constExpr = cmp.Right, cmp.Left
		op = op.flip()
	}
	switch op {
	case CompareEq, CompareNotEq, CompareLt, CompareLe, CompareGt, CompareGe:
	default:
		return nil
	}
	ev, err := colExpr.Bind(in, mem)
	if err != nil {
		return nil
	}
	bc, ok := ev.(bareColumn)
	if !ok {
		return nil
	}
	col, top := bc.Column()
	if !top {
		return nil
	}
	v, isConst := bindConst(constExpr, in, mem)
	if !isConst || v == nil {
		return nil
	}
	d := &directCompare{col: col, op: op}
	switch in.Field(col).Type.ID() {
	case arrow.INT64, arrow.TIMESTAMP:
		c, ok := toInt64(v)
		if !ok || !sameKind(in.Field(col).Type, constExpr, in, mem) {
			return nil
		}
		d.wide, d.c64 = true, c
	case arrow.INT32, arrow.DATE32:
		c, ok := toInt64(v)
		if !ok || c != int64(int32(c)) || !sameKind(in.Field(col).Type, constExpr, in, mem) {
			return nil
		}
		d.c32 = int32(c)
	default:
		return nil
	}
	return d
}

// sameKind reports whether the constant's type compares with the column
// without conversion beyond integer widening (a timestamp column with a
// timestamp constant, an integer column with an integer constant).
func sameKind(colType arrow.DataType, constExpr Expr, in *arrow.Schema, mem memory.Allocator) bool {
	ev, err := constExpr.Bind(in, mem)
	if err != nil {
		return false
	}
	ct := ev.DataType().ID()
	switch colType.ID() {
	case arrow.TIMESTAMP:
		return ct == arrow.TIMESTAMP
	case arrow.DATE32:
		return ct == arrow.DATE32
	}
	return ct == arrow.INT32 || ct == arrow.INT64
}

func bindConst(e Expr, in *arrow.Schema, mem memory.Allocator) (any, bool) {
	ev, err := e.Bind(in, mem)
	if err != nil {
		return nil, false
	}
	c, ok := ev.(ConstantEvaluator)
	if !ok {
		return nil, false
	}
	return c.Value(), true
}

// selectRows returns the passing rows of rec in sel's storage.
func (d *directCompare) selectRows(rec arrow.Record, sel []int32) []int32 {
	arr := rec.Column(d.col)
	n := arr.Len()
	if cap(sel) < n {
		sel = make([]int32, n)
	}
	sel = sel[:n]
	if d.wide {
		sel = selectCompare(wideValues(arr), d.c64, d.op, sel)
	} else {
		sel = selectCompare(narrowValues(arr), d.c32, d.op, sel)
	}
	// Null rows never pass: drop them from the selection.
	return dropNulls(arr, sel)
}

// wideValues is the int64 words of a wide compare's column (Int64 or
// Timestamp), narrowValues the int32 words of a narrow one's (Int32 or
// Date32); nil for any other type (the planner chose the width by it).
func wideValues(arr arrow.Array) []int64 {
	switch a := arr.(type) {
	case *array.Int64:
		return a.Int64Values()
	case *array.Timestamp:
		return reinterpret[int64](a.TimestampValues())
	}
	return nil
}

func narrowValues(arr arrow.Array) []int32 {
	switch a := arr.(type) {
	case *array.Int32:
		return a.Int32Values()
	case *array.Date32:
		return reinterpret[int32](a.Date32Values())
	}
	return nil
}

// refine implements selNode: every row goes through selectRows' one
// branch-free pass; candidates are compared one by one.
func (d *directCompare) refine(rec arrow.Record, sel []int32, all bool) []int32 {
	if all {
		return d.selectRows(rec, sel)
	}
	arr := rec.Column(d.col)
	var k int
	if d.wide {
		k = refineCompare(wideValues(arr), d.c64, d.op, sel)
	} else {
		k = refineCompare(narrowValues(arr), d.c32, d.op, sel)
	}
	return dropNulls(arr, sel[:k])
}

// refineCompare keeps, in place, the candidates sel whose values satisfy
// `v op c` and returns how many.
func refineCompare[T int32 | int64](vals []T, c T, op CompareOp, sel []int32) int {
	k := 0
	for _, i := range sel {
		v := vals[i]
		var ok bool
		switch op {
		case CompareEq:
			ok = v == c
		case CompareNotEq:
			ok = v != c
		case CompareLt:
			ok = v < c
		case CompareLe:
			ok = v <= c
		case CompareGt:
			ok = v > c
		case CompareGe:
			ok = v >= c
		}
		sel[k] = i
		k += int(b2u(ok))
	}
	return k
}

// selectCompare writes the indices of the values that satisfy `v op c`,
// one branch-free loop per operator (the operator is chosen once per
// batch).
func selectCompare[T int32 | int64](vals []T, c T, op CompareOp, sel []int32) []int32 {
	k := 0
	switch op {
	case CompareEq:
		for i, v := range vals {
			sel[k] = int32(i)
			k += int(b2u(v == c))
		}
	case CompareNotEq:
		for i, v := range vals {
			sel[k] = int32(i)
			k += int(b2u(v != c))
		}
	case CompareLt:
		for i, v := range vals {
			sel[k] = int32(i)
			k += int(b2u(v < c))
		}
	case CompareLe:
		for i, v := range vals {
			sel[k] = int32(i)
			k += int(b2u(v <= c))
		}
	case CompareGt:
		for i, v := range vals {
			sel[k] = int32(i)
			k += int(b2u(v > c))
		}
	case CompareGe:
		for i, v := range vals {
			sel[k] = int32(i)
			k += int(b2u(v >= c))
		}
	}
	return sel[:k]
}
