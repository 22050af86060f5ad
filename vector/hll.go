package vector

import (
	"fmt"
	"math"
	"math/bits"

	"github.com/apache/arrow/go/v17/arrow"
	"github.com/apache/arrow/go/v17/arrow/array"
	"github.com/apache/arrow/go/v17/arrow/memory"
)

// HyperLogLog sketches for approx_count_distinct.
//
// A sketch of precision p has m = 2^p registers of one byte. A value's
// 64-bit hash (the KeyEncoder's stable hash: fmix64 of the value's word for
// fixed-width values, a byte hash for others) picks a register with its top
// p bits; the register keeps the largest rank (1 + leading zeros) of the
// remaining bits seen. Registers merge by taking the maximum, so partial
// sketches of the same precision combine exactly, in any order.
//
// The estimate is Ertl's improved raw estimator ("New cardinality
// estimation algorithms for HyperLogLog sketches", 2017), which is unbiased
// over the whole range without the empirical bias tables of HLL++; its
// relative standard error is about 1.04/sqrt(m).
//
// The serialized sketch (the partial state column) is the m registers as
// bytes, in register order: its length gives the precision.

// DefaultHLLRelativeSD is approx_count_distinct's default relative standard
// deviation, as Spark's.
const DefaultHLLRelativeSD = 0.05

// HLLPrecision returns the precision (log2 of the register count) for a
// relative standard deviation, computed as Spark does: ceil(2 log2(1.106 /
// rsd)). rsd 0.05 gives 9 (512 registers). It refuses rsd that would need a
// precision below 4 or above 18.
func HLLPrecision(rsd float64) (int, error) {
	if !(rsd > 0) || math.IsInf(rsd, 0) {
		return 0, fmt.Errorf("relative SD %v must be positive", rsd)
	}
	p := int(math.Ceil(2 * math.Log2(1.106/rsd)))
	if p < 4 || p > 18 {
		return 0, fmt.Errorf("relative SD %v needs HyperLogLog precision %d, outside [4, 18]", rsd, p)
	}
	return p, nil
}

// hllAdd folds one hash into the registers of a sketch of precision p.
func hllAdd(regs []uint8, p uint, h uint64) {
	idx := h >> (64 - p)
	// The guard bit caps the rank at 64-p+1 when the remaining bits are 0.
	w := h<<p | 1<<(p-1)
	rank := uint8(bits.LeadingZeros64(w) + 1)
	if rank > regs[idx] {
		regs[idx] = rank
	}
}

// hllMerge folds sketch src into dst (same length).
func hllMerge(dst, src []uint8) {
	src = src[:len(dst)]
	for i, r := range src {
		dst[i] = max(dst[i], r)
	}
}

// HLLEstimate estimates the number of distinct values from a sketch's
// registers (len a power of two).
func HLLEstimate(regs []uint8) float64 {
	m := len(regs)
	if m == 0 {
		return 0
	}
	p := bits.TrailingZeros(uint(m))
	q := 64 - p // the largest rank is q+1
	var hist [66]int
	for _, r := range regs {
		hist[min(int(r), q+1)]++
	}
	fm := float64(m)
	z := fm * hllTau(1-float64(hist[q+1])/fm)
	for k := q; k >= 1; k-- {
		z = 0.5 * (z + float64(hist[k]))
	}
	z += fm * hllSigma(float64(hist[0])/fm)
	return fm * fm / (2 * math.Ln2 * z)
}

// hllSigma is σ(x) = x + Σ_{k≥1} x^(2^k) 2^(k-1) of Ertl's estimator.
func hllSigma(x float64) float64 {
	if x == 1 {
		return math.Inf(1)
	}
	y, z := 1.0, x
	for {
		x *= x
		next := z + x*y
		y += y
		if next == z {
			return z
		}
		z = next
	}
}

// hllTau is τ(x) = (1 - x - Σ_{k≥1} (1 - x^(2^-k))² 2^-k) / 3 of Ertl's
// estimator.
func hllTau(x float64) float64 {
	if x == 0 || x == 1 {
		return 0
	}
	y, z := 1.0, 1-x
	for {
		x = math.Sqrt(x)
		prev := z
		y *= 0.5
		z -= (1 - x) * (1 - x) * y
		if prev == z {
			return z / 3
		}
	}
}

// hllAcc is approx_count_distinct: m registers per group in one flat array.
type hllAcc struct {
	aggInfo
	p     uint
	m     int
	merge bool
	enc   *KeyEncoder // raw mode: hashes the argument
	regs  []uint8
}

func (h *hllAcc) resize(n int) { h.grow(nil, n) }

func (h *hllAcc) grow(g *grower, n int) { h.regs = growZeroWith(g, h.regs, n*h.m) }

func (h *hllAcc) update(gids []int32, args []arrow.Array) error {
	arg := args[0]
	m := h.m
	if h.merge {
		offs, data := BinaryParts(arg)
		bm, off := validity(arg)
		for i, g := range gids {
			if bm != nil && !bitSet(bm, off+i) {
				continue
			}
			src := data[offs[i]:offs[i+1]]
			if len(src) != m {
				return &EvalError{Expr: h.label, Row: i, Err: fmt.Errorf("HyperLogLog state of %d bytes, want %d: %w", len(src), m, ErrType)}
			}
			hllMerge(h.regs[int(g)*m:int(g+1)*m], src)
		}
		return nil
	}
	if err := h.enc.Encode(args[:1]); err != nil {
		return err
	}
	hashes := h.enc.Hashes()
	anyNull := h.enc.AnyNull()
	for i, g := range gids {
		if anyNull && h.enc.HasNull(i) {
			continue
		}
		hllAdd(h.regs[int(g)*m:int(g+1)*m], h.p, hashes[i])
	}
	return nil
}

func (h *hllAcc) final(mem memory.Allocator, lo, hi int, _ []int64) (arrow.Array, error) {
	out := make([]int64, hi-lo)
	for g := lo; g < hi; g++ {
		out[g-lo] = int64(math.Round(HLLEstimate(h.regs[g*h.m : (g+1)*h.m])))
	}
	return newFixedArray(mem, Int64, out, nil), nil
}

func (h *hllAcc) state(mem memory.Allocator, lo, hi int, _ []int64) ([]arrow.Array, error) {
	b := array.NewBinaryBuilder(mem, Binary.(*arrow.BinaryType))
	defer b.Release()
	b.ReserveData((hi - lo) * h.m)
	b.Reserve(hi - lo)
	for g := lo; g < hi; g++ {
		b.Append(h.regs[g*h.m : (g+1)*h.m])
	}
	return []arrow.Array{b.NewArray()}, nil
}
