package checkpoint

import "hash/crc32"

// A state record's body holds its deltas, and each delta ends in a trailer
// with the CRC-32C of the delta's bytes; the record's own checksum covers
// the whole body again. Hashing those bytes twice was about 1.5 % of
// q20's CPU (every stored bid is in the log). The record's checksum is
// instead derived from the deltas' checksums by the CRC combine (the
// checksum of A‖B from those of A and B and B's length), and only the
// bytes between the deltas are hashed.

// castagnoliReversed is the CRC-32C polynomial in the reflected bit order
// hash/crc32 computes with.
const castagnoliReversed = 0x82f63b78

// crcSpan is a run of a buffer whose CRC-32C is known: dst[off:off+n].
type crcSpan struct {
	off, n int
	sum    uint32
}

// crcSpans lists the runs of a record being built whose checksums were
// computed already, in increasing offset order and not overlapping. The
// offsets index the buffer the record is appended to.
type crcSpans struct {
	spans []crcSpan
}

// add records that dst[off:off+n] has checksum sum. A nil list ignores it.
func (s *crcSpans) add(off, n int, sum uint32) {
	if s == nil || n == 0 {
		return
	}
	s.spans = append(s.spans, crcSpan{off, n, sum})
}

// reset empties the list, keeping its storage.
func (s *crcSpans) reset() {
	if s != nil {
		s.spans = s.spans[:0]
	}
}

// crc32cWith is the CRC-32C of buf[from:], hashing only the bytes outside
// the spans of sums at or after from and combining the spans' checksums
// in. The spans must lie in buf[from:]; one that does not (a caller's
// mistake) panics rather than yield a checksum of other bytes.
func crc32cWith(buf []byte, from int, sums *crcSpans) uint32 {
	if sums == nil || len(sums.spans) == 0 {
		return crc32c(buf[from:])
	}
	var sum uint32
	pos := from
	for _, sp := range sums.spans {
		if sp.off < pos || sp.off+sp.n > len(buf) {
			panic("checkpoint: checksum span outside the record")
		}
		sum = crc32.Update(sum, castagnoli, buf[pos:sp.off])
		sum = crc32cCombine(sum, sp.sum, int64(sp.n))
		pos = sp.off + sp.n
	}
	return crc32.Update(sum, castagnoli, buf[pos:])
}

// crc32cCombine returns the CRC-32C of A‖B given crcA, crcB and len(B):
// crcA advanced over len(B) zero bytes (a multiplication by x^(8·len(B))
// modulo the polynomial) plus crcB. The pre- and post-inversion of the
// standard CRC cancel out in this form, so it takes and gives the values
// crc32.Checksum returns.
func crc32cCombine(crcA, crcB uint32, lenB int64) uint32 {
	if lenB <= 0 {
		return crcA
	}
	return gfMulMod(xPow8n(lenB), crcA) ^ crcB
}

// gfMulMod multiplies a and b as polynomials over GF(2) modulo the
// CRC-32C polynomial, both in the reflected order (bit 31 is x^0).
func gfMulMod(a, b uint32) uint32 {
	var p uint32
	for m := uint32(1) << 31; m != 0 && a != 0; m >>= 1 {
		if a&m != 0 {
			p ^= b
			a ^= m
		}
		// b *= x
		if b&1 != 0 {
			b = b>>1 ^ castagnoliReversed
		} else {
			b >>= 1
		}
	}
	return p
}

// xPow2k[k] is x^(2^k) modulo the polynomial (reflected order).
var xPow2k = func() (t [66]uint32) {
	p := uint32(1) << 30 // x^1
	for k := range t {
		t[k] = p
		p = gfMulMod(p, p)
	}
	return t
}()

// xPow8n is x^(8·n) modulo the polynomial: n bytes' shift, by the binary
// digits of n (x^(8·2^j) = xPow2k[j+3]).
func xPow8n(n int64) uint32 {
	p := uint32(1) << 31 // x^0
	for k := 3; n != 0; k++ {
		if n&1 != 0 {
			p = gfMulMod(xPow2k[k], p)
		}
		n >>= 1
	}
	return p
}
