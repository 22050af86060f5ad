package vector

import (
	"math"
	"math/bits"
)

// WordCount estimates how many distinct words it was shown, for a caller
// that must size a table (WordMap.Reserve) for the new keys of a batch
// whose rows repeat keys: reserving for every row would size the table
// for thousands of keys when the batch brings a few hundred (a bid batch
// of 5K rows for 300 new auctions), and every slot reserved is fresh
// memory touched by the rehash. Counting the keys exactly would take a
// table of its own; this is linear counting (Whang et al., 1990; the
// small-range estimator of HyperLogLog): each word sets one bit of a
// 8192-bit map, and the distinct count is m·ln(m/zeros). Its standard
// error is under 1% up to 5K distinct words and about 2% at 16K; an
// estimate that falls short only leaves the last few keys to grow the
// table on demand (WordMap's adds grow it by doubling), and Upper pads
// the estimate so that this rarely happens.
//
// The zero value is empty; it is 1 KiB, meant to live on its user's
// stack for one batch. Not safe for concurrent use.
type WordCount struct {
	bits [wordCountBits / 64]uint64
	n    int // words shown
}

// wordCountBits is the size of the bit map: a power of two.
const wordCountBits = 1 << 13

// Add shows the counter word w.
func (c *WordCount) Add(w uint64) {
	// A full mix (murmur3's finalizer), not the tables' one multiply:
	// that spreads sequential words (auction ids) more evenly than random
	// ones, and linear counting assumes random bits (it overestimated
	// 3,500 sequential words by 6%).
	w ^= w >> 33
	w *= 0xff51afd7ed558ccd
	w ^= w >> 33
	w *= 0xc4ceb9fe1a85ec53
	w ^= w >> 33
	b := w >> (64 - 13)
	c.bits[b>>6] |= 1 << (b & 63)
	c.n++
}

// Distinct is the estimated number of distinct words shown, never more
// than the words shown.
func (c *WordCount) Distinct() int {
	set := 0
	for _, w := range c.bits {
		set += bits.OnesCount64(w)
	}
	zeros := wordCountBits - set
	if zeros == 0 {
		return c.n // saturated: no estimate, so the upper bound
	}
	est := int(math.Ceil(wordCountBits * math.Log(float64(wordCountBits)/float64(zeros))))
	return min(max(est, set), c.n)
}

// Upper is Distinct padded by its error (1/16 and 4, several standard
// errors up to 16K words), at most the words shown: what to reserve for.
// An estimate a little short of the keys a batch adds makes the table
// fill up in the batch and double a second time, touching twice the
// memory a reservation by rows would (q3's join, whose rows are nearly
// all new keys, took 3% more heap an epoch that way).
func (c *WordCount) Upper() int {
	d := c.Distinct()
	return min(d+d/16+4, c.n)
}
