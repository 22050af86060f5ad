package sql

import "fmt"

// Expr is an expression: *ColumnRef, *Star, *Literal, *IntervalLit,
// *UnaryExpr, *BinaryExpr, *IsNull, *Between, *In, *Like, *Case, *Cast,
// *FuncCall, *FieldAccess, *Subscript or *Subquery.
type Expr interface {
	Node
	exprNode()
}

// ColumnRef is a name path: a, t.a, a.b.c, l.window.end. The parser
// cannot tell a table qualifier from a struct field; the analyzer resolves
// the parts as Spark does.
type ColumnRef struct {
	Pos
	Parts []Ident
}

// Star is * or qualifier.* in a select list, and * in count(*).
type Star struct {
	Pos
	Qualifier []Ident // nil for a bare *
}

// LiteralKind is the type of a Literal.
type LiteralKind uint8

const (
	LitNull         LiteralKind = iota
	LitBool                     // TRUE, FALSE
	LitInt                      // an integer that fits INT
	LitBigInt                   // 5L, or an integer too large for INT
	LitSmallInt                 // 5S
	LitTinyInt                  // 5Y
	LitDecimal                  // 1.5, 1.5BD, or an integer too large for BIGINT
	LitFloat                    // 1.5F
	LitDouble                   // 1.5D, 1e3
	LitString                   // 'text' or "text"
	LitBinary                   // X'0AFF'
	LitDate                     // DATE '2026-01-01'
	LitTimestamp                // TIMESTAMP '2026-01-01 00:00:00' (the session's timestamp type)
	LitTimestampNTZ             // TIMESTAMP_NTZ '2026-01-01 00:00:00'
	// LitTimestampLTZ is TIMESTAMP_LTZ '2026-01-01 00:00:00': a TIMESTAMP
	// whatever spark.sql.timestampType says. It prints as TIMESTAMP, as
	// Spark names it.
	LitTimestampLTZ
)

var literalKindNames = [...]string{
	LitNull: "NULL", LitBool: "BOOLEAN", LitInt: "INT", LitBigInt: "BIGINT",
	LitSmallInt: "SMALLINT", LitTinyInt: "TINYINT", LitDecimal: "DECIMAL",
	LitFloat: "FLOAT", LitDouble: "DOUBLE", LitString: "STRING",
	LitBinary: "BINARY", LitDate: "DATE", LitTimestamp: "TIMESTAMP",
	LitTimestampNTZ: "TIMESTAMP_NTZ", LitTimestampLTZ: "TIMESTAMP",
}

// String returns the SQL type name of the kind, such as "BIGINT".
func (k LiteralKind) String() string {
	if int(k) < len(literalKindNames) {
		return literalKindNames[k]
	}
	return fmt.Sprintf("LiteralKind(%d)", uint8(k))
}

// Literal is a constant. Value depends on Kind: "" for NULL; "true" or
// "false"; for numbers the digits as written without the type suffix and
// with a leading '-' for a negative literal (-5 is one literal, as in
// Spark); the decoded contents of a string; the hex digits of a binary
// literal; the string of a DATE or TIMESTAMP literal (validated later).
type Literal struct {
	Pos
	Kind  LiteralKind
	Value string
}

// IntervalLit is an interval literal. It is either INTERVAL 'text' (Text
// holds the string, such as "1 minute", and Parts is nil) or INTERVAL
// followed by value/unit pairs (INTERVAL 10 SECONDS, INTERVAL '10' SECOND,
// INTERVAL 1 HOUR 30 MINUTES). Value reports what it amounts to.
type IntervalLit struct {
	Pos
	Text  string
	Parts []IntervalPart
}

// IntervalPart is one value/unit pair of an interval literal.
type IntervalPart struct {
	Pos
	Neg    bool   // a '-' preceded the value
	Value  string // the number as written, or the string's contents
	Quoted bool   // the value was a string literal
	// Unit is upper-case singular: YEAR, MONTH, WEEK, DAY, HOUR, MINUTE,
	// SECOND, MILLISECOND, MICROSECOND, or a field range such as
	// "YEAR TO MONTH" (INTERVAL '1-2' YEAR TO MONTH).
	Unit string
}

