package plan

import (
	"encoding/hex"
	"errors"
	"math/big"
	"strconv"
	"strings"
	"time"

	"github.com/apache/arrow/go/v17/arrow"
	"github.com/apache/arrow/go/v17/arrow/decimal128"

	"github.com/arrowstream/arrowstream/sql"
	"github.com/arrowstream/arrowstream/vector"
)

// aggFuncs maps aggregate function names to vector's functions.
var aggFuncs = map[string]vector.AggFunc{
	"count": vector.AggCount, "sum": vector.AggSum, "avg": vector.AggAvg, "mean": vector.AggAvg,
	"min": vector.AggMin, "max": vector.AggMax, "first": vector.AggFirst, "first_value": vector.AggFirst,
	"last": vector.AggLast, "last_value": vector.AggLast, "approx_count_distinct": vector.AggApproxCountDistinct,
}

// IsAggregateFunction reports whether name (any case) is an aggregate.
func IsAggregateFunction(name string) bool {
	_, ok := aggFuncs[strings.ToLower(name)]
	return ok || isAggregateAlias(strings.ToLower(name))
}

// specialFuncs are the functions the analyzer resolves itself.
var specialFuncs = []string{"coalesce", "nvl", "ifnull", "if", "isnull", "isnotnull", "current_timestamp", "now", "localtimestamp",
	"current_date", "window", "session_window", "window_time", "explode", "explode_outer", "abs", "round", "floor", "ceil", "typeof"}

