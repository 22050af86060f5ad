package sql

import (
	"strings"
	"unicode/utf8"
)

// lexer turns source text into tokens. It tracks line and column (in
// characters) as it goes so that every token carries its position.
type lexer struct {
	src  string
	off  int // byte offset of the next character
	line int
	col  int
	prev tokKind // kind of the previous token, to tell ".5" from "t.5"
}

// lex splits src into tokens, ending with tEOF. At the first lexical error
// it appends a tErr token and stops; the parser reports that error only if
// it gets that far without finding an earlier syntax error, so errors
// always come out in source order.
func lex(src string) []token {
	l := &lexer{src: src, line: 1, col: 1, prev: tEOF}
	// A byte order mark is not part of the text (and takes no column).
	if strings.HasPrefix(src, "\uFEFF") {
		l.off = len("\uFEFF")
	}
	toks := make([]token, 0, len(src)/4+2)
	for {
		t := l.next()
		toks = append(toks, t)
		if t.kind == tEOF || t.kind == tErr {
			if t.kind == tErr {
				toks = append(toks, token{kind: tEOF, pos: t.pos})
			}
			return toks
		}
		l.prev = t.kind
	}
}

// advance consumes n bytes that contain no newline and count as one
// character each (ASCII), or one rune when n is 0.
func (l *lexer) advance(n int) {
	l.off += n
	l.col += n
}

// advanceRune consumes one character, maintaining line and column.
func (l *lexer) advanceRune() {
	r, size := utf8.DecodeRuneInString(l.src[l.off:])
	l.off += size
	if r == '\n' {
		l.line++
		l.col = 1
	} else {
		l.col++
	}
}

func (l *lexer) errAt(pos Pos, msg string) token {
	return token{kind: tErr, pos: pos, err: &SyntaxError{Line: pos.Line, Col: pos.Col, Msg: msg}}
}

// skipSpace skips whitespace and comments. It returns an error token for
// an unterminated block comment.
func (l *lexer) skipSpace() *token {
	for l.off < len(l.src) {
		c := l.src[l.off]
		switch {
		case c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v':
			l.advanceRune()
		case c == '-' && strings.HasPrefix(l.src[l.off:], "--"):
			for l.off < len(l.src) && l.src[l.off] != '\n' {
				l.advanceRune()
			}
		case c == '/' && strings.HasPrefix(l.src[l.off:], "/*"):
			// Block comments nest, as in Spark.
			start := Pos{l.line, l.col}
			l.advance(2)
			depth := 1
			for depth > 0 {
				if l.off >= len(l.src) {
					t := l.errAt(start, "unterminated /* comment: no closing */ before end of input")
					return &t
				}
				switch {
				case strings.HasPrefix(l.src[l.off:], "*/"):
					depth--
					l.advance(2)
				case strings.HasPrefix(l.src[l.off:], "/*"):
					depth++
					l.advance(2)
				default:
					l.advanceRune()
				}
			}
		default:
			return nil
		}
	}
	return nil
}

func (l *lexer) next() token {
	if t := l.skipSpace(); t != nil {
		return *t
	}
	pos := Pos{l.line, l.col}
	start := l.off
	if l.off >= len(l.src) {
		return token{kind: tEOF, pos: pos}
	}
	c := l.src[l.off]
	switch {
	case (c == 'x' || c == 'X') && l.off+1 < len(l.src) && l.src[l.off+1] == '\'':
		return l.binary(pos)
	case c == '\'' || c == '"':
		return l.str(pos, c)
	case c == '$' && l.digitAt(l.off+1):
		return l.param(pos)
	case c == '`':
		return l.quoted(pos)
	case c >= '0' && c <= '9' || c == '.' && l.digitAt(l.off+1) && !l.afterOperand():
		return l.number(pos)
	}
	r, size := utf8.DecodeRuneInString(l.src[l.off:])
	if isIdentStart(r) {
		for l.off < len(l.src) {
			r, size = utf8.DecodeRuneInString(l.src[l.off:])
			if !isIdentPart(r) || r == utf8.RuneError && size == 1 {
				break
			}
			l.off += size
			l.col++
		}
		word := l.src[start:l.off]
		return token{kind: tWord, kw: lookupKeyword(word), text: word, raw: word, pos: pos}
	}
	if kind, n := operator(l.src[l.off:]); n > 0 {
		l.advance(n)
		return token{kind: kind, raw: l.src[start:l.off], pos: pos}
	}
	return l.errAt(pos, "unexpected "+describeRune(r, c))
}

// afterOperand reports whether the previous token ends an operand, so that
// a following '.' is member access rather than the start of ".5".
func (l *lexer) afterOperand() bool {
	switch l.prev {
	case tWord, tQuoted, tRParen, tRBracket:
		return true
	}
	return false
}

