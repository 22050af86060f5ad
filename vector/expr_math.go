package vector

import (
	"context"
	"fmt"
	"math"
	"math/big"
	"strconv"

	"github.com/apache/arrow/go/v17/arrow"
	"github.com/apache/arrow/go/v17/arrow/decimal128"
	"github.com/apache/arrow/go/v17/arrow/memory"
)

// Abs returns abs(x): the absolute value, of x's type (int, bigint,
// double, decimal). abs of the smallest integer overflows (an error, as
// Spark's ANSI mode).
func Abs(x Expr) Expr { return &FuncExpr{Name: "abs", Args: []Expr{x}, bind: bindAbs} }

// Round returns round(x, scale) with Spark's HALF_UP rounding (halves away
// from zero); scale (nil: 0) must be an integer constant and may be
// negative. Integers keep their type, doubles stay double (rounded on
// their shortest decimal representation, as Spark's BigDecimal does), and
// DECIMAL(p,s) becomes DECIMAL(p-s+1+min(s,scale), min(s,scale)) for
// scale >= 0, DECIMAL(max(p-s+1, 1-scale), 0) otherwise.
func Round(x, scale Expr) Expr {
	args := []Expr{x}
	if scale != nil {
		args = append(args, scale)
	}
	return &FuncExpr{Name: "round", Args: args, bind: bindRound}
}

// Floor returns floor(x): the largest integer not above x, as bigint for
// numbers (a double out of range saturates and NaN gives 0, as Spark's
// cast to long) and as DECIMAL(p-s+1, 0) for DECIMAL(p,s) with s > 0.
func Floor(x Expr) Expr { return &FuncExpr{Name: "floor", Args: []Expr{x}, bind: bindFloorCeil(false)} }

// Ceil returns ceil(x): the smallest integer not below x, typed as Floor.
func Ceil(x Expr) Expr { return &FuncExpr{Name: "ceil", Args: []Expr{x}, bind: bindFloorCeil(true)} }

// mathArg prepares a numeric argument: a string is cast to double (Spark's
// implicit cast); other non-numeric types are bind errors.
func mathArg(f *FuncExpr, in *arrow.Schema, mem memory.Allocator, ev Evaluator) (Evaluator, error) {
	dt := ev.DataType()
	switch {
	case dt.ID() == arrow.FLOAT32:
		// Kernels run in double (exact); functions that keep a float's
		// type narrow their result back (keepFloat).
		return numericWiden(ev, Float64, mem, sqlText{}, sqlText{})
	case dt.ID() == arrow.NULL || IsNumeric(dt):
		return ev, nil
	case IsStringLike(dt):
		return (&CastExpr{X: f.Args[0], To: Float64, Mode: ModeLegacy}).Bind(in, mem)
	}
	return nil, fmt.Errorf("%s requires a numeric argument, not %s: %w", f.Name, TypeName(dt), ErrType)
}

// keepFloat rounds the double result of a function of a float argument
// (arg) back to float, as Spark keeps the argument's type.
func keepFloat(f *FuncExpr, in *arrow.Schema, mem memory.Allocator, arg Evaluator, ev Evaluator, err error) (Evaluator, error) {
	if err != nil || Unwrap(arg.DataType()).ID() != arrow.FLOAT32 {
		return ev, err
	}
	return fnFoldConstant(f, in, mem, &float32Eval{in: ev, mem: mem}, ev)
}

// mathEval applies a whole-column kernel to one numeric argument.
type mathEval struct {
	f    *FuncExpr
	x    Evaluator
	dt   arrow.DataType
	mem  memory.Allocator
	kern func(m *mathEval, arr arrow.Array) (arrow.Array, error)
}

func (m *mathEval) DataType() arrow.DataType { return m.dt }

func (m *mathEval) Eval(ctx context.Context, rec arrow.Record) (arrow.Array, error) {
	arr, err := m.x.Eval(ctx, rec)
	if err != nil {
		return nil, err
	}
	defer arr.Release()
	return m.kern(m, arr)
}

// rowError is the runtime error of row i of arr.
func (m *mathEval) rowError(arr arrow.Array, i int, err error) error {
	return &EvalError{Expr: m.f.String(), Row: i, Values: m.f.Args[0].String() + "=" + FormatValue(ValueAt(arr, i), arr.DataType()), Err: err}
}

