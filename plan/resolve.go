package plan

import (
	"errors"
	"fmt"
	"strings"

	"github.com/apache/arrow/go/v17/arrow"

	"github.com/arrowstream/arrowstream/sql"
	"github.com/arrowstream/arrowstream/vector"
)

// resolver turns syntax-tree expressions into resolved expressions over a
// scope.
type resolver struct {
	sc *scope
	// b is the analysis's budget (nil: unbounded, the DataFrame builders).
	b *budget
	// a is the SQL analysis the expression belongs to, for subqueries
	// (nil: the DataFrame builders, which have none).
	a *analyzer
	// aggs collects aggregate calls; nil where aggregates are not allowed.
	aggs *aggCollector
	// clause names where the expression is, for errors ("WHERE").
	clause string
	// special holds expressions resolved beforehand (window(...) in GROUP
	// BY, explode(...) in a select list), by syntax node.
	special map[sql.Expr]Expr
	inAgg   bool
	// wins collects window functions; nil where they are not allowed.
	wins     *winCollector
	inWindow bool
	// grouping is the select's grouping sets (nil without them), for
	// grouping() and grouping_id().
	grouping *groupingCtx
	// noOuter keeps names from resolving in an enclosing query (HAVING
	// tries select aliases first).
	noOuter bool
	// types caches the types of binary operators (see typedCall).
	types map[callTypeKey]arrow.DataType
	// funcs are the user functions where the resolver has no budget
	// that holds them (nil: see lookupUDF).
	funcs FunctionCatalog
}

// legacy reports whether the analysis runs with ANSI off (see budget).
func (r *resolver) legacy() bool { return r.b != nil && r.b.legacy }

// ntz reports whether the session's TIMESTAMP is TIMESTAMP_NTZ
// (spark.sql.timestampType, see budget).
func (r *resolver) ntz() bool { return r.b != nil && r.b.ntz }

func (r *resolver) exprs(es []sql.Expr) ([]Expr, error) {
	out := make([]Expr, len(es))
	for i, e := range es {
		x, err := r.expr(e)
		if err != nil {
			return nil, err
		}
		out[i] = x
	}
	return out, nil
}

func (r *resolver) expr(e sql.Expr) (Expr, error) {
	if err := r.b.step(); err != nil {
		return nil, err
	}
	if x, ok := r.special[e]; ok {
		return x, nil
	}
	switch x := e.(type) {
	case nil:
		return nil, errors.New("plan: nil expression")
	case *sql.ColumnRef:
		e, err := r.sc.lookup(x.Parts, x.Pos)
		if err != nil && errors.Is(err, ErrUnresolved) && len(x.Parts) == 1 && strings.EqualFold(x.Parts[0].Name, "grouping__id") {
			return r.hiveGroupingID(x)
		}
		if err != nil && r.a != nil && !r.noOuter && errors.Is(err, ErrUnresolved) {
			if o, ok := r.a.lookupOuter(x); ok {
				return o, nil
			}
		}
		return e, err
	case *sql.Star:
		return nil, errorAt(x.Pos, ErrUnsupported, "Invalid usage of '*' in %s.", r.clauseName())
	case *sql.Literal:
		if e, ok, err := specialDatetimeLiteral(x); ok {
			return e, err
		}
		return literalOf(x)
	case *sql.IntervalLit:
		return intervalOf(x)
	case *sql.UnaryExpr:
		return r.unary(x)
	case *sql.BinaryExpr:
		return r.binary(x)
	case *sql.IsNull:
		v, err := r.expr(x.X)
		if err != nil {
			return nil, err
		}
		if x.Unknown && v.DataType().ID() != arrow.BOOL {
			// Spark's IsUnknown expects a BOOLEAN, with no implicit cast.
			return nil, errorAt(x.Pos, ErrType, "Cannot resolve %s due to data type mismatch: the argument of IS UNKNOWN must be boolean, not %s.", sql.Format(x), typeOrNil(v))
		}
		if x.Not {
			return newCall(x.Pos, "isnotnull", v)
		}
		return newCall(x.Pos, "isnull", v)
	case *sql.Between:
		return r.between(x)
	case *sql.In:
		return r.in(x)
	case *sql.Like:
		return r.like(x)
	case *sql.Case:
		return r.caseExpr(x)
	case *sql.Cast:
		v, err := r.expr(x.X)
		if err != nil {
			return nil, err
		}
		to, err := convertType(x.Type)
		if err != nil {
			return nil, err
		}
		return r.explicitCast(x.Pos, v, to, ymTypeFields(x.Type.Name), x.Try)
	case *sql.FuncCall:
		return r.call(x)
	case *sql.FieldAccess:
		v, err := r.expr(x.X)
		if err != nil {
			return nil, err
		}
		return fieldAccess(v, x.Field)
	case *sql.Subscript:
		return r.subscript(x)
	case *sql.Subquery:
		return r.subquery(x)
	case *sql.Placeholder:
		return nil, errorAt(x.Pos, ErrUnsupported, "Parameter $%d has no value: bind parameters with a prepared statement.", x.Index)
	}
	return nil, errorAt(e.Position(), ErrUnsupported, "Unsupported expression %s.", sql.Format(e))
}

