package plan

import (
	"time"

	"github.com/apache/arrow/go/v17/arrow"

	"github.com/arrowstream/arrowstream/vector"
)

// Expr is a resolved, typed scalar expression over the output of a plan
// node's input (for a Join, over the left columns followed by the right
// ones). Exprs are immutable: rewrites build new trees.
//
// The kinds are *ColumnRef, *Literal, *Call, *Cast, *GetField, *Case and
// *CurrentTimestamp. Aggregate calls are not Exprs: they live only in an
// Aggregate node (AggregateExpr), and the expressions above an Aggregate
// reference its output columns.
type Expr interface {
	// DataType is the Arrow type of the expression's values.
	DataType() arrow.DataType
	// Nullable reports whether the expression may be NULL.
	Nullable() bool
	// String renders the expression in the SQL dialect, as EXPLAIN and
	// error messages show it.
	String() string
	// Children returns the direct sub-expressions.
	Children() []Expr
	exprNode()
}

// ColumnRef references column Index of the input schema. Name is the
// column's name there (for rendering only; the ordinal is what counts).
type ColumnRef struct {
	Index int
	Name  string
	Type  arrow.DataType
	Null  bool // the column is nullable
	// dt is a day-time interval column's type fields where its schema
	// field carries them (DTFieldsKey); 0 is unknown.
	dt dtFields
}

// Literal is a constant. Value is in vector's canonical Go form of Type
// (int32, int64, float64, string, bool, []byte, arrow.Timestamp,
// arrow.Date32, decimal128.Num; arrow.Duration microseconds for intervals),
// nil for NULL.
type Literal struct {
	Value any
	Type  arrow.DataType
	// wallClock marks a TIMESTAMP '...' literal without a zone, read as
	// UTC by the parser: applyOptions re-reads it in the session time zone.
	wallClock bool
	// ymFields is the field range of a year-month interval literal
	// (INTERVAL '1' YEAR, INTERVAL '3' MONTH), which its cast to a
	// string shows.
	ymFields vector.YMFields
	// dayField marks a day-time interval literal of DAY (or WEEK) fields
	// only (INTERVAL '2' DAY): Spark types it INTERVAL DAY, and a date
	// plus or minus it stays a date.
	dayField bool
	// dtFields are the fields of a day-time interval literal's type (0:
	// unknown), which its cast to a string shows.
	dtFields dtFields
	// castValue marks the value of an explicit CAST to the literal's own
	// type (cast(1 AS int)): Spark's DecimalPrecision does not treat it
	// as a literal of the query (see coerce_arith.go).
	castValue bool
}

// Call is an operator or function application. Func is the canonical
// lower-case name: an operator (+ - * / % negative = <> < <= > >= <=> and
// or not isnull isnotnull in between like) or a function of docs/sql.md
// (coalesce, lower, window_time, ...). For "in" the first argument is the
// value and the rest the list; for "between" the arguments are value,
// low, high.
type Call struct {
	Func string
	Args []Expr
	Type arrow.DataType
	Null bool
	// Mode and Loc are the session's semantics (see Options): ANSI or not
	// (try_ functions are ModeTry), and the time zone (nil is UTC).
	Mode vector.EvalMode
	Loc  *time.Location
	// UDF is the user function a call of one calls (Func is its name in
	// lower case); nil for the engine's operators and functions.
	UDF *ScalarFunction

	// typing caches what newCall learnt about the call while typing it, so
	// that typing the call's parent costs one node, not a walk of the
	// subtree (see inferType). The zero value means "not known".
	typing callTyping
}

// Cast converts X to type To (CAST(X AS To)); the analyzer also inserts
// it for Spark's implicit conversions.
type Cast struct {
	X    Expr
	To   arrow.DataType
	Mode vector.EvalMode // ANSI (zero), legacy (ANSI off) or try_cast
	Loc  *time.Location  // the session time zone; nil is UTC

	// legacyTo, when set, is the type this implicit cast of a compared
	// operand has under Spark 3's coercion (ANSI off); see
	// legacyComparisonCasts.
	legacyTo arrow.DataType
	// ymFields are the fields of a year-month interval target type
	// (INTERVAL YEAR, MONTH or YEAR TO MONTH).
	ymFields vector.YMFields
	// unnamed marks a cast a user function's builder made, not the
	// query's author: Spark's automatic column names leave it out
	// (udf(k), not CAST(udf(CAST(k AS STRING)) AS INT)).
	unnamed bool
}

