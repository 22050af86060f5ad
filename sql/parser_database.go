package sql

import "strings"

// parseCreateDatabase parses the rest of CREATE DATABASE|SCHEMA ... after
// CREATE.
func (p *parser) parseCreateDatabase(pos Pos) *CreateDatabase {
	p.next() // DATABASE or SCHEMA
	c := &CreateDatabase{Pos: pos}
	if wordIs(p.peek(), "IF") && wordIs(p.peekAt(1), "NOT") {
		p.next()
		p.next()
		p.expectKw("EXISTS", "EXISTS after IF NOT")
		c.IfNotExists = true
	}
	c.Name = p.databaseName("a database name")
	for {
		switch {
		case p.acceptWord("COMMENT"):
			if p.peek().kind != tString {
				p.unexpected("a string after COMMENT")
			}
			c.Comment = p.stringValue()
		case wordIs(p.peek(), "LOCATION"):
			p.failAt(p.peek().pos, "CREATE DATABASE ... LOCATION is not supported: a database is a namespace of the session, not a directory.")
		case wordIs(p.peek(), "WITH") && (wordIs(p.peekAt(1), "DBPROPERTIES") || wordIs(p.peekAt(1), "PROPERTIES")):
			p.next()
			p.next()
			p.skipParenthesized("(key = value, ...) after DBPROPERTIES")
		default:
			return c
		}
	}
}

// parseDropDatabase parses the rest of DROP DATABASE|SCHEMA ... after DROP.
func (p *parser) parseDropDatabase(pos Pos) *DropDatabase {
	p.next() // DATABASE or SCHEMA
	d := &DropDatabase{Pos: pos}
	if wordIs(p.peek(), "IF") && wordIs(p.peekAt(1), "EXISTS") {
		p.next()
		p.next()
		d.IfExists = true
	}
	d.Name = p.databaseName("a database name")
	switch {
	case p.acceptWord("CASCADE"):
		d.Cascade = true
	case p.acceptWord("RESTRICT"):
	}
	return d
}

// parseUse parses USE [DATABASE|SCHEMA|NAMESPACE] name.
func (p *parser) parseUse() *Use {
	u := &Use{Pos: p.next().pos}
	if (wordIs(p.peek(), "DATABASE") || wordIs(p.peek(), "SCHEMA") || wordIs(p.peek(), "NAMESPACE")) && isName(p.peekAt(1)) {
		p.next()
	}
	u.Name = p.databaseName("a database name after USE")
	return u
}

// databaseName parses a database name: one identifier, or
// spark_catalog.name (the only catalog).
func (p *parser) databaseName(what string) Ident {
	parts := p.qualifiedName(what)
	if len(parts) == 2 && strings.EqualFold(parts[0].Name, "spark_catalog") {
		parts = parts[1:]
	}
	if len(parts) != 1 {
		p.failAt(parts[0].Pos, "[REQUIRES_SINGLE_PART_NAMESPACE] A database name has one part (or spark_catalog.name), got %d parts.", len(parts))
	}
	return parts[0]
}

// skipParenthesized skips a balanced parenthesized list (properties the
// engine does not keep).
func (p *parser) skipParenthesized(what string) {
	open := p.peek()
	if open.kind != tLParen {
		p.unexpected(what)
	}
	p.next()
	depth := 1
	for depth > 0 {
		t := p.next()
		switch t.kind {
		case tLParen:
			depth++
		case tRParen:
			depth--
		case tEOF, tErr:
			p.closeParen(open)
			return
		}
	}
}

// acceptWord consumes the current token when it is the word w (a keyword
// or not).
func (p *parser) acceptWord(w string) bool {
	if wordIs(p.peek(), w) {
		p.next()
		return true
	}
	return false
}

// parseShowColumns parses the rest of SHOW COLUMNS {IN|FROM} table
// [{IN|FROM} database].
func (p *parser) parseShowColumns(pos Pos) *ShowColumns {
	p.next() // COLUMNS
	if !p.acceptKw("IN") && !p.acceptKw("FROM") {
		p.unexpected("IN or FROM after SHOW COLUMNS")
	}
	sc := &ShowColumns{Pos: pos, Table: p.qualifiedName("a table name after SHOW COLUMNS IN")}
	if p.acceptKw("IN") || p.acceptKw("FROM") {
		db := p.databaseName("a database name")
		sc.Database = &db
	}
	return sc
}
