package pgwire

import (
	"strconv"
	"strings"
)

// PostgreSQL clients, and the catalog queries of psql and SQLAlchemy,
// write PostgreSQL: "quoted identifiers", E'escaped strings', regex
// operators (~, !~, OPERATOR(pg_catalog.~)), COLLATE clauses,
// pg_catalog-qualified functions and PostgreSQL's catalog functions
// (format_type, pg_table_is_visible, ...). translate rewrites these into
// the dialect, token by token, before the statement is planned; the
// catalog functions become expressions of the dialect over their
// arguments (pgFuncs). Quoted text is copied as the dialect would read
// it, so nothing inside a string is rewritten.

// tokKind is a lexical token kind of translate's lexer.
type tokKind int

const (
	tkSpace   tokKind = iota // white space and comments
	tkString                 // '...' (backslash escapes, as the dialect)
	tkEString                // E'...'
	tkQIdent                 // "..."
	tkBIdent                 // `...`
	tkIdent                  // a word
	tkNumber                 // digits
	tkOp                     // a regex operator: ~ ~* !~ !~* ~~ ~~* !~~ !~~*
	tkCast                   // ::
	tkPunct                  // any other single character
)

type token struct {
	kind tokKind
	text string
}

// lexPG splits text into tokens; the concatenation of their texts is
// text.
func lexPG(text string) []token {
	var out []token
	for i := 0; i < len(text); {
		ch := text[i]
		start := i
		kind := tkPunct
		switch {
		case ch == ' ' || ch == '\t' || ch == '\n' || ch == '\r' || ch == '\f':
			for i < len(text) && strings.IndexByte(" \t\n\r\f", text[i]) >= 0 {
				i++
			}
			kind = tkSpace
		case ch == '-' && i+1 < len(text) && text[i+1] == '-':
			if j := strings.IndexByte(text[i:], '\n'); j >= 0 {
				i += j + 1
			} else {
				i = len(text)
			}
			kind = tkSpace
		case ch == '/' && i+1 < len(text) && text[i+1] == '*':
			if j := strings.Index(text[i+2:], "*/"); j >= 0 {
				i += j + 4
			} else {
				i = len(text)
			}
			kind = tkSpace
		case ch == '\'':
			i, kind = skipQuoted(text, i, '\'', true), tkString
		case (ch == 'E' || ch == 'e') && i+1 < len(text) && text[i+1] == '\'' && (i == 0 || !isIdentByte(text[i-1])):
			i, kind = skipQuoted(text, i+1, '\'', true), tkEString
		case ch == '"':
			// An unterminated one is copied as it is (the planner
			// reports it).
			var closed bool
			i, closed = skipDoubled(text, i, '"')
			kind = map[bool]tokKind{true: tkQIdent, false: tkPunct}[closed]
		case ch == '`':
			i, kind = skipQuoted(text, i, '`', false), tkBIdent
		case ch == ':' && i+1 < len(text) && text[i+1] == ':':
			i, kind = i+2, tkCast
		case ch >= '0' && ch <= '9':
			for i < len(text) && (isIdentByte(text[i]) || text[i] == '.') {
				i++
			}
			kind = tkNumber
		case isIdentByte(ch) || ch >= 0x80:
			for i < len(text) && (isIdentByte(text[i]) || text[i] >= 0x80) {
				i++
			}
			kind = tkIdent
		case ch == '~' || ch == '!' && i+1 < len(text) && text[i+1] == '~':
			j := i
			if text[j] == '!' {
				j++
			}
			j++ // the ~
			if j < len(text) && text[j] == '~' {
				j++
			}
			if j < len(text) && text[j] == '*' {
				j++
			}
			i, kind = j, tkOp
		default:
			i++
		}
		if i > len(text) {
			i = len(text)
		}
		out = append(out, token{kind, text[start:i]})
	}
	return out
}

// skipDoubled returns the index after the quoted text starting at i,
// where a doubled quote stands for itself, and whether it is closed.
func skipDoubled(text string, i int, q byte) (int, bool) {
	for j := i + 1; j < len(text); j++ {
		if text[j] == q {
			if j+1 < len(text) && text[j+1] == q {
				j++
				continue
			}
			return j + 1, true
		}
	}
	return len(text), false
}

// dialect is what translation needs of the session.
type dialect struct {
	user    string
	version string // version()'s answer
}

// translate rewrites a statement of PostgreSQL into the dialect.
func (d *dialect) translate(text string) string {
	toks := lexPG(text)
	var b strings.Builder
	b.Grow(len(text))
	d.emit(&b, toks)
	return b.String()
}

// next returns the index of the first non-space token at or after i
// (len(toks) if none).
func next(toks []token, i int) int {
	for i < len(toks) && toks[i].kind == tkSpace {
		i++
	}
	return i
}

// prev returns the index of the last non-space token before i (-1).
func prev(toks []token, i int) int {
	i--
	for i >= 0 && toks[i].kind == tkSpace {
		i--
	}
	return i
}

