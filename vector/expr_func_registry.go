package vector

import (
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/apache/arrow/go/v17/arrow"
	"github.com/apache/arrow/go/v17/arrow/memory"
)

// FuncExpr is a call of a built-in function by name, as Spark renders it:
// name(arg1, arg2). The constructors (Lower, Substring, Hash, ...) build
// it; LookupFunction builds it from a name.
type FuncExpr struct {
	Name string
	Args []Expr
	// Loc is the session time zone (spark.sql.session.timeZone) of the
	// functions that meet wall clocks (to_timestamp, unix_timestamp,
	// to_date, date_trunc); nil is UTC.
	Loc *time.Location
	// Mode is the session's ANSI setting for the functions that follow it
	// (to_timestamp, to_date and unix_timestamp raise on text that does
	// not parse under ANSI, as Spark does, and are NULL without it).
	Mode EvalMode
	bind func(f *FuncExpr, in *arrow.Schema, mem memory.Allocator, args []Evaluator) (Evaluator, error)
	// ntzSafe is set where bind reads a TIMESTAMP_NTZ argument as its own
	// wall clock (timestamp_ntz ± a year-month interval), so the generic
	// refusal of such arguments does not apply.
	ntzSafe bool
}

func (f *FuncExpr) String() string { return funcString(f.Name, f.Args...) }

// Bind implements Expr. Argument type errors are bind errors naming the
// call.
func (f *FuncExpr) Bind(in *arrow.Schema, mem memory.Allocator) (Evaluator, error) {
	args, err := bindAll(in, mem, f.Args)
	if err != nil {
		return nil, err
	}
	if err := checkNTZArgs(f.Name, args); err != nil && !f.ntzSafe {
		return nil, newBindError(f, in, err)
	}
	ev, err := f.bind(f, in, mem, args)
	if err != nil {
		var be *BindError
		if errors.As(err, &be) {
			return nil, err
		}
		return nil, newBindError(f, in, err)
	}
	return ev, nil
}

// Sentinel errors of function lookup.
var (
	// ErrUnknownFunction is a function name LookupFunction does not know.
	ErrUnknownFunction = errors.New("unknown function")
	// ErrArgumentCount is a call with the wrong number of arguments.
	ErrArgumentCount = errors.New("wrong number of arguments")
)

// funcSpec describes a registered function: its arity and constructor.
type funcSpec struct {
	min, max int // max < 0: variadic
	build    func(args []Expr) Expr
}

func arg(args []Expr, i int) Expr {
	if i < len(args) {
		return args[i]
	}
	return nil
}

// castFunc is Spark's function-style cast, int(x), string(x), ...
func castFunc(to arrow.DataType) funcSpec {
	return funcSpec{1, 1, func(a []Expr) Expr { return Cast(a[0], to) }}
}

