package vector

import (
	"context"
	"fmt"
	"math"

	"github.com/apache/arrow/go/v17/arrow"
	"github.com/apache/arrow/go/v17/arrow/array"
	"github.com/apache/arrow/go/v17/arrow/decimal128"
	"github.com/apache/arrow/go/v17/arrow/memory"
)

// Literal is a constant of a given type. Value is in the canonical Go form
// of Type (see ValueAt); nil is NULL.
type Literal struct {
	Type  arrow.DataType
	Value any
}

// Lit returns a literal whose type follows the Go value: bool → boolean,
// int that fits 32 bits → int, other integers → bigint, float64 → double,
// string → string, []byte → binary, arrow.Timestamp → timestamp,
// arrow.Date32 → date, nil → NULL. Use TypedLit for anything else.
func Lit(v any) *Literal {
	switch x := v.(type) {
	case nil:
		return &Literal{Type: Null}
	case bool:
		return &Literal{Type: Boolean, Value: x}
	case int:
		if int64(x) == int64(int32(x)) {
			return &Literal{Type: Int32, Value: int32(x)}
		}
		return &Literal{Type: Int64, Value: int64(x)}
	case int32:
		return &Literal{Type: Int32, Value: x}
	case int64:
		return &Literal{Type: Int64, Value: x}
	case float64:
		return &Literal{Type: Float64, Value: x}
	case string:
		return &Literal{Type: String, Value: x}
	case []byte:
		return &Literal{Type: Binary, Value: x}
	case arrow.Timestamp:
		return &Literal{Type: Timestamp, Value: x}
	case arrow.Date32:
		return &Literal{Type: Date, Value: x}
	}
	return &Literal{Type: nil, Value: v}
}

// TypedLit returns a literal of type dt. Bind checks that v fits dt.
func TypedLit(dt arrow.DataType, v any) *Literal { return &Literal{Type: dt, Value: v} }

func (l *Literal) String() string {
	if l.Type == nil {
		return fmt.Sprintf("%v", l.Value)
	}
	s := FormatValue(l.Value, l.Type)
	if l.Value == nil && l.Type.ID() != arrow.NULL {
		return "CAST(NULL AS " + TypeName(l.Type) + ")"
	}
	if l.Type.ID() == arrow.INT64 {
		return s + "L"
	}
	return s
}

// Bind implements Expr.
func (l *Literal) Bind(in *arrow.Schema, mem memory.Allocator) (Evaluator, error) {
	if l.Type == nil {
		return nil, newBindError(l, in, fmt.Errorf("literal of Go type %T has no SQL type: %w", l.Value, ErrType))
	}
	v, err := canonicalValue(l.Type, l.Value)
	if err != nil {
		return nil, newBindError(l, in, err)
	}
	return &constEval{dt: l.Type, v: v, mem: mem}, nil
}

// canonicalValue converts v to the canonical Go form of dt by a round trip
// through a one-row array, which also checks that it fits.
func canonicalValue(dt arrow.DataType, v any) (any, error) {
	if v == nil {
		return nil, nil
	}
	if dt.ID() == arrow.NULL {
		return nil, fmt.Errorf("a NULL literal cannot hold %v: %w", v, ErrType)
	}
	// A value already in its canonical form needs no round trip (binding
	// and folding a literal is on the planner's path for every node).
	switch x := v.(type) {
	case bool:
		if dt.ID() == arrow.BOOL {
			return x, nil
		}
	case int32:
		if dt.ID() == arrow.INT32 {
			return x, nil
		}
	case int64:
		if dt.ID() == arrow.INT64 {
			return x, nil
		}
	case float64:
		switch dt.ID() {
		case arrow.FLOAT64:
			return x, nil
		case arrow.FLOAT32:
			return float64(float32(x)), nil
		}
	case string:
		if dt.ID() == arrow.STRING {
			return x, nil
		}
	}
	arr, err := MakeConstantArray(memory.DefaultAllocator, dt, v, 1)
	if err != nil {
		return nil, err
	}
	defer arr.Release()
	return ValueAt(arr, 0), nil
}

// constEval is the evaluator of a constant.
type constEval struct {
	dt  arrow.DataType
	v   any
	mem memory.Allocator
}

func (c *constEval) DataType() arrow.DataType { return c.dt }
func (c *constEval) Value() any               { return c.v }

