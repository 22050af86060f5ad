package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/arrowstream/arrowstream/sql"
)

// splitScript splits a SQL script into its statements. Each statement's
// text is preceded by blank lines and spaces standing for the text before
// it, so that the line:column positions of its errors are those of the
// script. The whole script is parsed first, so a syntax error anywhere is
// reported before anything runs.
func splitScript(src string) ([]string, error) {
	stmts, err := sql.ParseScript(src)
	if err != nil {
		return nil, err
	}
	var out []string
	for _, p := range splitAtSemicolons(src) {
		if !p.code {
			continue // only blanks and comments
		}
		out = append(out, blankOut(src[:p.start])+src[p.start:p.end])
	}
	if len(out) != len(stmts) {
		// The splitter and the parser disagree (a construct the splitter
		// does not know): fall back to the parser's rendering of each
		// statement, which loses positions but not meaning.
		out = out[:0]
		for _, st := range stmts {
			out = append(out, sql.Format(st))
		}
	}
	return out, nil
}

// span is a piece of a script; code is false when it holds only blanks
// and comments.
type span struct {
	start, end int
	code       bool
}

// splitAtSemicolons cuts src at the semicolons outside quotes ('...',
// "...", `...`) and comments (-- to end of line, nested /* */), as the
// lexer reads them: backslash escapes in string literals, doubled
// backquotes in quoted names.
func splitAtSemicolons(src string) []span {
	var out []span
	start, code := 0, false
	for i := 0; i < len(src); i++ {
		c := src[i]
		isComment := c == '-' && strings.HasPrefix(src[i:], "--") || c == '/' && strings.HasPrefix(src[i:], "/*")
		if c != ';' && !isComment && c != ' ' && c != '\t' && c != '\n' && c != '\r' {
			code = true
		}
		switch {
		case c == '\'' || c == '"':
			for i++; i < len(src) && src[i] != c; i++ {
				if src[i] == '\\' {
					i++
				}
			}
		case c == '`':
			for i++; i < len(src); i++ {
				if src[i] == '`' {
					if i+1 < len(src) && src[i+1] == '`' {
						i++
						continue
					}
					break
				}
			}
		case c == '-' && strings.HasPrefix(src[i:], "--"):
			for i < len(src) && src[i] != '\n' {
				i++
			}
		case c == '/' && strings.HasPrefix(src[i:], "/*"):
			depth := 0
			for ; i < len(src); i++ {
				if strings.HasPrefix(src[i:], "/*") {
					depth++
					i++
				} else if strings.HasPrefix(src[i:], "*/") {
					depth--
					i++
					if depth == 0 {
						break
					}
				}
			}
		case c == ';':
			out = append(out, span{start, i, code})
			start, code = i+1, false
		}
	}
	return append(out, span{start, len(src), code})
}

// blankOut keeps the newlines of s and turns every other character into a
// space (one per character, as the parser counts columns).
func blankOut(s string) string {
	var b strings.Builder
	for _, r := range s {
		if r == '\n' {
			b.WriteByte('\n')
		} else {
			b.WriteByte(' ')
		}
	}
	return b.String()
}

// scriptFile is a SQL file's name and text.
type scriptFile struct{ name, src string }

// readScripts reads each file (stdin for "-") before anything starts, so
// that a mistyped file name is reported without starting the servers or
// making a checkpoint root (and a catalog) named after the missing file.
func readScripts(files []string, stdin io.Reader) ([]scriptFile, error) {
	out := make([]scriptFile, 0, len(files))
	for _, f := range files {
		var data []byte
		var err error
		if f == "-" {
			data, err = io.ReadAll(stdin)
		} else {
			data, err = os.ReadFile(f)
		}
		if err != nil {
			return nil, fmt.Errorf("read SQL file %s: %w", f, err)
		}
		out = append(out, scriptFile{name: f, src: string(data)})
	}
	return out, nil
}

// runScripts executes the statements of each file, printing query
// results to out. The first failing statement stops it.
func runScripts(ctx context.Context, e *engine, files []scriptFile, out io.Writer, maxRows int) error {
	for _, f := range files {
		if err := runScript(ctx, e, f.name, f.src, out, maxRows); err != nil {
			return err
		}
	}
	return nil
}

// runScript executes one script; errors are prefixed with name and carry
// the statement's source line with a caret for syntax errors.
func runScript(ctx context.Context, e *engine, name, src string, out io.Writer, maxRows int) error {
	stmts, err := splitScript(src)
	if err != nil {
		return scriptError(name, src, err)
	}
	for _, text := range stmts {
		if err := e.execPrint(ctx, text, out, maxRows); err != nil {
			return scriptError(name, src, err)
		}
	}
	return nil
}

func scriptError(name, src string, err error) error {
	var se *sql.SyntaxError
	if errors.As(err, &se) {
		if c := se.Context(src); c != "" {
			return fmt.Errorf("%s:%d:%d: %s\n%s", name, se.Line, se.Col, se.Msg, c)
		}
	}
	return fmt.Errorf("%s: %w", name, err)
}
