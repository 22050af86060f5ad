package vector

import (
	"context"
	"fmt"
	"regexp"
	"regexp/syntax"
	"unicode/utf8"

	"github.com/apache/arrow/go/v17/arrow"
	"github.com/apache/arrow/go/v17/arrow/array"
	"github.com/apache/arrow/go/v17/arrow/memory"
)

// The regexp functions that walk every match: regexp_extract_all,
// regexp_count, and the first-match regexp_substr and regexp_instr.
// Spark iterates with Java's Matcher.find, which (unlike Go's FindAll)
// also reports an empty match right where the previous match ended:
// regexp_extract_all('1a', '(\d+)?', 1) is ["1", "", ""]. javaFindAll
// reproduces Java's sequence.

var regexpMoreFunctions = map[string]funcSpec{
	"regexp_extract_all": {2, 3, rowBinder("regexp_extract_all", bindRegexpExtractAll)},
	"regexp_count":       {2, 2, rowBinder("regexp_count", bindRegexpCount)},
	"regexp_substr":      {2, 2, rowBinder("regexp_substr", bindRegexpSubstr)},
	"regexp_instr":       {2, 3, rowBinder("regexp_instr", bindRegexpInstr)},
}

func init() {
	for name, spec := range regexpMoreFunctions {
		functions[name] = spec
	}
}

// regexContext reports whether re uses an assertion that looks at the
// text before the match (^, \A, \b, \B), so that matching a suffix of the
// text is not the same as matching the whole text from a position.
func regexContext(re *regexp.Regexp) bool {
	t, err := syntax.Parse(re.String(), syntax.Perl)
	if err != nil {
		return true
	}
	var walk func(t *syntax.Regexp) bool
	walk = func(t *syntax.Regexp) bool {
		switch t.Op {
		case syntax.OpBeginLine, syntax.OpBeginText, syntax.OpWordBoundary, syntax.OpNoWordBoundary:
			return true
		}
		for _, s := range t.Sub {
			if walk(s) {
				return true
			}
		}
		return false
	}
	return walk(t)
}

// regexMinLen is the fewest characters a match of re can span.
func regexMinLen(re *regexp.Regexp) int {
	t, err := syntax.Parse(re.String(), syntax.Perl)
	if err != nil {
		return 0
	}
	var walk func(t *syntax.Regexp) int
	walk = func(t *syntax.Regexp) int {
		switch t.Op {
		case syntax.OpLiteral:
			return len(t.Rune)
		case syntax.OpCharClass, syntax.OpAnyChar, syntax.OpAnyCharNotNL, syntax.OpNoMatch:
			return 1
		case syntax.OpCapture, syntax.OpPlus:
			return walk(t.Sub[0])
		case syntax.OpRepeat:
			return t.Min * walk(t.Sub[0])
		case syntax.OpConcat:
			n := 0
			for _, s := range t.Sub {
				n += walk(s)
			}
			return n
		case syntax.OpAlternate:
			n := -1
			for _, s := range t.Sub {
				if m := walk(s); n < 0 || m < n {
					n = m
				}
			}
			return max(n, 0)
		}
		return 0 // empty match, assertions, star, quest
	}
	return walk(t)
}

// javaFindAll calls f with the submatch indexes of every match of re in s
// in the order of Java's Matcher.find loop; f returns false to stop. A
// regex with a look-behind assertion (^, \b) that can match the empty
// string is refused: the sequence can then only be had by matching
// suffixes, which changes what those assertions see.
//
// A regex with such an assertion (hasContext) has its matches found at
// once (contextMatches), their positions reserved on acct (nil: not
// counted).
func javaFindAll(re *regexp.Regexp, hasContext bool, s []byte, acct *matchAccount, f func(m []int) bool) error {
	if hasContext {
		if regexMinLen(re) == 0 {
			return fmt.Errorf("[INVALID_PARAMETER_VALUE.PATTERN] the regex %q can match the empty string and uses ^, \\A, \\b or \\B: iterating its matches is not supported: %w", re.String(), ErrInvalidFormat)
		}
		ms, err := acct.contextMatches(re, s)
		defer acct.done()
		if err != nil {
			return err
		}
		for _, m := range ms {
			if !f(m) {
				return nil
			}
		}
		return nil
	}
	pos := 0
	for pos <= len(s) {
		m := re.FindSubmatchIndex(s[pos:])
		if m == nil {
			return nil
		}
		for k := range m {
			if m[k] >= 0 {
				m[k] += pos
			}
		}
		if !f(m) {
			return nil
		}
		if m[1] > m[0] {
			pos = m[1]
			continue
		}
		// An empty match: the next search starts one character on.
		if m[1] >= len(s) {
			return nil
		}
		_, size := utf8.DecodeRune(s[m[1]:])
		pos = m[1] + size
	}
	return nil
}

