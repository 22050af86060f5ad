package plan

import (
	"strings"
	"unicode/utf8"

	"github.com/arrowstream/arrowstream/sql"
	"github.com/arrowstream/arrowstream/vector"
)

// likeEscaped resolves the pattern of X LIKE (or ILIKE) pattern ESCAPE 'c'
// with c other than the default '\': a constant pattern is rewritten into the same
// pattern written with '\' (which the LIKE kernel reads), checked as
// Spark's StringUtils.escapeLikeRegex checks it: c may only precede '_',
// '%' or c itself (then that character is literal), and may not end the
// pattern. A pattern that is not constant is refused.
func likeEscaped(x *sql.Like, p Expr) (Expr, error) {
	esc, size := utf8.DecodeRuneInString(x.Escape.Value)
	if size == 0 || size != len(x.Escape.Value) || esc == utf8.RuneError {
		return nil, errorAt(x.Escape.Pos, ErrType, "Invalid escape string. Escape string must contain only one character.")
	}
	switch x.Op {
	case sql.OpLike:
	case sql.OpILike:
		// Spark's ILIKE is LIKE of the lowered text and the lowered
		// pattern with the escape character as given: the pattern is
		// lowered before its escapes are read (an upper-case escape
		// character then escapes nothing).
		lp, err := newCall(x.Pos, "lower", castTo(p, vector.String))
		if err != nil {
			return nil, err
		}
		p = lp
	default:
		return nil, errorAt(x.Escape.Pos, ErrUnsupported, "%s ... ESCAPE %q is not supported (only LIKE and ILIKE take another escape than '\\').", x.Op, x.Escape.Value)
	}
	if !isConstant(p) {
		return nil, errorAt(x.Escape.Pos, ErrUnsupported, "LIKE ... ESCAPE %q with a pattern that is not a constant is not supported.", x.Escape.Value)
	}
	l, err := foldConstant(castTo(p, vector.String))
	if err != nil {
		return nil, errorAt(x.Pattern.Position(), ErrType, "LIKE pattern: %v", err)
	}
	if l.Value == nil {
		return l, nil
	}
	s, _ := l.Value.(string)
	out, err := likeDefaultEscape(s, esc)
	if err != nil {
		return nil, errorAt(x.Pattern.Position(), ErrType, "%s", err.Error())
	}
	return &Literal{Value: out, Type: vector.String}, nil
}

// likeDefaultEscape rewrites pattern p, whose escape character is esc,
// with the escape character '\'.
func likeDefaultEscape(p string, esc rune) (string, error) {
	var b strings.Builder
	for i := 0; i < len(p); {
		c, n := utf8.DecodeRuneInString(p[i:])
		raw := p[i : i+n]
		i += n
		switch {
		case c == esc && n == len(string(esc)):
			if i == len(p) {
				return "", &likePatternError{p, "it is not allowed to end with the escape character"}
			}
			next, m := utf8.DecodeRuneInString(p[i:])
			lit := p[i : i+m]
			i += m
			if next != '_' && next != '%' && next != esc {
				return "", &likePatternError{p, "the escape character is not allowed to precede '" + lit + "'"}
			}
			if next == '_' || next == '%' {
				b.WriteByte('\\')
			}
			b.WriteString(lit)
		case c == '\\':
			b.WriteString(`\\`)
		default:
			b.WriteString(raw)
		}
	}
	return b.String(), nil
}

// likePatternError is an invalid LIKE pattern, in Spark's words.
type likePatternError struct{ pattern, why string }

func (e *likePatternError) Error() string {
	return "the pattern '" + e.pattern + "' is invalid, " + e.why
}
