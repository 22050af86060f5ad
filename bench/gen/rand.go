package gen

import "math/bits"

// splitmix64 is a small, fast, fully specified pseudo-random generator
// (Steele, Lea and Flood). Its output is fixed by this code, which is what
// reproducible benchmark data needs.
type splitmix64 struct{ state uint64 }

const golden = 0x9e3779b97f4a7c15

func (s *splitmix64) next() uint64 {
	s.state += golden
	return mix64(s.state)
}

// mix64 is splitmix64's finalizer. It is a bijection on uint64, so distinct
// inputs give distinct outputs; AggData relies on that to make distinct keys.
func mix64(z uint64) uint64 {
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9
	z = (z ^ (z >> 27)) * 0x94d049bb133111eb
	return z ^ (z >> 31)
}

// below returns a uniform value in [0, n), n > 0, by Lemire's
// multiply-and-reject method (no modulo bias).
func (s *splitmix64) below(n uint64) uint64 {
	hi, lo := bits.Mul64(s.next(), n)
	if lo < n {
		threshold := -n % n
		for lo < threshold {
			hi, lo = bits.Mul64(s.next(), n)
		}
	}
	return hi
}