func (r *resolver) call(f *sql.FuncCall) (Expr, error) {
	name := strings.ToLower(f.Name.Name)
	if f.Bare && r.sc != nil {
		// CURRENT_DATE without parentheses names a column of that name
		// when there is one, as in Spark.
		e, err := r.sc.lookup([]sql.Ident{f.Name}, f.Pos)
		if err == nil || !errors.Is(err, ErrUnresolved) {
			return e, err
		}
	}
	f, err := r.expandRegexArgs(f)
	if err != nil {
		return nil, err
	}
	if u := r.lookupUDF(name); u != nil {
		return r.udfCall(f, u)
	}
	if name == "grouping" || name == "grouping_id" {
		return r.groupingCall(f, name)
	}
	if name == "typeof" && f.Over == nil {
		return r.typeofCall(f)
	}
	if isAggregateAlias(name) {
		return r.aggregateAlias(f, name)
	}
	if err := withinGroupCheck(f, name); err != nil {
		return nil, err
	}
	if _, win := windowOnly[name]; f.Over != nil || win || f.Nulls != sql.NullsUnspecified {
		if e, err := r.windowCall(f, name); e != nil || err != nil {
			return e, err
		}
	}
	if _, ok := aggFuncs[name]; ok {
		if f.Filter != nil {
			g, err := filteredAggregate(f, name)
			if err != nil {
				return nil, err
			}
			f = g
		}
		return r.aggregate(f, name)
	}
	if f.Filter != nil {
		return nil, errorAt(f.Filter.Position(), ErrAggregate, "FILTER (WHERE ...) is only allowed with aggregate functions, not with %s().", name)
	}
	if f.Distinct {
		return nil, errorAt(f.Pos, ErrUnsupported, "DISTINCT is only allowed in aggregate functions, not in %s().", name)
	}
	switch name {
	case "window", "session_window":
		return nil, errorAt(f.Pos, ErrUnsupported, "%s(...) is only allowed in GROUP BY or as a select item.", name)
	case "explode", "explode_outer", "posexplode", "posexplode_outer", "inline", "inline_outer", "json_tuple", "stack":
		return nil, errorAt(f.Pos, ErrUnsupported, "Generators are not supported outside the select list: %s(...) must be a whole select item.", name)
	case "current_timestamp", "now":
		if len(f.Args) != 0 {
			return nil, errorAt(f.Pos, ErrType, "%s() takes no arguments, got %d.", name, len(f.Args))
		}
		return &CurrentTimestamp{}, nil
	case "localtimestamp":
		// The batch's current time as a wall clock in the session time
		// zone (a TIMESTAMP_NTZ), as Spark's LocalTimestamp.
		if len(f.Args) != 0 {
			return nil, errorAt(f.Pos, ErrType, "localtimestamp() takes no arguments, got %d.", len(f.Args))
		}
		return castTo(&CurrentTimestamp{}, vector.TimestampNTZ), nil
	case "current_date":
		if len(f.Args) != 0 {
			return nil, errorAt(f.Pos, ErrType, "current_date() takes no arguments, got %d.", len(f.Args))
		}
		return castTo(&CurrentTimestamp{}, vector.Date), nil
	}
	for _, a := range f.Args {
		if _, ok := a.(*sql.Star); ok && name != "struct" {
			return nil, errorAt(a.Position(), ErrUnsupported, "Invalid usage of '*' in %s().", name)
		}
	}
	if higherOrderFuncs[name] {
		if !hasLambda(f) {
			// Spark takes a value where a function is due as the function
			// that returns it (transform(a, 0)); the engine does not.
			return nil, errorAt(f.Pos, ErrUnsupported, "%s() without a lambda function argument is not supported: write the function as a lambda (x -> ...).", name)
		}
		return r.higherOrder(f, name)
	}
	if e, ok, err := r.callNested(f, name); ok {
		return e, err
	}
	if e, ok, err := r.callScalar(f, name); ok {
		return e, err
	}
	if e, ok, err := r.callTextMore(f, name); ok {
		return e, err
	}
	args, err := r.exprs(f.Args)
	if err != nil {
		return nil, err
	}
	if to, ok := castFunctions[name]; ok && len(args) == 1 {
		// A plan cast, so that the session's time zone and ANSI mode
		// reach it as they reach CAST.
		if vector.IsIntegral(args[0].DataType()) && to.ID() == arrow.BINARY && !r.legacy() {
			return nil, errorAt(f.Pos, ErrType, "cannot cast %s to binary with ANSI mode on. If you have to cast %s to binary, you can set spark.sql.ansi.enabled as false.", vector.TypeName(args[0].DataType()), vector.TypeName(args[0].DataType()))
		}
		return castTo(args[0], to), nil
	}
	switch name {
	case "try_add", "try_subtract", "try_multiply", "try_divide":
		return r.tryArithmetic(f, name, args)
	case "greatest", "least":
		return greatestCall(f, name, args)
	case "try_to_timestamp":
		// to_timestamp already gives NULL for what does not parse.
		name = "to_timestamp"
	}
	if e, ok, err := r.timestampTypeCall(f, name, args); ok {
		return e, err
	}
	switch name {
	case "coalesce", "nvl", "ifnull":
		if len(args) == 0 || name != "coalesce" && len(args) != 2 {
			return nil, errorAt(f.Pos, ErrType, "%s() needs %s arguments, got %d.", name, map[bool]string{true: "at least 1", false: "2"}[name == "coalesce"], len(args))
		}
		if r.legacy() {
			if err := legacyCommonCheck(f.Pos, name+"()", args); err != nil {
				return nil, err
			}
		}
		args, err := coerceAll(f.Pos, name+"()", args)
		if err != nil {
			return nil, err
		}
		return newCall(f.Pos, "coalesce", args...)
	case "if":
		if len(args) != 3 {
			return nil, errorAt(f.Pos, ErrType, "if() needs 3 arguments, got %d.", len(args))
		}
		c, err := requireBoolean(f.Args[0].Position(), "if()", args[0])
		if err != nil {
			return nil, err
		}
		if r.legacy() {
			if err := legacyCommonCheck(f.Pos, "if()", args[1:]); err != nil {
				return nil, err
			}
		}
		return newCase(f.Pos, []Expr{c}, args[1:], true)
	case "isnull", "isnotnull", "window_time":
		if len(args) != 1 {
			return nil, errorAt(f.Pos, ErrType, "%s() needs 1 argument, got %d.", name, len(args))
		}
		if name == "window_time" && !arrow.TypeEqual(args[0].DataType(), vector.WindowType) {
			return nil, errorAt(f.Pos, ErrType, "window_time() needs a window struct, not %s.", typeOrNil(args[0]))
		}
		return newCall(f.Pos, name, args...)
	}
	e, err := newCall(f.Pos, name, args...)
	if err != nil && errors.Is(err, vector.ErrUnknownFunction) {
		if sparkBuiltins[name] {
			return nil, errorAt(f.Name.Pos, ErrUnsupported, "The Spark SQL function %s is not supported by this engine.", backquote(f.Name.Name))
		}
		names := append(vector.FunctionNames(), specialFuncs...)
		for n := range aggFuncs {
			names = append(names, n)
		}
		return nil, errorAt(f.Name.Pos, ErrUnresolved, "Undefined function: %s.%s", backquote(f.Name.Name), didYouMean(name, names))
	}
	return e, err
}