// regexGroup checks Spark's group index rules against re.
func regexGroup(re *regexp.Regexp, idx int64) error {
	if idx < 0 {
		return fmt.Errorf("[INVALID_PARAMETER_VALUE.REGEX_GROUP_INDEX] the specified group index cannot be less than zero, got %d: %w", idx, ErrInvalidFormat)
	}
	if idx > int64(re.NumSubexp()) {
		return fmt.Errorf("[INVALID_PARAMETER_VALUE.REGEX_GROUP_INDEX] the regex group count is %d, but the specified group index is %d: %w", re.NumSubexp(), idx, ErrInvalidFormat)
	}
	return nil
}

// regexAt is the compiled regex of row i with its context flag.
type regexAt struct {
	c        *regexCache
	lastRe   *regexp.Regexp
	lastCtxt bool
}

func (r *regexAt) at(a []rowArg, k, i int) (*regexp.Regexp, bool, error) {
	re, err := r.c.at(a, k, i)
	if err != nil {
		return nil, false, err
	}
	if re != r.lastRe {
		r.lastRe, r.lastCtxt = re, regexContext(re)
	}
	return re, r.lastCtxt, nil
}

func newRegexAt(args []Evaluator, k int) (*regexAt, error) {
	c, err := newRegexCache(args, k)
	if err != nil {
		return nil, err
	}
	return &regexAt{c: c}, nil
}

// bindRegexpCount binds regexp_count(s, regex): the number of matches.
func bindRegexpCount(f *FuncExpr, in *arrow.Schema, mem memory.Allocator, args []Evaluator) (Evaluator, error) {
	c, err := newRegexAt(args, 1)
	if err != nil {
		return nil, err
	}
	acct := newMatchAccount(mem, "regexp_count")
	return bindRows(f, in, mem, args, []rowKind{rowStr, rowStr}, Int32, rowKernels{
		num: func(a []rowArg, i int) (int64, bool, error) {
			re, ctxt, err := c.at(a, 1, i)
			if err != nil {
				return 0, false, err
			}
			n := int64(0)
			err = javaFindAll(re, ctxt, a[0].str(i), acct, func([]int) bool { n++; return true })
			return n, err == nil, err
		},
	})
}

// bindRegexpSubstr binds regexp_substr(s, regex): the first match, NULL
// when there is none.
func bindRegexpSubstr(f *FuncExpr, in *arrow.Schema, mem memory.Allocator, args []Evaluator) (Evaluator, error) {
	c, err := newRegexCache(args, 1)
	if err != nil {
		return nil, err
	}
	return bindRows(f, in, mem, args, []rowKind{rowStr, rowStr}, String, rowKernels{
		str: func(a []rowArg, i int, dst []byte) ([]byte, bool, error) {
			re, err := c.at(a, 1, i)
			if err != nil {
				return nil, false, err
			}
			s := a[0].str(i)
			m := re.FindIndex(s)
			if m == nil {
				return dst, false, nil
			}
			return append(dst, s[m[0]:m[1]]...), true, nil
		},
	})
}

// bindRegexpInstr binds regexp_instr(s, regex[, idx]): the 1-based
// position (in UTF-16 code units, as Java counts) where group idx (0, the
// whole match, by default) of the first match begins; 0 when there is no
// match or the group took no part in it.
func bindRegexpInstr(f *FuncExpr, in *arrow.Schema, mem memory.Allocator, args []Evaluator) (Evaluator, error) {
	c, err := newRegexCache(args, 1)
	if err != nil {
		return nil, err
	}
	return bindRows(f, in, mem, args, []rowKind{rowStr, rowStr, rowInt}, Int32, rowKernels{
		num: func(a []rowArg, i int) (int64, bool, error) {
			re, err := c.at(a, 1, i)
			if err != nil {
				return 0, false, err
			}
			idx := int64(0)
			if len(a) > 2 {
				idx = a[2].int(i)
			}
			if err := regexGroup(re, idx); err != nil {
				return 0, false, err
			}
			s := a[0].str(i)
			m := re.FindSubmatchIndex(s)
			if m == nil || m[2*idx] < 0 {
				return 0, true, nil
			}
			return int64(utf16Len(s[:m[2*idx]])) + 1, true, nil
		},
	})
}