func (r *resolver) clauseName() string {
	if r.clause == "" {
		return "this expression"
	}
	return r.clause
}

func (r *resolver) unary(x *sql.UnaryExpr) (Expr, error) {
	v, err := r.expr(x.X)
	if err != nil {
		return nil, err
	}
	switch x.Op {
	case sql.OpNot:
		b, err := requireBoolean(x.Pos, "NOT", v)
		if err != nil {
			return nil, err
		}
		return newCall(x.Pos, "not", b)
	case sql.OpNeg:
		if isString(v.DataType()) {
			v = castTo(v, vector.Float64)
		}
		return newCall(x.Pos, "negative", v)
	case sql.OpPlus:
		// Spark's UnaryPositive takes numbers and intervals only; a string
		// is read as a double, as for unary minus.
		switch dt := v.DataType(); {
		case isString(dt):
			return castTo(v, vector.Float64), nil
		case vector.IsNumeric(dt) || isInterval(v) || isYMInterval(v):
			return v, nil
		default:
			return nil, errorAt(x.Pos, ErrType, "Cannot resolve (+ %s) due to data type mismatch: argument 1 requires (numeric or interval) type, however, it is of %s type.", v, vector.TypeName(dt))
		}
	case sql.OpBitNot:
		return newCall(x.Pos, "~", v)
	}
	return nil, errorAt(x.Pos, ErrUnsupported, "The operator %s is not supported.", x.Op)
}

var comparisonOps = map[sql.BinaryOp]string{
	sql.OpEq: "=", sql.OpNullSafeEq: "<=>", sql.OpNe: "<>", sql.OpLt: "<", sql.OpLe: "<=", sql.OpGt: ">", sql.OpGe: ">=",
}

var arithmeticOps = map[sql.BinaryOp]string{
	sql.OpAdd: "+", sql.OpSub: "-", sql.OpMul: "*", sql.OpDiv: "/", sql.OpMod: "%",
}

// binary resolves a binary operator. A left-deep chain a op b op c …
// (the parser's shape for 1+1+…+1 or a AND b AND …) is resolved in a loop
// up its left spine, not by one recursion per term, so that a chain of
// 100K terms costs no deep stack.
func (r *resolver) binary(x *sql.BinaryExpr) (Expr, error) {
	spine := []*sql.BinaryExpr{x}
	for {
		l, ok := spine[len(spine)-1].L.(*sql.BinaryExpr)
		if !ok {
			break
		}
		if _, sp := r.special[l]; sp {
			break
		}
		spine = append(spine, l)
	}
	l, err := r.expr(spine[len(spine)-1].L)
	if err != nil {
		return nil, err
	}
	for i := len(spine) - 1; i >= 0; i-- {
		if i > 0 {
			// The step r.expr would have taken for this node.
			if err := r.b.step(); err != nil {
				return nil, err
			}
		}
		if l, err = r.binaryOver(spine[i], l); err != nil {
			return nil, err
		}
	}
	return l, nil
}

// binaryOver resolves x whose left operand resolved to l.
func (r *resolver) binaryOver(x *sql.BinaryExpr, l Expr) (Expr, error) {
	rr, err := r.expr(x.R)
	if err != nil {
		return nil, err
	}
	return r.binaryOf(x, l, rr)
}

