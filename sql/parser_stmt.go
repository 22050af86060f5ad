package sql

import (
	"fmt"
	"strings"
)

// parseStatement parses one statement, dispatching on its first word.
func (p *parser) parseStatement() Statement {
	t := p.peek()
	if t.kind == tLParen {
		return p.parseQuery()
	}
	if t.kind == tWord {
		switch t.kw {
		case "SELECT", "WITH", "VALUES", "FROM":
			return p.parseQuery()
		case "CREATE":
			return p.parseCreate()
		case "EXPLAIN":
			p.next()
			e := &Explain{Pos: t.pos, Extended: p.acceptKw("EXTENDED")}
			if !startsStatement(p.peek()) {
				p.unexpected("a statement after EXPLAIN")
			}
			p.enter()
			e.Stmt = p.parseStatement()
			p.leave()
			return e
		case "DROP":
			return p.parseDrop()
		case "SHOW":
			p.next()
			if sf := p.parseShowFunctions(t.pos); sf != nil {
				return sf
			}
			if wordIs(p.peek(), "COLUMNS") {
				return p.parseShowColumns(t.pos)
			}
			p.expectKw("TABLES", "TABLES, COLUMNS or [USER|SYSTEM|ALL] FUNCTIONS after SHOW")
			return &ShowTables{Pos: t.pos}
		case "DESCRIBE", "DESC":
			return p.parseDescribe()
		case "SET":
			return p.parseSet()
		case "INSERT":
			return p.parseInsert()
		}
		if isWord(t, "SUBSCRIBE") {
			return p.parseSubscribe()
		}
		if isWord(t, "TRUNCATE") && p.isKwAt(1, "TABLE") {
			return p.parseTruncate()
		}
		if isWord(t, "USE") && isName(p.peekAt(1)) {
			return p.parseUse()
		}
	}
	p.unexpected("a statement (SELECT, WITH, CREATE, EXPLAIN, DROP, SHOW, DESCRIBE or SET)")
	return nil
}

func startsStatement(t *token) bool {
	if t.kind == tLParen {
		return true
	}
	switch t.kw {
	case "SELECT", "WITH", "VALUES", "FROM", "CREATE", "EXPLAIN", "DROP", "SHOW", "DESCRIBE", "DESC", "SET", "INSERT":
		return t.kind == tWord
	}
	return false
}

// parseCreate parses CREATE [OR REPLACE] TABLE, CREATE [OR REFRESH|OR
// REPLACE] STREAMING TABLE and CREATE [OR REPLACE] [[GLOBAL] TEMPORARY]
// VIEW.
func (p *parser) parseCreate() Statement {
	create := p.next()
	switch {
	case p.isKw("OR") && p.isKwAt(1, "REPLACE") && p.isKwAt(2, "STREAMING"):
		p.next()
		p.next()
		st := p.parseCreateStreaming(create.pos, false)
		st.OrReplace = true
		return st
	case p.isKw("OR") && p.isKwAt(1, "REPLACE") && p.isKwAt(2, "TABLE"):
		p.next()
		p.next()
		ct := p.parseCreateTable(create.pos)
		ct.OrReplace = true
		return ct
	case p.isKw("OR") && p.isKwAt(1, "REPLACE"):
		p.next()
		p.next()
		return p.parseCreateView(create.pos, true)
	case p.isKw("GLOBAL") || p.isKw("TEMPORARY") || p.isKw("TEMP") || p.isKw("VIEW"):
		return p.parseCreateView(create.pos, false)
	case p.isKw("OR"):
		p.next()
		if !p.isKw("REFRESH") {
			p.unexpected("REFRESH or REPLACE after CREATE OR")
		}
		p.next()
		if !p.isKw("STREAMING") {
			p.unexpected("STREAMING TABLE after CREATE OR REFRESH")
		}
		return p.parseCreateStreaming(create.pos, true)
	case p.isKw("STREAMING"):
		return p.parseCreateStreaming(create.pos, false)
	case p.isKw("TABLE"):
		return p.parseCreateTable(create.pos)
	case wordIs(p.peek(), "DATABASE", "SCHEMA"):
		return p.parseCreateDatabase(create.pos)
	}
	p.unexpected("TABLE, STREAMING TABLE, TEMPORARY VIEW, DATABASE or OR REFRESH after CREATE")
	return nil
}

