package plan

import (
	"context"
	"fmt"
	"regexp"
	"slices"
	"strings"

	"github.com/apache/arrow/go/v17/arrow"
	"github.com/apache/arrow/go/v17/arrow/memory"

	"github.com/arrowstream/arrowstream/sql"
	"github.com/arrowstream/arrowstream/vector"
)

// ScalarFunction is a user-defined scalar function: what Spark's
// spark.udf.register gives a session. A call name(a, b, ...) casts each
// argument to its type in Args where the cast keeps every value (INT to
// BIGINT, a number or date to STRING, NULL to anything; other arguments
// are refused: write the CAST) and evaluates Eval over whole columns, one
// call per batch.
//
// A user function is opaque to the optimizer: it is never folded as a
// constant (Spark's ScalaUDF is not foldable), so udf(1) is computed when
// the query runs and is not a constant where SQL wants one (LIMIT, an
// ordinal). A deterministic function moves where any deterministic
// expression moves (filters pushed below projections and into joins); one
// that is not stays where it was written, as rand() does.
type ScalarFunction struct {
	// Name is the name SQL calls it by (an identifier, compared without
	// regard to case). It may not be a built-in function's.
	Name string
	// Args are the argument types, one per argument.
	Args []arrow.DataType
	// Result is the type of the values Eval returns.
	Result arrow.DataType
	// Deterministic reports that equal arguments always give equal
	// results.
	Deterministic bool
	// Eval computes the function over columns of equal length (len(Args)
	// arrays, borrowed: Retain what is kept) and returns an array of
	// that length and of type Result, which the caller owns. mem is the
	// query's allocator; ctx is cancelled with the query. A returned
	// error fails the query, wrapped with the function's name.
	Eval func(ctx context.Context, mem memory.Allocator, args []arrow.Array) (arrow.Array, error)
	// Build, when set, makes a call's expression from its resolved
	// arguments in place of the cast-and-call above (Spark's
	// UserDefinedFunction whose apply builds the expression): for a
	// function whose types follow its arguments', such as Spark's test
	// UDF CAST(f(CAST(x AS STRING)) AS typeof(x)). b casts and calls as
	// SQL does; Args, Result and Eval then describe what b.Invoke calls.
	Build func(b *FunctionBuilder, args []Expr) (Expr, error)
}

// FunctionCatalog is a Catalog that also holds user functions.
type FunctionCatalog interface {
	// Function returns the user function called name (any case), or nil.
	Function(name string) *ScalarFunction
}

// identifier is what a user function may be called: an unquoted SQL
// identifier.
var identifier = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)

// IsBuiltinFunction reports whether name (any case) is a function the
// engine or Spark defines (implemented or not), which a user function may
// not shadow.
func IsBuiltinFunction(name string) bool {
	n := strings.ToLower(name)
	if sparkBuiltins[n] || internalFunctions[n] || IsAggregateFunction(n) {
		return true
	}
	if _, ok := castFunctions[n]; ok {
		return true
	}
	_, found := slices.BinarySearch(FunctionNames(), n)
	return found
}

// Validate checks a registration: a usable name that no built-in has,
// types for every argument and the result, an implementation.
func (f *ScalarFunction) Validate() error {
	switch {
	case f == nil:
		return fmt.Errorf("plan: user function: nil function")
	case !identifier.MatchString(f.Name):
		return fmt.Errorf("plan: user function %q: the name must be an identifier (letters, digits, _): %w", f.Name, ErrType)
	case IsBuiltinFunction(f.Name):
		return fmt.Errorf("plan: user function %s: [ROUTINE_ALREADY_EXISTS] %s is a built-in function, which a user function cannot replace", backquote(f.Name), backquote(strings.ToLower(f.Name)))
	case f.Result == nil:
		return fmt.Errorf("plan: user function %s: no result type: %w", backquote(f.Name), ErrType)
	case f.Eval == nil:
		return fmt.Errorf("plan: user function %s: no Eval: %w", backquote(f.Name), ErrType)
	}
	for i, t := range f.Args {
		if t == nil {
			return fmt.Errorf("plan: user function %s: argument %d has no type: %w", backquote(f.Name), i+1, ErrType)
		}
	}
	return nil
}

// FunctionBuilder builds the expression of a user function's call (see
// ScalarFunction.Build) with the analysis's semantics.
type FunctionBuilder struct {
	r   *resolver
	pos sql.Pos
}

