package plan

import (
	"regexp"
	"strings"
	"unicode"

	"github.com/arrowstream/arrowstream/sql"
)

// Regex column names (spark.sql.parser.quotedRegexColumnNames=true): a
// select item `pattern` or t.`pattern` whose backquoted name is not a
// plain word (it has a character other than a letter, digit or _) selects
// the columns (of t) whose names match the pattern, as Spark's
// UnresolvedRegex: Java's Matcher.matches, so the whole name must match,
// case-insensitively. The Hive idiom `(a)?+.+` ("every column but a") uses
// Java's possessive ?+, which Go's regexp lacks: a leading possessive
// optional group is matched as Java does (the group's first match, if
// any, is kept and the rest must match what follows it); other
// possessive quantifiers are refused.

// isRegexName reports whether a backquoted name is a pattern (Spark's
// isRegex: a character other than a letter, digit or _).
func isRegexName(s string) bool {
	for _, r := range s {
		if !unicode.IsLetter(r) && !unicode.IsDigit(r) && r != '_' {
			return true
		}
	}
	return false
}

// regexColumn reports whether the select item e is a regex column under
// the session's switch: its qualifier and pattern.
func regexColumn(e sql.Expr, on bool) ([]sql.Ident, string, bool) {
	c, ok := e.(*sql.ColumnRef)
	if !on || !ok || len(c.Parts) == 0 {
		return nil, "", false
	}
	last := c.Parts[len(c.Parts)-1]
	if !last.Quoted || !isRegexName(last.Name) {
		return nil, "", false
	}
	return c.Parts[:len(c.Parts)-1], last.Name, true
}

// compileColumnRegex compiles a Java column pattern into a matcher of
// whole names.
func compileColumnRegex(pattern string, pos sql.Pos) (func(string) bool, error) {
	bad := func(err error) error {
		return errorAt(pos, ErrUnsupported, "The regex column name `%s` is not supported: %v.", pattern, err)
	}
	if strings.HasPrefix(pattern, "(") {
		if end := closingParen(pattern); end > 0 && strings.HasPrefix(pattern[end+1:], "?+") {
			group, err := regexp.Compile(`^(?i:` + pattern[1:end] + `)`)
			if err != nil {
				return nil, bad(err)
			}
			restText := pattern[end+3:]
			if hasPossessive(restText) || hasPossessive(pattern[1:end]) {
				return nil, bad(errPossessive)
			}
			rest, err := regexp.Compile(`^(?i:` + restText + `)$`)
			if err != nil {
				return nil, bad(err)
			}
			return func(name string) bool {
				if loc := group.FindStringIndex(name); loc != nil {
					return rest.MatchString(name[loc[1]:])
				}
				return rest.MatchString(name)
			}, nil
		}
	}
	if hasPossessive(pattern) {
		return nil, bad(errPossessive)
	}
	re, err := regexp.Compile(`^(?i:` + pattern + `)$`)
	if err != nil {
		return nil, bad(err)
	}
	return re.MatchString, nil
}

type possessiveError struct{}

func (possessiveError) Error() string {
	return "possessive quantifiers (?+ *+ ++) are only supported on a leading group, as in (a)?+.+"
}

var errPossessive error = possessiveError{}

// hasPossessive reports whether p has a quantifier followed by + (a
// possessive quantifier in Java; an error or another meaning in Go). An
// escaped character before the + is counted too: refusing is safe.
func hasPossessive(p string) bool {
	for i := 1; i < len(p); i++ {
		if p[i] == '+' && strings.ContainsRune("?*+}", rune(p[i-1])) {
			return true
		}
	}
	return false
}

// closingParen is the index of the ) closing the ( at p[0], or -1.
func closingParen(p string) int {
	depth := 0
	for i := 0; i < len(p); i++ {
		switch p[i] {
		case '\\':
			i++
		case '(':
			depth++
		case ')':
			depth--
			if depth == 0 {
				return i
			}
		}
	}
	return -1
}

// expandRegex lists the visible columns of sc (of table qual when given)
// whose names match pattern.
func expandRegex(sc *scope, qual []sql.Ident, pattern string, pos sql.Pos) ([]NamedExpr, error) {
	match, err := compileColumnRegex(pattern, pos)
	if err != nil {
		return nil, err
	}
	schema := sc.node.Schema()
	var out []NamedExpr
	for i, f := range schema.Fields() {
		c := sc.cols[i]
		if len(qual) == 0 {
			if c.hidden || c.shadowed {
				continue
			}
		} else if !starQualifies(c, qual) {
			continue
		}
		if match(f.Name) {
			out = append(out, NamedExpr{Name: f.Name, Expr: ColumnOf(schema, i)})
		}
	}
	return out, nil
}

// expandRegexArgs expands the regex column arguments of a function call
// (SUM(`(a)?+.+`)) into the columns they match, as Spark expands an
// UnresolvedRegex among a function's arguments like a star.
func (r *resolver) expandRegexArgs(f *sql.FuncCall) (*sql.FuncCall, error) {
	if r.sc == nil || !r.b.legacySwitches().QuotedRegexColumnNames {
		return f, nil
	}
	var args []sql.Expr
	for i, a := range f.Args {
		qual, pattern, ok := regexColumn(a, true)
		if !ok {
			if args != nil {
				args = append(args, a)
			}
			continue
		}
		if args == nil {
			args = append([]sql.Expr(nil), f.Args[:i]...)
		}
		cols, err := expandRegex(r.sc, qual, pattern, a.Position())
		if err != nil {
			return nil, err
		}
		for _, c := range cols {
			parts := append(append([]sql.Ident(nil), qual...), sql.Ident{Pos: a.Position(), Name: c.Name, Quoted: true})
			args = append(args, &sql.ColumnRef{Pos: a.Position(), Parts: parts})
		}
	}
	if args == nil {
		return f, nil
	}
	g := *f
	g.Args = args
	return &g, nil
}