func (r *resolver) aggregate(f *sql.FuncCall, name string) (Expr, error) {
	if r.inAgg {
		return nil, errorAt(f.Pos, ErrAggregate, "It is not allowed to use an aggregate function in the argument of another aggregate function. Please use the inner aggregate function in a sub-query.")
	}
	if r.aggs == nil {
		if e, ok, err := r.outerAggregate(f, name); ok {
			return e, err
		}
		return nil, errorAt(f.Pos, ErrAggregate, "Aggregate functions are not allowed in %s: %s.", r.clauseName(), sql.Format(f))
	}
	a, err := r.aggregateExpr(f, name, true)
	if err != nil {
		return nil, err
	}
	return r.aggs.add(a), nil
}

// aggregateExpr resolves an aggregate call. Its arguments may not contain
// aggregates when nested (an aggregate of a select); a window aggregate's
// may (sum(sum(x)) OVER (...)).
func (r *resolver) aggregateExpr(f *sql.FuncCall, name string, nested bool) (*AggregateExpr, error) {
	a := &AggregateExpr{Func: aggFuncs[name], Distinct: f.Distinct}
	sub := *r
	sub.inAgg = nested
	var argExprs []sql.Expr
	for _, x := range f.Args {
		if st, ok := x.(*sql.Star); ok {
			if len(st.Qualifier) > 0 {
				cols, err := r.countStarColumns(f, name, st)
				if err != nil {
					return nil, err
				}
				argExprs = append(argExprs, cols...)
				continue
			}
			if name == "count" && f.Distinct && r.sc != nil {
				// count(DISTINCT *): the distinct rows of every column,
				// as Spark expands the star.
				cols, err := r.sc.expandStar(nil, st.Position())
				if err != nil {
					return nil, err
				}
				for _, c := range cols {
					argExprs = append(argExprs, &sql.ColumnRef{Pos: st.Pos, Parts: []sql.Ident{{Name: c.Name}}})
				}
				continue
			}
			if name != "count" || len(f.Args) != 1 || f.Distinct {
				return nil, errorAt(x.Position(), ErrUnsupported, "Invalid usage of '*' in %s().", name)
			}
			a.Func = vector.AggCountStar
			continue
		}
		argExprs = append(argExprs, x)
	}
	args, err := sub.exprs(argExprs)
	if err != nil {
		return nil, err
	}
	want := func(lo, hi int) error {
		if len(args) < lo || len(args) > hi {
			return errorAt(f.Pos, ErrType, "%s() needs %d to %d arguments, got %d.", name, lo, hi, len(args))
		}
		return nil
	}
	switch a.Func {
	case vector.AggCountStar:
	case vector.AggCount:
		if len(args) == 0 {
			if !r.b.legacySwitches().ParameterlessCount {
				return nil, errorAt(f.Pos, ErrType, "count requires at least one argument. If you have to call the function count without arguments, set the legacy configuration `%s` as true.", ConfParameterlessCount)
			}
			// The legacy parameterless count counts no row: Spark answers
			// 0 for count() over a table of rows, as for count(NULL),
			// which is what it becomes here (still named count()).
			args = []Expr{&Literal{Value: nil, Type: arrow.Null}}
		}
		// count(1), count of a non-null constant, counts every row: Spark
		// names it count(1) like count(*).
		if l, ok := args[0].(*Literal); ok && len(args) == 1 && l.Value != nil && !f.Distinct {
			a.Func, args = vector.AggCountStar, nil
		}
	case vector.AggFirst, vector.AggLast:
		if err := want(1, 2); err != nil {
			return nil, err
		}
		if len(args) == 2 {
			l, ok := args[1].(*Literal)
			b, isBool := any(nil), false
			if ok {
				b = l.Value
				_, isBool = b.(bool)
			}
			if !isBool {
				return nil, errorAt(f.Args[1].Position(), ErrType, "The second argument of %s() must be a boolean literal (ignoreNulls).", name)
			}
			a.IgnoreNulls = b.(bool)
			args = args[:1]
		}
	case vector.AggApproxCountDistinct:
		if err := want(1, 2); err != nil {
			return nil, err
		}
		if len(args) == 2 && vector.IsNumeric(args[1].DataType()) && isConstant(args[1]) {
			// The relative SD is a double (0.05 is a decimal literal).
			if l, err := foldConstant(castTo(args[1], vector.Float64)); err == nil {
				args[1] = l
			}
		}
	default:
		if ext, ok := extAggregateArgs(f, name, a.Func, args); ok {
			if args, err = ext(); err != nil {
				return nil, err
			}
			break
		}
		if err := want(1, 1); err != nil {
			return nil, err
		}
		if (a.Func == vector.AggSum || a.Func == vector.AggAvg) && (isString(args[0].DataType()) || isNullType(args[0].DataType())) {
			// Spark casts a string, and an untyped NULL (NullType's
			// default numeric type), to DOUBLE: sum(NULL) is a NULL double.
			args[0] = castTo(args[0], vector.Float64)
		}
		if (a.Func == vector.AggSum || a.Func == vector.AggAvg) && r.legacy() && isLTZTimestamp(args[0].DataType()) {
			// With ANSI off Spark sums and averages a TIMESTAMP as its
			// seconds, a DOUBLE (TypeCoercion's rule, as Hive does).
			args[0] = castTo(args[0], vector.Float64)
		}
	}
	if name == "mode" {
		a.Args = args
		modeCall(f, a)
		args = a.Args
	}
	a.Args = args
	dt, err := aggResultType(a)
	if err != nil {
		return nil, typeError(f.Pos, &aggPlaceholder{agg: a}, err)
	}
	a.Type = dt
	if f.Nulls == sql.IgnoreNulls && (a.Func == vector.AggFirst || a.Func == vector.AggLast) {
		a.IgnoreNulls = true
	}
	if name != "mode" {
		a.Name = renderAgg(a, true)
	}
	if isPercentileName(name) {
		a.Func, a.Name = percentileFunc(f, a.Func), percentileName(f, name, a)
	}
	return a, nil
}