func isWord(t token, w string) bool { return t.kind == tkIdent && strings.EqualFold(t.text, w) }

func isPunct(t token, p string) bool { return t.kind == tkPunct && t.text == p }

// closing returns the index of the ")" matching the "(" at i (len(toks)
// if unbalanced).
func closing(toks []token, i int) int {
	depth := 0
	for j := i; j < len(toks); j++ {
		switch {
		case isPunct(toks[j], "("):
			depth++
		case isPunct(toks[j], ")"):
			depth--
			if depth == 0 {
				return j
			}
		}
	}
	return len(toks)
}

// emit writes the translation of toks.
func (d *dialect) emit(b *strings.Builder, toks []token) {
	for i := 0; i < len(toks); i++ {
		t := toks[i]
		switch t.kind {
		case tkQIdent:
			inner := strings.ReplaceAll(t.text[1:len(t.text)-1], `""`, `"`)
			b.WriteString("`" + strings.ReplaceAll(inner, "`", "``") + "`")
			continue
		case tkEString:
			b.WriteString(t.text[1:])
			continue
		case tkString:
			// 'name'::regclass is the relation's OID.
			if j := next(toks, i+1); j < len(toks) && toks[j].kind == tkCast && len(t.text) >= 2 {
				if k := next(toks, j+1); k < len(toks) && isWord(toks[k], "regclass") {
					name := strings.ReplaceAll(t.text[1:len(t.text)-1], "''", "'")
					b.WriteString(regclassOID(name))
					i = k
					continue
				}
			}
		case tkOp:
			d.emitRegexOp(b, toks, &i, false)
			continue
		case tkCast:
			i = d.emitCast(b, toks, i)
			continue
		case tkPunct:
			if j, ok := emptySubquery(toks, i); ok {
				b.WriteString("CAST(NULL AS STRING)")
				i = j
				continue
			}
		case tkIdent:
			if j, ok := d.emitIdent(b, toks, i); ok {
				i = j
				continue
			}
		}
		b.WriteString(t.text)
	}
}

// emitRegexOp writes a regex operator as RLIKE / LIKE; a
// case-insensitive one (~*) makes a following literal pattern (?i).
func (d *dialect) emitRegexOp(b *strings.Builder, toks []token, i *int, binary bool) {
	op := toks[*i].text
	p := prev(toks, *i)
	if op == "~" && !binary && !endsOperand(toks, p) {
		b.WriteString(op) // unary bitwise not
		return
	}
	neg := strings.HasPrefix(op, "!")
	op = strings.TrimPrefix(op, "!")
	if neg {
		b.WriteString(" NOT")
	}
	switch op {
	case "~~":
		b.WriteString(" LIKE ")
	case "~~*":
		b.WriteString(" ILIKE ")
	default:
		b.WriteString(" RLIKE ")
		if op == "~*" {
			if n := next(toks, *i+1); n < len(toks) && toks[n].kind == tkString {
				b.WriteString("'(?i)" + toks[n].text[1:])
				*i = n
			}
		}
	}
}

// emitCast writes a :: cast with PostgreSQL's type names mapped; it
// returns the index of the last token used.
func (d *dialect) emitCast(b *strings.Builder, toks []token, i int) int {
	j := next(toks, i+1)
	if j+2 < len(toks) && isWord(toks[j], pgCatalogSchema) && isPunct(toks[j+1], ".") {
		j += 2
	}
	if j >= len(toks) {
		b.WriteString("::")
		return i
	}
	name := strings.ToLower(toks[j].text)
	if toks[j].kind == tkQIdent {
		name = strings.Trim(name, `"`)
	} else if toks[j].kind != tkIdent {
		b.WriteString("::")
		return i
	}
	if name == "double" {
		if k := next(toks, j+1); k < len(toks) && isWord(toks[k], "precision") {
			j = k
		}
		b.WriteString("::DOUBLE")
		return j
	}
	if repl, ok := pgCastNames[name]; ok {
		b.WriteString("::" + repl)
		return j
	}
	switch name {
	case "oid", "regclass", "regtype", "regproc", "regprocedure", "regnamespace", "regrole", "xid", "cid":
		b.WriteString("::BIGINT")
		return j
	case "char":
		b.WriteString("::STRING")
		return j
	}
	b.WriteString("::")
	return i
}