// binaryOf resolves the operator of x over its resolved operands l and rr
// (x's operand trees are not read again: try_add and its siblings reuse
// it over their arguments).
func (r *resolver) binaryOf(x *sql.BinaryExpr, l, rr Expr) (Expr, error) {
	switch x.Op {
	case sql.OpAnd, sql.OpOr:
		lb, err := requireBoolean(x.L.Position(), x.Op.String(), l)
		if err != nil {
			return nil, err
		}
		rb, err := requireBoolean(x.R.Position(), x.Op.String(), rr)
		if err != nil {
			return nil, err
		}
		return r.typedCall(x.Pos, strings.ToLower(x.Op.String()), lb, rb)
	case sql.OpConcat:
		// a || b is concat(a, b): arrays meet at their common element type.
		args, err := coerceNested(x.Pos, "concat", []Expr{l, rr})
		if err != nil {
			return nil, err
		}
		args = timestampsAsText(args)
		return r.typedCall(x.Pos, "concat", args[0], args[1])
	}
	if x.Op == sql.OpSub {
		if e, ok, err := r.timestampSubtract(x.Pos, l, rr); ok {
			return e, err
		}
	}
	if op, ok := arithmeticOps[x.Op]; ok && r.legacy() && (op == "+" || op == "-") {
		if err := legacyDateArithmetic(x.Pos, op, l, rr); err != nil {
			return nil, err
		}
	}
	if e, ok, err := scalarOperator(x, l, rr); ok {
		return e, err
	}
	if op, ok := comparisonOps[x.Op]; ok {
		if r.legacy() {
			l, rr = legacyBooleanEquality(op, l, rr)
		}
		l, rr = coerceComparison(l, rr)
		return r.typedCall(x.Pos, op, l, rr)
	}
	if op, ok := arithmeticOps[x.Op]; ok {
		if e, ok, err := dateAddDays(x.Pos, op, l, rr); ok {
			return e, err
		}
		if (op == "+" || op == "-") && (isInterval(l) || isInterval(rr)) {
			// timestamp ± interval: a string or date operand is a timestamp.
			// A string operand's result is cast back to a string, as
			// Spark's ResolveBinaryArithmetic casts the sum to the
			// operand's type.
			str := isString(l.DataType()) || isString(rr.DataType())
			if isString(l.DataType()) || l.DataType().ID() == arrow.DATE32 {
				l = castTo(l, vector.Timestamp)
			}
			if isString(rr.DataType()) || rr.DataType().ID() == arrow.DATE32 {
				rr = castTo(rr, vector.Timestamp)
			}
			e, err := newCall(x.Pos, op, l, rr)
			if err != nil || !str {
				return e, err
			}
			return castTo(e, vector.String), nil
		}
		l, rr = coerceArithmetic(l, rr, r.legacy())
		return r.typedCall(x.Pos, op, l, rr)
	}
	return nil, errorAt(x.Pos, ErrUnsupported, "The operator %s is not supported.", x.Op)
}

// callTypeKey identifies the type of a binary operator over two
// non-constant operands of primitive types: it depends on nothing else
// (the operands are typed as placeholder columns).
type callTypeKey struct {
	fn   string
	l, r arrow.Type
}

// typedCall is newCall(pos, fn, l, rr), taking the type of an operator
// over non-constant operands of primitive types from the resolver's cache
// when the same operator was typed over the same types before: a chain
// a+a+…+a binds one placeholder expression, not one per term.
func (r *resolver) typedCall(pos sql.Pos, fn string, l, rr Expr) (Expr, error) {
	lt, rt := l.DataType(), rr.DataType()
	if !primitiveType(lt) || !primitiveType(rt) || isConstant(l) || isConstant(rr) {
		return newCall(pos, fn, l, rr)
	}
	k := callTypeKey{fn: fn, l: lt.ID(), r: rt.ID()}
	if dt, ok := r.types[k]; ok {
		c := &Call{Func: fn, Args: []Expr{l, rr}, Type: dt}
		c.Null = callNullable(c)
		c.typing = callTyping{known: true}
		return c, nil
	}
	e, err := newCall(pos, fn, l, rr)
	if err != nil {
		return nil, err
	}
	if r.types == nil {
		r.types = map[callTypeKey]arrow.DataType{}
	}
	r.types[k] = e.DataType()
	return e, nil
}