// literalOf converts a literal of the syntax tree.
func literalOf(x *sql.Literal) (Expr, error) {
	bad := func(err error) error {
		return errorAt(x.Pos, ErrType, "Invalid %s literal %q: %v.", x.Kind, x.Value, err)
	}
	switch x.Kind {
	case sql.LitNull:
		return &Literal{Type: arrow.Null}, nil
	case sql.LitBool:
		return &Literal{Value: strings.EqualFold(x.Value, "true"), Type: vector.Boolean}, nil
	case sql.LitTinyInt:
		v, err := strconv.ParseInt(x.Value, 10, 8)
		if err != nil {
			return nil, bad(err)
		}
		return &Literal{Value: int8(v), Type: vector.Int8}, nil
	case sql.LitSmallInt:
		v, err := strconv.ParseInt(x.Value, 10, 16)
		if err != nil {
			return nil, bad(err)
		}
		return &Literal{Value: int16(v), Type: vector.Int16}, nil
	case sql.LitInt:
		v, err := strconv.ParseInt(x.Value, 10, 32)
		if err != nil {
			return nil, bad(err)
		}
		return &Literal{Value: int32(v), Type: vector.Int32}, nil
	case sql.LitBigInt:
		v, err := strconv.ParseInt(x.Value, 10, 64)
		if err != nil {
			return decimalLiteral(x)
		}
		return &Literal{Value: v, Type: vector.Int64}, nil
	case sql.LitDecimal:
		return decimalLiteral(x)
	case sql.LitFloat:
		// 1.2F is the float nearest 1.2 (parsed once to 32 bits).
		v, err := strconv.ParseFloat(x.Value, 32)
		if err != nil {
			return nil, bad(err)
		}
		return &Literal{Value: v, Type: vector.Float32}, nil
	case sql.LitDouble:
		v, err := strconv.ParseFloat(x.Value, 64)
		if err != nil {
			return nil, bad(err)
		}
		return &Literal{Value: v, Type: vector.Float64}, nil
	case sql.LitString:
		return &Literal{Value: x.Value, Type: vector.String}, nil
	case sql.LitBinary:
		b, err := hex.DecodeString(x.Value)
		if err != nil {
			return nil, bad(err)
		}
		return &Literal{Value: b, Type: vector.Binary}, nil
	case sql.LitDate, sql.LitTimestamp, sql.LitTimestampLTZ, sql.LitTimestampNTZ:
		to := vector.Date
		switch x.Kind {
		case sql.LitTimestamp, sql.LitTimestampLTZ:
			to = vector.Timestamp
		case sql.LitTimestampNTZ:
			to = vector.TimestampNTZ // a wall time in no zone
		}
		l, err := foldConstant(&Cast{X: &Literal{Value: x.Value, Type: vector.String}, To: to})
		if err != nil {
			return nil, bad(err)
		}
		if l.Value == nil {
			return nil, errorAt(x.Pos, ErrType, "Cannot parse the %s value %q.", x.Kind, x.Value)
		}
		if x.Kind == sql.LitTimestamp || x.Kind == sql.LitTimestampLTZ {
			// A zone in the text makes the value the same in every
			// session time zone; without one it is a wall time.
			if z, err := foldConstant(&Cast{X: &Literal{Value: x.Value, Type: vector.String}, To: to, Loc: time.FixedZone("probe", 3600)}); err == nil && z.Value != l.Value {
				l.wallClock = true
			}
		}
		return l, nil
	}
	return nil, errorAt(x.Pos, ErrUnsupported, "Unsupported literal %s.", x.Kind)
}

