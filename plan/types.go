package plan

import (
	"errors"
	"fmt"
	"math"
	"slices"
	"strconv"

	"github.com/apache/arrow/go/v17/arrow"

	"github.com/arrowstream/arrowstream/sql"
	"github.com/arrowstream/arrowstream/vector"
)

// The analyzer types an operator or function call by binding the vector
// expression that will compute it against a schema of placeholder columns
// of its argument types (constant arguments stay constants, as some
// functions need them). Types, implicit numeric widening and argument
// checks therefore come from one place, vector, and cost one bind of one
// node, not of the whole tree.

// newCall types fn(args...) and returns the Call; pos is for errors.
func newCall(pos sql.Pos, fn string, args ...Expr) (Expr, error) {
	c := &Call{Func: fn, Args: args}
	if l := foldLiteralCall(c); l != nil {
		// Evaluating the call over its arguments' values typed it too.
		c.Type = l.Type
		c.Null = callNullable(c)
		c.typing = callTyping{known: true, constant: true, folded: l}
		return c, nil
	}
	dt, err := inferType(c)
	if err != nil && isRuntimeError(err) {
		// A constant argument's value fails (an invalid cast): that is
		// raised when the query runs, or is NULL without ANSI, so the
		// call is typed from its argument types alone.
		if t, err2 := inferTypeOpaque(c); err2 == nil {
			dt, err = t, nil
		} else if t, ok := inferTypeOneOpaque(c); ok {
			dt, err = t, nil
		}
	}
	if err != nil {
		return nil, typeError(pos, c, err)
	}
	c.Type = dt
	c.Null = callNullable(c)
	c.typing = typingOf(c)
	return c, nil
}

// inferTypeOneOpaque types e with one constant argument at a time made a
// column, the others kept constant: for functions that need some
// arguments constant (to_timestamp's pattern) while another's value fails
// at the defaults (ANSI) but not in the session's mode.
func inferTypeOneOpaque(e Expr) (arrow.DataType, bool) {
	kids := e.Children()
	for i, k := range kids {
		if !isConstant(k) {
			continue
		}
		placeholders := slices.Clone(kids)
		placeholders[i] = &ColumnRef{Index: 0, Name: "_0", Type: k.DataType(), Null: true}
		ve, err := ToVectorExpr(WithChildren(e, placeholders), nil)
		if err != nil {
			continue
		}
		fields := []arrow.Field{{Name: "_0", Type: k.DataType(), Nullable: true}}
		ev, err := ve.Bind(arrow.NewSchema(fields, nil), newFoldAllocator())
		if err == nil {
			return ev.DataType(), true
		}
	}
	return nil, false
}

// mustCall is newCall for calls whose types are known to fit (built by the
// analyzer itself, such as the equalities of a USING join).
func mustCall(fn string, args ...Expr) Expr {
	e, err := newCall(sql.Pos{}, fn, args...)
	if err != nil {
		return &Call{Func: fn, Args: args, Type: vector.Boolean, Null: true}
	}
	return e
}

func typeError(pos sql.Pos, e Expr, err error) error {
	var be *vector.BindError
	if errors.As(err, &be) {
		err = be.Err
	}
	var pe *Error
	if errors.As(err, &pe) {
		return err
	}
	return &Error{Pos: pos, Msg: fmt.Sprintf("Cannot resolve %s due to data type mismatch: %v.", e, err), Err: errors.Join(ErrType, err)}
}

// callNullable is whether a call can yield NULL.
func callNullable(c *Call) bool {
	switch c.Func {
	case "isnull", "isnotnull", "<=>":
		return false
	case "coalesce":
		for _, a := range c.Args {
			if !a.Nullable() {
				return false
			}
		}
		return true
	}
	// Division by zero is an error (ANSI), so only null operands make
	// arithmetic null; functions may return NULL for any input.
	switch c.Func {
	case "+", "-", "*", "/", "%", "negative", "=", "<>", "<", "<=", ">", ">=", "and", "or", "not", "between", "like", "in", "window_time":
		for _, a := range c.Args {
			if a.Nullable() {
				return true
			}
		}
		return false
	}
	return true
}

// isConstant reports whether e has no column references (and so can be
// folded or passed to vector as a constant). Calls typed by newCall answer
// from their cache without walking their arguments.
func isConstant(e Expr) bool {
	switch x := e.(type) {
	case *Literal:
		return true
	case *ColumnRef, *aggPlaceholder, *winPlaceholder, *CurrentTimestamp, *subqueryExpr, *outerRef, *groupingRef, *LambdaVar:
		return false
	case *Call:
		if x.typing.known {
			return x.typing.constant
		}
	}
	ok := true
	Walk(e, func(x Expr) bool {
		switch y := x.(type) {
		case *ColumnRef, *aggPlaceholder, *winPlaceholder, *CurrentTimestamp, *subqueryExpr, *outerRef, *groupingRef, *LambdaVar:
			ok = false
		case *Call:
			if y.typing.known {
				ok = ok && y.typing.constant
				return false
			}
		}
		return ok
	})
	return ok
}

