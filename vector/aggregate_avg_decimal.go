package vector

import (
	"fmt"
	"math/big"

	"github.com/apache/arrow/go/v17/arrow"
	"github.com/apache/arrow/go/v17/arrow/decimal128"
)

// avg over DECIMAL(p,s) is Spark's: the sum is kept as DECIMAL(p+10,s)
// (bounded at 38, an overflow as sum's), and the result is
// DECIMAL(p+4,s+4), computed as Spark evaluates it: the sum divided by
// the count as DECIMAL(20,0) under Spark's decimal division rules (the
// quotient at 38 fraction digits, then at the division's result scale,
// each HALF_UP), then cast to the result type (HALF_UP again).

// avgDecimalTypes are the sum (state) and result types of avg over in.
func avgDecimalTypes(in *arrow.Decimal128Type) (sum, result *arrow.Decimal128Type) {
	sum = &arrow.Decimal128Type{Precision: min(38, in.Precision+10), Scale: in.Scale}
	result = &arrow.Decimal128Type{Precision: min(38, in.Precision+4), Scale: min(38, in.Scale+4)}
	return sum, result
}

// avgDecimalResultOfState is the result type of avg whose partial sum has
// type sum; false when the argument's precision cannot be told from it
// (a sum bounded at 38 digits).
func avgDecimalResultOfState(sum *arrow.Decimal128Type) (*arrow.Decimal128Type, error) {
	if sum.Precision >= 38 {
		return nil, fmt.Errorf("the partial state of avg over a decimal of 28 or more digits does not tell the result type (Spark's decimal(p+4,s+4)): %w", ErrType)
	}
	_, r := avgDecimalTypes(&arrow.Decimal128Type{Precision: sum.Precision - 10, Scale: sum.Scale})
	return r, nil
}

// roundHalfUpQuo is num/den rounded HALF_UP (away from zero) to an
// integer; den > 0.
func roundHalfUpQuo(num, den *big.Int) *big.Int {
	q, r := new(big.Int).QuoRem(num, den, new(big.Int))
	r2 := new(big.Int).Abs(r)
	r2.Lsh(r2, 1)
	if r2.Cmp(den) >= 0 {
		if num.Sign() < 0 {
			q.Sub(q, big.NewInt(1))
		} else {
			q.Add(q, big.NewInt(1))
		}
	}
	return q
}

// avgDecimal is the mean of count values summing to sum (unscaled at
// sumType's scale), as Spark's avg computes it; false when it does not fit
// the result type.
func avgDecimal(sum decimal128.Num, count int64, sumType, result *arrow.Decimal128Type) (decimal128.Num, bool) {
	_, divScale := decimalArithType(ArithDiv, sumType.Precision, sumType.Scale, 20, 0)
	ten := big.NewInt(10)
	pow := func(k int32) *big.Int { return new(big.Int).Exp(ten, big.NewInt(int64(k)), nil) }
	// At 38 fraction digits: sum / 10^S / count = sum * 10^(38-S) / count.
	num := new(big.Int).Mul(sum.BigInt(), pow(38-sumType.Scale))
	q := roundHalfUpQuo(num, big.NewInt(count))
	if divScale < 38 {
		q = roundHalfUpQuo(q, pow(38-divScale))
	}
	if result.Scale < divScale {
		q = roundHalfUpQuo(q, pow(divScale-result.Scale))
	} else {
		q.Mul(q, pow(result.Scale-divScale))
	}
	if q.BitLen() > 126 {
		return decimal128.Num{}, false
	}
	out := decimal128.FromBigInt(q)
	return out, out.FitsInPrecision(result.Precision)
}