// decimalLiteral types 1.50 as DECIMAL(3,2), as Spark does; a number too
// wide for DECIMAL(38) becomes a double.
func decimalLiteral(x *sql.Literal) (Expr, error) {
	s := x.Value
	digits := strings.TrimLeft(s, "+-")
	intPart, frac, _ := strings.Cut(digits, ".")
	intPart = strings.TrimLeft(intPart, "0")
	scale := int32(len(frac))
	prec := max(int32(len(intPart))+scale, 1)
	if strings.ContainsAny(digits, "eE") {
		return exponentDecimal(x)
	}
	if prec > 38 {
		v, err := strconv.ParseFloat(s, 64)
		if err != nil {
			return nil, errorAt(x.Pos, ErrType, "Invalid number %q.", s)
		}
		return &Literal{Value: v, Type: vector.Float64}, nil
	}
	n, err := decimal128.FromString(s, prec, scale)
	if err != nil {
		return nil, errorAt(x.Pos, ErrType, "Invalid decimal %q: %v.", s, err)
	}
	return &Literal{Value: n, Type: vector.Decimal(prec, scale)}, nil
}

// exponentDecimal types a decimal literal with an exponent (5e36BD,
// 1.2E-38BD) as Spark's BigDecimal does: the unscaled digits and scale
// fraction digits - exponent; a negative scale becomes 0 (the digits
// multiplied out), and the precision is at least the scale. A value that
// needs more than 38 digits is an error, not a double.
func exponentDecimal(x *sql.Literal) (Expr, error) {
	s := x.Value
	neg := strings.HasPrefix(s, "-")
	mant, exp, _ := strings.Cut(strings.ToLower(strings.TrimLeft(s, "+-")), "e")
	e, err := strconv.ParseInt(exp, 10, 32)
	if err != nil || mant == "" || mant == "." {
		return nil, errorAt(x.Pos, ErrType, "Invalid number %q.", s)
	}
	intPart, frac, _ := strings.Cut(mant, ".")
	digits := strings.TrimLeft(intPart+frac, "0")
	scale := int64(len(frac)) - e
	if digits == "" {
		digits = "0"
	}
	if scale < 0 {
		if int64(len(digits))-scale > 38 && digits != "0" {
			return nil, errorAt(x.Pos, ErrType, "[INVALID_NUMERIC_LITERAL_RANGE] The decimal literal %s exceeds the maximum precision of 38.", s)
		}
		if digits != "0" {
			digits += strings.Repeat("0", int(-scale))
		}
		scale = 0
	}
	prec := max(int64(len(digits)), scale, 1)
	if prec > 38 || scale > 38 {
		return nil, errorAt(x.Pos, ErrType, "[DECIMAL_PRECISION_EXCEEDS_MAX_PRECISION] The decimal literal %s needs precision %d, which exceeds the maximum precision of 38.", s, prec)
	}
	if neg {
		digits = "-" + digits
	}
	v, ok := new(big.Int).SetString(digits, 10)
	if !ok {
		return nil, errorAt(x.Pos, ErrType, "Invalid number %q.", s)
	}
	return &Literal{Value: decimal128.FromBigInt(v), Type: vector.Decimal(int32(prec), int32(scale))}, nil
}

