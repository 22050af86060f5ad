package vector

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"unicode/utf8"

	"github.com/apache/arrow/go/v17/arrow"
	"github.com/apache/arrow/go/v17/arrow/bitutil"
	"github.com/apache/arrow/go/v17/arrow/memory"
)

// LikeExpr is X LIKE Pattern with Spark's semantics: '%' matches any
// sequence of characters, '_' exactly one character, and '\' escapes '%',
// '_' or '\' (any other use of '\' is an invalid pattern). Matching is case
// sensitive and '%' and '_' match newlines. NOT LIKE is Not(Like(...)).
//
// A constant pattern is compiled once at bind time into an exact, prefix,
// suffix, contains or prefix-and-suffix test when it has that shape, and
// otherwise into a wildcard matcher (no regular expressions); an invalid
// constant pattern is a bind error. A pattern column is compiled per row
// (reusing the previous row's compilation when it repeats); an invalid one
// is a runtime error.
type LikeExpr struct {
	X, Pattern Expr
}

// Like returns x LIKE pattern.
func Like(x, pattern Expr) Expr { return &LikeExpr{X: x, Pattern: pattern} }

func (l *LikeExpr) String() string { return l.X.String() + " LIKE " + l.Pattern.String() }

// errLikePattern is the cause of an invalid LIKE pattern.
var errLikePattern = errors.New("invalid LIKE pattern")

// Bind implements Expr.
func (l *LikeExpr) Bind(in *arrow.Schema, mem memory.Allocator) (Evaluator, error) {
	x, err := l.X.Bind(in, mem)
	if err != nil {
		return nil, err
	}
	p, err := l.Pattern.Bind(in, mem)
	if err != nil {
		return nil, err
	}
	if x, err = asStringArg(x, mem, l.X.String()); err != nil {
		return nil, newBindError(l, in, fmt.Errorf("LIKE: %w", err))
	}
	if p, err = asStringArg(p, mem, l.Pattern.String()); err != nil {
		return nil, newBindError(l, in, fmt.Errorf("LIKE: %w", err))
	}
	if x.DataType().ID() == arrow.NULL || p.DataType().ID() == arrow.NULL {
		return &constEval{dt: Boolean, mem: mem}, nil
	}
	ev := &likeEval{x: x, p: p, mem: mem, expr: l.String()}
	if v, ok := fnConstValue(p); ok {
		if v == nil {
			return &constEval{dt: Boolean, mem: mem}, nil
		}
		m, err := compileLike([]byte(v.(string)))
		if err != nil {
			return nil, newBindError(l, in, err)
		}
		ev.matcher = m
	}
	return fnFoldConstant(l, in, mem, ev, x, p)
}

type likeKind uint8

const (
	likeExact likeKind = iota
	likeAll            // '%': every non-null string
	likePrefix
	likeSuffix
	likeContains
	likePrefixSuffix
	likeGeneral
)

type likeTokenKind uint8

const (
	tokLiteral likeTokenKind = iota
	tokOne                   // '_'
	tokAny                   // '%'
)

type likeToken struct {
	kind likeTokenKind
	lit  []byte
}

// likeMatcher is a compiled pattern.
type likeMatcher struct {
	kind   likeKind
	lit    []byte // exact, prefix, suffix, contains; the prefix of prefixSuffix
	lit2   []byte // the suffix of prefixSuffix
	tokens []likeToken
}

// compileLike parses a pattern with the escape character '\'.
func compileLike(p []byte) (*likeMatcher, error) {
	var toks []likeToken
	var lit []byte
	flush := func() {
		if len(lit) > 0 {
			toks = append(toks, likeToken{kind: tokLiteral, lit: lit})
			lit = nil
		}
	}
	for i := 0; i < len(p); i++ {
		switch c := p[i]; c {
		case '\\':
			if i+1 == len(p) {
				return nil, fmt.Errorf("%w '%s': it is not allowed to end with the escape character", errLikePattern, p)
			}
			i++
			if n := p[i]; n != '_' && n != '%' && n != '\\' {
				r, _ := utf8.DecodeRune(p[i:])
				return nil, fmt.Errorf("%w '%s': the escape character is not allowed to precede '%c'", errLikePattern, p, r)
			}
			lit = append(lit, p[i])
		case '_':
			flush()
			toks = append(toks, likeToken{kind: tokOne})
		case '%':
			flush()
			if len(toks) == 0 || toks[len(toks)-1].kind != tokAny {
				toks = append(toks, likeToken{kind: tokAny})
			}
		default:
			lit = append(lit, c)
		}
	}
	flush()
	return classifyLike(toks), nil
}

// classifyLike picks a fast path for patterns without '_' and with '%'
// only at the ends or once in the middle.
func classifyLike(toks []likeToken) *likeMatcher {
	m := &likeMatcher{kind: likeGeneral, tokens: toks}
	shape := make([]byte, len(toks))
	for i, t := range toks {
		shape[i] = "L_%"[t.kind]
	}
	switch string(shape) {
	case "":
		m.kind = likeExact
	case "L":
		m.kind, m.lit = likeExact, toks[0].lit
	case "%":
		m.kind = likeAll
	case "L%":
		m.kind, m.lit = likePrefix, toks[0].lit
	case "%L":
		m.kind, m.lit = likeSuffix, toks[1].lit
	case "%L%":
		m.kind, m.lit = likeContains, toks[1].lit
	case "L%L":
		m.kind, m.lit, m.lit2 = likePrefixSuffix, toks[0].lit, toks[2].lit
	}
	return m
}