// parseCreateView parses the rest of CREATE [OR REPLACE] [[GLOBAL]
// TEMPORARY] VIEW [IF NOT EXISTS] name [(col, ...)] AS query. Every view
// of a session is temporary: TEMPORARY may be left out.
func (p *parser) parseCreateView(pos Pos, orReplace bool) *CreateView {
	v := &CreateView{Pos: pos, OrReplace: orReplace, Global: p.acceptKw("GLOBAL")}
	if !p.acceptKw("TEMPORARY") && !p.acceptKw("TEMP") && v.Global {
		p.unexpected("TEMPORARY after GLOBAL")
	}
	if orReplace {
		p.expectKw("VIEW", "TABLE, STREAMING TABLE or [TEMPORARY] VIEW after CREATE OR REPLACE")
	} else {
		p.expectKw("VIEW", "VIEW after CREATE [GLOBAL] TEMPORARY")
	}
	if p.isKw("IF") && p.isKwAt(1, "NOT") {
		p.next()
		p.next()
		p.expectKw("EXISTS", "EXISTS after IF NOT")
		v.IfNotExists = true
	}
	v.Name = p.qualifiedName("a view name after VIEW")
	if p.peek().kind == tLParen {
		v.Columns = p.identList("before the view's column names")
	}
	p.expectKw("AS", "AS and a query after the view name")
	if !startsQuery(p.peek()) {
		p.unexpected("a query after AS")
	}
	v.Query = p.parseQuery()
	return v
}

// parseCreateTable parses the rest of
// CREATE TABLE [IF NOT EXISTS] name [(col TYPE, ...)] USING format [OPTIONS (...)].
func (p *parser) parseCreateTable(pos Pos) *CreateTable {
	p.next() // TABLE
	ct := &CreateTable{Pos: pos}
	if p.isKw("IF") && p.isKwAt(1, "NOT") {
		p.next()
		p.next()
		p.expectKw("EXISTS", "EXISTS after IF NOT")
		ct.IfNotExists = true
	}
	ct.Name = p.qualifiedName("a table name after CREATE TABLE")
	if p.peek().kind == tLParen {
		open := p.next()
		for {
			ct.Columns = append(ct.Columns, p.parseColumnDef())
			if !p.accept(tComma) {
				break
			}
		}
		if p.peek().kind != tRParen {
			p.unexpected("',' or ')' after the column definition")
		}
		p.closeParen(open)
	}
	// Without USING the table has Spark's default data source
	// (spark.sql.sources.default, parquet).
	if p.acceptKw("USING") {
		ct.Using = p.qualifiedName("a data source format after USING")
	}
	if p.acceptKw("OPTIONS") {
		ct.Options = p.parseProperties("OPTIONS")
	}
	if p.isKw("AS") {
		as := p.next()
		if ct.Columns != nil {
			p.failAt(as.pos, "Operation not allowed: Schema may not be specified in a Create Table As Select (CTAS) statement.")
		}
		if !startsQuery(p.peek()) {
			p.unexpected("a query after AS")
		}
		ct.Query = p.parseQuery()
	} else if ct.Columns == nil && ct.Using == nil {
		p.unexpected("a column list, USING or AS after the table name")
	}
	return ct
}

// parseColumnDef parses name TYPE [NOT NULL].
func (p *parser) parseColumnDef() *ColumnDef {
	name := p.anyName("a column name")
	cd := &ColumnDef{Pos: name.Pos, Name: name, Type: p.parseType()}
	if p.isKw("NOT") {
		p.next()
		p.expectKw("NULL", "NULL after NOT")
		cd.NotNull = true
	}
	return cd
}

