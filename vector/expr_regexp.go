package vector

import (
	"bytes"
	"fmt"
	"regexp"

	"github.com/apache/arrow/go/v17/arrow"
	"github.com/apache/arrow/go/v17/arrow/memory"
)

// Regular-expression functions: rlike/regexp/regexp_like (a match anywhere,
// as Java's Matcher.find), regexp_replace (Java's replaceAll, with $n group
// references and \ escapes in the replacement) and regexp_extract. The
// regex is RE2 syntax (Go's regexp), which covers Java's except
// back-references and look-around: those do not compile and are refused.
// A constant regex compiles once at bind time; a regex column compiles
// when it changes from the row before.

// regexCache compiles the regex of each row, reusing the last one.
type regexCache struct {
	fixed *regexp.Regexp
	last  []byte
	re    *regexp.Regexp
}

func newRegexCache(args []Evaluator, k int) (*regexCache, error) {
	c := &regexCache{}
	if v, ok := fnConstValue(args[k]); ok && v != nil {
		s, isStr := v.(string)
		if !isStr {
			return c, nil
		}
		re, err := regexp.Compile(s)
		if err != nil {
			return nil, fmt.Errorf("[INVALID_PARAMETER_VALUE.PATTERN] invalid regex %q: %w", s, err)
		}
		c.fixed = re
	}
	return c, nil
}

func (c *regexCache) at(a []rowArg, k, i int) (*regexp.Regexp, error) {
	if c.fixed != nil {
		return c.fixed, nil
	}
	p := a[k].str(i)
	if c.re == nil || !bytes.Equal(p, c.last) {
		re, err := regexp.Compile(string(p))
		if err != nil {
			return nil, fmt.Errorf("[INVALID_PARAMETER_VALUE.PATTERN] invalid regex %q: %w", p, err)
		}
		c.re, c.last = re, append(c.last[:0], p...)
	}
	return c.re, nil
}

func bindRLike(f *FuncExpr, in *arrow.Schema, mem memory.Allocator, args []Evaluator) (Evaluator, error) {
	c, err := newRegexCache(args, 1)
	if err != nil {
		return nil, err
	}
	return bindRows(f, in, mem, args, []rowKind{rowStr, rowStr}, Boolean, rowKernels{
		bool: func(a []rowArg, i int) (bool, bool, error) {
			re, err := c.at(a, 1, i)
			if err != nil {
				return false, false, err
			}
			return re.Match(a[0].str(i)), true, nil
		},
	})
}

// replPart is one piece of a parsed Java replacement: literal text, or
// the group whose match it copies (group >= 0).
type replPart struct {
	lit   []byte
	group int
}

// parseJavaReplacement parses Java's Matcher replacement rep for a regex
// of groups groups: $n is group n (the longest group number that
// exists), \c is c. The parts are appended to parts[:0] (reused).
func parseJavaReplacement(parts []replPart, rep []byte, groups int) ([]replPart, error) {
	parts = parts[:0]
	// A run of plain characters is one part: litStart is where the
	// current run began (-1: none).
	litStart := -1
	flush := func(end int) {
		if litStart >= 0 {
			parts = append(parts, replPart{lit: rep[litStart:end], group: -1})
			litStart = -1
		}
	}
	for k := 0; k < len(rep); k++ {
		c := rep[k]
		if c != '\\' && c != '$' {
			if litStart < 0 {
				litStart = k
			}
			continue
		}
		flush(k)
		k++
		if c == '\\' {
			if k == len(rep) {
				return nil, fmt.Errorf("character to be escaped is missing: %w", ErrInvalidFormat)
			}
			parts = append(parts, replPart{lit: rep[k : k+1], group: -1})
			continue
		}
		if k == len(rep) || rep[k] < '0' || rep[k] > '9' {
			return nil, fmt.Errorf("illegal group reference in the replacement %q: %w", rep, ErrInvalidFormat)
		}
		g := int(rep[k] - '0')
		for k+1 < len(rep) && rep[k+1] >= '0' && rep[k+1] <= '9' && g*10+int(rep[k+1]-'0') <= groups {
			k++
			g = g*10 + int(rep[k]-'0')
		}
		if g > groups {
			return nil, fmt.Errorf("no group %d in the regex: %w", g, ErrInvalidFormat)
		}
		parts = append(parts, replPart{group: g})
	}
	flush(len(rep))
	return parts, nil
}

// replacementLen is the length of the replacement of the match m of s.
func replacementLen(parts []replPart, m []int) int {
	n := 0
	for _, p := range parts {
		if p.group < 0 {
			n += len(p.lit)
		} else if m[2*p.group] >= 0 {
			n += m[2*p.group+1] - m[2*p.group]
		}
	}
	return n
}

