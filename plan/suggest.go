package plan

import "strings"

// ClosestName returns the candidate nearest to name by case-insensitive
// edit distance, if it is within about a third of name's length (at
// least 2), else "".
func ClosestName(name string, candidates []string) string {
	best, bestD := "", -1
	ln := strings.ToLower(name)
	for _, c := range candidates {
		d := editDistance(ln, strings.ToLower(c))
		if bestD < 0 || d < bestD {
			best, bestD = c, d
		}
	}
	if bestD < 0 || bestD > max(2, len(name)/3) {
		return ""
	}
	return best
}

// DidYouMean is ` (did you mean 'x'?)` for the candidate closest to name
// (ClosestName), else the list of candidates: the hint of an error about
// an unknown option or setting.
func DidYouMean(name string, candidates []string) string {
	if c := ClosestName(name, candidates); c != "" {
		return " (did you mean '" + c + "'?)"
	}
	return " (known: " + strings.Join(candidates, ", ") + ")"
}
