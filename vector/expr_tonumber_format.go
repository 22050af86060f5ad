package vector

import (
	"fmt"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/apache/arrow/go/v17/arrow/decimal128"
)

// This file holds Spark's number format of to_number and try_to_number
// (ToNumberParser): a format of 0/9 digits, . or D, , or G, $, S, MI and
// PR is compiled once per expression into tokens, and each input string is
// matched against them without allocating.

// nfKind is the kind of a number format token.
type nfKind uint8

const (
	nfDigits     nfKind = iota // a digit group: runs of 0/9 with , or G between them
	nfPoint                    // . or D
	nfDollar                   // $
	nfPlusMinus                // S: an optional + or -
	nfMinus                    // MI: an optional -
	nfOpenAngle                // PR, its opening <
	nfCloseAngle               // PR, its closing >
	nfInvalid                  // any other character
)

// nfRun is one run of 0/9 digits inside a digit group: exact runs (starting
// with 0, before the point) match exactly n digits, the others at most n.
type nfRun struct {
	n     int
	exact bool
}

// nfToken is a token of a number format.
type nfToken struct {
	kind nfKind
	// runs are the digit runs of a group, rightmost first (input digit
	// groups are matched from the right, as Spark does).
	runs []nfRun
	// seps is the number of separators of the group; sepBad is set when
	// a separator starts or ends the group or follows another one.
	seps   int
	sepBad bool
	char   rune // the character of nfInvalid
}

func (t nfToken) String() string {
	switch t.kind {
	case nfDigits:
		return "digit sequence"
	case nfPoint:
		return ". or D"
	case nfDollar:
		return "$"
	case nfPlusMinus:
		return "S"
	case nfMinus:
		return "MI"
	case nfOpenAngle, nfCloseAngle:
		return "PR"
	}
	// Spark's text, stray quote included.
	return fmt.Sprintf("character '%c''", t.char)
}

// numberFormat is a compiled, valid number format.
type numberFormat struct {
	src              string // upper-cased, as Spark reports it
	tokens           []nfToken
	precision, scale int
	maxGroups        int // the most digit runs of one group
}

// compileNumberFormat compiles a to_number format (case insensitive). An
// invalid format is an error with Spark's wording; it wraps ErrType, as
// Spark rejects it at analysis.
func compileNumberFormat(format string) (*numberFormat, error) {
	f := &numberFormat{src: strings.ToUpper(format)}
	s := f.src
	var raw []nfToken
	reachedPoint := false
	for i := 0; i < len(s); {
		c := s[i]
		switch {
		case c == '0' || c == '9':
			j := i + 1
			for j < len(s) && (s[j] == '0' || s[j] == '9') {
				j++
			}
			raw = append(raw, nfToken{kind: nfDigits, runs: []nfRun{{n: j - i, exact: c == '0' && !reachedPoint}}})
			i = j
		case c == '.' || c == 'D':
			raw = append(raw, nfToken{kind: nfPoint})
			reachedPoint = true
			i++
		case c == ',' || c == 'G':
			raw = append(raw, nfToken{kind: nfDigits, seps: 1})
			i++
		case c == '$':
			raw = append(raw, nfToken{kind: nfDollar})
			i++
		case c == 'S':
			raw = append(raw, nfToken{kind: nfPlusMinus})
			i++
		case c == 'M' && i+1 < len(s) && s[i+1] == 'I':
			raw = append(raw, nfToken{kind: nfMinus})
			i += 2
		case c == 'P' && i+1 < len(s) && s[i+1] == 'R':
			raw = append([]nfToken{{kind: nfOpenAngle}}, raw...)
			raw = append(raw, nfToken{kind: nfCloseAngle})
			i += 2
		default:
			r, size := utf8.DecodeRuneInString(s[i:])
			raw = append(raw, nfToken{kind: nfInvalid, char: r})
			i += size
		}
	}
	// Group adjacent digit runs and separators into one token each.
	for _, t := range raw {
		n := len(f.tokens)
		if t.kind != nfDigits {
			f.tokens = append(f.tokens, t)
			continue
		}
		if n == 0 || f.tokens[n-1].kind != nfDigits {
			g := nfToken{kind: nfDigits, seps: t.seps, sepBad: t.seps > 0}
			g.runs = append(g.runs, t.runs...)
			f.tokens = append(f.tokens, g)
			continue
		}
		g := &f.tokens[n-1]
		if t.seps > 0 {
			// A separator after a separator is bad; one ending the
			// group is found below.
			if g.lastIsSep() {
				g.sepBad = true
			}
			g.seps++
			g.runs = append(g.runs, nfRun{n: -1}) // a marker, removed below
		} else {
			g.runs = append(g.runs, t.runs...)
		}
	}
	for i := range f.tokens {
		g := &f.tokens[i]
		if g.kind != nfDigits {
			continue
		}
		if g.lastIsSep() {
			g.sepBad = true
		}
		// Drop the separator markers and store the runs rightmost first.
		runs := g.runs[:0]
		for _, r := range g.runs {
			if r.n >= 0 {
				runs = append(runs, r)
			}
		}
		for a, b := 0, len(runs)-1; a < b; a, b = a+1, b-1 {
			runs[a], runs[b] = runs[b], runs[a]
		}
		g.runs = runs
		f.maxGroups = max(f.maxGroups, len(runs))
	}
	if msg := f.validate(); msg != "" {
		return nil, fmt.Errorf("%w: %s", ErrType, msg)
	}
	point := f.index(nfPoint)
	for i, t := range f.tokens {
		for _, r := range t.runs {
			f.precision += r.n
			if point >= 0 && i > point {
				f.scale += r.n
			}
		}
	}
	if f.precision > 38 {
		return nil, fmt.Errorf("%w: Decimal precision %d exceeds max precision 38 (the number format '%s' has %d digits)", ErrType, f.precision, f.src, f.precision)
	}
	return f, nil
}

