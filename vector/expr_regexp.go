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

// appendJavaReplacement appends Java's Matcher replacement rep for the
// match m of s: $n is group n (the longest group number that exists),
// \c is c.
func appendJavaReplacement(dst, rep, s []byte, m []int) ([]byte, error) {
	groups := len(m)/2 - 1
	for k := 0; k < len(rep); k++ {
		c := rep[k]
		switch {
		case c == '\\':
			k++
			if k == len(rep) {
				return nil, fmt.Errorf("character to be escaped is missing: %w", ErrInvalidFormat)
			}
			dst = append(dst, rep[k])
		case c == '$':
			k++
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
			if m[2*g] >= 0 {
				dst = append(dst, s[m[2*g]:m[2*g+1]]...)
			}
		default:
			dst = append(dst, c)
		}
	}
	return dst, nil
}

// bindRegexpReplace binds regexp_replace(s, regex, rep[, pos]): every
// match at or after character pos (1 by default) replaced.
func bindRegexpReplace(f *FuncExpr, in *arrow.Schema, mem memory.Allocator, args []Evaluator) (Evaluator, error) {
	c, err := newRegexCache(args, 1)
	if err != nil {
		return nil, err
	}
	kinds := []rowKind{rowStr, rowStr, rowStr, rowInt}
	return bindRows(f, in, mem, args, kinds, String, rowKernels{
		str: func(a []rowArg, i int, dst []byte) ([]byte, bool, error) {
			re, err := c.at(a, 1, i)
			if err != nil {
				return nil, false, err
			}
			s, rep := a[0].str(i), a[2].str(i)
			pos := int64(1)
			if len(a) > 3 {
				if pos = a[3].int(i); pos < 1 {
					return nil, false, fmt.Errorf("[INVALID_PARAMETER_VALUE.REGEX_POSITION] the position %d must be positive: %w", pos, ErrInvalidFormat)
				}
			}
			head := runePrefix(s, pos-1)
			dst = append(dst, head...)
			rest := s[len(head):]
			last := 0
			// Java's replaceAll steps as Matcher.find does: an empty
			// match right after a match is a match (Go's FindAll skips
			// it). A regex with ^ or \b keeps Go's walk, since matching
			// suffixes would change what those see (javaFindAll).
			each := func(f func(m []int) bool) error {
				if regexContext(re) {
					for _, m := range re.FindAllSubmatchIndex(rest, -1) {
						if !f(m) {
							break
						}
					}
					return nil
				}
				return javaFindAll(re, false, rest, f)
			}
			err = each(func(m []int) bool {
				dst = append(dst, rest[last:m[0]]...)
				if dst, err = appendJavaReplacement(dst, rep, rest, m); err != nil {
					return false
				}
				last = m[1]
				return true
			})
			if err != nil {
				return nil, false, err
			}
			return append(dst, rest[last:]...), true, nil
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
