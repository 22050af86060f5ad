package sql

// CreateDatabase is CREATE DATABASE|SCHEMA [IF NOT EXISTS] name [COMMENT
// 'text'] [WITH DBPROPERTIES (...)] (a LOCATION is refused by the parser:
// a database is a namespace of the session, never a directory).
type CreateDatabase struct {
	Pos
	Name        Ident
	IfNotExists bool
	Comment     string
}

// DropDatabase is DROP DATABASE|SCHEMA [IF EXISTS] name [RESTRICT|CASCADE].
type DropDatabase struct {
	Pos
	Name     Ident
	IfExists bool
	Cascade  bool
}

// Use is USE [DATABASE|SCHEMA|NAMESPACE] name: the current database of the
// session, where unqualified table names resolve.
type Use struct {
	Pos
	Name Ident
}

func (*CreateDatabase) stmtNode() {}
func (*DropDatabase) stmtNode()   {}
func (*Use) stmtNode()            {}

// DescribeQuery is DESC[RIBE] [QUERY] query: the query's columns, as
// DESCRIBE shows a table's.
type DescribeQuery struct {
	Pos
	Query *Query
}

// ShowColumns is SHOW COLUMNS {IN|FROM} table [{IN|FROM} database]: the
// table's column names.
type ShowColumns struct {
	Pos
	Table    []Ident
	Database *Ident // nil when absent
}

func (*DescribeQuery) stmtNode() {}
func (*ShowColumns) stmtNode()   {}
