package server

import (
	"unicode"
	"unicode/utf8"
)

// likeMatch reports whether s matches the SQL LIKE pattern p, as the
// filter patterns of the Flight SQL catalog calls use it: '%' matches any
// run of characters, '_' one character, and '\' escapes the next
// character. Matching is by Unicode code point, case-insensitive when
// fold is set. Backtracking is bounded to the last '%' (the classic
// wildcard algorithm), so a hostile pattern costs O(len(p)·len(s)).
func likeMatch(p, s string, fold bool) bool {
	pr, sr := []rune(p), []rune(s)
	if !utf8.ValidString(p) || !utf8.ValidString(s) {
		return false
	}
	i, j := 0, 0        // positions in pr and sr
	star, mark := -1, 0 // last '%' in pr, position in sr it was tried at
	for j < len(sr) {
		if i < len(pr) {
			switch c := pr[i]; {
			case c == '%':
				star, mark = i, j
				i++
				continue
			case c == '_':
				i++
				j++
				continue
			case c == '\\' && i+1 < len(pr):
				if runeEq(pr[i+1], sr[j], fold) {
					i += 2
					j++
					continue
				}
			default:
				if runeEq(c, sr[j], fold) {
					i++
					j++
					continue
				}
			}
		}
		if star < 0 {
			return false
		}
		mark++
		i, j = star+1, mark
	}
	for i < len(pr) && pr[i] == '%' {
		i++
	}
	return i == len(pr)
}

func runeEq(a, b rune, fold bool) bool {
	if a == b {
		return true
	}
	if !fold {
		return false
	}
	return unicode.ToLower(a) == unicode.ToLower(b)
}
