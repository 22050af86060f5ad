package vector

import (
	"unicode"
	"unicode/utf8"
)

// String edits of Spark: initcap, translate, levenshtein and soundex,
// following UTF8String's definitions.

// initcapKernel is initcap(s): s in lower case with the first letter of
// every word (after a space) in title case.
func initcapKernel(a []rowArg, i int, dst []byte) ([]byte, bool, error) {
	s := a[0].str(i)
	prevSpace := true
	for len(s) > 0 {
		r, w := utf8.DecodeRune(s)
		s = s[w:]
		if r == utf8.RuneError && w == 1 {
			dst = append(dst, 0xEF, 0xBF, 0xBD)
			prevSpace = false
			continue
		}
		if prevSpace {
			r = unicode.ToTitle(unicode.ToLower(r))
		} else {
			r = unicode.ToLower(r)
		}
		dst = utf8.AppendRune(dst, r)
		prevSpace = r == ' '
	}
	return dst, true, nil
}

// translateKernel is translate(s, from, to): each character of from
// replaced by the character at the same place of to, or removed when to
// is shorter; the first occurrence of a repeated character counts. A byte
// that is not UTF-8 is U+FFFD (3 bytes), in s, from and to alike.
//
// translateSize is the exact size of translate(str, from, to), computed
// before it is built (presize) without building it: the width of each
// character's image summed, through a table for ASCII characters and a
// walk of from for the others (as the kernel does), so that a value just
// under the query's limit is not refused for an estimate.
func translateSize(a []rowArg, i int) int64 {
	s, from, to := a[0].str(i), a[1].str(i), a[2].str(i)
	// ascii[c] is the width of the image of ASCII character c plus one
	// (0: not in from, the character itself).
	var ascii [utf8.RuneSelf]uint8
	wide := false // from has a character that is not ASCII
	for f, t := from, to; len(f) > 0; {
		fr, fw := utf8.DecodeRune(f)
		f = f[fw:]
		w := 0
		if len(t) > 0 {
			tr, tw := utf8.DecodeRune(t)
			t = t[tw:]
			w = utf8.RuneLen(tr)
		}
		if fr < utf8.RuneSelf {
			if ascii[fr] == 0 {
				ascii[fr] = uint8(w + 1)
			}
		} else {
			wide = true
		}
	}
	var n int64
	for len(s) > 0 {
		if c := s[0]; c < utf8.RuneSelf {
			s = s[1:]
			if m := ascii[c]; m != 0 {
				n += int64(m - 1)
			} else {
				n++
			}
			continue
		}
		r, w := utf8.DecodeRune(s)
		s = s[w:]
		if !wide {
			n += int64(utf8.RuneLen(r)) // an invalid byte: U+FFFD, 3
			continue
		}
		n += int64(translateWidth(r, from, to))
	}
	return n
}

// translateWidth is the width of the image of r, a character that is not
// ASCII, under translate's from and to.
func translateWidth(r rune, from, to []byte) int {
	repl, found, keep := translateImage(r, from, to)
	switch {
	case !found:
		return utf8.RuneLen(r)
	case !keep:
		return 0
	}
	return utf8.RuneLen(repl)
}

// translateImage finds r's first occurrence in from: found is false when
// there is none, keep is false when to has no character at its place (r
// is deleted), repl is that character otherwise.
func translateImage(r rune, from, to []byte) (repl rune, found, keep bool) {
	for len(from) > 0 {
		fr, fw := utf8.DecodeRune(from)
		from = from[fw:]
		var tr rune
		hasTo := len(to) > 0
		if hasTo {
			var tw int
			tr, tw = utf8.DecodeRune(to)
			to = to[tw:]
		}
		if fr == r {
			return tr, true, hasTo
		}
	}
	return 0, false, false
}

func translateKernel(a []rowArg, i int, dst []byte) ([]byte, bool, error) {
	s, from, to := a[0].str(i), a[1].str(i), a[2].str(i)
	for len(s) > 0 {
		r, w := utf8.DecodeRune(s)
		s = s[w:]
		repl, found, keep := translateImage(r, from, to)
		switch {
		case !found:
			dst = utf8.AppendRune(dst, r)
		case keep:
			dst = utf8.AppendRune(dst, repl)
		}
	}
	return dst, true, nil
}

// levenshtein is the edit distance of a and b in characters.
func levenshtein(a, b []byte) int64 {
	ra, rb := []rune(string(a)), []rune(string(b))
	if len(ra) == 0 {
		return int64(len(rb))
	}
	prev := make([]int, len(rb)+1)
	cur := make([]int, len(rb)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(ra); i++ {
		cur[0] = i
		for j := 1; j <= len(rb); j++ {
			cost := 1
			if ra[i-1] == rb[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return int64(prev[len(rb)])
}

func levenshteinKernel(a []rowArg, i int) (int64, bool, error) {
	d := levenshtein(a[0].str(i), a[1].str(i))
	if len(a) > 2 && d > a[2].int(i) {
		return -1, true, nil
	}
	return d, true, nil
}

// soundexCodes are the American Soundex digits of A-Z ('7': H and W,
// which do not separate equal codes).
const soundexCodes = "01230127022455012623017202"

// soundexKernel is soundex(s) as Spark's UTF8String.soundex: s itself
// when it does not start with an ASCII letter.
func soundexKernel(a []rowArg, i int, dst []byte) ([]byte, bool, error) {
	s := a[0].str(i)
	if len(s) == 0 {
		return dst, true, nil
	}
	upper := func(b byte) (byte, bool) {
		if b >= 'a' && b <= 'z' {
			return b - 32, true
		}
		return b, b >= 'A' && b <= 'Z'
	}
	b, ok := upper(s[0])
	if !ok {
		return append(dst, s...), true, nil
	}
	sx := [4]byte{b, '0', '0', '0'}
	n := 1
	last := soundexCodes[b-'A']
	for _, c := range s[1:] {
		c, ok := upper(c)
		if !ok {
			last = '0'
			continue
		}
		code := soundexCodes[c-'A']
		if code == '7' {
			continue
		}
		if code != '0' && code != last {
			sx[n] = code
			n++
			if n > 3 {
				break
			}
		}
		last = code
	}
	return append(dst, sx[:]...), true, nil
}