// inferType binds e's top node against placeholders for its arguments:
// a column of the argument's type, or for a constant argument the
// constant itself (some functions need the value), as its folded literal
// when newCall could fold it. Placeholder columns get short names; only
// when the bind fails is it repeated with the arguments' text as names, for
// the error message. Typing a chain of n calls is so O(n), not O(n²).
//
// Binding folds constant arguments (vector evaluates a call over
// constants once, at bind time): on the fold allocator, whose budget
// stops a constant too large to fold, when the call is bound again with
// its constant arguments as placeholder columns.
func inferType(e Expr) (arrow.DataType, error) {
	dt, err := bindPlaceholders(e, false, false)
	if errors.Is(err, errFoldTooLarge) {
		dt, err = bindPlaceholders(e, false, true)
	}
	if err != nil {
		_, err = bindPlaceholders(e, true, false)
	}
	return dt, err
}

func bindPlaceholders(e Expr, textNames, columnsForConstants bool) (dt arrow.DataType, err error) {
	defer func() {
		if r := recover(); r != nil {
			if r != errFoldTooLarge {
				panic(r)
			}
			dt, err = nil, errFoldTooLarge
		}
	}()
	kids := e.Children()
	fields := make([]arrow.Field, 0, len(kids))
	placeholders := make([]Expr, len(kids))
	for i, k := range kids {
		if c, ok := k.(*Call); ok && c.typing.folded != nil && !columnsForConstants {
			placeholders[i] = c.typing.folded
			continue
		}
		if isConstant(k) && !columnsForConstants {
			placeholders[i] = k
			continue
		}
		name := "_" + strconv.Itoa(i)
		if r, ok := k.(*ColumnRef); ok {
			name = r.Name
		} else if textNames {
			name = k.String()
		}
		fields = append(fields, arrow.Field{Name: name, Type: k.DataType(), Nullable: true})
		placeholders[i] = &ColumnRef{Index: len(fields) - 1, Name: name, Type: k.DataType(), Null: true}
	}
	ve, err := ToVectorExpr(WithChildren(e, placeholders), nil)
	if err != nil {
		return nil, err
	}
	ev, err := ve.Bind(arrow.NewSchema(fields, nil), newFoldAllocator())
	if err != nil {
		return nil, err
	}
	return ev.DataType(), nil
}

// callTyping is what newCall caches on a Call.
type callTyping struct {
	known    bool     // constant is set
	constant bool     // no column references below
	folded   *Literal // the call's value when constant and foldable
}

// typingOf computes c's cache from its arguments' caches, walking no
// deeper than c's arguments (newCall has already tried to fold c).
func typingOf(c *Call) callTyping {
	for _, a := range c.Args {
		if !isConstant(a) {
			return callTyping{known: true}
		}
	}
	return callTyping{known: true, constant: true}
}

// foldLiteralCall evaluates c over its arguments' values when every
// argument is a literal or a call newCall folded, in O(arguments); nil
// when it cannot (a column, a nondeterministic function, a runtime error
// such as division by zero, which belongs to run time).
func foldLiteralCall(c *Call) *Literal {
	if nondeterministic[c.Func] {
		return nil
	}
	lits := make([]Expr, len(c.Args))
	for i, a := range c.Args {
		switch x := a.(type) {
		case *Literal:
			lits[i] = x
		case *Call:
			if x.typing.folded == nil {
				return nil
			}
			lits[i] = x.typing.folded
		default:
			return nil
		}
	}
	if l := foldIntArith(c.Func, lits); l != nil {
		return l
	}
	l, err := foldConstant(&Call{Func: c.Func, Args: lits})
	if err != nil {
		return nil
	}
	return l
}