// intervalOf converts an interval literal to a constant of vector's
// interval type (microseconds); months have no fixed length and are
// rejected.
func intervalOf(x *sql.IntervalLit) (Expr, error) {
	switch kind, fields := x.Kind(); kind {
	case sql.IntervalMixed:
		return nil, errorAt(x.Pos, ErrType, "Cannot mix year-month and day-time fields: %s.", sql.Format(x))
	case sql.IntervalYearMonth:
		return ymIntervalOf(x, fields)
	}
	iv, err := x.Value()
	if err != nil {
		return nil, errorAt(x.Pos, ErrType, "%v.", err)
	}
	if iv.Months != 0 {
		return nil, errorAt(x.Pos, ErrUnsupported, "Intervals with months or years are not supported here (they have no fixed length).")
	}
	us, err := iv.Fixed()
	if err != nil {
		// Spark bounds day-time intervals by a long of microseconds
		// (106751991 days 04:00:54.775807).
		return nil, errorAt(x.Pos, ErrType, "[INTERVAL_ARITHMETIC_OVERFLOW] The day-time interval %s is out of range: %v.", sql.Format(x), err)
	}
	return &Literal{Value: arrow.Duration(us), Type: vector.Interval, dayField: dayFieldsOnly(x), dtFields: dtLiteralFields(x)}, nil
}

// filteredAggregate rewrites agg(x) FILTER (WHERE c) as
// agg(CASE WHEN c THEN x END): the aggregates that take it skip nulls, so
// the rows where c is false or NULL no longer count, which is FILTER's
// meaning. count(*) becomes count(CASE WHEN c THEN 1 END). first and last
// count nulls unless told to ignore them, so a NULL from a filtered-out
// row would be taken for a value: they are refused.
func filteredAggregate(f *sql.FuncCall, name string) (*sql.FuncCall, error) {
	switch name {
	case "first", "first_value", "last", "last_value", "any_value":
		return nil, errorAt(f.Filter.Position(), ErrUnsupported, "FILTER (WHERE ...) with %s() is not supported.", name)
	}
	g := *f
	g.Filter = nil
	g.Args = make([]sql.Expr, len(f.Args))
	for i, a := range f.Args {
		if _, ok := a.(*sql.Star); ok {
			a = &sql.Literal{Pos: a.Position(), Kind: sql.LitInt, Value: "1"}
		}
		if i > 0 && name == "approx_count_distinct" {
			// The relative standard deviation is a parameter, not a value.
			g.Args[i] = a
			continue
		}
		g.Args[i] = &sql.Case{Pos: a.Position(), Whens: []*sql.When{{Pos: f.Filter.Position(), Cond: f.Filter, Result: a}}}
	}
	return &g, nil
}

