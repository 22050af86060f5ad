package vector_test

import (
	"context"
	"math"
	"sort"
	"testing"
	"time"

	"github.com/apache/arrow/go/v17/arrow"
	"github.com/apache/arrow/go/v17/arrow/memory"

	"github.com/arrowstream/arrowstream/internal/testutil/poisonmem"
	"github.com/arrowstream/arrowstream/vector"
	vt "github.com/arrowstream/arrowstream/vector/vectortest"
)

// fuzzSchema has a column of every supported type.
var fuzzSchema = arrow.NewSchema([]arrow.Field{
	{Name: "b", Type: vector.Boolean, Nullable: true},
	{Name: "i", Type: vector.Int32, Nullable: true},
	{Name: "l", Type: vector.Int64, Nullable: true},
	{Name: "d", Type: vector.Float64, Nullable: true},
	{Name: "s", Type: vector.String, Nullable: true},
	{Name: "bin", Type: vector.Binary, Nullable: true},
	{Name: "ts", Type: vector.Timestamp, Nullable: true},
	{Name: "dt", Type: vector.Date, Nullable: true},
	{Name: "dec", Type: vector.Decimal(10, 2), Nullable: true},
	{Name: "w", Type: vector.WindowType, Nullable: true},
	{Name: "arr", Type: vector.ListOf(vector.String), Nullable: true},
	{Name: "ds", Type: &arrow.DictionaryType{IndexType: arrow.PrimitiveTypes.Int8, ValueType: vector.String}, Nullable: true},
}, nil)

var fuzzRows = []vt.Row{
	{true, int32(1), int64(math.MaxInt64), 1.5, "abc", []byte("x"), 1_000_000, 19000, "12.34", []any{0, 10}, []any{"a", "b"}, "view"},
	{false, int32(math.MinInt32), int64(math.MinInt64), math.NaN(), "", []byte{}, -1, -1, "-0.01", []any{nil, 5}, []any{}, "click"},
	{nil, nil, nil, nil, nil, nil, nil, nil, nil, nil, nil, nil},
	{true, int32(0), int64(0), math.Inf(-1), "2026-01-01 10:00:00", []byte{0xff}, 0, 0, "0.00", []any{1, 2}, []any{nil}, nil},
}

// exprBuilder turns fuzz bytes into an expression tree.
type exprBuilder struct {
	data  []byte
	depth int
}

func (b *exprBuilder) byte() byte {
	if len(b.data) == 0 {
		return 0
	}
	c := b.data[0]
	b.data = b.data[1:]
	return c
}

var fuzzLiterals = []vector.Expr{
	vector.Lit(0), vector.Lit(-1), vector.Lit(int64(math.MaxInt64)), vector.Lit(2.5), vector.Lit(math.NaN()),
	vector.Lit("abc"), vector.Lit("%a_"), vector.Lit("1.5"), vector.Lit(""), vector.Lit(true), vector.Lit(nil),
	vector.Lit(arrow.Timestamp(5)), vector.Lit(arrow.Date32(3)), vector.TypedLit(vector.Decimal(5, 1), "1.5"),
	vector.Lit("seconds"), vector.Lit("HOUR"), vector.Lit("yyyy-MM-dd"), vector.IntervalLit(10_000_000),
}

// fuzzModes are the evaluation modes (ANSI, Spark 3 legacy, try_) and
// fuzzZones the session time zones the builder picks from.
var (
	fuzzModes = []vector.EvalMode{vector.ModeANSI, vector.ModeLegacy, vector.ModeTry}
	fuzzZones = []*time.Location{nil, mustZone("America/Los_Angeles"), mustZone("Asia/Kolkata")}
)

func mustZone(name string) *time.Location {
	loc, err := time.LoadLocation(name)
	if err != nil {
		panic(err)
	}
	return loc
}

var fuzzCasts = []arrow.DataType{vector.Int8, vector.Int16, vector.Boolean, vector.Int32, vector.Int64, vector.Float64, vector.String, vector.Binary, vector.Timestamp, vector.Date, vector.Decimal(8, 3)}

