package sparksql

import (
	"context"

	"github.com/apache/arrow/go/v17/arrow"
	"github.com/apache/arrow/go/v17/arrow/memory"

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