// UnaryOp is a prefix operator.
type UnaryOp uint8

const (
	OpNot    UnaryOp = iota + 1 // NOT
	OpNeg                       // -
	OpPlus                      // +
	OpBitNot                    // ~
)

// String returns the operator as written in SQL.
func (op UnaryOp) String() string {
	switch op {
	case OpNot:
		return "NOT"
	case OpNeg:
		return "-"
	case OpPlus:
		return "+"
	case OpBitNot:
		return "~"
	}
	return fmt.Sprintf("UnaryOp(%d)", uint8(op))
}

// UnaryExpr is op X.
type UnaryExpr struct {
	Pos
	Op UnaryOp
	X  Expr
}

// BinaryOp is an infix operator.
type BinaryOp uint8

const (
	OpOr                 BinaryOp = iota + 1
	OpAnd                         // AND
	OpEq                          // = and ==
	OpNullSafeEq                  // <=>
	OpNe                          // <> and !=
	OpLt                          // <
	OpLe                          // <=
	OpGt                          // >
	OpGe                          // >=
	OpBitOr                       // |
	OpBitXor                      // ^
	OpBitAnd                      // &
	OpAdd                         // +
	OpSub                         // -
	OpConcat                      // ||
	OpMul                         // *
	OpDiv                         // /
	OpMod                         // %
	OpIntDiv                      // DIV
	OpShiftLeft                   // <<
	OpShiftRight                  // >>
	OpShiftRightUnsigned          // >>>
)

var binaryOpNames = [...]string{
	OpOr: "OR", OpAnd: "AND", OpEq: "=", OpNullSafeEq: "<=>", OpNe: "<>",
	OpLt: "<", OpLe: "<=", OpGt: ">", OpGe: ">=", OpBitOr: "|", OpBitXor: "^",
	OpBitAnd: "&", OpAdd: "+", OpSub: "-", OpConcat: "||", OpMul: "*",
	OpDiv: "/", OpMod: "%", OpIntDiv: "DIV",
	OpShiftLeft: "<<", OpShiftRight: ">>", OpShiftRightUnsigned: ">>>",
}

// String returns the operator as written in SQL.
func (op BinaryOp) String() string {
	if int(op) < len(binaryOpNames) && binaryOpNames[op] != "" {
		return binaryOpNames[op]
	}
	return fmt.Sprintf("BinaryOp(%d)", uint8(op))
}

// BinaryExpr is L op R.
type BinaryExpr struct {
	Pos
	Op   BinaryOp
	L, R Expr
}

// IsNull is X IS [NOT] NULL, or with Unknown X IS [NOT] UNKNOWN (the
// same test of a BOOLEAN only, Spark's IsUnknown).
type IsNull struct {
	Pos
	X       Expr
	Not     bool
	Unknown bool
}

// Between is X [NOT] BETWEEN Low AND High.
type Between struct {
	Pos
	X, Low, High Expr
	Not          bool
}

// In is X [NOT] IN (list) or X [NOT] IN (query); exactly one of List and
// Query is set.
type In struct {
	Pos
	X     Expr
	Not   bool
	List  []Expr
	Query *Query
}

// LikeOp is the pattern-matching operator of a Like.
type LikeOp uint8

const (
	OpLike  LikeOp = iota // LIKE
	OpILike               // ILIKE
	OpRLike               // RLIKE and REGEXP
)

// String returns the operator as written in SQL.
func (op LikeOp) String() string {
	switch op {
	case OpLike:
		return "LIKE"
	case OpILike:
		return "ILIKE"
	case OpRLike:
		return "RLIKE"
	}
	return fmt.Sprintf("LikeOp(%d)", uint8(op))
}

// Like is X [NOT] LIKE Pattern [ESCAPE 'c'], and likewise ILIKE and RLIKE.
type Like struct {
	Pos
	Op      LikeOp
	X       Expr
	Pattern Expr
	Not     bool
	Escape  *Literal // a string literal; nil when absent
}