// foldIntArith folds + - * of two non-null integer literals of one type
// (int or bigint) that do not overflow, without binding a vector
// expression: the common step of folding 1+1+…+1, where the vector
// machinery costs microseconds per term. Anything else (another type,
// NULL, an overflow, which ANSI raises at run time) is left to
// foldConstant: nil.
func foldIntArith(fn string, lits []Expr) *Literal {
	if len(lits) != 2 || fn != "+" && fn != "-" && fn != "*" {
		return nil
	}
	a, aok := lits[0].(*Literal)
	b, bok := lits[1].(*Literal)
	if !aok || !bok || !arrow.TypeEqual(a.Type, b.Type) {
		return nil
	}
	switch x := a.Value.(type) {
	case int32:
		y, ok := b.Value.(int32)
		if !ok || a.Type.ID() != arrow.INT32 {
			return nil
		}
		v, ok := intArith(fn, int64(x), int64(y))
		if !ok || v != int64(int32(v)) {
			return nil
		}
		return &Literal{Value: int32(v), Type: a.Type}
	case int64:
		y, ok := b.Value.(int64)
		if !ok || a.Type.ID() != arrow.INT64 {
			return nil
		}
		v, ok := intArith(fn, x, y)
		if !ok {
			return nil
		}
		return &Literal{Value: v, Type: a.Type}
	}
	return nil
}

// intArith computes x fn y in int64, false on overflow.
func intArith(fn string, x, y int64) (int64, bool) {
	switch fn {
	case "+":
		v := x + y
		return v, (v > x) == (y > 0)
	case "-":
		v := x - y
		return v, (v < x) == (y > 0)
	}
	if x == 0 || y == 0 {
		return 0, true
	}
	v := x * y
	return v, v/y == x && !(x == -1 && y == math.MinInt64) && !(y == -1 && x == math.MinInt64)
}

// nondeterministic lists functions whose value must not be computed at
// analysis time (a placeholder of one value would still type them, but
// there is no need to evaluate them early).
var nondeterministic = map[string]bool{"rand": true, "random": true, "randn": true, "uuid": true, "shuffle": true}

// castTo returns e cast to dt, or e itself when it already has type dt. A
// NULL literal becomes a typed NULL literal.
func castTo(e Expr, dt arrow.DataType) Expr {
	if arrow.TypeEqual(e.DataType(), dt) {
		return e
	}
	if l, ok := e.(*Literal); ok && l.Value == nil {
		return &Literal{Type: dt}
	}
	if v, ok := specialCast(e, dt); ok {
		return v
	}
	return &Cast{X: e, To: dt}
}

func isNullType(dt arrow.DataType) bool { return dt == nil || dt.ID() == arrow.NULL }

func isString(dt arrow.DataType) bool { return vector.IsStringLike(dt) }

// comparisonType is the type both sides of a comparison are cast to when
// vector would not compare them as they are, following Spark's ANSI
// coercion: a string against an integral number compares as bigint,
// against a fractional one as double, against a date, timestamp or
// boolean as that type; a date against a timestamp as timestamp. nil means
// no cast is needed (vector widens numbers itself).
func comparisonType(l, r arrow.DataType) arrow.DataType {
	l, r = vector.Unwrap(l), vector.Unwrap(r)
	switch {
	case isNullType(l) || isNullType(r):
		return nil
	case isString(l) && isString(r):
		return nil
	case isString(l):
		return stringPartner(r)
	case isString(r):
		return stringPartner(l)
	case l.ID() == arrow.DATE32 && r.ID() == arrow.TIMESTAMP:
		return r // TIMESTAMP or TIMESTAMP_NTZ
	case l.ID() == arrow.TIMESTAMP && r.ID() == arrow.DATE32:
		return l
	case l.ID() == arrow.TIMESTAMP && r.ID() == arrow.TIMESTAMP && vector.IsTimestampNTZ(l) != vector.IsTimestampNTZ(r):
		// Spark's wider type of TIMESTAMP_NTZ and TIMESTAMP is TIMESTAMP:
		// the wall clock is read in the session time zone.
		return vector.Timestamp
	}
	return nil
}

// stringPartner is the type a string converts to next to a value of type t.
func stringPartner(t arrow.DataType) arrow.DataType {
	switch {
	case vector.IsIntegral(t):
		return vector.Int64
	case vector.IsNumeric(t):
		return vector.Float64
	case t.ID() == arrow.DATE32, t.ID() == arrow.TIMESTAMP, t.ID() == arrow.BOOL, t.ID() == arrow.BINARY:
		return t
	}
	return nil
}

// coerceComparison inserts the casts two compared operands need.
func coerceComparison(l, r Expr) (Expr, Expr) {
	if isNullType(l.DataType()) && !isNullType(r.DataType()) {
		return castTo(l, vector.Unwrap(r.DataType())), r
	}
	if isNullType(r.DataType()) && !isNullType(l.DataType()) {
		return l, castTo(r, vector.Unwrap(l.DataType()))
	}
	if t := comparisonType(l.DataType(), r.DataType()); t != nil {
		lc, rc := castTo(l, t), castTo(r, t)
		markLegacyComparison(l.DataType(), r.DataType(), lc, rc)
		return lc, rc
	}
	return l, r
}

