package sparksql

import (
	"math"
	"math/big"
	"math/bits"
	"strconv"
)

// Java's Double.toString and Float.toString before JDK 19, which Spark's
// golden files were generated with, do not always print the shortest
// digits that read back as the value: they develop digits until a
// symmetric half-ULP test stops them (one more than needed, sometimes:
// 2^62 prints as 4.6116860184273879E18, not 4.611686018427388E18). This is
// that digit generation, rewritten from the algorithm's description
// (FloatingDecimal's dtoa, "compatible" format): an integer fast path, an
// int and a long path whose overflows are part of their behaviour (Go's
// fixed-width arithmetic wraps as Java's does), and a big-integer path.

// javaDigits are the decimal digits of a finite non-zero magnitude and
// its decimal exponent: the value is 0.d1d2d3... * 10^decExp.
type javaDigits struct {
	digits []byte // ASCII digits
	decExp int
}

const (
	expShift       = 52
	fractHOB       = int64(1) << expShift
	maxSmallBinExp = 62
	minSmallBinExp = -(63 / 3)
)

// insignificantDigitsNumber[p] is the number of decimal digits below
// 2^p's leading one that carry no information (floor-ish log10 of 2^p).
var insignificantDigitsNumber = [...]int{
	0, 0, 0, 0, 1, 1, 1, 2, 2, 2, 3, 3, 3, 3,
	4, 4, 4, 5, 5, 5, 6, 6, 6, 6, 7, 7, 7,
	8, 8, 8, 9, 9, 9, 9, 10, 10, 10, 11, 11, 11,
	12, 12, 12, 12, 13, 13, 13, 14, 14, 14,
	15, 15, 15, 15, 16, 16, 16, 17, 17, 17,
	18, 18, 18, 19,
}

// n5Bits[i] is about ceil(log2(5^i)).
var n5Bits = [...]int{0, 3, 5, 7, 10, 12, 14, 17, 19, 21, 24, 26, 28, 31, 33, 35, 38, 40, 42, 45, 47, 49, 52, 54, 56, 59, 61}

func pow5Int64(n int) int64 {
	p := int64(1)
	for i := 0; i < n; i++ {
		p *= 5
	}
	return p
}

func insignificantDigitsForPow2(p2 int) int {
	if p2 > 1 && p2 < len(insignificantDigitsNumber) {
		return insignificantDigitsNumber[p2]
	}
	return 0
}

// developLongDigits is the digits of lvalue with insignificant low digits
// rounded off (half up) and trailing zeros dropped.
func developLongDigits(lvalue int64, insignificant int) javaDigits {
	decExp := 0
	if insignificant != 0 {
		pow10 := pow5Int64(insignificant) << insignificant
		residue := lvalue % pow10
		lvalue /= pow10
		decExp += insignificant
		if residue >= pow10>>1 {
			lvalue++
		}
	}
	for lvalue%10 == 0 {
		lvalue /= 10
		decExp++
	}
	s := strconv.FormatInt(lvalue, 10)
	return javaDigits{digits: []byte(s), decExp: decExp + len(s)}
}

// estimateDecExp estimates floor(log10(d)) from the mantissa bits and the
// binary exponent, as the algorithm does (the estimate may be one high).
func estimateDecExp(fractBits int64, binExp int) int {
	d2 := math.Float64frombits(uint64(0x3ff)<<expShift | uint64(fractBits)&(1<<expShift-1))
	d := (d2-1.5)*0.289529654 + 0.176091259 + float64(binExp)*0.301029995663981
	return int(math.Floor(d))
}