// lastIsSep reports whether a group being built ends with a separator: the
// separator marker of compileNumberFormat, or a group made of a lone
// separator so far.
func (t *nfToken) lastIsSep() bool {
	if len(t.runs) == 0 {
		return t.seps > 0
	}
	return t.runs[len(t.runs)-1].n < 0
}

func (f *numberFormat) index(k nfKind) int {
	for i, t := range f.tokens {
		if t.kind == k {
			return i
		}
	}
	return -1
}

// validate returns Spark's message for an invalid format, checked in
// Spark's order, or "".
func (f *numberFormat) validate() string {
	if f.src == "" {
		return "The format string cannot be empty"
	}
	firstDigits := f.index(nfDigits)
	if firstDigits < 0 {
		return "The format string requires at least one number digit"
	}
	dollar, point := f.index(nfDollar), f.index(nfPoint)
	if firstDigits < dollar {
		return fmt.Sprintf("Currency characters must appear before digits in the number format: '%s'", f.src)
	}
	if point != -1 && point < dollar {
		return fmt.Sprintf("Currency characters must appear before any decimal point in the number format: '%s'", f.src)
	}
	for i, t := range f.tokens {
		if t.kind == nfDigits && (point == -1 || i < point) && t.sepBad {
			return fmt.Sprintf("Thousands separators (, or G) must have digits in between them in the number format: '%s'", f.src)
		}
	}
	for i, t := range f.tokens {
		if t.kind == nfDigits && point != -1 && i > point && t.seps > 0 {
			return fmt.Sprintf("Thousands separators (, or G) may not appear after the decimal point in the number format: '%s'", f.src)
		}
	}
	for _, k := range []nfKind{nfPoint, nfPlusMinus, nfMinus, nfDollar, nfCloseAngle} {
		n := 0
		for _, t := range f.tokens {
			if t.kind == k {
				n++
			}
		}
		if n > 1 {
			return fmt.Sprintf("At most one %s is allowed in the number format: '%s'", nfToken{kind: k}, f.src)
		}
	}
	// [PR<] [MI|S] [$] [digits] [.] [digits] [$] [PR>|MI|S], each optional.
	allowed := [][]nfKind{{nfOpenAngle}, {nfMinus, nfPlusMinus}, {nfDollar}, {nfDigits}, {nfPoint}, {nfDigits}, {nfDollar}, {nfMinus, nfPlusMinus, nfCloseAngle}}
	i := 0
	for _, kinds := range allowed {
		if i >= len(f.tokens) {
			break
		}
		for _, k := range kinds {
			if f.tokens[i].kind == k {
				i++
				break
			}
		}
	}
	if i < len(f.tokens) {
		return fmt.Sprintf("Unexpected %s found in the format string '%s'; the structure of the format string must match: [MI|S] [$] [0|9|G|,]* [.|D] [0|9]* [$] [PR|MI|S]", f.tokens[i], f.src)
	}
	return ""
}