// mapFixed runs a per-value function over the valid rows of a fixed-width
// column into a new column of type dt with the same validity; fn returns
// false for an overflow at that row.
func mapFixed[S, D any](m *mathEval, arr arrow.Array, dt arrow.DataType, fn func(S) (D, bool)) (arrow.Array, error) {
	n := arr.Len()
	src := fnRawValues[S](arr)
	buf, dst := fnFixedBuf[D](m.mem, n)
	noNulls := arr.NullN() == 0
	for i := 0; i < n; i++ {
		if !noNulls && arr.IsNull(i) {
			continue
		}
		v, ok := fn(src[i])
		if !ok {
			buf.Release()
			return nil, m.rowError(arr, i, ErrOverflow)
		}
		dst[i] = v
	}
	bm, nulls := newValidityOut(m.mem, n, arr).finish()
	return fnNewArray(dt, n, []*memory.Buffer{bm, buf}, nil, nulls), nil
}

func bindAbs(f *FuncExpr, in *arrow.Schema, mem memory.Allocator, args []Evaluator) (Evaluator, error) {
	ev, err := bindAbsWide(f, in, mem, args)
	return keepFloat(f, in, mem, args[0], ev, err)
}

func bindAbsWide(f *FuncExpr, in *arrow.Schema, mem memory.Allocator, args []Evaluator) (Evaluator, error) {
	x, err := mathArg(f, in, mem, args[0])
	if err != nil {
		return nil, err
	}
	dt := x.DataType()
	m := &mathEval{f: f, x: x, dt: dt, mem: mem}
	switch dt.ID() {
	case arrow.NULL:
		return fnNullResult(Float64, mem), nil
	case arrow.INT8:
		m.kern = func(m *mathEval, a arrow.Array) (arrow.Array, error) {
			return mapFixed(m, a, dt, func(v int8) (int8, bool) {
				if v < 0 {
					return -v, v != math.MinInt8
				}
				return v, true
			})
		}
	case arrow.INT16:
		m.kern = func(m *mathEval, a arrow.Array) (arrow.Array, error) {
			return mapFixed(m, a, dt, func(v int16) (int16, bool) {
				if v < 0 {
					return -v, v != math.MinInt16
				}
				return v, true
			})
		}
	case arrow.INT32:
		m.kern = func(m *mathEval, a arrow.Array) (arrow.Array, error) {
			return mapFixed(m, a, dt, func(v int32) (int32, bool) {
				if v < 0 {
					return -v, v != math.MinInt32
				}
				return v, true
			})
		}
	case arrow.INT64:
		m.kern = func(m *mathEval, a arrow.Array) (arrow.Array, error) {
			return mapFixed(m, a, dt, func(v int64) (int64, bool) {
				if v < 0 {
					return -v, v != math.MinInt64
				}
				return v, true
			})
		}
	case arrow.FLOAT64:
		m.kern = func(m *mathEval, a arrow.Array) (arrow.Array, error) {
			return mapFixed(m, a, dt, func(v float64) (float64, bool) { return math.Abs(v), true })
		}
	case arrow.DECIMAL128:
		m.kern = func(m *mathEval, a arrow.Array) (arrow.Array, error) {
			return mapFixed(m, a, dt, func(v decimal128.Num) (decimal128.Num, bool) { return v.Abs(), true })
		}
	default:
		return nil, fmt.Errorf("abs requires a numeric argument, not %s: %w", TypeName(dt), ErrType)
	}
	return fnFoldConstant(f, in, mem, m, x)
}

// rounding is one rounding rule over each numeric type: HALF_UP for
// round, HALF_EVEN for bround. Both bind the same way (the scale is an
// integer constant; the result type follows Spark's RoundBase).
type rounding struct {
	name     string
	ints     func(v int64, scale int32) (int64, bool)
	floats   func(v float64, scale int32) float64
	decimals func(v decimal128.Num, s, scale int32) (decimal128.Num, bool)
}

var (
	roundingHalfUp   = rounding{name: "round", ints: roundInt, floats: roundFloat, decimals: roundDecimal}
	roundingHalfEven = rounding{name: "bround", ints: bInt, floats: bFloat, decimals: bDecimal}
)

func bindRound(f *FuncExpr, in *arrow.Schema, mem memory.Allocator, args []Evaluator) (Evaluator, error) {
	ev, err := roundingHalfUp.bind(f, in, mem, args)
	return keepFloat(f, in, mem, args[0], ev, err)
}

func bindBRound(f *FuncExpr, in *arrow.Schema, mem memory.Allocator, args []Evaluator) (Evaluator, error) {
	ev, err := roundingHalfEven.bind(f, in, mem, args)
	return keepFloat(f, in, mem, args[0], ev, err)
}