// match tests one string.
func (m *likeMatcher) match(s []byte) bool {
	switch m.kind {
	case likeExact:
		return bytes.Equal(s, m.lit)
	case likeAll:
		return true
	case likePrefix:
		return bytes.HasPrefix(s, m.lit)
	case likeSuffix:
		return bytes.HasSuffix(s, m.lit)
	case likeContains:
		return bytes.Contains(s, m.lit)
	case likePrefixSuffix:
		return len(s) >= len(m.lit)+len(m.lit2) && bytes.HasPrefix(s, m.lit) && bytes.HasSuffix(s, m.lit2)
	}
	return m.matchGeneral(s)
}

// matchGeneral is the classic wildcard match with one backtracking point
// (the last '%'), linear for typical patterns and never exponential.
func (m *likeMatcher) matchGeneral(s []byte) bool {
	toks := m.tokens
	ti, si := 0, 0
	starT, starS := -1, 0
	for {
		if ti < len(toks) {
			t := toks[ti]
			switch t.kind {
			case tokAny:
				starT, starS = ti, si
				ti++
				continue
			case tokOne:
				if si < len(s) {
					_, w := utf8.DecodeRune(s[si:])
					si += w
					ti++
					continue
				}
			case tokLiteral:
				if bytes.HasPrefix(s[si:], t.lit) {
					si += len(t.lit)
					ti++
					continue
				}
			}
		} else if si == len(s) {
			return true
		}
		if starT < 0 || starS >= len(s) {
			return false
		}
		_, w := utf8.DecodeRune(s[starS:])
		starS += w
		ti, si = starT+1, starS
	}
}

type likeEval struct {
	x, p    Evaluator
	matcher *likeMatcher // for a constant pattern
	mem     memory.Allocator
	expr    string
}

func (l *likeEval) DataType() arrow.DataType { return Boolean }

func (l *likeEval) Eval(ctx context.Context, rec arrow.Record) (arrow.Array, error) {
	x, err := l.x.Eval(ctx, rec)
	if err != nil {
		return nil, err
	}
	defer x.Release()
	if l.matcher != nil {
		return mapStrings(l.mem, x, func(a arrow.Array) (arrow.Array, error) {
			return likeColumn(l.mem, a, l.matcher), nil
		})
	}
	p, err := l.p.Eval(ctx, rec)
	if err != nil {
		return nil, err
	}
	defer p.Release()
	xs, err := DecodeDictionary(l.mem, x)
	if err != nil {
		return nil, err
	}
	defer xs.Release()
	ps, err := DecodeDictionary(l.mem, p)
	if err != nil {
		return nil, err
	}
	defer ps.Release()
	return l.likePatternColumn(xs, ps)
}

// likeColumn matches every string of arr against m; nulls stay null.
func likeColumn(mem memory.Allocator, arr arrow.Array, m *likeMatcher) arrow.Array {
	n := arr.Len()
	offs, data := fnBinaryView(arr)
	buf := memory.NewResizableBuffer(mem)
	buf.Resize(int(bitutil.BytesForBits(int64(n))))
	out := buf.Bytes()
	clear(out)
	switch m.kind {
	case likePrefix:
		// The hot shape (col LIKE 'abc%') gets its own loop.
		lit := m.lit
		for i := 0; i < n; i++ {
			s := data[offs[i]:offs[i+1]]
			if len(s) >= len(lit) && bytes.Equal(s[:len(lit)], lit) {
				out[i>>3] |= 1 << (i & 7)
			}
		}
	default:
		for i := 0; i < n; i++ {
			if m.match(data[offs[i]:offs[i+1]]) {
				out[i>>3] |= 1 << (i & 7)
			}
		}
	}
	v := newValidityOut(mem, n, arr)
	bm, nulls := v.finish()
	return fnNewArray(Boolean, n, []*memory.Buffer{bm, buf}, nil, nulls)
}

// likePatternColumn matches row by row against a pattern column.
func (l *likeEval) likePatternColumn(x, p arrow.Array) (arrow.Array, error) {
	n := x.Len()
	xo, xd := fnBinaryView(x)
	po, pd := fnBinaryView(p)
	buf := memory.NewResizableBuffer(l.mem)
	buf.Resize(int(bitutil.BytesForBits(int64(n))))
	out := buf.Bytes()
	clear(out)
	v := newValidityOut(l.mem, n, x, p)
	var last []byte
	var m *likeMatcher
	for i := 0; i < n; i++ {
		if !v.valid(i) {
			continue
		}
		pat := pd[po[i]:po[i+1]]
		if m == nil || !bytes.Equal(pat, last) {
			var err error
			if m, err = compileLike(pat); err != nil {
				buf.Release()
				v.release()
				return nil, &EvalError{Expr: l.expr, Row: i, Values: "pattern=" + FormatValue(string(pat), String), Err: err}
			}
			last = pat
		}
		if m.match(xd[xo[i]:xo[i+1]]) {
			out[i>>3] |= 1 << (i & 7)
		}
	}
	bm, nulls := v.finish()
	return fnNewArray(Boolean, n, []*memory.Buffer{bm, buf}, nil, nulls), nil
}