// Eval expands the constant; kernels avoid this by testing for
// ConstantEvaluator at bind time. A nested constant (an array, a map, a
// struct) is built once and gathered to the batch's rows: appending the
// Go value row by row made an interface call per element (13M of them for
// a 200-element array over a 64K-row batch), seconds a cancelled query
// could not interrupt.
func (c *constEval) Eval(ctx context.Context, rec arrow.Record) (arrow.Array, error) {
	n := int(rec.NumRows())
	if c.v == nil || n <= 1 || !nestedConstant(c.dt) {
		return MakeConstantArray(c.mem, c.dt, c.v, n)
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	one, err := MakeConstantArray(c.mem, c.dt, c.v, 1)
	if err != nil {
		return nil, err
	}
	defer one.Release()
	if l, ok := one.(*array.List); ok {
		if out, ok, err := replicateList(ctx, c.mem, l, n); ok || err != nil {
			return out, err
		}
	}
	return takeContext(ctx, c.mem, one, make([]int32, n))
}

// replicateList returns n copies of one's single list value when its
// elements are fixed-width without nulls (an array of numbers, the common
// constant): the offsets are computed and the elements copied in doubling
// spans, touchChunkBytes at a time with a context check between. ok is
// false for other lists (gathered instead).
func replicateList(ctx context.Context, mem memory.Allocator, one *array.List, n int) (arrow.Array, bool, error) {
	child := one.ListValues()
	fw, isFixed := child.DataType().(arrow.FixedWidthDataType)
	if !isFixed || fw.BitWidth()%8 != 0 || child.NullN() > 0 || one.IsNull(0) {
		return nil, false, nil
	}
	width := fw.BitWidth() / 8
	start, end := one.ValueOffsets(0)
	m := int(end - start)
	if int64(n)*int64(m) > math.MaxInt32 {
		return nil, false, nil
	}
	offs := memory.NewResizableBuffer(mem)
	defer offs.Release()
	offs.Resize((n + 1) * 4)
	o := arrow.Int32Traits.CastFromBytes(offs.Bytes())[:n+1]
	err := eachRange(ctx, n+1, func(lo, hi int) {
		for i := lo; i < hi; i++ {
			o[i] = int32(i * m)
		}
	})
	if err != nil {
		return nil, true, err
	}
	vals := memory.NewResizableBuffer(mem)
	defer vals.Release()
	vals.Resize(n * m * width)
	dst := vals.Bytes()[:n*m*width]
	cd := child.Data()
	var src []byte
	if m > 0 {
		src = cd.Buffers()[1].Bytes()[(cd.Offset()+int(start))*width : (cd.Offset()+int(end))*width]
	}
	// dst[:filled] always holds whole copies of the value (period bytes
	// each), so a copy of its first k bytes, k a multiple of the period,
	// continues the pattern.
	period := m * width
	filled := copy(dst, src)
	for filled < len(dst) && period > 0 {
		if err := ctx.Err(); err != nil {
			return nil, true, err
		}
		k := max(period, min(filled, touchChunkBytes)/period*period)
		filled += copy(dst[filled:], dst[:k])
	}
	childData := array.NewData(child.DataType(), n*m, []*memory.Buffer{nil, vals}, nil, 0, 0)
	defer childData.Release()
	data := array.NewData(one.DataType(), n, []*memory.Buffer{nil, offs}, []arrow.ArrayData{childData}, 0, 0)
	defer data.Release()
	return array.MakeFromData(data), true, nil
}

// nestedConstant reports whether a constant of type dt is built once and
// gathered (constEval.Eval).
func nestedConstant(dt arrow.DataType) bool {
	switch dt.ID() {
	case arrow.LIST, arrow.LARGE_LIST, arrow.FIXED_SIZE_LIST, arrow.MAP, arrow.STRUCT:
		return true
	}
	return false
}

// MakeConstantArray returns an array of n copies of v (canonical or
// convertible as AppendValue accepts) of type dt.
func MakeConstantArray(mem memory.Allocator, dt arrow.DataType, v any, n int) (arrow.Array, error) {
	if v == nil {
		return array.MakeArrayOfNull(mem, dt, n), nil
	}
	switch dt.ID() {
	case arrow.INT64, arrow.TIMESTAMP:
		if x, ok := toInt64(v); ok {
			return fillFixed(mem, dt, n, x), nil
		}
	case arrow.FLOAT64:
		if x, ok := v.(float64); ok {
			return fillFixed(mem, dt, n, x), nil
		}
	}
	b := array.NewBuilder(mem, dt)
	defer b.Release()
	b.Reserve(n)
	for i := 0; i < n; i++ {
		if err := AppendValue(b, v); err != nil {
			return nil, err
		}
	}
	return b.NewArray(), nil
}

// fillFixed returns an array of type dt holding n copies of x, built
// directly into one buffer (constant results such as SELECT 1 are common).
func fillFixed[T int64 | float64](mem memory.Allocator, dt arrow.DataType, n int, x T) arrow.Array {
	buf := memory.NewResizableBuffer(mem)
	buf.Resize(n * 8)
	vals := castSlice[T](buf.Bytes())[:n]
	for i := range vals {
		vals[i] = x
	}
	data := array.NewData(dt, n, []*memory.Buffer{nil, buf}, nil, 0, 0)
	buf.Release()
	defer data.Release()
	return array.MakeFromData(data)
}

// decimalValue is a helper for kernels that take a decimal constant.
func decimalValue(v any) (decimal128.Num, bool) {
	n, ok := v.(decimal128.Num)
	return n, ok
}

func decimalFromParts(hi int64, lo uint64) decimal128.Num { return decimal128.New(hi, lo) }