var functions = map[string]funcSpec{
	"lower":             {1, 1, func(a []Expr) Expr { return Lower(a[0]) }},
	"lcase":             {1, 1, func(a []Expr) Expr { return Lower(a[0]) }},
	"upper":             {1, 1, func(a []Expr) Expr { return Upper(a[0]) }},
	"ucase":             {1, 1, func(a []Expr) Expr { return Upper(a[0]) }},
	"length":            {1, 1, func(a []Expr) Expr { return Length(a[0]) }},
	"char_length":       {1, 1, func(a []Expr) Expr { return Length(a[0]) }},
	"character_length":  {1, 1, func(a []Expr) Expr { return Length(a[0]) }},
	"len":               {1, 1, func(a []Expr) Expr { return Length(a[0]) }},
	"substring":         {2, 3, func(a []Expr) Expr { return Substring(a[0], a[1], arg(a, 2)) }},
	"substr":            {2, 3, func(a []Expr) Expr { return Substring(a[0], a[1], arg(a, 2)) }},
	"concat":            {0, -1, func(a []Expr) Expr { return Concat(a...) }},
	"split":             {2, 3, func(a []Expr) Expr { return Split(a[0], a[1], arg(a, 2)) }},
	"like":              {2, 2, func(a []Expr) Expr { return Like(a[0], a[1]) }},
	"hash":              {1, -1, func(a []Expr) Expr { return Hash(a...) }},
	"timestamp_seconds": {1, 1, func(a []Expr) Expr { return TimestampSeconds(a[0]) }},
	"timestamp_millis":  {1, 1, func(a []Expr) Expr { return TimestampMillis(a[0]) }},
	"timestamp_micros":  {1, 1, func(a []Expr) Expr { return TimestampMicros(a[0]) }},
	"unix_timestamp":    {1, 2, func(a []Expr) Expr { return UnixTimestamp(a[0], arg(a, 1)) }},
	"to_timestamp":      {1, 2, func(a []Expr) Expr { return ToTimestamp(a[0], arg(a, 1)) }},
	"to_number":         {2, 2, func(a []Expr) Expr { return ToNumber(a[0], a[1]) }},
	"try_to_number":     {2, 2, func(a []Expr) Expr { return TryToNumber(a[0], a[1]) }},
	"to_date":           {1, 2, func(a []Expr) Expr { return ToDate(a[0], arg(a, 1)) }},
	"date_trunc":        {2, 2, func(a []Expr) Expr { return DateTrunc(a[0], a[1]) }},
	"hour":              {1, 1, func(a []Expr) Expr { return Hour(a[0]) }},
	"from_unixtime":     {1, 2, func(a []Expr) Expr { return FromUnixTime(a[0], arg(a, 1)) }},
	"minute":            {1, 1, func(a []Expr) Expr { return Minute(a[0]) }},
	"second":            {1, 1, func(a []Expr) Expr { return Second(a[0]) }},
	"abs":               {1, 1, func(a []Expr) Expr { return Abs(a[0]) }},
	"round":             {1, 2, func(a []Expr) Expr { return Round(a[0], arg(a, 1)) }},
	"floor":             {1, 2, func(a []Expr) Expr { return floorCeilCall("floor", false, a) }},
	"ceil":              {1, 2, func(a []Expr) Expr { return floorCeilCall("ceil", true, a) }},
	"ceiling":           {1, 2, func(a []Expr) Expr { return floorCeilCall("ceiling", true, a) }},
	"coalesce":          {1, -1, func(a []Expr) Expr { return Coalesce(a...) }},
	"nvl":               {2, 2, func(a []Expr) Expr { return Coalesce(a...) }},
	"ifnull":            {2, 2, func(a []Expr) Expr { return Coalesce(a...) }},
	"if":                {3, 3, func(a []Expr) Expr { return If(a[0], a[1], a[2]) }},
	"isnull":            {1, 1, func(a []Expr) Expr { return IsNull(a[0]) }},
	"isnotnull":         {1, 1, func(a []Expr) Expr { return IsNotNull(a[0]) }},
	"boolean":           castFunc(Boolean),
	"int":               castFunc(Int32),
	"bigint":            castFunc(Int64),
	"tinyint":           castFunc(Int8),
	"smallint":          castFunc(Int16),
	"double":            castFunc(Float64),
	"string":            castFunc(String),
	"binary":            castFunc(Binary),
	"timestamp":         castFunc(Timestamp),
	"date":              castFunc(Date),
	"decimal":           castFunc(Decimal(10, 0)),
	"from_json":         {2, 3, func(a []Expr) Expr { return FromJSON(a[0], a[1], arg(a, 2)) }},
	"to_json":           {1, 2, func(a []Expr) Expr { return ToJSON(a[0], arg(a, 1)) }},
}

// LookupFunction builds the call of the built-in function name (case
// insensitive) with args, as the SQL planner resolves names. An unknown
// name wraps ErrUnknownFunction and a wrong number of arguments wraps
// ErrArgumentCount; argument types are checked later, by Bind.
func LookupFunction(name string, args []Expr) (Expr, error) {
	spec, ok := functions[strings.ToLower(name)]
	if !ok {
		return nil, fmt.Errorf("%w: %s", ErrUnknownFunction, name)
	}
	if len(args) < spec.min || spec.max >= 0 && len(args) > spec.max {
		want := fmt.Sprintf("%d", spec.min)
		switch {
		case spec.max < 0:
			want = fmt.Sprintf("at least %d", spec.min)
		case spec.max != spec.min:
			want = fmt.Sprintf("%d to %d", spec.min, spec.max)
		}
		for _, a := range args {
			if a == nil {
				return nil, fmt.Errorf("%s: nil argument", strings.ToLower(name))
			}
		}
		return nil, fmt.Errorf("%s requires %s arguments, got %d: %w", funcString(strings.ToLower(name), args...), want, len(args), ErrArgumentCount)
	}
	for _, a := range args {
		if a == nil {
			return nil, fmt.Errorf("%s: nil argument", strings.ToLower(name))
		}
	}
	return spec.build(args), nil
}

// FunctionArity returns the numbers of arguments the scalar function name
// takes (max < 0: any number from min); ok is false for a name the
// registry does not hold.
func FunctionArity(name string) (minArgs, maxArgs int, ok bool) {
	spec, ok := functions[strings.ToLower(name)]
	return spec.min, spec.max, ok
}

// FunctionNames lists the names LookupFunction knows, for help and error
// suggestions.
func FunctionNames() []string {
	out := make([]string, 0, len(functions))
	for n := range functions {
		out = append(out, n)
	}
	return out
}
