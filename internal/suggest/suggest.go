// Package suggest finds the known name closest to a misspelt one, for
// "did you mean" hints in errors.
package suggest

import "strings"

// Closest returns the candidate nearest to name by case-insensitive edit
// distance, if it is within about a third of name's length (at least 2),
// else "".
func Closest(name string, candidates []string) string {
	best, bestD := "", -1
	ln := strings.ToLower(name)
	for _, c := range candidates {
		d := distance(ln, strings.ToLower(c))
		if bestD < 0 || d < bestD {
			best, bestD = c, d
		}
	}
	limit := max(2, len(name)/3)
	if bestD < 0 || bestD > limit {
		return ""
	}
	return best
}

// DidYouMean is ` (did you mean 'x'?)` for the closest candidate, else
// the list of candidates.
func DidYouMean(name string, candidates []string) string {
	if c := Closest(name, candidates); c != "" {
		return " (did you mean '" + c + "'?)"
	}
	return " (known: " + strings.Join(candidates, ", ") + ")"
}

// distance is the Levenshtein distance of a and b, by bytes.
func distance(a, b string) int {
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}