// parseCreateStreaming parses the rest of
// CREATE [OR REFRESH] STREAMING TABLE name [TBLPROPERTIES (...)] AS query.
func (p *parser) parseCreateStreaming(pos Pos, orRefresh bool) *CreateStreamingTable {
	p.next() // STREAMING
	p.expectKw("TABLE", "TABLE after STREAMING")
	st := &CreateStreamingTable{Pos: pos, OrRefresh: orRefresh}
	st.Name = p.qualifiedName("a table name after STREAMING TABLE")
	if p.acceptKw("TBLPROPERTIES") {
		st.Properties = p.parseProperties("TBLPROPERTIES")
		p.expectKw("AS", "AS and a query after TBLPROPERTIES")
	} else {
		p.expectKw("AS", "TBLPROPERTIES or AS and a query after the table name")
	}
	if !startsQuery(p.peek()) {
		p.unexpected("a query after AS")
	}
	st.Query = p.parseQuery()
	return st
}

// parseProperties parses (key [=] value, ...) after OPTIONS or
// TBLPROPERTIES. Keys are strings or dotted names; values are strings,
// numbers or booleans.
func (p *parser) parseProperties(clause string) []*Property {
	open := p.expect(tLParen, "'(' after "+clause)
	var props []*Property
	for {
		t := p.peek()
		prop := &Property{Pos: t.pos}
		switch {
		case t.kind == tString:
			prop.Key = p.next().text
		case isAnyName(t):
			parts := []string{p.next().text}
			for p.peek().kind == tDot {
				p.next()
				parts = append(parts, p.anyName("a name after '.'").Name)
			}
			prop.Key = strings.Join(parts, ".")
		default:
			p.unexpected("a key in " + clause)
		}
		p.accept(tEq)
		prop.Value = p.propertyValue(prop.Key)
		props = append(props, prop)
		if !p.accept(tComma) {
			break
		}
	}
	if p.peek().kind != tRParen {
		p.unexpected("',' or ')' in " + clause)
	}
	p.closeParen(open)
	return props
}

// propertyValue parses a string, a possibly signed number, or TRUE/FALSE.
func (p *parser) propertyValue(key string) string {
	t := p.peek()
	switch {
	case t.kind == tString:
		// One literal only: adjacent strings would swallow the next key.
		return p.next().text
	case t.kind == tNumber:
		p.next()
		return t.text
	case (t.kind == tMinus || t.kind == tPlus) && p.peekAt(1).kind == tNumber:
		p.next()
		n := p.next()
		if t.kind == tMinus {
			return "-" + n.text
		}
		return n.text
	case t.kind == tWord && (t.kw == "TRUE" || t.kw == "FALSE"):
		p.next()
		return strings.ToLower(t.kw)
	}
	p.unexpected("a string, number or boolean value for '" + truncate(key) + "'")
	return ""
}

// stringValue consumes one or more adjacent string literals and returns
// their concatenation, as Spark does ('a' 'b' is 'ab').
func (p *parser) stringValue() string {
	s := p.next().text
	if p.peek().kind != tString {
		return s
	}
	var b strings.Builder
	b.WriteString(s)
	for p.peek().kind == tString {
		b.WriteString(p.next().text)
	}
	return b.String()
}

// parseDrop parses DROP TABLE [IF EXISTS] name.
func (p *parser) parseDrop() Statement {
	drop := p.next()
	if wordIs(p.peek(), "DATABASE", "SCHEMA") {
		return p.parseDropDatabase(drop.pos)
	}
	d := &DropTable{Pos: drop.pos}
	if !p.acceptKw("VIEW") {
		p.expectKw("TABLE", "TABLE, VIEW or DATABASE after DROP")
	} else {
		d.View = true
	}
	if p.isKw("IF") && p.isKwAt(1, "EXISTS") {
		p.next()
		p.next()
		d.IfExists = true
	}
	d.Name = p.qualifiedName("a table or view name after DROP")
	return d
}

