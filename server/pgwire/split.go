package pgwire

import "strings"

// The text of a simple query is split into statements, and placeholders
// are found, by one scanner that knows the dialect's quoting: 'strings'
// and "strings" with backslash escapes, `identifiers`, -- and /* */
// comments. It does not parse: the planner reports what is wrong with a
// statement.

// token kinds the scanner reports to its callback.
type scanEvent int

const (
	evSemicolon   scanEvent = iota // a ';' outside quotes and comments
	evPlaceholder                  // $n outside quotes and comments
	evCast                         // ::name outside quotes and comments
)

// scan calls f for every statement separator and placeholder of text,
// with the byte range [start, end) of the token; f returns false to stop.
func scan(text string, f func(ev scanEvent, start, end int) bool) {
	for i := 0; i < len(text); {
		ch := text[i]
		switch {
		case ch == '\'' || ch == '"':
			i = skipQuoted(text, i, ch, true)
		case ch == '`':
			i = skipQuoted(text, i, ch, false)
		case ch == '-' && i+1 < len(text) && text[i+1] == '-':
			if j := strings.IndexByte(text[i:], '\n'); j >= 0 {
				i += j + 1
			} else {
				i = len(text)
			}
		case ch == '/' && i+1 < len(text) && text[i+1] == '*':
			if j := strings.Index(text[i+2:], "*/"); j >= 0 {
				i += j + 4
			} else {
				i = len(text)
			}
		case ch == ':' && i+1 < len(text) && text[i+1] == ':':
			j := i + 2
			for j < len(text) && (text[j] == ' ' || text[j] == '\t') {
				j++
			}
			k := j
			for k < len(text) && isIdentByte(text[k]) {
				k++
			}
			if k > j {
				if !f(evCast, i, k) {
					return
				}
			}
			i = max(k, i+2)
		case ch == ';':
			if !f(evSemicolon, i, i+1) {
				return
			}
			i++
		case ch == '$' && i+1 < len(text) && text[i+1] >= '1' && text[i+1] <= '9' && (i == 0 || !isIdentByte(text[i-1])):
			j := i + 1
			for j < len(text) && text[j] >= '0' && text[j] <= '9' {
				j++
			}
			if !f(evPlaceholder, i, j) {
				return
			}
			i = j
		default:
			i++
		}
	}
}

func isIdentByte(c byte) bool {
	return c == '_' || c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z'
}

// skipQuoted returns the index after the quoted text starting at i; a
// doubled quote continues it, as does a backslash escape when escapes is
// set. An unterminated quote runs to the end.
func skipQuoted(text string, i int, q byte, escapes bool) int {
	for j := i + 1; j < len(text); j++ {
		switch text[j] {
		case '\\':
			if escapes {
				j++
			}
		case q:
			if j+1 < len(text) && text[j+1] == q {
				j++
				continue
			}
			return j + 1
		}
	}
	return len(text)
}

// splitStatements splits a simple query into its statements, dropping
// empty ones.
func splitStatements(text string) []string {
	var out []string
	start := 0
	add := func(s string) {
		if t := strings.TrimSpace(s); t != "" && !onlyComments(t) {
			out = append(out, t)
		}
	}
	scan(text, func(ev scanEvent, s, e int) bool {
		if ev == evSemicolon {
			add(text[start:s])
			start = e
		}
		return true
	})
	add(text[start:])
	return out
}

// onlyComments reports whether a statement is made only of comments.
func onlyComments(s string) bool {
	for s = strings.TrimSpace(s); s != ""; s = strings.TrimSpace(s) {
		switch {
		case strings.HasPrefix(s, "--"):
			j := strings.IndexByte(s, '\n')
			if j < 0 {
				return true
			}
			s = s[j+1:]
		case strings.HasPrefix(s, "/*"):
			j := strings.Index(s, "*/")
			if j < 0 {
				return true
			}
			s = s[j+2:]
		default:
			return false
		}
	}
	return true
}