func (r rounding) bind(f *FuncExpr, in *arrow.Schema, mem memory.Allocator, args []Evaluator) (Evaluator, error) {
	x, err := mathArg(f, in, mem, args[0])
	if err != nil {
		return nil, err
	}
	scale := int32(0)
	if len(args) > 1 {
		v, ok := fnConstValue(args[1])
		if !ok || !IsIntegral(args[1].DataType()) && args[1].DataType().ID() != arrow.NULL {
			return nil, fmt.Errorf("the scale of %s must be an integer constant, not %s: %w", r.name, f.Args[1], ErrType)
		}
		switch s := v.(type) {
		case int32:
			scale = s
		case int64:
			if s < math.MinInt32 || s > math.MaxInt32 {
				return nil, fmt.Errorf("the scale of %s is out of range: %d: %w", r.name, s, ErrType)
			}
			scale = int32(s)
		case nil:
			return fnNullResult(x.DataType(), mem), nil
		}
	}
	dt := x.DataType()
	m := &mathEval{f: f, x: x, dt: dt, mem: mem}
	switch dt.ID() {
	case arrow.NULL:
		return fnNullResult(Float64, mem), nil
	case arrow.INT32:
		m.kern = func(m *mathEval, a arrow.Array) (arrow.Array, error) {
			return mapFixed(m, a, dt, func(v int32) (int32, bool) {
				r, ok := r.ints(int64(v), scale)
				return int32(r), ok && r == int64(int32(r))
			})
		}
	case arrow.INT64:
		m.kern = func(m *mathEval, a arrow.Array) (arrow.Array, error) {
			return mapFixed(m, a, dt, func(v int64) (int64, bool) { return r.ints(v, scale) })
		}
	case arrow.FLOAT64:
		m.kern = func(m *mathEval, a arrow.Array) (arrow.Array, error) {
			return mapFixed(m, a, dt, func(v float64) (float64, bool) { return r.floats(v, scale), true })
		}
	case arrow.DECIMAL128:
		d := dt.(*arrow.Decimal128Type)
		p, s := d.Precision, d.Scale
		var out *arrow.Decimal128Type
		if scale >= 0 {
			ns := min(s, scale)
			out = &arrow.Decimal128Type{Precision: min(38, p-s+1+ns), Scale: ns}
		} else {
			out = &arrow.Decimal128Type{Precision: min(38, max(p-s+1, 1-scale)), Scale: 0}
		}
		m.dt = out
		m.kern = func(m *mathEval, a arrow.Array) (arrow.Array, error) {
			return mapFixed(m, a, out, func(v decimal128.Num) (decimal128.Num, bool) {
				res, ok := r.decimals(v, s, scale)
				return res, ok && res.FitsInPrecision(out.Precision)
			})
		}
	default:
		return nil, fmt.Errorf("%s requires a numeric argument, not %s: %w", r.name, TypeName(dt), ErrType)
	}
	return fnFoldConstant(f, in, mem, m, x)
}

// pow10i returns 10^k for 0 <= k <= 18, ok false beyond.
func pow10i(k int32) (int64, bool) {
	if k < 0 || k > 18 {
		return 0, false
	}
	p := int64(1)
	for ; k > 0; k-- {
		p *= 10
	}
	return p, true
}

// roundInt rounds v to a multiple of 10^-scale, HALF_UP.
func roundInt(v int64, scale int32) (int64, bool) {
	if scale >= 0 || v == 0 {
		return v, true
	}
	p, ok := pow10i(-scale)
	if !ok {
		// 10^19 and beyond exceed bigint: |v| < 5e18 rounds to 0.
		return 0, v > -5e18 && v < 5e18
	}
	q, r := v/p, v%p
	if r < 0 {
		r = -r
	}
	if r >= p-r { // r*2 >= p without overflow
		if v < 0 {
			q--
		} else {
			q++
		}
	}
	out := q * p
	if q != 0 && out/p != q {
		return 0, false
	}
	return out, true
}

// roundFloat rounds v HALF_UP at scale digits after the point, on v's
// shortest decimal representation (so round(0.285, 2) is 0.29 as in Spark,
// though 0.285 is stored slightly below).
func roundFloat(v float64, scale int32) float64 {
	if math.IsNaN(v) || math.IsInf(v, 0) || v == 0 {
		return v
	}
	if scale >= -18 && scale <= 18 {
		p := math.Pow(10, float64(scale))
		y := math.Abs(v) * p
		if y < 1<<52 {
			fl := math.Floor(y)
			frac := y - fl
			// Away from a half, the scaled product decides exactly.
			if math.Abs(frac-0.5) > 1e-6 {
				if frac > 0.5 {
					fl++
				}
				return math.Copysign(fl/p, v)
			}
		} else if scale >= 0 {
			return v // no digits after the point to round
		}
	}
	// Exact: round the shortest decimal string.
	r, ok := new(big.Rat).SetString(strconv.FormatFloat(v, 'g', -1, 64))
	if !ok {
		return v
	}
	pk := new(big.Rat).SetInt(new(big.Int).Exp(big.NewInt(10), big.NewInt(absInt32(scale)), nil))
	if scale >= 0 {
		r.Mul(r, pk)
	} else {
		r.Quo(r, pk)
	}
	neg := r.Sign() < 0
	r.Abs(r)
	q, rem := new(big.Int).QuoRem(r.Num(), r.Denom(), new(big.Int))
	if new(big.Int).Mul(rem, big.NewInt(2)).Cmp(r.Denom()) >= 0 {
		q.Add(q, big.NewInt(1))
	}
	out := new(big.Rat).SetInt(q)
	if scale >= 0 {
		out.Quo(out, pk)
	} else {
		out.Mul(out, pk)
	}
	f, _ := out.Float64()
	if neg {
		f = -f
	}
	return f
}