func (b *exprBuilder) expr() vector.Expr {
	b.depth++
	defer func() { b.depth-- }()
	k := b.byte()
	if b.depth > 6 {
		k %= 2
	}
	switch k % 14 {
	case 0:
		return vector.Col(fuzzSchema.Field(int(b.byte()) % fuzzSchema.NumFields()).Name)
	case 1:
		return fuzzLiterals[int(b.byte())%len(fuzzLiterals)]
	case 2:
		ops := []vector.ArithOp{vector.ArithAdd, vector.ArithSub, vector.ArithMul, vector.ArithDiv, vector.ArithMod}
		op, mode := ops[int(b.byte())%len(ops)], fuzzModes[int(b.byte())%len(fuzzModes)]
		return &vector.Arithmetic{Op: op, Left: b.expr(), Right: b.expr(), Mode: mode}
	case 3:
		ops := []func(l, r vector.Expr) vector.Expr{vector.Eq, vector.NotEq, vector.Lt, vector.Le, vector.Gt, vector.Ge, vector.EqualNullSafe}
		return ops[int(b.byte())%len(ops)](b.expr(), b.expr())
	case 4:
		if b.byte()%2 == 0 {
			return vector.And(b.expr(), b.expr())
		}
		return vector.Or(b.expr(), b.expr())
	case 5:
		switch b.byte() % 4 {
		case 0:
			return vector.Not(b.expr())
		case 1:
			return vector.IsNull(b.expr())
		case 2:
			return &vector.Negation{Child: b.expr(), Mode: fuzzModes[int(b.byte())%len(fuzzModes)]}
		}
		return vector.IsNotNull(b.expr())
	case 6:
		return vector.In(b.expr(), b.expr(), b.expr())
	case 7:
		return vector.Between(b.expr(), b.expr(), b.expr())
	case 8:
		return vector.Case([]vector.When{{Cond: b.expr(), Then: b.expr()}}, b.expr())
	case 9:
		return vector.Coalesce(b.expr(), b.expr())
	case 10:
		to, mode, loc := fuzzCasts[int(b.byte())%len(fuzzCasts)], fuzzModes[int(b.byte())%len(fuzzModes)], fuzzZones[int(b.byte())%len(fuzzZones)]
		return &vector.CastExpr{X: b.expr(), To: to, Mode: mode, Loc: loc}
	case 11:
		return vector.Like(b.expr(), b.expr())
	case 12:
		names := vector.FunctionNames()
		sort.Strings(names) // map order: make inputs reproducible
		name := names[int(b.byte())%len(names)]
		args := make([]vector.Expr, int(b.byte())%4)
		for i := range args {
			args[i] = b.expr()
		}
		e, err := vector.LookupFunction(name, args)
		if err != nil {
			return vector.Lit(nil)
		}
		if f, ok := e.(*vector.FuncExpr); ok {
			f.Loc = fuzzZones[int(b.byte())%len(fuzzZones)]
		}
		return e
	}
	return vector.Col("w", "start")
}

// FuzzExprEval builds random expression trees and evaluates them over rows
// with extreme values and nulls: errors are fine, panics and leaks are not.
func FuzzExprEval(f *testing.F) {
	f.Add([]byte{2, 0, 2, 1, 1})
	f.Add([]byte{10, 0, 4, 4})
	f.Add([]byte{12, 3, 2, 0, 4, 1, 6})
	f.Add([]byte{3, 1, 0, 9, 0, 11})
	f.Fuzz(func(t *testing.T, data []byte) {
		mem := poisonmem.New()
		defer mem.AssertSize(t, 0)
		checkExprFuzz(mem, data, t.Errorf)
	})
}

// fuzzShapes are the layouts every fuzz expression is evaluated in; the
// results must agree, which catches kernels that read values under nulls
// or ignore array offsets.
var fuzzShapes = []vt.Shape{
	{BatchSize: 1024},
	{BatchSize: 3, Sliced: true, GarbageUnderNulls: true},
	{BatchSize: 2, GarbageUnderNulls: true, BitmapWithoutNulls: true},
}

// fuzzLongShapes are layouts of the rows repeated to at least fuzzLongRows.
var fuzzLongShapes = []vt.Shape{
	{BatchSize: 1024, Sliced: true, GarbageUnderNulls: true},
	{BatchSize: 67, BitmapWithoutNulls: true},
}

const fuzzLongRows = 130

