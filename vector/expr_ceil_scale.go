package vector

import (
	"fmt"
	"math/big"

	"github.com/apache/arrow/go/v17/arrow"
	"github.com/apache/arrow/go/v17/arrow/decimal128"
	"github.com/apache/arrow/go/v17/arrow/memory"
)

// ceil(x, scale) and floor(x, scale) are Spark's RoundCeil/RoundFloor:
// the argument is implicitly cast to a decimal (an integer type to
// DECIMAL(3|5|10|20, 0), FLOAT to DECIMAL(14,7), DOUBLE to DECIMAL(30,15),
// a string to DECIMAL(38,18)), then rounded towards +inf (ceil) or -inf
// (floor) at scale digits after the point. The scale must be a non-null
// INT literal. For DECIMAL(p,s) the result is DECIMAL(p-s+1+min(s,scale),
// min(s,scale)) when scale >= 0 and DECIMAL(max(p-s+1, 1-scale), 0)
// otherwise (both capped at 38); the extra integral digit holds the carry
// (ceil(9.9, 0) is 10). A result beyond its precision is an overflow
// error, as Spark's Decimal.set raises.

// ceilFloorScale binds the two-argument form of ceil (ceil true) or floor.
func ceilFloorScale(f *FuncExpr, in *arrow.Schema, mem memory.Allocator, args []Evaluator, ceil bool) (Evaluator, error) {
	name := "floor"
	if ceil {
		name = "ceil"
	}
	v, ok := fnConstValue(args[1])
	scale, isInt := v.(int32)
	if !ok || Unwrap(args[1].DataType()).ID() != arrow.INT32 || !isInt {
		return nil, fmt.Errorf("The 'scale' parameter of function '%s' needs to be a int literal (not %s): %w", name, f.Args[1], ErrType)
	}
	in0 := Unwrap(args[0].DataType())
	var dec *arrow.Decimal128Type
	switch {
	case in0.ID() == arrow.DECIMAL128:
		dec = in0.(*arrow.Decimal128Type)
	case in0.ID() == arrow.NULL || IsStringLike(in0):
		dec = &arrow.Decimal128Type{Precision: 38, Scale: 18}
	case in0.ID() == arrow.FLOAT32:
		dec = &arrow.Decimal128Type{Precision: 14, Scale: 7}
	case in0.ID() == arrow.FLOAT64:
		dec = &arrow.Decimal128Type{Precision: 30, Scale: 15}
	case IsIntegral(in0):
		dec = &arrow.Decimal128Type{Precision: integralDigits(in0), Scale: 0}
	default:
		return nil, fmt.Errorf("%s requires a numeric argument, not %s: %w", name, TypeName(in0), ErrType)
	}
	p, s := dec.Precision, dec.Scale
	var out *arrow.Decimal128Type
	if scale >= 0 {
		ns := min(s, scale)
		out = &arrow.Decimal128Type{Precision: min(38, p-s+1+ns), Scale: ns}
	} else {
		out = &arrow.Decimal128Type{Precision: int32(min(38, max(int64(p-s+1), 1-int64(scale)))), Scale: 0}
	}
	if in0.ID() == arrow.NULL {
		return fnNullResult(out, mem), nil
	}
	x := args[0]
	if in0.ID() != arrow.DECIMAL128 {
		c, err := (&CastExpr{X: f.Args[0], To: dec}).Bind(in, mem)
		if err != nil {
			return nil, err
		}
		x = c
	}
	m := &mathEval{f: f, x: x, dt: out, mem: mem}
	m.kern = func(m *mathEval, a arrow.Array) (arrow.Array, error) {
		return mapFixed(m, a, out, func(v decimal128.Num) (decimal128.Num, bool) {
			res, ok := ceilFloorDecimal(v, s, scale, ceil)
			return res, ok && res.FitsInPrecision(out.Precision)
		})
	}
	// x is args[0] or a cast of it: constant exactly when args[0] is.
	return fnFoldConstant(f, in, mem, m, args[0])
}

// ceilFloorDecimal rounds v (at scale s) towards +inf (ceil) or -inf to
// scale digits, returned at scale max(min(s, scale), 0): a negative scale
// rounds to a multiple of 10^-scale kept at scale 0. ok is false when the
// result does not fit 128 bits.
func ceilFloorDecimal(v decimal128.Num, s, scale int32, ceil bool) (decimal128.Num, bool) {
	if scale >= s {
		return v, true
	}
	b := v.BigInt()
	reduce := int64(s) - int64(scale)
	if reduce > 80 {
		// |v| < 10^38 <= 10^reduce: the quotient is 0 or -1 (floor), 0 or 1
		// (ceil); times 10^-scale (> 10^42) it only fits when 0.
		if ceil && b.Sign() > 0 || !ceil && b.Sign() < 0 {
			return decimal128.Num{}, false
		}
		return decimal128.Num{}, true
	}
	p := new(big.Int).Exp(big.NewInt(10), big.NewInt(reduce), nil)
	// Euclidean division: q = floor(b / p) for p > 0, r >= 0.
	q, r := new(big.Int).DivMod(b, p, new(big.Int))
	if ceil && r.Sign() != 0 {
		q.Add(q, big.NewInt(1))
	}
	if scale < 0 {
		q.Mul(q, new(big.Int).Exp(big.NewInt(10), big.NewInt(int64(-scale)), nil))
	}
	if q.BitLen() > 126 {
		return decimal128.Num{}, false
	}
	return decimal128.FromBigInt(q), true
}

// floorCeilCall is floor/ceil/ceiling with one argument or with a scale.
func floorCeilCall(name string, ceil bool, a []Expr) Expr {
	return &FuncExpr{Name: name, Args: a, bind: bindFloorCeil(ceil)}
}
