package plan

import (
	"github.com/apache/arrow/go/v17/arrow"
)

// Node is a logical plan operator. Schema is its output; Children are its
// inputs (none for a leaf); IsStreaming reports whether it reads a
// streaming source, directly or below; String is its one-line EXPLAIN
// description (without children). Nodes are immutable once built: the
// optimizer builds new ones.
type Node interface {
	Schema() *arrow.Schema
	Children() []Node
	IsStreaming() bool
	String() string
}

// JoinType is the kind of a Join.
type JoinType int

// The join types. Semi and anti joins output the left columns only.
const (
	InnerJoin JoinType = iota
	LeftOuterJoin
	RightOuterJoin
	FullOuterJoin
	LeftSemiJoin
	LeftAntiJoin
)

var joinTypeNames = map[JoinType]string{
	InnerJoin: "Inner", LeftOuterJoin: "LeftOuter", RightOuterJoin: "RightOuter",
	FullOuterJoin: "FullOuter", LeftSemiJoin: "LeftSemi", LeftAntiJoin: "LeftAnti",
}

// OutputMode is a streaming query's output mode; the values match
// arrowstream.OutputMode.
type OutputMode int

// The output modes.
const (
	Append OutputMode = iota
	Update
	Complete
)

var outputModeNames = map[OutputMode]string{Append: "Append", Update: "Update", Complete: "Complete"}

// GroupStateTimeout is the timeout kind of a FlatMapGroupsWithState.
type GroupStateTimeout int

// The timeouts.
const (
	NoTimeout GroupStateTimeout = iota
	ProcessingTimeTimeout
	EventTimeTimeout
)

var timeoutNames = map[GroupStateTimeout]string{
	NoTimeout: "NoTimeout", ProcessingTimeTimeout: "ProcessingTimeTimeout", EventTimeTimeout: "EventTimeTimeout",
}

// ReadKind says which rows of a table a Scan reads.
type ReadKind int

// The read kinds.
const (
	// ReadCurrent reads the table's current contents (or, streaming, its
	// new rows per epoch).
	ReadCurrent ReadKind = iota
	// ReadVersion reads the table as of a version (VERSION AS OF n: a sink
	// table's epoch).
	ReadVersion
	// ReadChanges reads the rows committed after epoch From up to epoch To
	// (-1: the latest), with _epoch and _commit_timestamp columns
	// (table_changes).
	ReadChanges
)

// Scan reads a catalog table. Streaming scans read a source per epoch; the
// streaming engine substitutes the epoch's data for them. The optimizer
// may push Filters (over the table's columns) and a column selection into
// a batch scan: the output is then the table's Columns (all when nil),
// after Filters.
type Scan struct {
	Name      string // the table's name as written
	Table     Table
	Streaming bool
	Read      ReadKind
	Version   int64 // ReadVersion
	From, To  int64 // ReadChanges
	Filters   []Expr
	Columns   []int
	schema    *arrow.Schema
}

// Values is a relation of literal rows (SELECT without FROM, static test
// data). Rows hold canonical Go values (see Literal).
type Values struct {
	Rows   [][]any
	schema *arrow.Schema
}

// SubqueryAlias names its input (FROM (...) AS t, the DataFrame API's
// alias) so that qualified names t.col resolve. It changes nothing else.
type SubqueryAlias struct {
	Input Node
	Alias string
}

// Project computes one output column per expression.
type Project struct {
	Input  Node
	Exprs  []NamedExpr
	schema *arrow.Schema
}

// Filter keeps the rows for which Cond is true.
type Filter struct {
	Input Node
	Cond  Expr
}

// Aggregate groups its input by GroupBy and computes Aggs per group. The
// output is the grouping columns then one column per aggregate. With no
// GroupBy it is a global aggregate (one row).
type Aggregate struct {
	Input   Node
	GroupBy []NamedExpr
	Aggs    []AggregateExpr
	schema  *arrow.Schema
}

// Join joins Left and Right. Cond is over the left columns followed by the
// right ones (nil: every pair). The output is the left columns then the
// right ones (only the left ones for semi and anti joins). Using records
// the USING columns it was written with, for EXPLAIN; the analyzer has
// already turned them into Cond and a Project above.
type Join struct {
	Left, Right Node
	Type        JoinType
	Cond        Expr
	Using       []string
	schema      *arrow.Schema
}

// Union concatenates inputs with the same column types (UNION ALL); names
// come from the first input.
type Union struct {
	Inputs []Node
	schema *arrow.Schema
}

// Limit keeps N rows after skipping Offset rows.
type Limit struct {
	Input  Node
	N      int64
	Offset int64
}

// Sort orders its input by Keys. Local is SORT BY's sort (Spark's Sort
// with global = false): Spark orders each partition only, so the result
// as a whole has no order a reader may rely on. The engine sorts its one
// partition all the same.
type Sort struct {
	Input Node
	Keys  []SortKey
	Local bool
}

// Deduplicate drops rows whose Keys (column ordinals; all columns when
// empty) were seen before: dropDuplicates, or with WithinWatermark
// dropDuplicatesWithinWatermark.
type Deduplicate struct {
	Input           Node
	Keys            []int
	WithinWatermark bool
}

// EventTimeWatermark declares column Column (a timestamp) the event time
// with a watermark delay. Its output is its input with the column's field
// metadata carrying WatermarkDelayKey (and the key removed from other
// columns), as Spark's EventTimeWatermark.
type EventTimeWatermark struct {
	Input   Node
	Column  int
	DelayMs int64
	schema  *arrow.Schema
}

