package vector_test

import (
	"context"
	"fmt"
	"math/big"

	"github.com/apache/arrow/go/v17/arrow"
	"github.com/apache/arrow/go/v17/arrow/decimal128"
	"github.com/apache/arrow/go/v17/arrow/memory"

	"github.com/arrowstream/arrowstream/vector"
	vt "github.com/arrowstream/arrowstream/vector/vectortest"
)

// checkLiteralsAsColumns decodes data twice, once with literals and once
// with every literal replaced by a column holding its value in every row,
// and compares the results. Kernels bind constant operands to their own
// code paths (and fold constant subtrees at bind time), so this compares
// each constant-operand kernel with its column-operand twin.
//
// Only results are compared: a literal may legitimately change the type
// (an integer literal in decimal arithmetic takes only the digits of its
// value) and where a constant's error surfaces (bind instead of eval).
func checkLiteralsAsColumns(mem memory.Allocator, data []byte, errorf func(format string, args ...any)) {
	b1 := &wideBuilder{exprBuilder: exprBuilder{data: data}}
	e1 := b1.expr()
	b2 := &wideBuilder{exprBuilder: exprBuilder{data: data}, litCols: true}
	e2 := b2.expr()
	if len(b2.used) == 0 {
		return
	}
	fields := append([]arrow.Field(nil), fuzzWideSchema.Fields()...)
	rows := make([]vt.Row, len(fuzzWideRows))
	for i, r := range fuzzWideRows {
		rows[i] = append(vt.Row(nil), r...)
	}
	seen := map[int]bool{}
	for _, k := range b2.used {
		if seen[k] {
			continue
		}
		seen[k] = true
		dt, v := literalValue(fuzzWideLiterals[k])
		fields = append(fields, arrow.Field{Name: fmt.Sprintf("lit%d", k), Type: dt, Nullable: true})
		for i := range rows {
			rows[i] = append(rows[i], v)
		}
	}
	compareTwins(mem, e1, e2, arrow.NewSchema(fields, nil), rows, "with literal columns", errorf)
}

// checkPlainDictionaries compares an expression over the dictionary columns
// with its twin over the same columns decoded (CAST(ds AS STRING)): the
// dictionary kernels (comparisons, IN, LIKE and string functions run once
// per dictionary entry) against the plain ones.
func checkPlainDictionaries(mem memory.Allocator, data []byte, errorf func(format string, args ...any)) {
	b1 := &wideBuilder{exprBuilder: exprBuilder{data: data}}
	e1 := b1.expr()
	b2 := &wideBuilder{exprBuilder: exprBuilder{data: data}, plainDicts: true}
	e2 := b2.expr()
	if e1.String() == e2.String() {
		return // no dictionary column
	}
	compareTwins(mem, e1, e2, fuzzWideSchema, fuzzWideRows, "decoded", errorf)
}

// compareTwins evaluates e1 over the wide rows and its twin e2 over rows of
// schema2, and reports results that differ, or an error of one only. A
// bind error of either skips the comparison.
func compareTwins(mem memory.Allocator, e1, e2 vector.Expr, schema2 *arrow.Schema, rows2 []vt.Row, twin string, errorf func(format string, args ...any)) {
	got1, ok1, err1 := evalForCompare(mem, e1, fuzzWideSchema, fuzzWideRows)
	got2, ok2, err2 := evalForCompare(mem, e2, schema2, rows2)
	if !ok1 || !ok2 {
		return
	}
	switch {
	case (err1 == nil) != (err2 == nil):
		errorf("%s: %v; %s, %s: %v", e1, err1, twin, e2, err2)
	case err1 == nil && !vt.ValueEqual(got1, got2):
		errorf("%s and %s (%s) differ:\n%v\n%v", e1, e2, twin, got1, got2)
	}
}

// literalValue is the type and the row value of a literal of the fuzz
// grammar.
func literalValue(e vector.Expr) (arrow.DataType, any) {
	switch l := e.(type) {
	case *vector.Literal:
		return l.Type, l.Value
	case *vector.IntervalLiteral:
		return vector.Interval, arrow.Duration(l.Micros)
	}
	panic(fmt.Sprintf("not a literal: %s", e))
}

// evalForCompare binds e and evaluates it over rows in one batch, returning
// the values in a type-independent form (decimals as exact fractions).
func evalForCompare(mem memory.Allocator, e vector.Expr, schema *arrow.Schema, rows []vt.Row) (vals []any, bound bool, err error) {
	ev, err := e.Bind(schema, mem)
	if err != nil {
		return nil, false, nil
	}
	rec := vt.BuildRecord(mem, schema, rows)
	defer rec.Release()
	arr, err := ev.Eval(context.Background(), rec)
	if err != nil {
		return nil, true, err
	}
	defer arr.Release()
	vals = make([]any, arr.Len())
	for i := range vals {
		vals[i] = exactValue(vector.ValueAt(arr, i), arr.DataType())
	}
	return vals, true, nil
}

// exactValue normalizes v of type dt so that values of different decimal
// types compare by their number.
func exactValue(v any, dt arrow.DataType) any {
	switch t := vector.Unwrap(dt).(type) {
	case *arrow.Decimal128Type:
		if n, ok := v.(decimal128.Num); ok {
			r := new(big.Rat).SetFrac(n.BigInt(), new(big.Int).Exp(big.NewInt(10), big.NewInt(int64(t.Scale)), nil))
			return "decimal " + r.RatString()
		}
	case *arrow.StructType:
		if xs, ok := v.([]any); ok {
			out := make([]any, len(xs))
			for i := range xs {
				out[i] = exactValue(xs[i], t.Field(i).Type)
			}
			return out
		}
	case *arrow.ListType:
		if xs, ok := v.([]any); ok {
			out := make([]any, len(xs))
			for i := range xs {
				out[i] = exactValue(xs[i], t.Elem())
			}
			return out
		}
	}
	return vt.Normalize(v)
}
