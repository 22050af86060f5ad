package nexmark

import "math/bits"

// rng is splitmix64 (Steele, Lea and Flood): small, fast and fully specified
// here, so generated data is the same on every machine and Go version. The
// generator re-seeds it for every event from the seed and the event id, as
// the reference generator seeds a fresh Random with the event id, so any
// event can be generated without generating the ones before it.
type rng struct{ state uint64 }

const golden = 0x9e3779b97f4a7c15

func mix64(z uint64) uint64 {
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9
	z = (z ^ (z >> 27)) * 0x94d049bb133111eb
	return z ^ (z >> 31)
}

// seedFor seeds r for event id under seed.
func (r *rng) seedFor(seed uint64, id int64) { r.state = mix64(seed ^ mix64(uint64(id)*golden)) }

func (r *rng) next() uint64 {
	r.state += golden
	return mix64(r.state)
}

// intn returns a uniform value in [0, n), n > 0 (Lemire's
// multiply-and-reject, no modulo bias).
func (r *rng) intn(n int64) int64 {
	un := uint64(n)
	hi, lo := bits.Mul64(r.next(), un)
	if lo < un {
		threshold := -un % un
		for lo < threshold {
			hi, lo = bits.Mul64(r.next(), un)
		}
	}
	return int64(hi)
}

// float returns a uniform value in [0, 1).
func (r *rng) float() float64 { return float64(r.next()>>11) * (1.0 / (1 << 53)) }