// utf16Len is the length of s in UTF-16 code units.
func utf16Len(s []byte) int {
	n := 0
	for len(s) > 0 {
		r, size := utf8.DecodeRune(s)
		s = s[size:]
		n++
		if r > 0xFFFF {
			n++
		}
	}
	return n
}

// bindRegexpExtractAll binds regexp_extract_all(s, regex[, idx]): group
// idx (1 by default) of every match, "" for a group that took no part.
func bindRegexpExtractAll(f *FuncExpr, in *arrow.Schema, mem memory.Allocator, args []Evaluator) (Evaluator, error) {
	kinds := []rowKind{rowStr, rowStr, rowInt}
	conv, err := rowArgs(f, args, kinds, mem)
	if err != nil {
		return nil, err
	}
	dt := ListOf(String)
	for _, a := range conv {
		if a.DataType().ID() == arrow.NULL || isNullConst(a) {
			return fnNullResult(dt, mem), nil
		}
	}
	c, err := newRegexAt(conv, 1)
	if err != nil {
		return nil, err
	}
	ev := &regexpAllEval{args: conv, kinds: kinds, mem: mem, re: c, expr: f.String(), acct: newMatchAccount(mem, "regexp_extract_all")}
	return fnFoldConstant(f, in, mem, ev, conv...)
}

type regexpAllEval struct {
	args  []Evaluator
	kinds []rowKind
	mem   memory.Allocator
	re    *regexAt
	expr  string
	acct  *matchAccount
}

func (e *regexpAllEval) DataType() arrow.DataType { return ListOf(String) }

func (e *regexpAllEval) Eval(ctx context.Context, rec arrow.Record) (arrow.Array, error) {
	arrs, err := fnEvalArgs(ctx, rec, e.args)
	if err != nil {
		return nil, err
	}
	defer releaseArrays(arrs)
	a := make([]rowArg, len(e.args))
	defer func() {
		for i := range a {
			if a[i].arr != nil {
				a[i].arr.Release()
			}
		}
	}()
	for i, ev := range e.args {
		if v, ok := fnConstValue(ev); ok {
			a[i] = constRowArg(v, e.kinds[i])
			continue
		}
		if a[i], err = newRowArg(e.mem, arrs[i], e.kinds[i]); err != nil {
			return nil, err
		}
	}
	n := int(rec.NumRows())
	elems := array.NewStringBuilder(e.mem)
	defer elems.Release()
	offs := make([]int32, 1, n+1)
	valid := make([]bool, n)
	nulls := 0
	for r := 0; r < n; r++ {
		if err := ctx.Err(); err != nil && r&1023 == 0 {
			return nil, err
		}
		null := false
		for k := range a {
			if !a[k].valid(r) {
				null = true
			}
		}
		if null {
			nulls++
			offs = append(offs, int32(elems.Len()))
			continue
		}
		re, ctxt, err := e.re.at(a, 1, r)
		if err != nil {
			return nil, &EvalError{Expr: e.expr, Row: r, Err: err}
		}
		idx := int64(1)
		if len(a) > 2 {
			idx = a[2].int(r)
		}
		if err := regexGroup(re, idx); err != nil {
			return nil, &EvalError{Expr: e.expr, Row: r, Err: err}
		}
		s := a[0].str(r)
		err = javaFindAll(re, ctxt, s, e.acct, func(m []int) bool {
			if m[2*idx] < 0 {
				elems.Append("")
			} else {
				elems.BinaryBuilder.Append(s[m[2*idx]:m[2*idx+1]])
			}
			return true
		})
		if err != nil {
			return nil, &EvalError{Expr: e.expr, Row: r, Err: err}
		}
		valid[r] = true
		offs = append(offs, int32(elems.Len()))
	}
	child := elems.NewArray()
	defer child.Release()
	return buildList(e.mem, ListOf(String), offs, valid, nulls, child), nil
}
