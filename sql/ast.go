package sql

import "fmt"

// Pos is a position in the source text: a 1-based line and a 1-based
// column counted in characters. The zero Pos means "no position" (nodes
// built by hand rather than parsed).
type Pos struct {
	Line, Col int
}

// Position returns p; embedding Pos gives every node its Position method.
func (p Pos) Position() Pos { return p }

// String renders p as "LINE:COL".
func (p Pos) String() string { return fmt.Sprintf("%d:%d", p.Line, p.Col) }

// Node is any node of the syntax tree. Position is where the node's text
// starts in the source.
type Node interface {
	Position() Pos
}

// Ident is a name: a column, table, alias, function or struct field.
// Name keeps the spelling of the source (without backquotes); names are
// compared case-insensitively by later stages, as Spark does.
type Ident struct {
	Pos
	Name string
	// Quoted: written in backquotes (a regex column name under
	// spark.sql.parser.quotedRegexColumnNames).
	Quoted bool
}

// Statement is one SQL statement: *CreateTable, *CreateStreamingTable,
// *Query (a SELECT), *Explain, *DropTable, *ShowTables, *Describe or
// *DescribeHistory.
type Statement interface {
	Node
	stmtNode()
}

// CreateTable is CREATE TABLE [IF NOT EXISTS] name [(col TYPE, ...)]
// USING format [OPTIONS (key 'value', ...)]: a source or static table.
type CreateTable struct {
	Pos
	OrReplace   bool // CREATE OR REPLACE TABLE
	IfNotExists bool
	Name        []Ident      // possibly qualified
	Columns     []*ColumnDef // nil when the column list is left out
	Using       []Ident      // the data source format, such as rate or `rate-micro-batch`; nil: Spark's default (parquet)
	Options     []*Property
	// Query is the query of CREATE TABLE ... AS query (CTAS); nil without
	// AS. Spark refuses a column list with it.
	Query *Query
}

// ColumnDef is one column of CREATE TABLE: name TYPE [NOT NULL].
type ColumnDef struct {
	Pos
	Name    Ident
	Type    *TypeName
	NotNull bool
}

// Property is one key/value pair of OPTIONS or TBLPROPERTIES. Key is the
// key as written (an identifier path such as kafka.bootstrap.servers, or a
// string's contents); Value is a string's contents or the text of a number
// or boolean.
type Property struct {
	Pos
	Key   string
	Value string
}

// CreateStreamingTable is CREATE [OR REFRESH] STREAMING TABLE name
// [TBLPROPERTIES (...)] AS query: a streaming query whose sink is the
// memory-sink table name.
type CreateStreamingTable struct {
	Pos
	OrRefresh  bool
	OrReplace  bool // CREATE OR REPLACE STREAMING TABLE: start over
	Name       []Ident
	Properties []*Property
	Query      *Query
}

// Explain is EXPLAIN [EXTENDED] statement.
type Explain struct {
	Pos
	Extended bool
	Stmt     Statement
}

// DropTable is DROP TABLE [IF EXISTS] name.
type DropTable struct {
	Pos
	IfExists bool
	View     bool // DROP VIEW
	Name     []Ident
}

// Set is SET key = value (a session setting), or SET key to show one.
// Key and Value are the text as written, without spaces between tokens;
// a quoted value is its string.
type Set struct {
	Pos
	Key      string
	Value    string
	HasValue bool
}

// Insert is INSERT INTO [TABLE] name query (the query may be VALUES).
type Insert struct {
	Pos
	Overwrite bool // INSERT OVERWRITE: the rows replace the table's
	Name      []Ident
	Columns   []Ident // INSERT INTO t (c1, c2) ...; nil without a list
	Query     *Query
}

// CreateView is CREATE [OR REPLACE] [GLOBAL] TEMPORARY VIEW [IF NOT
// EXISTS] name [(col, ...)] AS query: a name for a query, analyzed again
// wherever it is read.
type CreateView struct {
	Pos
	OrReplace   bool
	Global      bool
	IfNotExists bool
	Name        []Ident
	Columns     []Ident // nil when absent
	Query       *Query
}

// ShowTables is SHOW TABLES.
type ShowTables struct {
	Pos
}

// ShowFunctions is SHOW [USER|SYSTEM|ALL] FUNCTIONS [[LIKE] 'pattern'].
type ShowFunctions struct {
	Pos
	Scope   string // "USER", "SYSTEM" or "ALL" (the default)
	Pattern string // Spark's pattern: * any characters, | alternatives
	HasLike bool   // a pattern was given
}