func (l *lexer) digitAt(i int) bool {
	return i < len(l.src) && l.src[i] >= '0' && l.src[i] <= '9'
}

// operator matches the longest operator at the start of s.
func operator(s string) (tokKind, int) {
	switch s[0] {
	case '(':
		return tLParen, 1
	case ')':
		return tRParen, 1
	case '[':
		return tLBracket, 1
	case ']':
		return tRBracket, 1
	case ',':
		return tComma, 1
	case '.':
		return tDot, 1
	case ';':
		return tSemi, 1
	case '*':
		return tStar, 1
	case '+':
		return tPlus, 1
	case '-':
		if strings.HasPrefix(s, "->") {
			return tArrow, 2
		}
		return tMinus, 1
	case '/':
		return tSlash, 1
	case '%':
		return tPercent, 1
	case '&':
		return tAmp, 1
	case '^':
		return tCaret, 1
	case '~':
		return tTilde, 1
	case ':':
		if strings.HasPrefix(s, "::") {
			return tColonColon, 2
		}
		return tColon, 1
	case '|':
		if strings.HasPrefix(s, "||") {
			return tConcat, 2
		}
		return tPipe, 1
	case '=':
		if strings.HasPrefix(s, "==") {
			return tEqEq, 2
		}
		return tEq, 1
	case '!':
		if strings.HasPrefix(s, "!=") {
			return tBangEq, 2
		}
	case '<':
		switch {
		case strings.HasPrefix(s, "<=>"):
			return tNullSafeEq, 3
		case strings.HasPrefix(s, "<="):
			return tLe, 2
		case strings.HasPrefix(s, "<>"):
			return tNe, 2
		}
		return tLt, 1
	case '>':
		if strings.HasPrefix(s, ">=") {
			return tGe, 2
		}
		return tGt, 1
	}
	return tEOF, 0
}

// number scans a numeric literal: digits, an optional fraction, an
// optional exponent and an optional type suffix (L, S, Y, F, D, BD). The
// parser classifies it; the lexer only takes the longest run that could be
// one, including trailing letters, so that 12abc is one bad token rather
// than a number followed by a name.
func (l *lexer) number(pos Pos) token {
	start := l.off
	for l.digitAt(l.off) {
		l.off++
	}
	if l.off < len(l.src) && l.src[l.off] == '.' {
		l.off++
		for l.digitAt(l.off) {
			l.off++
		}
	}
	if l.off < len(l.src) && (l.src[l.off] == 'e' || l.src[l.off] == 'E') {
		i := l.off + 1
		if i < len(l.src) && (l.src[i] == '+' || l.src[i] == '-') {
			i++
		}
		if l.digitAt(i) {
			l.off = i
			for l.digitAt(l.off) {
				l.off++
			}
		}
	}
	for l.off < len(l.src) {
		r, size := utf8.DecodeRuneInString(l.src[l.off:])
		if !isIdentPart(r) || r == utf8.RuneError && size == 1 {
			break
		}
		l.off += size
	}
	l.col = pos.Col + utf8.RuneCountInString(l.src[start:l.off])
	raw := l.src[start:l.off]
	if digitLedIdentifier(raw) {
		return token{kind: tWord, text: raw, raw: raw, pos: pos}
	}
	return token{kind: tNumber, text: raw, raw: raw, pos: pos}
}

// digitLedIdentifier reports whether raw, a run of ASCII letters, digits
// and underscores that starts with a digit, is an identifier rather than
// a number: Spark's lexer takes the longest token, and its IDENTIFIER is
// (LETTER | DIGIT | '_')+, so 2012_s or 12abc name columns while 12, 12L,
// 1e5, 1.5 and 2BD (a literal as long as the identifier wins the tie) are
// numbers.
func digitLedIdentifier(raw string) bool {
	for i := 0; i < len(raw); i++ {
		c := raw[i]
		if !('0' <= c && c <= '9' || 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || c == '_') {
			return false
		}
	}
	return !numberLiteralShape(raw)
}

// numberLiteralShape reports whether raw (no '.', sign or other
// punctuation) is one of Spark's numeric literals: DIGIT+, DIGIT+ with L,
// S or Y, or DIGIT+ [E DIGIT+] with an optional D, F or BD.
func numberLiteralShape(raw string) bool {
	i := 0
	for i < len(raw) && '0' <= raw[i] && raw[i] <= '9' {
		i++
	}
	if i == 0 {
		return false
	}
	rest := strings.ToUpper(raw[i:])
	switch rest {
	case "", "L", "S", "Y", "D", "F", "BD":
		return true
	}
	if rest[0] != 'E' {
		return false
	}
	j := 1
	for j < len(rest) && '0' <= rest[j] && rest[j] <= '9' {
		j++
	}
	if j == 1 {
		return false
	}
	switch rest[j:] {
	case "", "D", "F", "BD":
		return true
	}
	return false
}