// dtoa develops the digits of fractBits * 2^(binExp - 52), fractBits
// normalized (bit 52 set), nSignificantBits the precision of the type.
func dtoa(binExp int, fractBits int64, nSignificantBits int) javaDigits {
	tailZeros := bits.TrailingZeros64(uint64(fractBits))
	nFractBits := expShift + 1 - tailZeros
	nTinyBits := max(0, nFractBits-binExp-1)
	if binExp <= maxSmallBinExp && binExp >= minSmallBinExp &&
		nTinyBits < 27 && nFractBits+n5Bits[nTinyBits] < 64 && nTinyBits == 0 {
		insignificant := 0
		if binExp > nSignificantBits {
			insignificant = insignificantDigitsForPow2(binExp - nSignificantBits - 1)
		}
		if binExp >= expShift {
			fractBits <<= binExp - expShift
		} else {
			fractBits = int64(uint64(fractBits) >> (expShift - binExp))
		}
		return developLongDigits(fractBits, insignificant)
	}
	decExp := estimateDecExp(fractBits, binExp)
	b5 := max(0, -decExp)
	b2 := b5 + nTinyBits + binExp
	s5 := max(0, decExp)
	s2 := s5 + nTinyBits
	m5 := b5
	m2 := b2 - nSignificantBits
	fractBits = int64(uint64(fractBits) >> tailZeros)
	b2 -= nFractBits - 1
	common := min(b2, s2)
	b2 -= common
	s2 -= common
	m2 -= common
	// The next smaller value of a power of two is half as far.
	if nFractBits == 1 {
		m2--
	}
	if m2 < 0 {
		b2 -= m2
		s2 -= m2
		m2 = 0
	}
	nbits := func(k int) int {
		if k < len(n5Bits) {
			return n5Bits[k]
		}
		return k * 3
	}
	bBits := nFractBits + b2 + nbits(b5)
	tenSBits := s2 + 1 + nbits(s5+1)
	var digits []byte
	var low, high bool
	var lowDiff int64 // sign of 2b - 10s when the last digit is a tie candidate
	first := func(q int) {
		if q == 0 && !high {
			decExp-- // the estimate was one high
		} else {
			digits = append(digits, byte('0'+q))
		}
		if decExp < -3 || decExp >= 8 {
			high, low = false, false // E-form needs a second digit
		}
	}
	switch {
	case bBits < 32 && tenSBits < 32:
		b := (int32(fractBits) * int32(pow5Int64(b5))) << b2
		s := int32(pow5Int64(s5)) << s2
		m := int32(pow5Int64(m5)) << m2
		tens := s * 10
		q := b / s
		b = 10 * (b % s)
		m *= 10
		low, high = b < m, b+m > tens
		first(int(q))
		for !low && !high {
			q = b / s
			b = 10 * (b % s)
			m *= 10
			if m > 0 {
				low, high = b < m, b+m > tens
			} else {
				low, high = true, true // m overflowed
			}
			digits = append(digits, byte('0'+q))
		}
		lowDiff = int64((b << 1) - tens)
	case bBits < 64 && tenSBits < 64:
		b := (fractBits * pow5Int64(b5)) << b2
		s := pow5Int64(s5) << s2
		m := pow5Int64(m5) << m2
		tens := s * 10
		q := b / s
		b = 10 * (b % s)
		m *= 10
		low, high = b < m, b+m > tens
		first(int(q))
		for !low && !high {
			q = b / s
			b = 10 * (b % s)
			m *= 10
			if m > 0 {
				low, high = b < m, b+m > tens
			} else {
				low, high = true, true // m overflowed
			}
			digits = append(digits, byte('0'+q))
		}
		lowDiff = (b << 1) - tens
	default:
		pow52 := func(p5, p2 int) *big.Int {
			v := new(big.Int).Exp(big.NewInt(5), big.NewInt(int64(p5)), nil)
			return v.Lsh(v, uint(p2))
		}
		s := pow52(s5, s2)
		b := new(big.Int).Mul(big.NewInt(fractBits), pow52(b5, 0))
		b.Lsh(b, uint(b2))
		m := pow52(m5+1, m2+1) // 10 M
		tens := pow52(s5+1, s2+1)
		ten := big.NewInt(10)
		qr := new(big.Int)
		sum := new(big.Int)
		step := func() int {
			qr.QuoRem(b, s, b)
			b.Mul(b, ten)
			return int(qr.Int64())
		}
		q := step()
		low = b.Cmp(m) < 0
		high = sum.Add(b, m).Cmp(tens) >= 0
		first(q)
		for !low && !high {
			q = step()
			m.Mul(m, ten)
			low = b.Cmp(m) < 0
			high = sum.Add(b, m).Cmp(tens) >= 0
			digits = append(digits, byte('0'+q))
		}
		if high && low {
			lowDiff = int64(new(big.Int).Lsh(b, 1).Cmp(tens))
		}
	}
	out := javaDigits{digits: digits, decExp: decExp + 1}
	if high && (!low || lowDiff > 0 || lowDiff == 0 && (digits[len(digits)-1]-'0')&1 != 0) {
		out.roundUp()
	}
	return out
}

// roundUp adds one to the last digit, carrying.
func (d *javaDigits) roundUp() {
	i := len(d.digits) - 1
	for i > 0 && d.digits[i] == '9' {
		d.digits[i] = '0'
		i--
	}
	if d.digits[i] == '9' {
		d.decExp++
		d.digits[0] = '1'
		return
	}
	d.digits[i]++
}

// javaDoubleDigits returns the digits of a finite non-zero |v| as
// Double.toString (bits 64) or Float.toString (bits 32) develops them.
func javaDoubleDigits(v float64, bitSize int) javaDigits {
	if bitSize == 32 {
		fb := math.Float32bits(float32(v)) &^ (1 << 31)
		fract := int64(fb & (1<<23 - 1))
		binExp := int(fb >> 23)
		var nSig int
		if binExp == 0 {
			lz := bits.LeadingZeros32(uint32(fract))
			shift := lz - (31 - 23)
			fract <<= shift
			binExp = 1 - shift
			nSig = 32 - lz
		} else {
			fract |= 1 << 23
			nSig = 24
		}
		return dtoa(binExp-127, fract<<(expShift-23), nSig)
	}
	db := math.Float64bits(v) &^ (1 << 63)
	fract := int64(db & (1<<expShift - 1))
	binExp := int(db >> expShift)
	var nSig int
	if binExp == 0 {
		lz := bits.LeadingZeros64(uint64(fract))
		shift := lz - (63 - expShift)
		fract <<= shift
		binExp = 1 - shift
		nSig = 64 - lz
	} else {
		fract |= fractHOB
		nSig = expShift + 1
	}
	return dtoa(binExp-1023, fract, nSig)
}

// layout prints digits as Java does: plain for exponents in (-3, 8),
// computerized scientific notation otherwise.
func (d javaDigits) layout(neg bool) string {
	var out []byte
	if neg {
		out = append(out, '-')
	}
	n, e := len(d.digits), d.decExp
	switch {
	case e > 0 && e < 8:
		k := min(n, e)
		out = append(out, d.digits[:k]...)
		if k < e {
			for i := k; i < e; i++ {
				out = append(out, '0')
			}
			out = append(out, '.', '0')
		} else {
			out = append(out, '.')
			if k < n {
				out = append(out, d.digits[k:]...)
			} else {
				out = append(out, '0')
			}
		}
	case e <= 0 && e > -3:
		out = append(out, '0', '.')
		for i := e; i < 0; i++ {
			out = append(out, '0')
		}
		out = append(out, d.digits...)
	default:
		out = append(out, d.digits[0], '.')
		if n > 1 {
			out = append(out, d.digits[1:]...)
		} else {
			out = append(out, '0')
		}
		out = append(out, 'E')
		out = strconv.AppendInt(out, int64(e-1), 10)
	}
	return string(out)
}
