package sparksql

import (
	"context"
	"fmt"

	"github.com/apache/arrow/go/v17/arrow"
	"github.com/apache/arrow/go/v17/arrow/array"
	"github.com/apache/arrow/go/v17/arrow/memory"

	"github.com/arrowstream/arrowstream/arrowstream"
	"github.com/arrowstream/arrowstream/plan"
	"github.com/arrowstream/arrowstream/vector"
)

// testUDF is Spark's test UDF as SQLQueryTestSuite registers it under the
// name udf for the files under udf/ (IntegratedUDFTestUtils'
// TestInternalScalaUDF): udf(x) is CAST(f(CAST(x AS STRING)) AS
// typeof(x)), where the user function f returns its string argument as
// it is (NULL for NULL). Through the engine's user-function API it is
// what Spark's is: an opaque deterministic call the optimizer neither
// folds nor looks into, with the casts around it of the SQL CAST.
func testUDF() *plan.ScalarFunction {
	f := &plan.ScalarFunction{
		Name:          "udf",
		Args:          []arrow.DataType{vector.String},
		Result:        vector.String,
		Deterministic: true,
		Eval: func(_ context.Context, _ memory.Allocator, args []arrow.Array) (arrow.Array, error) {
			// The input's strings, as they are: the column itself.
			args[0].Retain()
			return args[0], nil
		},
	}
	f.Build = func(b *plan.FunctionBuilder, args []plan.Expr) (plan.Expr, error) {
		if len(args) != 1 {
			// Spark's builder asserts one column; Invoke says so with
			// WRONG_NUM_ARGS.
			return b.Invoke(f, args...)
		}
		s, err := b.Cast(args[0], vector.String)
		if err != nil {
			return nil, err
		}
		call, err := b.Invoke(f, s)
		if err != nil {
			return nil, err
		}
		return b.Cast(call, args[0].DataType())
	}
	return f
}

// pgFunctions are the functions SQLQueryTestSuite registers for the
// PostgreSQL files (postgreSQL/boolean.sql and case.sql call them).
var pgFunctions = []string{"booleq", "boolne", "vol"}

// suiteFunctions builds the suite's user functions by name.
var suiteFunctions = map[string]func() *plan.ScalarFunction{
	"udf":    testUDF,
	"booleq": func() *plan.ScalarFunction { return boolCompare("booleq", true) },
	"boolne": func() *plan.ScalarFunction { return boolCompare("boolne", false) },
	"vol":    vol,
}

// registerFunctions registers the named suite functions on s.
func registerFunctions(s *arrowstream.Session, names []string) error {
	for _, n := range names {
		mk, ok := suiteFunctions[n]
		if !ok {
			return fmt.Errorf("sparksql: no suite function %q", n)
		}
		if err := s.RegisterFunction(mk()); err != nil {
			return fmt.Errorf("sparksql: suite function %s: %w", n, err)
		}
	}
	return nil
}

// vol is the suite's vol(s: String) = s: a string function the optimizer
// cannot see through ("volatile" in the PostgreSQL original).
func vol() *plan.ScalarFunction {
	return &plan.ScalarFunction{
		Name: "vol", Args: []arrow.DataType{vector.String}, Result: vector.String, Deterministic: true,
		Eval: func(_ context.Context, _ memory.Allocator, args []arrow.Array) (arrow.Array, error) {
			args[0].Retain()
			return args[0], nil
		},
	}
}

// boolCompare is the suite's booleq (b1 == b2) or boolne (b1 != b2) over
// two booleans: a Scala function of primitive Booleans, so NULL when
// either input is NULL (Spark does not call it with a NULL primitive).
func boolCompare(name string, eq bool) *plan.ScalarFunction {
	return &plan.ScalarFunction{
		Name: name, Args: []arrow.DataType{vector.Boolean, vector.Boolean}, Result: vector.Boolean, Deterministic: true,
		Eval: func(_ context.Context, mem memory.Allocator, args []arrow.Array) (arrow.Array, error) {
			a, ok1 := args[0].(*array.Boolean)
			b, ok2 := args[1].(*array.Boolean)
			if !ok1 || !ok2 {
				return nil, fmt.Errorf("%s: want two boolean columns, got %s and %s", name, args[0].DataType(), args[1].DataType())
			}
			out := array.NewBooleanBuilder(mem)
			defer out.Release()
			out.Reserve(a.Len())
			for i := 0; i < a.Len(); i++ {
				if a.IsNull(i) || b.IsNull(i) {
					out.AppendNull()
					continue
				}
				out.UnsafeAppend((a.Value(i) == b.Value(i)) == eq)
			}
			return out.NewArray(), nil
		},
	}
}
