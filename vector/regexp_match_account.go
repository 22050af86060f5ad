package vector

import (
	"fmt"
	"regexp"

	"github.com/apache/arrow/go/v17/arrow/memory"
)

// matchAccount counts, on the query's account, the match positions a
// regex function holds at once. A regex that uses ^, \A, \b or \B has its
// matches found from the start of the value in one call (matching
// suffixes would change what those assertions see), so every match's
// positions are held together: tens of bytes per match, which for a
// 60 MB value with a word boundary every other byte would be gigabytes of
// Go heap that no Arrow buffer counts. The positions are therefore found
// in rounds of a doubling match count, each round's worst case reserved
// before it runs, so such a value is refused (RESOURCE_EXHAUSTED naming
// the function) before its positions are held. A nil *matchAccount counts
// nothing.
type matchAccount struct {
	r    MemoryReserver // nil: the allocator enforces no limit
	fn   string
	held int64
}

func newMatchAccount(mem memory.Allocator, fn string) *matchAccount {
	r, _ := mem.(MemoryReserver)
	return &matchAccount{r: r, fn: fn}
}

// firstMatchRound is the match count of the first round: a value with
// fewer matches is matched once, as before.
const firstMatchRound = 256

// matchBytes is the Go heap one match's positions take: the slice header
// and two ints per group (the whole match is group 0).
func matchBytes(re *regexp.Regexp) int64 {
	return 24 + 16*int64(re.NumSubexp()+1)
}

// contextMatches returns re.FindAllSubmatchIndex(s, -1), its positions
// reserved; done returns the reservation once the caller is through with
// them.
func (a *matchAccount) contextMatches(re *regexp.Regexp, s []byte) ([][]int, error) {
	if a == nil || a.r == nil {
		return re.FindAllSubmatchIndex(s, -1), nil
	}
	per := matchBytes(re)
	for k := firstMatchRound; ; k *= 2 {
		// At most one match per byte and one at the end: the last round
		// needs no more room than that.
		k = min(k, len(s)+1)
		if err := a.reserve(int64(k) * per); err != nil {
			return nil, fmt.Errorf("%s: the positions of up to %d matches of a regex with ^, \\A, \\b or \\B in a value of %d bytes: %w", a.fn, k, len(s), err)
		}
		ms := re.FindAllSubmatchIndex(s, k)
		if len(ms) < k || k == len(s)+1 {
			return ms, nil
		}
	}
}

// reserve makes the reservation n bytes when it is larger.
func (a *matchAccount) reserve(n int64) error {
	if n <= a.held {
		return nil
	}
	if err := a.r.Reserve(n - a.held); err != nil {
		return err
	}
	a.held = n
	return nil
}

// done returns what contextMatches reserved.
func (a *matchAccount) done() {
	if a == nil || a.r == nil || a.held == 0 {
		return
	}
	_ = a.r.Reserve(-a.held)
	a.held = 0
}