// Describe is DESCRIBE [TABLE] name (DESC is a synonym of DESCRIBE).
type Describe struct {
	Pos
	Name []Ident
	// Option is "EXTENDED" or "FORMATTED" when written (the same for a
	// column: its statistics too), else "".
	Option string
	// Column is the column described (DESC t col, its parts as written:
	// a qualified t.col, or a nested col.x that is refused), nil for the
	// whole table.
	Column []Ident
}

// DescribeFunction is DESCRIBE FUNCTION [EXTENDED] name (DESC is a
// synonym of DESCRIBE): the function's kind and usage.
type DescribeFunction struct {
	Pos
	Name     string // as written (a word, quoted name, string or operator)
	Extended bool
}

// DescribeHistory is DESCRIBE HISTORY name: the committed epochs of a sink
// table.
type DescribeHistory struct {
	Pos
	Name []Ident
}

// Query is a complete query expression: optional common table
// expressions, a body, and the ORDER BY and LIMIT that apply to the whole
// body (to a whole UNION, as in Spark). A SELECT statement is a *Query.
type Query struct {
	Pos
	With    []*CTE
	Body    QueryBody
	OrderBy []*OrderItem
	// SortBy is SORT BY (Hive's, Spark's Sort with global = false): a
	// sort within each partition, so the result as a whole is not
	// ordered. DistributeBy is DISTRIBUTE BY's expressions (a
	// repartition, no order). CLUSTER BY e, ... sets both (e ascending)
	// and Cluster. None of them goes with ORDER BY.
	SortBy       []*OrderItem
	DistributeBy []Expr
	Cluster      bool
	Limit        Expr // nil when absent
	Offset       Expr // OFFSET n: rows skipped before the limit applies; nil when absent
}

// QueryBody is what a Query computes before ordering: a *Select, a *Union,
// or a parenthesized *Query that has its own WITH, ORDER BY or LIMIT.
// (Parentheses around a query that has none of those are not kept.)
type QueryBody interface {
	Node
	queryBodyNode()
}

// CTE is one common table expression: name [(col, ...)] AS (query).
type CTE struct {
	Pos
	Name    Ident
	Columns []Ident // nil when absent
	Query   *Query
}

// Select is one SELECT block.
type Select struct {
	Pos
	Distinct bool
	Items    []*SelectItem
	From     []FromItem // comma-separated items; nil when there is no FROM
	Where    Expr       // nil when absent
	GroupBy  []Expr
	// GroupingSets are the grouping sets of GROUPING SETS, CUBE or
	// ROLLUP, each a list of GroupBy's expressions (the same nodes); nil
	// for a plain GROUP BY.
	GroupingSets [][]Expr
	// GroupByListLen is, for the Hive form GROUP BY a, b GROUPING SETS
	// (...), how many of GroupBy's expressions are the list before
	// GROUPING SETS (the grouping columns); the rest are set expressions
	// written differently, which must resolve to one of them. 0 otherwise.
	GroupByListLen int
	// GroupByAll is GROUP BY ALL: group by every select item that has no
	// aggregate.
	GroupByAll bool
	Having     Expr           // nil when absent
	Windows    []*NamedWindow // WINDOW w AS (...), ...
	Qualify    Expr           // nil when absent
}

// SelectItem is expr [[AS] alias] in a select list. Expr is a *Star for *
// and t.*.
type SelectItem struct {
	Pos
	Expr  Expr
	Alias *Ident // nil when absent
}

// Union is left UNION [ALL | DISTINCT] right, or with Op the other set
// operations: EXCEPT (also written MINUS) and INTERSECT. They associate to
// the left; INTERSECT binds tighter than UNION and EXCEPT.
type Union struct {
	Pos
	Op          SetOp
	All         bool
	Left, Right QueryBody
}

// SetOp is the operation of a Union node.
type SetOp uint8

// The set operations.
const (
	SetUnion SetOp = iota
	SetExcept
	SetIntersect
)

func (o SetOp) String() string {
	return [...]string{"UNION", "EXCEPT", "INTERSECT"}[o]
}

// Values is VALUES (e, ...), (e, ...): literal rows, as a query body or,
// wrapped in a SubqueryRef, a FROM item. A row without parentheses is one
// column.
type Values struct {
	Pos
	Rows [][]Expr
}

// NullsOrder is where ORDER BY puts nulls.
type NullsOrder uint8

