package sparksql

import (
	"regexp"
	"slices"
	"strings"
)

// collectSetQuery matches queries that call collect_set.
var collectSetQuery = regexp.MustCompile(`(?i)\bcollect_set\s*\(`)

// innermostArray matches a bracketed list that holds no other bracket.
var innermostArray = regexp.MustCompile(`\[[^\[\]]*\]`)

// sameUpToArrayOrder reports whether two rendered answers hold the same
// rows once the elements of every innermost array are sorted and the rows
// are sorted: they differ only in the order of array elements (and the row
// order that follows from it).
func sameUpToArrayOrder(got, want string) bool {
	return normalizeArrayOrder(got) == normalizeArrayOrder(want)
}

func normalizeArrayOrder(s string) string {
	lines := strings.Split(s, "\n")
	for i, l := range lines {
		lines[i] = innermostArray.ReplaceAllStringFunc(l, func(a string) string {
			elems := strings.Split(a[1:len(a)-1], ",")
			slices.Sort(elems)
			return "[" + strings.Join(elems, ",") + "]"
		})
	}
	slices.Sort(lines)
	return strings.Join(lines, "\n")
}