// appendReplacement appends the replacement of the match m of s.
func appendReplacement(dst []byte, parts []replPart, s []byte, m []int) []byte {
	for _, p := range parts {
		if p.group < 0 {
			dst = append(dst, p.lit...)
		} else if m[2*p.group] >= 0 {
			dst = append(dst, s[m[2*p.group]:m[2*p.group+1]]...)
		}
	}
	return dst
}

// bindRegexpReplace binds regexp_replace(s, regex, rep[, pos]): every
// match at or after character pos (1 by default) replaced. Its value's
// size is known only once built, so it is built in a valueBuf: each match
// reserves its growth on the query's account before it is appended.
func bindRegexpReplace(f *FuncExpr, in *arrow.Schema, mem memory.Allocator, args []Evaluator) (Evaluator, error) {
	c, err := newRegexAt(args, 1)
	if err != nil {
		return nil, err
	}
	kinds := []rowKind{rowStr, rowStr, rowStr, rowInt}
	// The parsed replacement, reused across rows (an evaluator runs on one
	// goroutine at a time, as the regex cache assumes).
	var parts []replPart
	acct := newMatchAccount(mem, "regexp_replace")
	return bindRows(f, in, mem, args, kinds, String, rowKernels{
		build: func(a []rowArg, i int, out *valueBuf) (bool, error) {
			// The context flag is kept with the compiled regex: parsing
			// the regex for it on every row cost most of the call.
			re, hasContext, err := c.at(a, 1, i)
			if err != nil {
				return false, err
			}
			s, rep := a[0].str(i), a[2].str(i)
			pos := int64(1)
			if len(a) > 3 {
				if pos = a[3].int(i); pos < 1 {
					return false, fmt.Errorf("[INVALID_PARAMETER_VALUE.REGEX_POSITION] the position %d must be positive: %w", pos, ErrInvalidFormat)
				}
			}
			head := runePrefix(s, pos-1)
			if err := out.room(len(head)); err != nil {
				return false, err
			}
			out.b = append(out.b, head...)
			rest := s[len(head):]
			last := 0
			parsed := false
			// Java's replaceAll steps as Matcher.find does: an empty
			// match right after a match is a match (Go's FindAll skips
			// it). A regex with ^ or \b keeps Go's walk, since matching
			// suffixes would change what those see (javaFindAll).
			each := func(f func(m []int) bool) error {
				if hasContext {
					ms, err := acct.contextMatches(re, rest)
					defer acct.done()
					if err != nil {
						return err
					}
					for _, m := range ms {
						if !f(m) {
							break
						}
					}
					return nil
				}
				return javaFindAll(re, false, rest, nil, f)
			}
			// The callback's error is its own: each's result is assigned
			// after the walk, so sharing err would drop it.
			var bad error
			err = each(func(m []int) bool {
				if !parsed {
					// Parsed at the first match: as Java's replaceAll, a
					// bad replacement is an error only when it is used.
					if parts, bad = parseJavaReplacement(parts, rep, len(m)/2-1); bad != nil {
						return false
					}
					parsed = true
				}
				if bad = out.room(m[0] - last + replacementLen(parts, m)); bad != nil {
					return false
				}
				out.b = appendReplacement(append(out.b, rest[last:m[0]]...), parts, rest, m)
				last = m[1]
				return true
			})
			if err == nil {
				err = bad
			}
			if err != nil {
				return false, err
			}
			if err := out.room(len(rest) - last); err != nil {
				return false, err
			}
			out.b = append(out.b, rest[last:]...)
			return true, nil
		},
	})
}

// bindRegexpExtract binds regexp_extract(s, regex[, idx]): group idx (1
// by default, 0 the whole match) of the first match, ” when none.
func bindRegexpExtract(f *FuncExpr, in *arrow.Schema, mem memory.Allocator, args []Evaluator) (Evaluator, error) {
	c, err := newRegexCache(args, 1)
	if err != nil {
		return nil, err
	}
	return bindRows(f, in, mem, args, []rowKind{rowStr, rowStr, rowInt}, String, rowKernels{
		str: func(a []rowArg, i int, dst []byte) ([]byte, bool, error) {
			re, err := c.at(a, 1, i)
			if err != nil {
				return nil, false, err
			}
			idx := int64(1)
			if len(a) > 2 {
				idx = a[2].int(i)
			}
			if idx < 0 || idx > int64(re.NumSubexp()) {
				return nil, false, fmt.Errorf("[INVALID_PARAMETER_VALUE.REGEX_GROUP_INDEX] the regex group count is %d, but the specified group index is %d: %w", re.NumSubexp(), idx, ErrInvalidFormat)
			}
			s := a[0].str(i)
			m := re.FindSubmatchIndex(s)
			if m == nil || m[2*idx] < 0 {
				return dst, true, nil
			}
			return append(dst, s[m[2*idx]:m[2*idx+1]]...), true, nil
		},
	})
}