// GetField extracts field Index (named Name) of the struct X:
// window.start.
type GetField struct {
	X     Expr
	Index int
	Name  string
}

// When is one WHEN Cond THEN Then arm of a Case.
type When struct {
	Cond, Then Expr
}

// Case is CASE WHEN c1 THEN r1 ... [ELSE e] END (a simple CASE x WHEN v
// is resolved into conditions x = v). Else nil means NULL.
type Case struct {
	Whens []When
	Else  Expr
	Type  arrow.DataType
}

// CurrentTimestamp is current_timestamp(): the epoch's processing time
// (the batch timestamp), the same on replay. It stays a distinct kind so
// that the streaming engine substitutes each epoch's value (see Env); a
// batch query uses its start time.
type CurrentTimestamp struct{}

// NamedExpr is an expression and the name of the column it produces.
type NamedExpr struct {
	Name string
	Expr Expr
}

// SortKey is one ORDER BY term.
type SortKey struct {
	Expr  Expr
	Desc  bool
	Nulls vector.NullOrder // vector.NullsDefault: first when ascending, last when descending
}

// AggregateExpr is one aggregate of an Aggregate node. Args are over the
// Aggregate's input.
type AggregateExpr struct {
	Func        vector.AggFunc
	Args        []Expr
	Distinct    bool
	IgnoreNulls bool
	// Name is the output column's name.
	Name string
	// Type is the result type.
	Type arrow.DataType
}

func (*ColumnRef) exprNode()        {}
func (*Literal) exprNode()          {}
func (*Call) exprNode()             {}
func (*Cast) exprNode()             {}
func (*GetField) exprNode()         {}
func (*Case) exprNode()             {}
func (*CurrentTimestamp) exprNode() {}

// DataType implements Expr.
func (c *ColumnRef) DataType() arrow.DataType { return c.Type }

// Nullable implements Expr.
func (c *ColumnRef) Nullable() bool { return c.Null }

// Children implements Expr.
func (c *ColumnRef) Children() []Expr { return nil }

// DataType implements Expr.
func (l *Literal) DataType() arrow.DataType { return l.Type }

// Nullable implements Expr.
func (l *Literal) Nullable() bool { return l.Value == nil }

// Children implements Expr.
func (l *Literal) Children() []Expr { return nil }

// DataType implements Expr.
func (c *Call) DataType() arrow.DataType { return c.Type }

// Nullable implements Expr.
func (c *Call) Nullable() bool { return c.Null }

// Children implements Expr.
func (c *Call) Children() []Expr { return c.Args }

// DataType implements Expr.
func (c *Cast) DataType() arrow.DataType { return c.To }

// Nullable implements Expr. A cast from a string may fail to parse and
// yield NULL, so it is nullable unless the operand has the target type.
func (c *Cast) Nullable() bool {
	return c.X.Nullable() || !arrow.TypeEqual(vector.Unwrap(c.X.DataType()), c.To) && vector.IsStringLike(c.X.DataType())
}

// Children implements Expr.
func (c *Cast) Children() []Expr { return []Expr{c.X} }

// DataType implements Expr.
func (g *GetField) DataType() arrow.DataType {
	if st, ok := g.X.DataType().(*arrow.StructType); ok && g.Index >= 0 && g.Index < st.NumFields() {
		return st.Field(g.Index).Type
	}
	return arrow.Null
}

// Nullable implements Expr.
func (g *GetField) Nullable() bool {
	if st, ok := g.X.DataType().(*arrow.StructType); ok && g.Index >= 0 && g.Index < st.NumFields() {
		return g.X.Nullable() || st.Field(g.Index).Nullable
	}
	return true
}

// Children implements Expr.
func (g *GetField) Children() []Expr { return []Expr{g.X} }

// DataType implements Expr.
func (c *Case) DataType() arrow.DataType { return c.Type }

// Nullable implements Expr.
func (c *Case) Nullable() bool {
	if c.Else == nil || c.Else.Nullable() {
		return true
	}
	for _, w := range c.Whens {
		if w.Then.Nullable() {
			return true
		}
	}
	return false
}