// emitIdent handles a word: a pg_catalog qualifier of a function or
// type, OPERATOR(pg_catalog.op), COLLATE, a 'name'::regclass literal, a
// catalog function or a session value. It returns false to copy the
// word as it is.
func (d *dialect) emitIdent(b *strings.Builder, toks []token, i int) (int, bool) {
	t := toks[i]
	lower := strings.ToLower(t.text)
	p := prev(toks, i)
	// A word after a dot is a qualified name's part, unless the
	// qualifier is pg_catalog (dropped before a function).
	afterDot := p >= 0 && isPunct(toks[p], ".")
	if q := prev(toks, p); afterDot && q >= 0 && isWord(toks[q], pgCatalogSchema) {
		if n := next(toks, i+1); n < len(toks) && isPunct(toks[n], "(") {
			afterDot = false
		}
	}
	switch lower {
	case "operator":
		// OPERATOR(pg_catalog.~) is the operator.
		j := next(toks, i+1)
		if j < len(toks) && isPunct(toks[j], "(") {
			end := closing(toks, j)
			for k := j + 1; k < end; k++ {
				if toks[k].kind == tkOp {
					// A case-insensitive operator's pattern follows the ")".
					op := []token{toks[k], {tkSpace, " "}}
					if n := next(toks, end+1); n < len(toks) && toks[n].kind == tkString {
						op = append(op, toks[n])
						end = n
					}
					z := 0
					d.emitRegexOp(b, op, &z, true)
					if z == 0 && len(op) == 3 {
						b.WriteString(op[2].text)
					}
					return end, true
				}
				if toks[k].kind == tkPunct && toks[k].text != "." {
					b.WriteString(" " + toks[k].text + " ")
					return end, true
				}
			}
		}
		return i, false
	case "collate":
		// The dialect has no collations: COLLATE name is dropped.
		j := next(toks, i+1)
		if j < len(toks) && (toks[j].kind == tkIdent || toks[j].kind == tkQIdent) {
			if k := next(toks, j+1); k+1 < len(toks) && isPunct(toks[k], ".") {
				j = next(toks, k+1)
			}
			return j, true
		}
		return i, false
	case pgCatalogSchema:
		// pg_catalog.f(...) is f(...); pg_catalog.table stays.
		j := next(toks, i+1)
		if j+1 < len(toks) && isPunct(toks[j], ".") && !afterDot {
			k := next(toks, j+1)
			if k < len(toks) && toks[k].kind == tkIdent {
				if l := next(toks, k+1); l < len(toks) && isPunct(toks[l], "(") {
					return j, true
				}
			}
		}
		return i, false
	}
	if afterDot {
		return i, false
	}
	j := next(toks, i+1)
	if j < len(toks) && isPunct(toks[j], "(") {
		f, ok := pgFuncs[lower]
		if !ok {
			return i, false
		}
		end := closing(toks, j)
		if end >= len(toks) {
			return i, false
		}
		var args []string
		start := j + 1
		depth := 0
		for k := j + 1; k <= end; k++ {
			switch {
			case isPunct(toks[k], "("):
				depth++
			case isPunct(toks[k], ")") && depth > 0:
				depth--
			case depth == 0 && (isPunct(toks[k], ",") || k == end):
				var ab strings.Builder
				d.emit(&ab, toks[start:k])
				if s := strings.TrimSpace(ab.String()); s != "" || k != end || len(args) > 0 {
					args = append(args, s)
				}
				start = k + 1
			}
		}
		out, ok := f(d, args)
		if !ok {
			return i, false
		}
		b.WriteString(out)
		return end, true
	}
	switch lower {
	case "current_user", "session_user", "current_role":
		b.WriteString(stringLiteral(d.user))
		return i, true
	case "current_schema":
		b.WriteString(stringLiteral(defaultSchemaName))
		return i, true
	case "current_catalog":
		b.WriteString(stringLiteral(databaseName))
		return i, true
	}
	return i, false
}

// regclassOID is the OID of a relation name as 'name'::regclass gives it.
func regclassOID(name string) string {
	schema, rel, ok := strings.Cut(name, ".")
	if !ok {
		schema, rel = defaultSchemaName, name
		if strings.HasPrefix(strings.ToLower(name), "pg_") {
			schema = pgCatalogSchema
		}
	}
	schema, rel = strings.Trim(schema, `"`), strings.Trim(rel, `"`)
	for i, r := range catalogRelations {
		if strings.EqualFold(r.schema, schema) && strings.EqualFold(r.name, rel) {
			return strconv.Itoa(firstCatalogOID + i)
		}
	}
	return strconv.FormatInt(relOID(schema, rel), 10)
}

// operandKeywords are words after which an operator is unary.
var operandKeywords = map[string]bool{"select": true, "where": true, "and": true, "or": true, "not": true, "then": true,
	"else": true, "when": true, "on": true, "by": true, "having": true, "case": true, "in": true, "is": true, "return": true}

// endsOperand reports whether toks[p] can end an operand, making an
// operator after it binary.
func endsOperand(toks []token, p int) bool {
	if p < 0 {
		return false
	}
	switch t := toks[p]; t.kind {
	case tkString, tkEString, tkNumber, tkQIdent, tkBIdent:
		return true
	case tkIdent:
		return !operandKeywords[strings.ToLower(t.text)]
	case tkPunct:
		return t.text == ")" || t.text == "]"
	}
	return false
}