// str scans a string literal delimited by quote, decoding Spark's
// backslash escapes. Spark has no doubled-quote escape: a doubled quote
// ends one literal and starts another, and the parser concatenates
// adjacent literals (so the two quotes simply vanish, as in Spark).
func (l *lexer) str(pos Pos, quote byte) token {
	start := l.off
	l.advance(1)
	var b strings.Builder
	plain := l.off // start of the run not yet copied to b
	for {
		if l.off >= len(l.src) {
			return l.errAt(pos, "unterminated string literal: no closing "+string(quote)+" before end of input")
		}
		c := l.src[l.off]
		if c == quote {
			b.WriteString(l.src[plain:l.off])
			l.advance(1)
			return token{kind: tString, text: b.String(), raw: l.src[start:l.off], pos: pos}
		}
		if c != '\\' {
			l.advanceRune()
			continue
		}
		b.WriteString(l.src[plain:l.off])
		l.advance(1)
		if l.off >= len(l.src) {
			return l.errAt(pos, "unterminated string literal: no closing "+string(quote)+" before end of input")
		}
		l.escape(&b)
		plain = l.off
	}
}

// escape decodes one escape sequence after a backslash, as Spark's
// unescapeSQLString does.
func (l *lexer) escape(b *strings.Builder) {
	s := l.src[l.off:]
	// \uXXXX
	if s[0] == 'u' && len(s) >= 5 && isHex(s[1:5]) {
		var r rune
		for _, h := range s[1:5] {
			r = r<<4 | rune(hexVal(byte(h)))
		}
		b.WriteRune(r)
		l.advance(5)
		return
	}
	// Octal \[0-3][0-7][0-7].
	if len(s) >= 3 && s[0] >= '0' && s[0] <= '3' && s[1] >= '0' && s[1] <= '7' && s[2] >= '0' && s[2] <= '7' {
		b.WriteByte((s[0]-'0')<<6 | (s[1]-'0')<<3 | (s[2] - '0'))
		l.advance(3)
		return
	}
	switch s[0] {
	case '0':
		b.WriteByte(0)
	case 'b':
		b.WriteByte('\b')
	case 'n':
		b.WriteByte('\n')
	case 'r':
		b.WriteByte('\r')
	case 't':
		b.WriteByte('\t')
	case 'Z':
		b.WriteByte(0x1A)
	case '%', '_':
		// Kept with the backslash: they are LIKE-pattern escapes.
		b.WriteByte('\\')
		b.WriteByte(s[0])
	default:
		// Any other escaped character stands for itself (\\, \', \").
		_, size := utf8.DecodeRuneInString(s)
		b.WriteString(s[:size])
		l.advanceRune()
		return
	}
	l.advance(1)
}

// quoted scans a `backquoted` identifier, in which a doubled backquote
// stands for one.
func (l *lexer) quoted(pos Pos) token {
	start := l.off
	l.advance(1)
	var b strings.Builder
	plain := l.off
	for {
		if l.off >= len(l.src) {
			return l.errAt(pos, "unterminated quoted identifier: no closing ` before end of input")
		}
		if l.src[l.off] != '`' {
			l.advanceRune()
			continue
		}
		b.WriteString(l.src[plain:l.off])
		l.advance(1)
		if l.off < len(l.src) && l.src[l.off] == '`' {
			b.WriteByte('`')
			l.advance(1)
			plain = l.off
			continue
		}
		return token{kind: tQuoted, text: b.String(), raw: l.src[start:l.off], pos: pos}
	}
}

// binary scans X'hex'.
func (l *lexer) binary(pos Pos) token {
	start := l.off
	l.advance(2)
	for {
		if l.off >= len(l.src) {
			return l.errAt(pos, "unterminated binary literal: no closing ' before end of input")
		}
		c := l.src[l.off]
		if c == '\'' {
			l.advance(1)
			raw := l.src[start:l.off]
			return token{kind: tBinary, text: raw[2 : len(raw)-1], raw: raw, pos: pos}
		}
		if !isHex(string(c)) {
			r, _ := utf8.DecodeRuneInString(l.src[l.off:])
			return l.errAt(Pos{l.line, l.col}, "invalid binary literal: "+describeRune(r, c)+" is not a hex digit")
		}
		l.advance(1)
	}
}

func isHex(s string) bool {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !('0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F') {
			return false
		}
	}
	return true
}

func hexVal(c byte) byte {
	switch {
	case c >= 'a':
		return c - 'a' + 10
	case c >= 'A':
		return c - 'A' + 10
	}
	return c - '0'
}