func absInt32(v int32) int64 {
	if v < 0 {
		return -int64(v)
	}
	return int64(v)
}

// roundDecimal rounds v (scale s) HALF_UP to scale digits and returns it
// at scale max(scale, 0).
func roundDecimal(v decimal128.Num, s, scale int32) (decimal128.Num, bool) {
	if scale >= s {
		return v, true
	}
	reduce := s - scale
	if reduce > 38 {
		return decimal128.Num{}, true
	}
	r := v.ReduceScaleBy(reduce, true) // now at scale `scale`
	if scale < 0 {
		// Back to scale 0: multiply by 10^-scale.
		up := -scale
		if up > 38 {
			return decimal128.Num{}, r.Sign() == 0
		}
		b := new(big.Int).Mul(r.BigInt(), new(big.Int).Exp(big.NewInt(10), big.NewInt(int64(up)), nil))
		if b.BitLen() > 126 {
			return decimal128.Num{}, false
		}
		return decimal128.FromBigInt(b), true
	}
	return r, true
}

func bindFloorCeil(ceil bool) func(*FuncExpr, *arrow.Schema, memory.Allocator, []Evaluator) (Evaluator, error) {
	return func(f *FuncExpr, in *arrow.Schema, mem memory.Allocator, args []Evaluator) (Evaluator, error) {
		if len(args) == 2 {
			return ceilFloorScale(f, in, mem, args, ceil)
		}
		x, err := mathArg(f, in, mem, args[0])
		if err != nil {
			return nil, err
		}
		dt := x.DataType()
		m := &mathEval{f: f, x: x, dt: Int64, mem: mem}
		switch dt.ID() {
		case arrow.NULL:
			return fnNullResult(Int64, mem), nil
		case arrow.INT32:
			m.kern = func(m *mathEval, a arrow.Array) (arrow.Array, error) {
				return mapFixed(m, a, Int64, func(v int32) (int64, bool) { return int64(v), true })
			}
		case arrow.INT64:
			return Plain(x, mem), nil
		case arrow.FLOAT64:
			m.kern = func(m *mathEval, a arrow.Array) (arrow.Array, error) {
				return mapFixed(m, a, Int64, func(v float64) (int64, bool) {
					if ceil {
						v = math.Ceil(v)
					} else {
						v = math.Floor(v)
					}
					return saturateInt64(v), true
				})
			}
		case arrow.DECIMAL128:
			d := dt.(*arrow.Decimal128Type)
			if d.Scale == 0 {
				return Plain(x, mem), nil
			}
			out := &arrow.Decimal128Type{Precision: min(38, d.Precision-d.Scale+1), Scale: 0}
			m.dt = out
			div := new(big.Int).Exp(big.NewInt(10), big.NewInt(int64(d.Scale)), nil)
			m.kern = func(m *mathEval, a arrow.Array) (arrow.Array, error) {
				return mapFixed(m, a, out, func(v decimal128.Num) (decimal128.Num, bool) {
					q, r := new(big.Int).QuoRem(v.BigInt(), div, new(big.Int))
					if r.Sign() != 0 {
						if ceil && v.Sign() > 0 {
							q.Add(q, big.NewInt(1))
						} else if !ceil && v.Sign() < 0 {
							q.Sub(q, big.NewInt(1))
						}
					}
					return decimal128.FromBigInt(q), true
				})
			}
		default:
			return nil, fmt.Errorf("%s requires a numeric argument, not %s: %w", f.Name, TypeName(dt), ErrType)
		}
		return fnFoldConstant(f, in, mem, m, x)
	}
}

// saturateInt64 converts like Java's (long) cast: NaN is 0, out of range
// saturates.
func saturateInt64(v float64) int64 {
	switch {
	case math.IsNaN(v):
		return 0
	case v >= 9.223372036854775807e18:
		return math.MaxInt64
	case v <= -9.223372036854775808e18:
		return math.MinInt64
	}
	return int64(v)
}
