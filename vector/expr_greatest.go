package vector

import (
	"bytes"
	"cmp"
	"context"
	"fmt"
	"math"
	"strings"

	"github.com/apache/arrow/go/v17/arrow"
	"github.com/apache/arrow/go/v17/arrow/array"
	"github.com/apache/arrow/go/v17/arrow/decimal128"
	"github.com/apache/arrow/go/v17/arrow/memory"
)

// greatest(a, b, ...) and least(a, b, ...): the largest (smallest) of the
// non-NULL arguments, NULL when all are NULL, as Spark's Greatest and
// Least. The arguments must have one type (the planner casts them to
// their common type); NaN is larger than any other double. The kernel
// finds, per row, which argument wins (one typed pass per argument), and
// then gathers the winners.

// bindGreatest binds greatest (max true) or least.
func bindGreatest(isMax bool) func(*FuncExpr, *arrow.Schema, memory.Allocator, []Evaluator) (Evaluator, error) {
	return func(f *FuncExpr, in *arrow.Schema, mem memory.Allocator, args []Evaluator) (Evaluator, error) {
		if len(args) < 2 {
			return nil, fmt.Errorf("%s needs at least 2 arguments, got %d: %w", f.Name, len(args), ErrArgumentCount)
		}
		var dt arrow.DataType = arrow.Null
		plain := make([]Evaluator, len(args))
		for k, a := range args {
			t := Unwrap(a.DataType())
			plain[k] = Plain(a, mem)
			if t.ID() == arrow.NULL {
				continue
			}
			if dt.ID() == arrow.NULL {
				dt = t
				continue
			}
			if !arrow.TypeEqual(dt, t) {
				return nil, fmt.Errorf("the arguments of %s must have one type, not %s and %s: %w", f.Name, TypeName(dt), TypeName(t), ErrType)
			}
		}
		if dt.ID() == arrow.NULL {
			return fnNullResult(dt, mem), nil
		}
		switch dt.ID() {
		case arrow.INT8, arrow.INT16, arrow.INT32, arrow.INT64, arrow.FLOAT32, arrow.FLOAT64, arrow.DATE32, arrow.TIMESTAMP,
			arrow.DECIMAL128, arrow.STRING, arrow.BINARY, arrow.BOOL:
		default:
			return nil, fmt.Errorf("%s does not support %s: %w", f.Name, TypeName(dt), ErrType)
		}
		ev := &greatestEval{f: f, args: plain, dt: dt, max: isMax, mem: mem}
		return fnFoldConstant(f, in, mem, ev, plain...)
	}
}

type greatestEval struct {
	f    *FuncExpr
	args []Evaluator
	dt   arrow.DataType
	max  bool
	mem  memory.Allocator
}

func (g *greatestEval) DataType() arrow.DataType { return g.dt }

func (g *greatestEval) Eval(ctx context.Context, rec arrow.Record) (arrow.Array, error) {
	arrs, err := evalAll(ctx, g.args, rec)
	if err != nil {
		return nil, err
	}
	defer releaseArrays(arrs)
	n := int(rec.NumRows())
	win := make([]int8, n) // the winning argument of each row, -1 for none
	for i := range win {
		win[i] = -1
	}
	// Arguments of the NULL type never win.
	live := make([]arrow.Array, len(arrs))
	for k, a := range arrs {
		if a.DataType().ID() != arrow.NULL {
			live[k] = a
		}
	}
	if len(arrs) > math.MaxInt8 {
		return nil, fmt.Errorf("%s takes at most %d arguments: %w", g.f.Name, math.MaxInt8, ErrArgumentCount)
	}
	switch g.dt.ID() {
	case arrow.INT8:
		pickOrdered[int8](live, win, g.max)
	case arrow.INT16:
		pickOrdered[int16](live, win, g.max)
	case arrow.INT32, arrow.DATE32:
		pickOrdered[int32](live, win, g.max)
	case arrow.INT64, arrow.TIMESTAMP:
		pickOrdered[int64](live, win, g.max)
	case arrow.FLOAT32:
		pickBy(live, win, g.max, func(a arrow.Array, i int) float32 { return a.(*array.Float32).Value(i) }, compareNaNLast[float32])
	case arrow.FLOAT64:
		pickBy(live, win, g.max, func(a arrow.Array, i int) float64 { return a.(*array.Float64).Value(i) }, compareNaNLast[float64])
	case arrow.DECIMAL128:
		pickBy(live, win, g.max, func(a arrow.Array, i int) decimal128.Num { return a.(*array.Decimal128).Value(i) },
			func(x, y decimal128.Num) int { return x.Cmp(y) })
	case arrow.STRING:
		pickBy(live, win, g.max, func(a arrow.Array, i int) string { return a.(*array.String).Value(i) }, strings.Compare)
	case arrow.BINARY:
		pickBy(live, win, g.max, func(a arrow.Array, i int) []byte { return a.(*array.Binary).Value(i) }, bytes.Compare)
	case arrow.BOOL:
		pickBy(live, win, g.max, func(a arrow.Array, i int) bool { return a.(*array.Boolean).Value(i) },
			func(x, y bool) int {
				switch {
				case x == y:
					return 0
				case y:
					return -1
				}
				return 1
			})
	}
	return gatherWinners(g.mem, g.dt, arrs, win)
}

