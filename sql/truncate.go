package sql

// Truncate is TRUNCATE TABLE name: remove every row of a table, keeping
// the table (Spark's TruncateTableCommand). TRUNCATE is a statement word
// only in first position, so tables and columns may still be called
// truncate. A PARTITION clause is not parsed (the engine's tables have no
// partitions).
type Truncate struct {
	Pos
	Name []Ident
}

func (*Truncate) stmtNode() {}

// parseTruncate parses TRUNCATE TABLE name.
func (p *parser) parseTruncate() Statement {
	t := &Truncate{Pos: p.next().pos}
	p.expectKw("TABLE", "TABLE after TRUNCATE")
	t.Name = p.qualifiedName("a table name after TRUNCATE TABLE")
	return t
}

// truncate writes t back as SQL.
func (f *formatter) truncate(t *Truncate) {
	f.str("TRUNCATE TABLE ")
	f.names(t.Name)
}