// WindowAssign appends a window struct column {start, end} named Name:
// window(Time, Width, Slide, Start), durations in microseconds. Sliding
// windows give a row once per window containing it.
type WindowAssign struct {
	Input               Node
	Time                Expr
	Width, Slide, Start int64
	Name                string
	schema              *arrow.Schema
}

// SessionWindow appends a session window struct column {start, end} named
// Name: initially [Time, Time + gap) per row; sessions of the same
// grouping key merge in the Aggregate above (the streaming engine's
// session-window aggregation). The gap is Gap, or with GapExpr set the
// row's value of GapExpr (an interval, or a string such as '5 seconds');
// rows whose gap is null, invalid or not positive are dropped, as
// Spark's SessionWindowing filters them.
type SessionWindow struct {
	Input   Node
	Time    Expr
	Gap     int64 // microseconds; unused with GapExpr
	GapExpr Expr  // a per-row gap (interval or string), or nil
	Name    string
	schema  *arrow.Schema
}

// Explode appends a column Name with one row per element of the array
// Expr (explode; with Outer, explode_outer).
type Explode struct {
	Input  Node
	Expr   Expr
	Name   string
	Outer  bool
	schema *arrow.Schema
}

// FlatMapGroupsWithState groups its input by Keys and calls a user
// function per group with its state (groupByKey(...).flatMapGroupsWithState
// or, with MapGroups, mapGroupsWithState). Func is the engine's handle for
// the function; OutputSchema is what the function produces.
type FlatMapGroupsWithState struct {
	Input        Node
	Keys         []NamedExpr
	Func         any
	FuncName     string
	OutputSchema *arrow.Schema
	Mode         OutputMode // the function's output mode
	Timeout      GroupStateTimeout
	MapGroups    bool
}

// Children implementations.

// Children implements Node.
func (*Scan) Children() []Node { return nil }

// Children implements Node.
func (*Values) Children() []Node { return nil }

// Children implements Node.
func (n *SubqueryAlias) Children() []Node { return []Node{n.Input} }

// Children implements Node.
func (n *Project) Children() []Node { return []Node{n.Input} }

// Children implements Node.
func (n *Filter) Children() []Node { return []Node{n.Input} }

// Children implements Node.
func (n *Aggregate) Children() []Node { return []Node{n.Input} }

// Children implements Node.
func (n *Join) Children() []Node { return []Node{n.Left, n.Right} }

// Children implements Node.
func (n *Union) Children() []Node { return n.Inputs }

// Children implements Node.
func (n *Limit) Children() []Node { return []Node{n.Input} }

// Children implements Node.
func (n *Sort) Children() []Node { return []Node{n.Input} }

// Children implements Node.
func (n *Deduplicate) Children() []Node { return []Node{n.Input} }

// Children implements Node.
func (n *EventTimeWatermark) Children() []Node { return []Node{n.Input} }

// Children implements Node.
func (n *WindowAssign) Children() []Node { return []Node{n.Input} }

// Children implements Node.
func (n *SessionWindow) Children() []Node { return []Node{n.Input} }

// Children implements Node.
func (n *Explode) Children() []Node { return []Node{n.Input} }

// Children implements Node.
func (n *FlatMapGroupsWithState) Children() []Node { return []Node{n.Input} }

// IsStreaming implements Node.
func (n *Scan) IsStreaming() bool { return n.Streaming }

// IsStreaming implements Node.
func (*Values) IsStreaming() bool { return false }

// IsStreaming implements Node.
func (n *SubqueryAlias) IsStreaming() bool { return n.Input.IsStreaming() }

// IsStreaming implements Node.
func (n *Project) IsStreaming() bool { return n.Input.IsStreaming() }

// IsStreaming implements Node.
func (n *Filter) IsStreaming() bool { return n.Input.IsStreaming() }

// IsStreaming implements Node.
func (n *Aggregate) IsStreaming() bool { return n.Input.IsStreaming() }

// IsStreaming implements Node.
func (n *Join) IsStreaming() bool { return n.Left.IsStreaming() || n.Right.IsStreaming() }

// IsStreaming implements Node.
func (n *Union) IsStreaming() bool {
	for _, in := range n.Inputs {
		if in.IsStreaming() {
			return true
		}
	}
	return false
}

// IsStreaming implements Node.
func (n *Limit) IsStreaming() bool { return n.Input.IsStreaming() }

// IsStreaming implements Node.
func (n *Sort) IsStreaming() bool { return n.Input.IsStreaming() }

// IsStreaming implements Node.
func (n *Deduplicate) IsStreaming() bool { return n.Input.IsStreaming() }

// IsStreaming implements Node.
func (n *EventTimeWatermark) IsStreaming() bool { return n.Input.IsStreaming() }

// IsStreaming implements Node.
func (n *WindowAssign) IsStreaming() bool { return n.Input.IsStreaming() }

// IsStreaming implements Node.
func (n *SessionWindow) IsStreaming() bool { return n.Input.IsStreaming() }

// IsStreaming implements Node.
func (n *Explode) IsStreaming() bool { return n.Input.IsStreaming() }

// IsStreaming implements Node.
func (n *FlatMapGroupsWithState) IsStreaming() bool { return n.Input.IsStreaming() }