// primitiveType: a type its ID names completely (no precision, unit,
// zone or fields).
func primitiveType(dt arrow.DataType) bool {
	switch dt.ID() {
	case arrow.BOOL, arrow.INT8, arrow.INT16, arrow.INT32, arrow.INT64, arrow.FLOAT32, arrow.FLOAT64, arrow.STRING, arrow.LARGE_STRING, arrow.BINARY, arrow.DATE32:
		return true
	}
	return false
}

func (r *resolver) between(x *sql.Between) (Expr, error) {
	vals, err := r.exprs([]sql.Expr{x.X, x.Low, x.High})
	if err != nil {
		return nil, err
	}
	v, lo := coerceComparison(vals[0], vals[1])
	v2, hi := coerceComparison(v, vals[2])
	if v2 != v {
		lo, _ = coerceComparison(lo, v2)
		v = v2
	}
	b, err := newCall(x.Pos, "between", v, lo, hi)
	if err != nil {
		return nil, err
	}
	if x.Not {
		return newCall(x.Pos, "not", b)
	}
	return b, nil
}

func (r *resolver) in(x *sql.In) (Expr, error) {
	if x.Query != nil {
		return r.inSubquery(x)
	}
	v, err := r.expr(x.X)
	if err != nil {
		return nil, err
	}
	list, err := r.exprs(x.List)
	if err != nil {
		return nil, err
	}
	if r.legacy() {
		lv, ll, handled, err := legacyIn(x.Pos, v, list)
		if err != nil {
			return nil, err
		}
		if handled {
			return r.inCall(x, lv, ll)
		}
	}
	for i, it := range list {
		list[i] = renameStructItem(v.DataType(), it)
	}
	// A string value against numbers (or the reverse) compares in the
	// comparison type; otherwise vector widens numbers itself.
	for _, it := range list {
		if t := comparisonType(v.DataType(), it.DataType()); t != nil {
			v = castTo(v, t)
			break
		}
	}
	for i, it := range list {
		if t := comparisonType(v.DataType(), it.DataType()); t != nil || isNullType(it.DataType()) {
			list[i] = castTo(it, vector.Unwrap(v.DataType()))
		}
	}
	return r.inCall(x, v, list)
}

// renameStructItem gives an IN list item built as a struct (a row value
// (1, 2) or struct(...)) the field names of the value's struct type t when
// their fields have the same types in the same order: Spark's In compares
// structs by position (DataType.equalsStructurally), so (a, b) IN ((1,
// 2.0)) compares a with 1 and b with 2.0 although the names differ.
func renameStructItem(t arrow.DataType, it Expr) Expr {
	st, ok := t.(*arrow.StructType)
	c, isCall := it.(*Call)
	if !ok || !isCall || c.Func != "named_struct" || len(c.Args) != 2*st.NumFields() {
		return it
	}
	args := make([]Expr, len(c.Args))
	for i, f := range st.Fields() {
		if !arrow.TypeEqual(f.Type, c.Args[2*i+1].DataType()) {
			return it
		}
		args[2*i], args[2*i+1] = &Literal{Value: f.Name, Type: vector.String}, c.Args[2*i+1]
	}
	out, err := newCall(sql.Pos{}, "named_struct", args...)
	if err != nil {
		return it
	}
	return out
}

func (r *resolver) inCall(x *sql.In, v Expr, list []Expr) (Expr, error) {
	c, err := newCall(x.Pos, "in", append([]Expr{v}, list...)...)
	if err != nil {
		return nil, err
	}
	if x.Not {
		return newCall(x.Pos, "not", c)
	}
	return c, nil
}