// Children implements Expr: the conditions and results in order, then
// Else when present.
func (c *Case) Children() []Expr {
	out := make([]Expr, 0, 2*len(c.Whens)+1)
	for _, w := range c.Whens {
		out = append(out, w.Cond, w.Then)
	}
	if c.Else != nil {
		out = append(out, c.Else)
	}
	return out
}

// DataType implements Expr.
func (*CurrentTimestamp) DataType() arrow.DataType { return vector.Timestamp }

// Nullable implements Expr.
func (*CurrentTimestamp) Nullable() bool { return false }

// Children implements Expr.
func (*CurrentTimestamp) Children() []Expr { return nil }

// WithChildren returns a copy of e with its children replaced by kids (as
// Children orders them). It returns e itself when kids are the same.
func WithChildren(e Expr, kids []Expr) Expr {
	old := e.Children()
	same := len(old) == len(kids)
	for i := 0; same && i < len(kids); i++ {
		same = old[i] == kids[i]
	}
	if same {
		return e
	}
	switch x := e.(type) {
	case *Call:
		c := *x
		c.Args = kids
		return &c
	case *Cast:
		c := *x
		c.X = kids[0]
		return &c
	case *GetField:
		return &GetField{X: kids[0], Index: x.Index, Name: x.Name}
	case *Case:
		c := &Case{Type: x.Type, Whens: make([]When, len(x.Whens))}
		for i := range x.Whens {
			c.Whens[i] = When{Cond: kids[2*i], Then: kids[2*i+1]}
		}
		if x.Else != nil {
			c.Else = kids[len(kids)-1]
		}
		return c
	case *aggPlaceholder:
		return x
	case *subqueryExpr:
		return x.withChildren(kids)
	case *winPlaceholder:
		return x.withChildren(kids)
	case *HigherOrder:
		return x.withChildren(kids)
	}
	return e
}

// Transform rewrites e bottom-up: f sees each node after its children have
// been rewritten and returns the replacement (or the node itself).
func Transform(e Expr, f func(Expr) (Expr, error)) (Expr, error) {
	kids := e.Children()
	if len(kids) > 0 {
		var nk []Expr
		for i, k := range kids {
			r, err := Transform(k, f)
			if err != nil {
				return nil, err
			}
			if r != k && nk == nil {
				nk = append(make([]Expr, 0, len(kids)), kids[:i]...)
			}
			if nk != nil {
				nk = append(nk, r)
			}
		}
		if nk != nil {
			e = WithChildren(e, nk)
		}
	}
	return f(e)
}

// Walk calls f for e and every sub-expression, parents first; f returns
// false to skip a node's children.
func Walk(e Expr, f func(Expr) bool) {
	if e == nil || !f(e) {
		return
	}
	for _, k := range e.Children() {
		Walk(k, f)
	}
}

// Columns returns the input ordinals e references, in first-use order.
func Columns(e Expr) []int {
	var out []int
	Walk(e, func(x Expr) bool {
		if c, ok := x.(*ColumnRef); ok {
			for _, o := range out {
				if o == c.Index {
					return true
				}
			}
			out = append(out, c.Index)
		}
		return true
	})
	return out
}

// ColumnOf builds a reference to column i of schema s.
func ColumnOf(s *arrow.Schema, i int) *ColumnRef {
	f := s.Field(i)
	return &ColumnRef{Index: i, Name: f.Name, Type: f.Type, Null: f.Nullable, dt: dtFieldsOfField(f)}
}

// NewLiteral returns a literal whose type follows the Go value as
// vector.Lit does (int → int or bigint, float64 → double, ...).
func NewLiteral(v any) *Literal {
	l := vector.Lit(v)
	return &Literal{Value: l.Value, Type: l.Type}
}

// aggPlaceholder stands for an aggregate call while the analyzer resolves
// a select list that aggregates; it is replaced by a reference to the
// Aggregate's output before the expression leaves the analyzer.
type aggPlaceholder struct {
	index int
	agg   *AggregateExpr
}

func (*aggPlaceholder) exprNode()                  {}
func (p *aggPlaceholder) DataType() arrow.DataType { return p.agg.Type }
func (p *aggPlaceholder) Nullable() bool {
	return p.agg.Func != vector.AggCount && p.agg.Func != vector.AggCountStar
}
func (p *aggPlaceholder) Children() []Expr { return nil }
func (p *aggPlaceholder) String() string   { return p.agg.String() }