// parseDescribe parses DESCRIBE [TABLE] name, DESCRIBE HISTORY name and
// DESCRIBE FUNCTION [EXTENDED] name.
// HISTORY is a keyword only when a name follows it, so a table called
// history can still be described.
func (p *parser) parseDescribe() Statement {
	d := p.next()
	if p.isKw("HISTORY") && isName(p.peekAt(1)) {
		p.next()
		return &DescribeHistory{Pos: d.pos, Name: p.qualifiedName("a table name after DESCRIBE HISTORY")}
	}
	if isWord(p.peek(), "FUNCTION") && describesFunction(p.peekAt(1)) {
		return p.parseDescribeFunction(d.pos)
	}
	if wordIs(p.peek(), "QUERY") && startsQuery(p.peekAt(1)) {
		p.next()
	}
	if startsQuery(p.peek()) {
		return &DescribeQuery{Pos: d.pos, Query: p.parseQuery()}
	}
	p.acceptKw("TABLE")
	desc := &Describe{Pos: d.pos}
	// DESC EXTENDED t, DESC FORMATTED t; a table named extended is still
	// DESC extended (no name follows).
	if wordIs(p.peek(), "EXTENDED", "FORMATTED") && isName(p.peekAt(1)) {
		desc.Option = strings.ToUpper(p.next().text)
	}
	desc.Name = p.qualifiedName("a table name after DESCRIBE")
	if isName(p.peek()) {
		desc.Column = p.qualifiedName("a column name after the table name")
	}
	return desc
}

// parseSet parses SET key [= value], Spark's way of changing (or, without
// a value, showing) a session setting: the key is a dotted name, the value
// a quoted string or the raw text of the remaining tokens (true, UTC,
// America/Los_Angeles, +01:00).
func (p *parser) parseSet() *Set {
	start := p.next()
	st := &Set{Pos: start.pos}
	if isWord(p.peek(), "TIME") && isWord(p.peekAt(1), "ZONE") {
		return p.parseSetTimeZone(st)
	}
	var key strings.Builder
	prev := tEOF
	for k := p.peek().kind; k != tEq && k != tEOF && k != tSemi; k = p.peek().kind {
		t := p.next()
		if (t.kind == tWord || t.kind == tDot) && t.kind != prev {
			key.WriteString(t.raw)
			prev = t.kind
			continue
		}
		p.failAt(t.pos, "expected a setting name and = after SET, found %s", describe(*t))
	}
	if key.Len() == 0 {
		p.failAt(start.pos, "expected a setting name after SET")
	}
	st.Key = key.String()
	if p.peek().kind != tEq {
		return st
	}
	p.next()
	st.HasValue = true
	var val strings.Builder
	for p.peek().kind != tEOF && p.peek().kind != tSemi {
		t := p.next()
		if t.kind == tString {
			val.WriteString(t.text)
			continue
		}
		val.WriteString(t.raw)
	}
	st.Value = val.String()
	return st
}

// parseSetTimeZone parses the rest of SET TIME ZONE 'zone' | INTERVAL … |
// LOCAL, Spark's spelling of SET spark.sql.session.timeZone: an interval
// is a fixed offset of whole seconds within ±18 hours, written as Java's
// ZoneOffset (+10:00, +15:40:32, Z). LOCAL, the JVM's default zone, has
// no counterpart here and is refused.
func (p *parser) parseSetTimeZone(st *Set) *Set {
	p.next()
	p.next()
	st.Key, st.HasValue = "spark.sql.session.timeZone", true
	end := func() bool { k := p.peek().kind; return k == tEOF || k == tSemi }
	t := p.peek()
	switch {
	case t.kind == tString:
		p.next()
		st.Value = t.text
	case isWord(t, "LOCAL"):
		p.failAt(t.pos, "SET TIME ZONE LOCAL (the JVM's default time zone) is not supported: name the zone, as SET TIME ZONE 'America/Los_Angeles'")
	case p.isKw("INTERVAL"):
		e := p.parseExprWhat("an interval after SET TIME ZONE")
		lit, ok := e.(*IntervalLit)
		if !ok {
			p.failAt(t.pos, "expected an interval literal after SET TIME ZONE")
		}
		iv, err := lit.Value()
		if err != nil {
			p.failAt(t.pos, "%v", err)
		}
		us, err := iv.Fixed()
		const maxOffset = 18 * 3600 * 1_000_000
		if err != nil || iv.Months != 0 || us%1_000_000 != 0 || us > maxOffset || us < -maxOffset {
			p.failAt(t.pos, "The interval value must be in the range of [-18, +18] hours with second precision")
		}
		st.Value = zoneOffsetText(us / 1_000_000)
	}
	if st.Value == "" || !end() {
		p.failAt(st.Pos, "Invalid time zone displacement value")
	}
	return st
}