func (r *resolver) like(x *sql.Like) (Expr, error) {
	v, err := r.expr(x.X)
	if err != nil {
		return nil, err
	}
	p, err := r.expr(x.Pattern)
	if err != nil {
		return nil, err
	}
	if x.Escape != nil && x.Escape.Value != "\\" {
		if p, err = likeEscaped(x, p); err != nil {
			return nil, err
		}
	}
	if !isString(v.DataType()) {
		v = castTo(v, vector.String)
	}
	if !isString(p.DataType()) {
		p = castTo(p, vector.String)
	}
	var c Expr
	switch x.Op {
	case sql.OpLike:
		c, err = newCall(x.Pos, "like", v, p)
	case sql.OpILike:
		lv, err1 := newCall(x.Pos, "lower", v)
		lp, err2 := newCall(x.Pos, "lower", p)
		if err := errors.Join(err1, err2); err != nil {
			return nil, err
		}
		c, err = newCall(x.Pos, "like", lv, lp)
	case sql.OpRLike:
		c, err = newCall(x.Pos, "rlike", v, p)
	default:
		return nil, errorAt(x.Pos, ErrUnsupported, "%s is not supported.", x.Op)
	}
	if err != nil {
		return nil, err
	}
	if x.Not {
		return newCall(x.Pos, "not", c)
	}
	return c, nil
}

func (r *resolver) caseExpr(x *sql.Case) (Expr, error) {
	var operand Expr
	if x.Operand != nil {
		var err error
		if operand, err = r.expr(x.Operand); err != nil {
			return nil, err
		}
	}
	conds := make([]Expr, len(x.Whens))
	results := make([]Expr, 0, len(x.Whens)+1)
	for i, w := range x.Whens {
		c, err := r.expr(w.Cond)
		if err != nil {
			return nil, err
		}
		if operand != nil {
			l, rr := coerceComparison(operand, c)
			if c, err = newCall(w.Pos, "=", l, rr); err != nil {
				return nil, err
			}
		} else if c, err = requireBoolean(w.Cond.Position(), "WHEN", c); err != nil {
			return nil, err
		}
		conds[i] = c
		v, err := r.expr(w.Result)
		if err != nil {
			return nil, err
		}
		results = append(results, v)
	}
	if x.Else != nil {
		v, err := r.expr(x.Else)
		if err != nil {
			return nil, err
		}
		results = append(results, v)
	}
	if r.legacy() {
		if err := legacyCommonCheck(x.Pos, "CASE", results); err != nil {
			return nil, err
		}
	}
	return newCase(x.Pos, conds, results, x.Else != nil)
}

// newCase builds a Case from conditions and results (the last result is
// the ELSE when hasElse), casting the results to their common type.
func newCase(pos sql.Pos, conds, results []Expr, hasElse bool) (Expr, error) {
	results, err := coerceAll(pos, "CASE", results)
	if err != nil {
		return nil, err
	}
	c := &Case{Whens: make([]When, len(conds))}
	for i := range conds {
		c.Whens[i] = When{Cond: conds[i], Then: results[i]}
	}
	if hasElse {
		c.Else = results[len(results)-1]
	}
	types := make([]arrow.DataType, len(results))
	for i, r := range results {
		types[i] = r.DataType()
	}
	t, _ := commonType(types)
	c.Type = t
	if isNullType(t) {
		c.Type = arrow.Null
	}
	dt, err := inferType(c)
	if err != nil {
		return nil, typeError(pos, c, err)
	}
	c.Type = dt
	return c, nil
}

// convertType maps a SQL type to its Arrow type.
func convertType(t *sql.TypeName) (arrow.DataType, error) {
	switch t.Name {
	case "BOOLEAN":
		return vector.Boolean, nil
	case "TINYINT":
		return vector.Int8, nil
	case "SMALLINT":
		return vector.Int16, nil
	case "INT":
		return vector.Int32, nil
	case "BIGINT":
		return vector.Int64, nil
	case "FLOAT":
		return vector.Float32, nil
	case "DOUBLE":
		return vector.Float64, nil
	case "DECIMAL":
		p, s := int32(10), int32(0)
		if len(t.Params) > 0 {
			p = int32(t.Params[0])
		}
		if len(t.Params) > 1 {
			s = int32(t.Params[1])
		}
		if p < 1 || p > 38 || s < 0 || s > p {
			return nil, errorAt(t.Pos, ErrType, "Invalid DECIMAL(%d,%d): precision must be 1..38 and scale 0..precision.", p, s)
		}
		return vector.Decimal(p, s), nil
	case "STRING", "VARCHAR", "CHAR":
		return vector.String, nil
	case "BINARY":
		return vector.Binary, nil
	case "DATE":
		return vector.Date, nil
	case "TIMESTAMP":
		return vector.Timestamp, nil
	case "TIMESTAMP_NTZ":
		return vector.TimestampNTZ, nil
	case "INTERVAL YEAR", "INTERVAL MONTH", "INTERVAL YEAR TO MONTH":
		return vector.YearMonthInterval, nil
	case "ARRAY":
		if t.Elem == nil {
			return nil, errorAt(t.Pos, ErrType, "ARRAY needs an element type.")
		}
		e, err := convertType(t.Elem)
		if err != nil {
			return nil, err
		}
		return vector.ListOf(e), nil
	case "MAP", "STRUCT":
		return convertNestedType(t)
	}
	return nil, errorAt(t.Pos, ErrUnsupported, "The type %s is not supported.", t.Name)
}