// pickOrdered updates win with each argument's values, in argument
// order: the first of equal values wins.
func pickOrdered[T int8 | int16 | int32 | int64](arrs []arrow.Array, win []int8, isMax bool) {
	for k, a := range arrs {
		if a == nil {
			continue
		}
		vals := fnRawValues[T](a)
		for i := range win {
			if a.IsNull(i) {
				continue
			}
			w := win[i]
			if w < 0 {
				win[i] = int8(k)
				continue
			}
			c := cmp.Compare(vals[i], fnRawValues[T](arrs[w])[i])
			if isMax && c > 0 || !isMax && c < 0 {
				win[i] = int8(k)
			}
		}
	}
}

// compareNaNLast orders floats as Spark: NaN above every number, -0.0
// equal to 0.0.
func compareNaNLast[T float32 | float64](x, y T) int {
	xn, yn := x != x, y != y
	switch {
	case xn && yn:
		return 0
	case xn:
		return 1
	case yn:
		return -1
	}
	return cmp.Compare(x, y)
}

// pickBy is pickOrdered with an accessor and a comparison.
func pickBy[T any](arrs []arrow.Array, win []int8, isMax bool, at func(arrow.Array, int) T, compare func(x, y T) int) {
	for k, a := range arrs {
		if a == nil {
			continue
		}
		for i := range win {
			if a.IsNull(i) {
				continue
			}
			w := win[i]
			if w < 0 {
				win[i] = int8(k)
				continue
			}
			c := compare(at(a, i), at(arrs[w], i))
			if isMax && c > 0 || !isMax && c < 0 {
				win[i] = int8(k)
			}
		}
	}
}

// gatherWinners builds the result: row i of argument win[i], NULL where
// none won.
func gatherWinners(mem memory.Allocator, dt arrow.DataType, arrs []arrow.Array, win []int8) (arrow.Array, error) {
	b := array.NewBuilder(mem, dt)
	defer b.Release()
	b.Reserve(len(win))
	for i, w := range win {
		if w < 0 {
			b.AppendNull()
			continue
		}
		switch bb := b.(type) {
		case *array.Int8Builder:
			bb.Append(arrs[w].(*array.Int8).Value(i))
		case *array.Int16Builder:
			bb.Append(arrs[w].(*array.Int16).Value(i))
		case *array.Int32Builder:
			bb.Append(arrs[w].(*array.Int32).Value(i))
		case *array.Int64Builder:
			bb.Append(arrs[w].(*array.Int64).Value(i))
		case *array.Float32Builder:
			bb.Append(arrs[w].(*array.Float32).Value(i))
		case *array.Float64Builder:
			bb.Append(arrs[w].(*array.Float64).Value(i))
		case *array.Date32Builder:
			bb.Append(arrs[w].(*array.Date32).Value(i))
		case *array.TimestampBuilder:
			bb.Append(arrs[w].(*array.Timestamp).Value(i))
		case *array.Decimal128Builder:
			bb.Append(arrs[w].(*array.Decimal128).Value(i))
		case *array.StringBuilder:
			bb.Append(arrs[w].(*array.String).Value(i))
		case *array.BinaryBuilder:
			bb.Append(arrs[w].(*array.Binary).Value(i))
		case *array.BooleanBuilder:
			bb.Append(arrs[w].(*array.Boolean).Value(i))
		default:
			return nil, fmt.Errorf("greatest/least of %s: %w", TypeName(dt), ErrType)
		}
	}
	return b.NewArray(), nil
}

func init() {
	functions["greatest"] = funcSpec{2, -1, rowBinder("greatest", bindGreatest(true))}
	functions["least"] = funcSpec{2, -1, rowBinder("least", bindGreatest(false))}
}