// coerceArithmetic casts string operands of arithmetic to a number: bigint
// next to an integral number, double otherwise (Spark's ANSI rule), or
// double whatever the other operand with ANSI off (legacy); then an
// integral operand next to a decimal as DecimalPrecision does (see
// coerce_arith.go).
func coerceArithmetic(l, r Expr, legacy bool) (Expr, Expr) {
	if legacy {
		l, r = legacyArithmetic(l, r)
	}
	return decimalOperands(ansiArithmetic(l, r))
}

func ansiArithmetic(l, r Expr) (Expr, Expr) {
	lt, rt := vector.Unwrap(l.DataType()), vector.Unwrap(r.DataType())
	num := func(other arrow.DataType) arrow.DataType {
		if vector.IsIntegral(other) {
			return vector.Int64
		}
		return vector.Float64
	}
	switch {
	case isString(lt) && isString(rt):
		return castTo(l, vector.Float64), castTo(r, vector.Float64)
	case isString(lt) && vector.IsNumeric(rt):
		return castTo(l, num(rt)), r
	case isString(rt) && vector.IsNumeric(lt):
		return l, castTo(r, num(lt))
	case isNullType(lt) && vector.IsNumeric(rt):
		return castTo(l, rt), r
	case isNullType(rt) && vector.IsNumeric(lt):
		return l, castTo(r, lt)
	}
	return l, r
}

// commonType is the type a list of values (CASE results, coalesce
// arguments, IN lists, UNION columns) widens to: vector's numeric
// widening, and string when strings meet other types. ok is false when
// there is none.
func commonType(types []arrow.DataType) (arrow.DataType, bool) {
	var out arrow.DataType = arrow.Null
	for _, t := range types {
		t = vector.Unwrap(t)
		if isNullType(t) {
			continue
		}
		if isNullType(out) {
			out = t
			continue
		}
		if c, ok := vector.CommonType(out, t); ok {
			out = c
			continue
		}
		if isString(out) && isAtomic(t) || isString(t) && isAtomic(out) {
			out = vector.String
			continue
		}
		if st, ok := structCommon(out, t); ok {
			out = st
			continue
		}
		if nt, ok := nestedCommon(out, t); ok {
			out = nt
			continue
		}
		return nil, false
	}
	return out, true
}

// structCommon accepts structs of the same shape (window structs) as a
// common type.
func structCommon(a, b arrow.DataType) (arrow.DataType, bool) {
	if a.ID() == arrow.STRUCT && b.ID() == arrow.STRUCT && arrow.TypeEqual(a, b, arrow.CheckMetadata()) {
		return a, true
	}
	if a.ID() == arrow.STRUCT && b.ID() == arrow.STRUCT && arrow.TypeEqual(a, b) {
		return a, true
	}
	return nil, false
}

func isAtomic(t arrow.DataType) bool {
	switch t.ID() {
	case arrow.STRUCT, arrow.LIST, arrow.MAP, arrow.NULL:
		return false
	}
	return true
}

// coerceAll casts every expression to their common type; what names the
// construct for the error.
func coerceAll(pos sql.Pos, what string, es []Expr) ([]Expr, error) {
	types := make([]arrow.DataType, len(es))
	for i, e := range es {
		types[i] = e.DataType()
	}
	t, ok := commonType(types)
	if !ok {
		names := make([]string, len(types))
		for i, t := range types {
			names[i] = vector.TypeName(t)
		}
		return nil, errorAt(pos, ErrType, "Cannot resolve %s due to data type mismatch: the values have no common type (%s).", what, joinStrings(names))
	}
	if isNullType(t) {
		return es, nil
	}
	out := make([]Expr, len(es))
	for i, e := range es {
		if arrow.TypeEqual(vector.Unwrap(e.DataType()), t) || vector.IsNumeric(t) && vector.IsNumeric(e.DataType()) && !isString(t) {
			out[i] = e
			if l, ok := e.(*Literal); ok && l.Value == nil {
				out[i] = castTo(e, t)
			}
			continue
		}
		out[i] = castTo(e, t)
	}
	return out, nil
}

func joinStrings(s []string) string {
	out := ""
	for i, x := range s {
		if i > 0 {
			out += ", "
		}
		out += x
	}
	return out
}

// requireBoolean checks that e is a boolean (or NULL) for a condition.
func requireBoolean(pos sql.Pos, what string, e Expr) (Expr, error) {
	switch e.DataType().ID() {
	case arrow.BOOL:
		return e, nil
	case arrow.NULL:
		return castTo(e, vector.Boolean), nil
	}
	if isString(e.DataType()) {
		return castTo(e, vector.Boolean), nil
	}
	return nil, errorAt(pos, ErrType, "%s expression %s is of type %s, not boolean.", what, e, typeOrNil(e))
}