const (
	NullsDefault NullsOrder = iota // first when ascending, last when descending (Spark's rule)
	NullsFirst
	NullsLast
)

// OrderItem is expr [ASC | DESC] [NULLS FIRST | NULLS LAST].
type OrderItem struct {
	Pos
	Expr  Expr
	Desc  bool
	Nulls NullsOrder
}

// FromItem is an item of a FROM clause: *TableRef, *SubqueryRef,
// *TableFunc, *Join, *Pivot or *Unpivot.
type FromItem interface {
	Node
	fromItemNode()
}

// TableRef names a table: name [VERSION AS OF n], or STREAM name (also
// written STREAM(name)), which reads the table as a stream, each followed by
// an optional watermark clause and alias.
type TableRef struct {
	Pos
	Stream    bool
	Name      []Ident
	Version   *Literal // VERSION AS OF: an integer or string literal; nil when absent
	Watermark *Watermark
	Alias     *Ident
	Columns   []Ident // column aliases: t AS x(a, b); nil when absent
}

// SubqueryRef is [LATERAL] (query) [watermark clause] [[AS] alias]. A
// LATERAL subquery may reference the columns of the FROM items before it.
type SubqueryRef struct {
	Pos
	Lateral   bool
	Query     *Query
	Watermark *Watermark
	Alias     *Ident
	Columns   []Ident // column aliases: AS t(a, b); nil when absent
}

// TableFunc is a table-valued function call such as
// table_changes('counts', 10), with an optional watermark clause and alias.
type TableFunc struct {
	Pos
	Name      Ident
	Args      []Expr
	Watermark *Watermark
	Alias     *Ident
	Columns   []Ident // range(1, 5) t(i): the alias's column names; nil when absent
}

// JoinKind is the kind of a join.
type JoinKind uint8

const (
	JoinInner JoinKind = iota
	JoinCross
	JoinLeft  // LEFT [OUTER]
	JoinRight // RIGHT [OUTER]
	JoinFull  // FULL [OUTER]
	JoinSemi  // [LEFT] SEMI
	JoinAnti  // [LEFT] ANTI
)

// String returns the join's SQL spelling, such as "LEFT OUTER JOIN".
func (k JoinKind) String() string {
	switch k {
	case JoinInner:
		return "JOIN"
	case JoinCross:
		return "CROSS JOIN"
	case JoinLeft:
		return "LEFT OUTER JOIN"
	case JoinRight:
		return "RIGHT OUTER JOIN"
	case JoinFull:
		return "FULL OUTER JOIN"
	case JoinSemi:
		return "LEFT SEMI JOIN"
	case JoinAnti:
		return "LEFT ANTI JOIN"
	}
	return fmt.Sprintf("JoinKind(%d)", uint8(k))
}

// Join is left kind JOIN right [ON cond | USING (cols)]. Joins associate
// to the left. At most one of On and Using is set; neither is set for a
// join without a condition (a cross product, as in Spark).
type Join struct {
	Pos
	Kind        JoinKind
	Natural     bool // NATURAL: USING the columns both sides have
	Left, Right FromItem
	On          Expr
	Using       []Ident
}

// Watermark is the watermark clause of a FROM item:
// WATERMARK expr [AS name] DELAY OF interval. With a name, the expression
// becomes a column of the FROM item; without one, Expr names an existing
// column.
type Watermark struct {
	Pos
	Expr  Expr
	Name  *Ident // nil when absent
	Delay *IntervalLit
}

func (*CreateTable) stmtNode()          {}
func (*CreateStreamingTable) stmtNode() {}
func (*Query) stmtNode()                {}
func (*Explain) stmtNode()              {}
func (*DropTable) stmtNode()            {}
func (*ShowTables) stmtNode()           {}
func (*ShowFunctions) stmtNode()        {}
func (*Describe) stmtNode()             {}
func (*DescribeHistory) stmtNode()      {}
func (*DescribeFunction) stmtNode()     {}
func (*CreateView) stmtNode()           {}
func (*Set) stmtNode()                  {}
func (*Insert) stmtNode()               {}

func (*Select) queryBodyNode() {}
func (*Union) queryBodyNode()  {}
func (*Query) queryBodyNode()  {}
func (*Values) queryBodyNode() {}

func (*TableRef) fromItemNode()    {}
func (*SubqueryRef) fromItemNode() {}
func (*TableFunc) fromItemNode()   {}
func (*Join) fromItemNode()        {}
func (*Pivot) fromItemNode()       {}
func (*Unpivot) fromItemNode()     {}