// Cast is CAST(e AS to) as written in SQL, refused as SQL refuses it;
// automatic column names leave it out, as Spark's leave out the casts
// it did not read in the query.
func (b *FunctionBuilder) Cast(e Expr, to arrow.DataType) (Expr, error) {
	var ym vector.YMFields
	if isYMInterval(&Cast{To: to}) {
		ym, _ = ymFieldsOf(e)
	}
	c, err := b.r.explicitCast(b.pos, e, to, ym, false)
	if cc, ok := c.(*Cast); ok && cc != e {
		u := *cc
		u.unnamed = true
		c = &u
	}
	return c, err
}

// Invoke calls f over args, cast to f.Args.
func (b *FunctionBuilder) Invoke(f *ScalarFunction, args ...Expr) (Expr, error) {
	return invokeUDF(b.pos, f, args)
}

// udfCall resolves a call of the user function f.
func (r *resolver) udfCall(call *sql.FuncCall, f *ScalarFunction) (Expr, error) {
	name := backquote(call.Name.Name)
	switch {
	case call.Over != nil:
		return nil, errorAt(call.Pos, ErrAggregate, "[UNSUPPORTED_EXPR_FOR_WINDOW] Expression %s not supported within a window function.", name)
	case call.Filter != nil:
		return nil, errorAt(call.Filter.Position(), ErrAggregate, "FILTER (WHERE ...) is only allowed with aggregate functions, not with %s().", name)
	case call.Distinct:
		return nil, errorAt(call.Pos, ErrAggregate, "DISTINCT is only allowed in aggregate functions, not in %s().", name)
	}
	for _, a := range call.Args {
		if _, ok := a.(*sql.Star); ok {
			return nil, errorAt(a.Position(), ErrUnsupported, "Invalid usage of '*' in %s().", name)
		}
	}
	args, err := r.exprs(call.Args)
	if err != nil {
		return nil, err
	}
	if f.Build != nil {
		return f.Build(&FunctionBuilder{r: r, pos: call.Pos}, args)
	}
	return invokeUDF(call.Pos, f, args)
}

// invokeUDF is the call of f over args cast to f's argument types: never
// a constant (see ScalarFunction).
func invokeUDF(pos sql.Pos, f *ScalarFunction, args []Expr) (Expr, error) {
	if len(args) != len(f.Args) {
		return nil, errorAt(pos, ErrType, "[WRONG_NUM_ARGS.WITHOUT_SUGGESTION] The %s requires %d parameters but the actual number is %d.", backquote(f.Name), len(f.Args), len(args))
	}
	cast := make([]Expr, len(args))
	for i, a := range args {
		// Only a cast that keeps every value (an up-cast: INT to BIGINT,
		// a number to STRING, NULL to anything) is made implicitly; for
		// anything else the caller writes the CAST it means.
		if !canUpCast(a.DataType(), f.Args[i]) {
			return nil, errorAt(pos, ErrType, "[DATATYPE_MISMATCH.UNEXPECTED_INPUT_TYPE] Cannot resolve %s(...): parameter %d requires the %s type, however %s has the type %s.", backquote(f.Name), i+1, vector.TypeName(f.Args[i]), a, vector.TypeName(a.DataType()))
		}
		cast[i] = castTo(a, f.Args[i])
		if _, err := inferType(cast[i]); err != nil && cast[i] != a && !isRuntimeError(err) {
			return nil, typeError(pos, cast[i], err)
		}
	}
	return &Call{Func: strings.ToLower(f.Name), Args: cast, Type: f.Result, Null: true, UDF: f,
		typing: callTyping{known: true}}, nil
}

// lookupUDF returns the user function a call names, or nil.
func (r *resolver) lookupUDF(name string) *ScalarFunction {
	if r.funcs != nil {
		return r.funcs.Function(name)
	}
	if r.b != nil && r.b.funcs != nil {
		return r.b.funcs.Function(name)
	}
	if r.a != nil {
		if fc, ok := r.a.cat.(FunctionCatalog); ok {
			return fc.Function(name)
		}
	}
	return nil
}

// userFuncs returns the analysis's user functions (nil without a budget).
func (b *budget) userFuncs() FunctionCatalog {
	if b == nil {
		return nil
	}
	return b.funcs
}