// zoneOffsetText is Java's ZoneOffset text of an offset in seconds: Z,
// +hh:mm or +hh:mm:ss.
func zoneOffsetText(secs int64) string {
	if secs == 0 {
		return "Z"
	}
	sign := byte('+')
	if secs < 0 {
		sign, secs = '-', -secs
	}
	s := fmt.Sprintf("%c%02d:%02d", sign, secs/3600, secs/60%60)
	if secs%60 != 0 {
		s += fmt.Sprintf(":%02d", secs%60)
	}
	return s
}

// parseInsert parses INSERT INTO [TABLE] name [(col, ...)] query and
// INSERT OVERWRITE [TABLE] name [(col, ...)] query.
func (p *parser) parseInsert() *Insert {
	ins := &Insert{Pos: p.next().pos}
	if p.acceptKw("OVERWRITE") {
		ins.Overwrite = true
	} else {
		p.expectKw("INTO", "INTO or OVERWRITE after INSERT")
	}
	p.acceptKw("TABLE")
	ins.Name = p.qualifiedName("a table name after INSERT INTO")
	if p.peek().kind == tLParen && !startsQuery(p.peekAt(1)) {
		ins.Columns = p.identList("before the inserted column names")
	}
	if !startsQuery(p.peek()) {
		p.unexpected("a query or VALUES after the table name")
	}
	ins.Query = p.parseQuery()
	return ins
}

// parseShowFunctions parses the rest of SHOW [USER|SYSTEM|ALL] FUNCTIONS
// [[LIKE] 'pattern'] after SHOW; nil when the statement is not SHOW
// FUNCTIONS (FUNCTIONS, USER, SYSTEM and ALL are not reserved here).
func (p *parser) parseShowFunctions(pos Pos) *ShowFunctions {
	sf := &ShowFunctions{Pos: pos, Scope: "ALL"}
	switch {
	case isWord(p.peek(), "FUNCTIONS"):
		p.next()
	case (isWord(p.peek(), "USER") || isWord(p.peek(), "SYSTEM") || p.isKw("ALL")) && isWord(p.peekAt(1), "FUNCTIONS"):
		sf.Scope = strings.ToUpper(p.next().text)
		p.next()
	default:
		return nil
	}
	p.acceptKw("LIKE")
	if t := p.peek(); t.kind == tString {
		sf.Pattern, sf.HasLike = p.next().text, true
	}
	return sf
}

// describesFunction reports whether t, after DESCRIBE FUNCTION, starts a
// function name (so that a table called function can still be described):
// a word, a quoted name, a string or an operator such as +.
func describesFunction(t *token) bool {
	switch t.kind {
	case tEOF, tErr, tSemi, tLParen, tRParen, tComma, tDot:
		return false
	}
	return true
}

// parseDescribeFunction parses the rest of DESCRIBE FUNCTION [EXTENDED]
// name after DESCRIBE; name is a word (reserved ones too: DESC FUNCTION
// boolean), a `quoted` name, a 'string' or an operator.
func (p *parser) parseDescribeFunction(pos Pos) *DescribeFunction {
	p.next() // FUNCTION
	df := &DescribeFunction{Pos: pos}
	if isWord(p.peek(), "EXTENDED") && describesFunction(p.peekAt(1)) {
		p.next()
		df.Extended = true
	}
	t := p.next()
	df.Name = t.text
	if df.Name == "" { // an operator: its text as written
		df.Name = t.raw
	}
	return df
}