// checkExprFuzz builds the expression of data, binds it to fuzzSchema and
// evaluates it over fuzzRows in every fuzz shape and over an empty batch.
// It reports through errorf results of the wrong length or type, malformed
// arrays, constants whose rows differ from their Value, and results or
// errors that depend on the layout. Panics propagate; the caller checks mem
// for leaks.
func checkExprFuzz(mem memory.Allocator, data []byte, errorf func(format string, args ...any)) {
	b := &exprBuilder{data: data}
	checkExprFuzzOf(mem, fuzzSchema, fuzzRows, b.expr(), errorf)
}

func checkExprFuzzOf(mem memory.Allocator, schema *arrow.Schema, rows []vt.Row, e vector.Expr, errorf func(format string, args ...any)) {
	_ = e.String()
	ev, err := e.Bind(schema, mem)
	if err != nil {
		return
	}
	check := func(rec arrow.Record) ([]any, error) {
		arr, err := ev.Eval(context.Background(), rec)
		if err != nil {
			return nil, err
		}
		defer arr.Release()
		if arr.Len() != int(rec.NumRows()) {
			errorf("%s: %d values for %d rows", e, arr.Len(), rec.NumRows())
		}
		if !arrow.TypeEqual(arr.DataType(), ev.DataType()) {
			errorf("%s: returned %s, declared %s", e, arr.DataType(), ev.DataType())
		}
		if err := validateArray(arr); err != nil {
			errorf("%s: malformed result: %v", e, err)
			return nil, nil
		}
		return vt.ValuesOf(arr), nil
	}
	// The long layouts repeat the rows past 64, so that results cross a
	// bitmap word (and, sliced, start in the middle of a byte).
	long := make([]vt.Row, 0, fuzzLongRows+len(rows))
	for len(long) < fuzzLongRows {
		long = append(long, rows...)
	}
	var first []any
	var firstErr error
	for k, shape := range append(fuzzShapes, fuzzLongShapes...) {
		in := rows
		if k >= len(fuzzShapes) {
			in = long
		}
		var got []any
		var gotErr error
		for _, rec := range vt.BuildRecords(mem, schema, in, shape) {
			if gotErr == nil {
				var vals []any
				vals, gotErr = check(rec)
				got = append(got, vals...)
			}
			rec.Release()
		}
		if k == 0 {
			first, firstErr = got, gotErr
			continue
		}
		want := first
		if k >= len(fuzzShapes) && firstErr == nil {
			want = make([]any, 0, len(got))
			for len(want) < len(long) {
				want = append(want, first...)
			}
		}
		switch {
		case (gotErr == nil) != (firstErr == nil):
			errorf("%s: error depends on the layout: %v in %s, %v in %s (%d rows)", e, firstErr, fuzzShapes[0], gotErr, shape, len(in))
		case gotErr == nil && !vt.ValueEqual(want, got):
			errorf("%s: result depends on the layout:\n%v in %s\n%v in %s (%d rows)", e, want, fuzzShapes[0], got, shape, len(in))
		}
	}
	checkOperators(mem, schema, rows, e, ev.DataType(), first, firstErr, errorf)
	empty := vt.BuildRecord(mem, schema, nil)
	if vals, err := check(empty); err == nil && len(vals) != 0 {
		errorf("%s: %d values for an empty batch", e, len(vals))
	}
	empty.Release()
	if c, ok := ev.(vector.ConstantEvaluator); ok && firstErr == nil {
		checkConstant(mem, e, c, first, errorf)
	}
}

// checkConstant checks that a constant evaluator's Value is canonical for
// its type and equals every row it evaluates to: kernels above read Value
// instead of evaluating.
func checkConstant(mem memory.Allocator, e vector.Expr, c vector.ConstantEvaluator, rows []any, errorf func(format string, args ...any)) {
	arr, err := vector.MakeConstantArray(mem, c.DataType(), c.Value(), 1)
	if err != nil {
		errorf("%s: constant %#v does not fit its type %s: %v", e, c.Value(), c.DataType(), err)
		return
	}
	want := vt.ValuesOf(arr)[0]
	arr.Release()
	for i, v := range rows {
		if !vt.ValueEqual(want, v) {
			errorf("%s: constant %v evaluates to %v at row %d", e, want, v, i)
			return
		}
	}
}
