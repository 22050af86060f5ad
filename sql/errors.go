package sql

import (
	"fmt"
	"strings"
	"unicode"
	"unicode/utf8"
)

// MaxDepth is how deeply expressions, queries and types may nest. Deeper
// input is rejected with a SyntaxError rather than risking the stack.
const MaxDepth = 1000

// SyntaxError is a lexical or syntax error. Line and Col are 1-based; Col
// counts characters (not bytes) from the start of the line.
type SyntaxError struct {
	Line, Col int
	Msg       string
}

// Error renders the error as "syntax error at LINE:COL: MSG".
func (e *SyntaxError) Error() string {
	return fmt.Sprintf("syntax error at %d:%d: %s", e.Line, e.Col, e.Msg)
}

// Context returns the source line of the error followed by a line with a
// caret under the error's column, for showing errors to people. It returns
// "" when src has no such line.
func (e *SyntaxError) Context(src string) string {
	lines := strings.Split(src, "\n")
	if e.Line < 1 || e.Line > len(lines) {
		return ""
	}
	line := strings.TrimRight(lines[e.Line-1], "\r")
	// Tabs are kept in the caret line so that it lines up under them.
	var pad strings.Builder
	col := 1
	for _, r := range line {
		if col >= e.Col {
			break
		}
		if r == '\t' {
			pad.WriteByte('\t')
		} else {
			pad.WriteByte(' ')
		}
		col++
	}
	return line + "\n" + pad.String() + "^"
}

// bailout carries a SyntaxError up the recursive descent by panicking; the
// entry points recover it. go/parser and text/template use the same
// technique: it keeps the grammar functions free of error plumbing. Any
// other panic is a bug and is re-raised.
type bailout struct{ err *SyntaxError }

// describe names a token the way the user wrote it, for "found ..." in
// error messages.
func describe(t token) string {
	switch t.kind {
	case tEOF:
		return "end of input"
	case tString:
		return "string " + truncate(t.raw)
	case tQuoted:
		return truncate(t.raw)
	}
	return "'" + truncate(t.raw) + "'"
}

// truncate shortens long token text in messages.
func truncate(s string) string {
	const max = 40
	if utf8.RuneCountInString(s) <= max {
		return s
	}
	n := 0
	for i := range s {
		if n == max {
			return s[:i] + "..."
		}
		n++
	}
	return s
}

// describeRune names an unexpected character.
func describeRune(r rune, b byte) string {
	switch {
	case r == utf8.RuneError:
		return fmt.Sprintf("byte 0x%02X", b)
	case !unicode.IsPrint(r) || unicode.IsSpace(r):
		return fmt.Sprintf("character U+%04X", r)
	}
	return fmt.Sprintf("character '%c'", r)
}