// castFunctions are the functions that are casts (timestamp(x) is
// CAST(x AS TIMESTAMP)).
var castFunctions = map[string]arrow.DataType{
	"boolean": vector.Boolean, "int": vector.Int32, "bigint": vector.Int64,
	"double": vector.Float64, "string": vector.String, "binary": vector.Binary,
	"timestamp": vector.Timestamp, "date": vector.Date,
	"tinyint": vector.Int8, "smallint": vector.Int16, "float": vector.Float32,
}

// tryOps maps the try_ arithmetic functions to their operators.
var tryOps = map[string]sql.BinaryOp{"try_add": sql.OpAdd, "try_subtract": sql.OpSub, "try_multiply": sql.OpMul, "try_divide": sql.OpDiv}

// tryArithmetic resolves try_add(a, b) and its siblings as the operator
// itself (Spark's TryAdd is Add, or for dates and intervals the operator's
// replacement, under TryEval): the same coercions and type rules as a + b
// (date + int is date_add, timestamp ± interval, year-month interval
// arithmetic), with the arithmetic evaluated in try mode (NULL instead of
// ARITHMETIC_OVERFLOW or DIVIDE_BY_ZERO).
func (r *resolver) tryArithmetic(f *sql.FuncCall, name string, args []Expr) (Expr, error) {
	if len(args) != 2 {
		return nil, errorAt(f.Pos, ErrType, "%s() takes 2 arguments, got %d.", name, len(args))
	}
	x := &sql.BinaryExpr{Pos: f.Pos, Op: tryOps[name], L: f.Args[0], R: f.Args[1]}
	e, err := r.binaryOf(x, args[0], args[1])
	if err != nil {
		return nil, err
	}
	return tryMode(e), nil
}

// tryMode sets try mode on the arithmetic operator at the top of e (under
// the cast back to a string operand's type). Other forms the operator
// resolves to (date_add, a timestamp difference) keep their mode.
func tryMode(e Expr) Expr {
	switch y := e.(type) {
	case *Cast:
		c := *y
		c.X = tryMode(y.X)
		return &c
	case *Call:
		switch y.Func {
		case "+", "-", "*", "/":
			c := *y
			c.Mode = vector.ModeTry
			c.Null = true
			c.typing.folded = nil // folded (if at all) in ANSI mode
			return &c
		}
	}
	return e
}

// countStarColumns expands t.* in count's arguments into t's columns, as
// Spark expands a star in a function's arguments: count(t.*, x) is
// count(t.a, t.b, x). A lone count(t.*) is refused (Spark's
// SPARK-34281) unless the session sets
// spark.sql.legacy.allowStarWithSingleTableIdentifierInCount; other
// aggregates refuse t.* as before.
func (r *resolver) countStarColumns(f *sql.FuncCall, name string, st *sql.Star) ([]sql.Expr, error) {
	if name != "count" || (len(f.Args) == 1 && !r.b.legacySwitches().StarInCount) {
		return nil, errorAt(st.Position(), ErrUnsupported, "%s(%s.*) is not allowed. Please use count(*) or expand the columns manually, e.g. count(col1, col2)", name, sql.Format(&sql.ColumnRef{Parts: st.Qualifier}))
	}
	if r.sc == nil {
		return nil, errorAt(st.Position(), ErrUnsupported, "Invalid usage of '*' in %s().", name)
	}
	cols, err := r.sc.expandStar(st.Qualifier, st.Position())
	if err != nil {
		return nil, err
	}
	out := make([]sql.Expr, len(cols))
	for i, c := range cols {
		parts := append(append([]sql.Ident(nil), st.Qualifier...), sql.Ident{Name: c.Name})
		out[i] = &sql.ColumnRef{Pos: st.Pos, Parts: parts}
	}
	return out, nil
}

// isLTZTimestamp reports whether dt is TIMESTAMP (an instant), not
// TIMESTAMP_NTZ.
func isLTZTimestamp(dt arrow.DataType) bool {
	_, ok := vector.Unwrap(dt).(*arrow.TimestampType)
	return ok && !vector.IsTimestampNTZ(dt)
}
