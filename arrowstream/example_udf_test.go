package arrowstream_test

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

// A user function over whole columns: len(s) + n, NULL for NULL.
func ExampleSession_RegisterFunction() {
	s := arrowstream.NewSession(arrowstream.SessionOptions{})
	err := s.RegisterFunction(&plan.ScalarFunction{
		Name: "plus_len", Args: []arrow.DataType{vector.String, vector.Int64},
		Result: vector.Int64, Deterministic: true,
		Eval: func(_ context.Context, mem memory.Allocator, args []arrow.Array) (arrow.Array, error) {
			str, n := args[0].(*array.String), args[1].(*array.Int64)
			b := array.NewInt64Builder(mem)
			defer b.Release()
			for i := 0; i < str.Len(); i++ {
				if str.IsNull(i) || n.IsNull(i) {
					b.AppendNull()
				} else {
					b.Append(int64(len(str.Value(i))) + n.Value(i))
				}
			}
			return b.NewArray(), nil
		},
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	ctx := context.Background()
	res, err := s.SQL(ctx, "SELECT plus_len(name, 1) AS n FROM VALUES ('ada'), ('grace'), (NULL) AS people(name)")
	if err != nil {
		fmt.Println(err)
		return
	}
	defer res.Close()
	recs, err := vector.Drain(ctx, res.Op)
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, r := range recs {
		for i := 0; i < int(r.NumRows()); i++ {
			fmt.Println(r.Column(0).ValueStr(i))
		}
		r.Release()
	}
	// Output:
	// 4
	// 6
	// (null)
}