// Case is CASE [Operand] WHEN ... THEN ... [ELSE Else] END. Without an
// Operand each When's Cond is a condition; with one, a value compared to it.
type Case struct {
	Pos
	Operand Expr // nil for a searched CASE
	Whens   []*When
	Else    Expr // nil when absent
}

// When is one WHEN Cond THEN Result arm of a Case.
type When struct {
	Pos
	Cond, Result Expr
}

// Cast is CAST(X AS Type), also written X::Type, or TRY_CAST(X AS Type)
// when Try is set.
type Cast struct {
	Pos
	X    Expr
	Type *TypeName
	Try  bool
}

// FuncCall is a function call name([DISTINCT] args). count(*) has a single
// *Star argument. CURRENT_TIMESTAMP and CURRENT_DATE without parentheses
// are calls with no arguments.
type FuncCall struct {
	Pos
	Name     Ident
	Distinct bool
	Args     []Expr
	Filter   Expr // FILTER (WHERE Filter) of an aggregate; nil when absent
	Nulls    NullTreatment
	Over     *WindowSpec // OVER window; nil for a plain call
	// Within is WITHIN GROUP (ORDER BY x) of percentile_cont and
	// percentile_disc; x is then Args[0] (before the percentage).
	Within *WithinGroup
	// Bare is CURRENT_DATE or CURRENT_TIMESTAMP written without
	// parentheses: a column of that name, where one is in scope, wins
	// (Spark resolves these functions only when no column does).
	Bare bool
}

// FieldAccess is X.Field where X is not a plain name path (those are
// ColumnRefs): f(x).start, (s).a, a[0].b.
type FieldAccess struct {
	Pos
	X     Expr
	Field Ident
}

// Subscript is X[Index]: an array element or map value.
type Subscript struct {
	Pos
	X, Index Expr
}

// Subquery is a scalar subquery (query) used as an expression, or with
// Exists set the predicate EXISTS (query).
type Subquery struct {
	Pos
	Query  *Query
	Exists bool
}

// TypeName is a data type. Name is the canonical upper-case name: BOOLEAN,
// TINYINT, SMALLINT, INT, BIGINT, FLOAT, DOUBLE, DECIMAL, STRING, VARCHAR,
// CHAR, BINARY, DATE, TIMESTAMP, TIMESTAMP_NTZ, ARRAY, MAP or STRUCT
// (synonyms such as INTEGER and LONG are canonicalised).
type TypeName struct {
	Pos
	Name string
	// LTZ is set when the text said TIMESTAMP_LTZ (Name TIMESTAMP): that
	// type stays TIMESTAMP under spark.sql.timestampType=TIMESTAMP_NTZ,
	// where a plain TIMESTAMP means TIMESTAMP_NTZ.
	LTZ    bool
	Params []int          // DECIMAL(p[, s]), VARCHAR(n), CHAR(n); nil when absent
	Elem   *TypeName      // ARRAY<Elem>, MAP<Key, Elem>
	Key    *TypeName      // MAP<Key, Elem>
	Fields []*StructField // STRUCT<name: type, ...>
}

// StructField is one field of a STRUCT type.
type StructField struct {
	Pos
	Name Ident
	Type *TypeName
}

func (*ColumnRef) exprNode()   {}
func (*Star) exprNode()        {}
func (*Literal) exprNode()     {}
func (*IntervalLit) exprNode() {}
func (*UnaryExpr) exprNode()   {}
func (*BinaryExpr) exprNode()  {}
func (*IsNull) exprNode()      {}
func (*Between) exprNode()     {}
func (*In) exprNode()          {}
func (*Like) exprNode()        {}
func (*Case) exprNode()        {}
func (*Cast) exprNode()        {}
func (*FuncCall) exprNode()    {}
func (*FieldAccess) exprNode() {}
func (*Subscript) exprNode()   {}
func (*Subquery) exprNode()    {}