// aggCollector gathers the distinct aggregate calls of a select block.
type aggCollector struct {
	aggs  []*AggregateExpr
	index map[string]int
}

func (c *aggCollector) add(a *AggregateExpr) *aggPlaceholder {
	key := aggKey(a)
	if c.index == nil {
		c.index = map[string]int{}
	}
	if i, ok := c.index[key]; ok {
		return &aggPlaceholder{index: i, agg: c.aggs[i]}
	}
	c.index[key] = len(c.aggs)
	c.aggs = append(c.aggs, a)
	return &aggPlaceholder{index: len(c.aggs) - 1, agg: a}
}

func aggKey(a *AggregateExpr) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%d/%v/%v(", a.Func, a.Distinct, a.IgnoreNulls)
	for _, x := range a.Args {
		b.WriteString(exprKey(x))
		b.WriteByte(',')
	}
	return b.String()
}

// exprKey is a canonical text of e with columns by ordinal, for matching
// expressions structurally (GROUP BY keys against select items).
func exprKey(e Expr) string {
	p := &exprPrinter{ordinals: true}
	p.expr(e)
	return p.b.String()
}

// isRuntimeError reports whether err is a value's error (an invalid or
// overflowing constant) rather than a type error: under ANSI it is raised
// when the query runs, and without ANSI the value is NULL or wraps, so
// analysis must not refuse the query for it.
func isRuntimeError(err error) bool {
	return errors.Is(err, vector.ErrInvalidInput) || errors.Is(err, vector.ErrOverflow) || errors.Is(err, vector.ErrDivideByZero)
}

// explicitCast is CAST(v AS to) (TRY_CAST when try) as the SQL syntax
// means it, with Spark's checks of what may be cast to what; ym are the
// fields of a year-month interval target type.
func (r *resolver) explicitCast(pos sql.Pos, v Expr, to arrow.DataType, ym vector.YMFields, try bool) (Expr, error) {
	if isYMInterval(v) && isString(to) {
		return ymCastToString(pos, v)
	}
	if isInterval(v) && isString(to) {
		return dtCastToString(pos, v)
	}
	if isCalendarInterval(v) && isString(to) {
		return newCall(pos, calToStringFunc, v)
	}
	if vector.IsIntegral(v.DataType()) && to.ID() == arrow.BINARY && !r.legacy() {
		// Spark's ANSI mode refuses it (its bytes depend on the width).
		return nil, errorAt(pos, ErrType, "cannot cast %s to binary with ANSI mode on. If you have to cast %s to binary, you can set spark.sql.ansi.enabled as false.", vector.TypeName(v.DataType()), vector.TypeName(v.DataType()))
	}
	if sc, ok := specialCast(v, to); ok {
		return sc, nil // Spark's SpecialDatetimeValues ('epoch', 'now', ...)
	}
	c := castTo(v, to)
	if l, ok := c.(*Literal); ok && l.Value != nil {
		cl := *l
		cl.castValue = true
		c = &cl
	}
	if cc, ok := c.(*Cast); ok && try {
		cc.Mode = vector.ModeTry
	}
	if cc, ok := c.(*Cast); ok && isYMInterval(cc) {
		cc.ymFields = ym
	}
	if _, err := inferType(c); err != nil && c != v && !isRuntimeError(err) {
		return nil, typeError(pos, c, err)
	}
	return c, nil
}
