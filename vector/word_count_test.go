package vector

import (
	"math/rand"
	"testing"
)

// TestWordCountEstimatesDistinct: words shown many times each (and in
// any order) count once; the estimate is within 3% (and 2 words) of the
// distinct count from 0 to 20,000 distinct words, never above the words
// shown, Upper at least the distinct count and at most the words shown,
// and the empty counter says 0.
func TestWordCountEstimatesDistinct(t *testing.T) {
	rng := rand.New(rand.NewSource(3))
	var empty WordCount
	if got := empty.Distinct(); got != 0 {
		t.Fatalf("empty counter: %d distinct, want 0", got)
	}
	for _, distinct := range []int{1, 2, 7, 100, 300, 1000, 3500, 5000, 12000, 20000} {
		for _, repeat := range []int{1, 3, 17} {
			var c WordCount
			words := make([]uint64, distinct)
			for i := range words {
				words[i] = rng.Uint64() // random words
				if i%2 == 1 {
					words[i] = uint64(i) // and small sequential ones
				}
			}
			for range repeat * distinct {
				c.Add(words[rng.Intn(distinct)])
			}
			// Every word at least once.
			for _, w := range words {
				c.Add(w)
			}
			got := c.Distinct()
			shown := repeat*distinct + distinct
			if got > shown {
				t.Fatalf("%d distinct of %d shown: estimate %d is above the words shown", distinct, shown, got)
			}
			if up := c.Upper(); up < distinct || up > shown {
				t.Fatalf("%d distinct of %d shown: Upper %d is not between them", distinct, shown, up)
			}
			tol := max(2, distinct*3/100)
			if got < distinct-tol || got > distinct+tol {
				t.Fatalf("%d distinct, each shown about %d times: estimate %d, want within %d", distinct, repeat+1, got, tol)
			}
		}
	}
}

// TestWordCountSaturated: past what the bit map can tell (every bit set)
// the estimate is the words shown, an upper bound.
func TestWordCountSaturated(t *testing.T) {
	var c WordCount
	for i := range 400_000 {
		c.Add(uint64(i))
	}
	if got := c.Distinct(); got != 400_000 {
		t.Fatalf("saturated counter: %d distinct, want the 400000 shown", got)
	}
}

// BenchmarkWordCount: the cost a word of counting a batch's new keys
// (WordCount.Add over 5,000 words, then Distinct), next to what it
// saves: a reservation by rows.
func BenchmarkWordCount(b *testing.B) {
	rng := rand.New(rand.NewSource(1))
	words := make([]uint64, 5000)
	for i := range words {
		words[i] = uint64(rng.Intn(300))
	}
	b.ReportAllocs()
	for b.Loop() {
		var c WordCount
		for _, w := range words {
			c.Add(w)
		}
		if c.Distinct() > len(words) {
			b.Fatal("estimate above the words shown")
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*len(words)), "ns/word")
}