// nfResult is the outcome of parsing one string.
type nfResult uint8

const (
	nfOK       nfResult = iota
	nfMismatch          // the string does not match the format
	nfTooLarge          // it matches, but has more digits before the point than the type holds
)

// nfScratch is the per-batch working memory of parse.
type nfScratch struct {
	groups []int // digit counts of the input groups, left to right
}

// parse matches one input string, as Spark's ToNumberParser.parse does,
// and returns the unscaled value of DECIMAL(precision, scale).
func (f *numberFormat) parse(in []byte, sc *nfScratch) (decimal128.Num, nfResult) {
	var (
		pos          int
		negate       bool
		reachedPoint bool
		before       decimal128.Num // digits before the point
		beforeSig    int            // its significant digits
		after        decimal128.Num // digits after the point
		afterDigits  int
		anyBefore    bool
	)
	ten := decimal128.FromI64(10)
	for _, t := range f.tokens {
		switch t.kind {
		case nfDigits:
			groups := sc.groups[:0]
			cur := 0
			for pos < len(in) {
				c := in[pos]
				if c >= '0' && c <= '9' {
					cur++
					d := decimal128.FromI64(int64(c - '0'))
					if reachedPoint {
						if afterDigits < f.scale {
							after = after.Mul(ten).Add(d)
						}
						afterDigits++
					} else {
						anyBefore = true
						if beforeSig > 0 || c != '0' {
							beforeSig++
						}
						if beforeSig <= 38 {
							before = before.Mul(ten).Add(d)
						}
					}
					pos++
					continue
				}
				if c == ',' {
					groups = append(groups, cur)
					cur = 0
					pos++
					continue
				}
				if w := javaSpaceLen(in[pos:]); w > 0 {
					pos += w
					continue
				}
				break
			}
			groups = append(groups, cur)
			sc.groups = groups
			if len(groups) > len(t.runs) {
				return decimal128.Num{}, nfMismatch
			}
			for i, r := range t.runs {
				got := 0
				if i < len(groups) {
					got = groups[len(groups)-1-i]
				}
				if r.exact && got != r.n || got > r.n {
					return decimal128.Num{}, nfMismatch
				}
			}
		case nfPoint:
			if pos < len(in) && in[pos] == '.' {
				reachedPoint = true
				pos++
			}
		case nfDollar:
			if pos >= len(in) || in[pos] != '$' {
				return decimal128.Num{}, nfMismatch
			}
			pos++
		case nfPlusMinus:
			if pos < len(in) && in[pos] == '+' {
				pos++
			} else if pos < len(in) && in[pos] == '-' {
				negate = !negate
				pos++
			}
		case nfMinus:
			if pos < len(in) && in[pos] == '-' {
				negate = !negate
				pos++
			}
		case nfOpenAngle:
			if pos >= len(in) || in[pos] != '<' {
				return decimal128.Num{}, nfMismatch
			}
			pos++
		case nfCloseAngle:
			if pos >= len(in) || in[pos] != '>' {
				return decimal128.Num{}, nfMismatch
			}
			negate = !negate
			pos++
		}
	}
	if pos < len(in) {
		return decimal128.Num{}, nfMismatch
	}
	if !anyBefore && f.scale == 0 {
		// No digit at all: Spark fails on the empty number text.
		return decimal128.Num{}, nfMismatch
	}
	if beforeSig+f.scale > f.precision {
		return decimal128.Num{}, nfTooLarge
	}
	v := before.Mul(decimal128.GetScaleMultiplier(f.scale)).Add(after.Mul(decimal128.GetScaleMultiplier(f.scale - afterDigits)))
	if negate {
		v = v.Negate()
	}
	return v, nfOK
}

// javaSpaceLen is the byte length of the character at the start of b when
// Java's Character.isWhitespace holds for it (Spark skips such characters
// inside digit groups), else 0.
func javaSpaceLen(b []byte) int {
	c := b[0]
	if c < utf8.RuneSelf {
		if c == ' ' || c >= '\t' && c <= '\r' || c >= 0x1c && c <= 0x1f {
			return 1
		}
		return 0
	}
	r, size := utf8.DecodeRune(b)
	switch r {
	case 0xa0, 0x2007, 0x202f: // non-breaking spaces are not whitespace in Java
		return 0
	case 0x2028, 0x2029:
		return size
	}
	if unicode.Is(unicode.Zs, r) {
		return size
	}
	return 0
}
