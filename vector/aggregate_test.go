package vector_test

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/apache/arrow/go/v17/arrow"
	"github.com/apache/arrow/go/v17/arrow/memory"

	"github.com/arrowstream/arrowstream/vector"
	vt "github.com/arrowstream/arrowstream/vector/vectortest"
)

var aggSchema = arrow.NewSchema([]arrow.Field{
	{Name: "k", Type: vector.Int32, Nullable: true},
	{Name: "v", Type: vector.Int64, Nullable: true},
	{Name: "d", Type: vector.Float64, Nullable: true},
	{Name: "str", Type: vector.String, Nullable: true},
	{Name: "dec", Type: vector.Decimal(10, 2), Nullable: true},
	{Name: "b", Type: vector.Boolean, Nullable: true},
	{Name: "ts", Type: vector.Timestamp, Nullable: true},
	{Name: "dt", Type: vector.Date, Nullable: true},
}, nil)

// Groups: k=1 rows 0,2,4; k=2 rows 1,5; k=3 row 6; k=NULL rows 3,7.
var aggRows = []vt.Row{
	{1, 10, 1.5, "b", "1.25", true, 100, 10},
	{2, 20, 2.5, "a", "2.50", false, 200, 20},
	{1, nil, nil, nil, nil, nil, nil, nil},
	{nil, 7, 0.5, "z", "-1.00", false, 50, 5},
	{1, -3, 4.0, "c", "0.75", false, 300, 30},
	{2, nil, nil, nil, nil, nil, nil, nil},
	{3, nil, nil, nil, nil, nil, nil, nil},
	{nil, 1, nil, "y", nil, true, nil, nil},
}

func call(f vector.AggFunc, name string, args ...string) vector.AggregateCall {
	c := vector.AggregateCall{Func: f, Name: name}
	for _, a := range args {
		c.Args = append(c.Args, vector.Col(a))
	}
	return c
}

func byK() []vector.NamedExpr { return []vector.NamedExpr{vector.As(vector.Col("k"), "k")} }

// aggCase is one aggregation and its expected answer; it runs in every mode
// combination (see runAggCase).
type aggCase struct {
	name    string
	schema  *arrow.Schema
	rows    []vt.Row
	groupBy []vector.NamedExpr
	aggs    []vector.AggregateCall
	want    []vt.Row
	wantErr string
	// completeOnly skips the partial-state pipelines (DISTINCT).
	completeOnly bool
}

// runAggCase checks the case in AggComplete, in AggPartial → AggFinal, and
// in per-batch AggPartial → pairwise AggMerge → AggFinal, the shape of
// streaming state merged across epochs.
func runAggCase(t *testing.T, c aggCase) {
	t.Helper()
	schema := c.schema
	if schema == nil {
		schema = aggSchema
	}
	rows := c.rows
	if rows == nil {
		rows = aggRows
	}
	spec := vector.AggregateSpec{GroupBy: c.groupBy, Aggregates: c.aggs}
	vt.RunOperator(t, vt.OperatorCase{
		Name:    c.name + "/complete",
		Inputs:  []vt.Input{{Schema: schema, Rows: rows}},
		Build:   completeBuild(spec),
		Want:    c.want,
		WantErr: c.wantErr,
	})
	if c.completeOnly || c.wantErr != "" {
		return
	}
	vt.RunOperator(t, vt.OperatorCase{
		Name:   c.name + "/partial-final",
		Inputs: []vt.Input{{Schema: schema, Rows: rows}},
		Build: func(mem memory.Allocator, in []vector.Operator) (vector.Operator, error) {
			partial, err := vector.NewHashAggregate(mem, in[0], withMode(spec, vector.AggPartial))
			if err != nil {
				return nil, err
			}
			final, err := vector.NewHashAggregate(mem, partial, finalSpec(spec, vector.AggFinal))
			if err != nil {
				partial.Close()
				return nil, err
			}
			return final, nil
		},
		Want: c.want,
	})
	vt.RunOperator(t, vt.OperatorCase{
		Name:   c.name + "/partial-merge-final",
		Inputs: []vt.Input{{Schema: schema, Rows: rows}},
		Build:  mergeBuild(spec),
		Want:   c.want,
	})
}

func completeBuild(spec vector.AggregateSpec) func(memory.Allocator, []vector.Operator) (vector.Operator, error) {
	return func(mem memory.Allocator, in []vector.Operator) (vector.Operator, error) {
		return vector.NewHashAggregate(mem, in[0], spec)
	}
}

func withMode(spec vector.AggregateSpec, mode vector.AggMode) vector.AggregateSpec {
	spec.Mode = mode
	return spec
}

// finalSpec is spec over its own partial state: the keys are the partial
// input's key columns.
func finalSpec(spec vector.AggregateSpec, mode vector.AggMode) vector.AggregateSpec {
	out := vector.AggregateSpec{Aggregates: spec.Aggregates, Mode: mode}
	for _, g := range spec.GroupBy {
		out.GroupBy = append(out.GroupBy, vector.As(vector.Col(g.Name), g.Name))
	}
	return out
}

// mergeBuild aggregates every input batch separately (AggPartial), merges
// the partial batches two at a time (AggMerge), then finishes (AggFinal).
func mergeBuild(spec vector.AggregateSpec) func(memory.Allocator, []vector.Operator) (vector.Operator, error) {
	return func(mem memory.Allocator, in []vector.Operator) (vector.Operator, error) {
		ctx := context.Background()
		defer in[0].Close()
		inputs, err := vector.Drain(ctx, in[0])
		if err != nil {
			return nil, err
		}
		defer releaseRecords(inputs)
		pschema, err := vector.PartialSchema(in[0].Schema(), spec)
		if err != nil {
			return nil, err
		}
		run := func(schema *arrow.Schema, s vector.AggregateSpec, recs ...arrow.Record) ([]arrow.Record, error) {
			scan, err := vector.NewScan(schema, recs...)
			if err != nil {
				return nil, err
			}
			op, err := vector.NewHashAggregate(mem, scan, s)
			if err != nil {
				scan.Close()
				return nil, err
			}
			defer op.Close()
			return vector.Drain(ctx, op)
		}
		var partials []arrow.Record
		defer func() { releaseRecords(partials) }()
		for _, rec := range inputs {
			out, err := run(in[0].Schema(), withMode(spec, vector.AggPartial), rec)
			if err != nil {
				return nil, err
			}
			partials = append(partials, out...)
		}
		var merged []arrow.Record
		defer func() { releaseRecords(merged) }()
		for i := 0; i < len(partials); i += 2 {
			out, err := run(pschema, finalSpec(spec, vector.AggMerge), partials[i:min(i+2, len(partials))]...)
			if err != nil {
				return nil, err
			}
			merged = append(merged, out...)
		}
		scan, err := vector.NewScan(pschema, merged...)
		if err != nil {
			return nil, err
		}
		op, err := vector.NewHashAggregate(mem, scan, finalSpec(spec, vector.AggFinal))
		if err != nil {
			scan.Close()
			return nil, err
		}
		return op, nil
	}
}

func releaseRecords(recs []arrow.Record) {
	for _, r := range recs {
		r.Release()
	}
}

func TestHashAggregateFunctions(t *testing.T) {
	cases := []aggCase{
		{name: "count", groupBy: byK(),
			aggs: []vector.AggregateCall{call(vector.AggCountStar, "n"), call(vector.AggCount, "nv", "v"), call(vector.AggCount, "nvd", "v", "d"),
				{Func: vector.AggCount, Args: []vector.Expr{vector.Lit(1)}}, {Func: vector.AggCount, Args: []vector.Expr{vector.TypedLit(vector.Int64, nil)}}},
			want: []vt.Row{{1, 3, 2, 2, 3, 0}, {2, 2, 1, 1, 2, 0}, {3, 1, 0, 0, 1, 0}, {nil, 2, 2, 1, 2, 0}}},
		{name: "sum", groupBy: byK(),
			aggs: []vector.AggregateCall{call(vector.AggSum, "sv", "v"), call(vector.AggSum, "sd", "d"), call(vector.AggSum, "sdec", "dec")},
			want: []vt.Row{{1, 7, 5.5, "2.00"}, {2, 20, 2.5, "2.50"}, {3, nil, nil, nil}, {nil, 8, 0.5, "-1.00"}}},
		{name: "avg", groupBy: byK(),
			aggs: []vector.AggregateCall{call(vector.AggAvg, "av", "v"), call(vector.AggAvg, "ad", "d"), call(vector.AggAvg, "adec", "dec")},
			// avg of a DECIMAL(p,2) is DECIMAL(p+4,6), as Spark's.
			want: []vt.Row{{1, 3.5, 2.75, "1.000000"}, {2, 20.0, 2.5, "2.500000"}, {3, nil, nil, nil}, {nil, 4.0, 0.5, "-1.000000"}}},
		{name: "min", groupBy: byK(),
			aggs: []vector.AggregateCall{call(vector.AggMin, "v", "v"), call(vector.AggMin, "d", "d"), call(vector.AggMin, "str", "str"),
				call(vector.AggMin, "dec", "dec"), call(vector.AggMin, "b", "b"), call(vector.AggMin, "ts", "ts"), call(vector.AggMin, "dt", "dt")},
			want: []vt.Row{
				{1, -3, 1.5, "b", "0.75", false, 100, 10},
				{2, 20, 2.5, "a", "2.50", false, 200, 20},
				{3, nil, nil, nil, nil, nil, nil, nil},
				{nil, 1, 0.5, "y", "-1.00", false, 50, 5}}},
		{name: "max", groupBy: byK(),
			aggs: []vector.AggregateCall{call(vector.AggMax, "v", "v"), call(vector.AggMax, "d", "d"), call(vector.AggMax, "str", "str"),
				call(vector.AggMax, "dec", "dec"), call(vector.AggMax, "b", "b"), call(vector.AggMax, "ts", "ts"), call(vector.AggMax, "dt", "dt")},
			want: []vt.Row{
				{1, 10, 4.0, "c", "1.25", true, 300, 30},
				{2, 20, 2.5, "a", "2.50", false, 200, 20},
				{3, nil, nil, nil, nil, nil, nil, nil},
				{nil, 7, 0.5, "z", "-1.00", true, 50, 5}}},
		{name: "first-last", groupBy: byK(),
			aggs: []vector.AggregateCall{call(vector.AggFirst, "fv", "v"), call(vector.AggLast, "lv", "v"),
				call(vector.AggFirst, "fs", "str"), call(vector.AggLast, "ls", "str"), call(vector.AggLast, "lb", "b"), call(vector.AggFirst, "fdec", "dec")},
			want: []vt.Row{
				{1, 10, -3, "b", "c", false, "1.25"},
				{2, 20, nil, "a", nil, nil, "2.50"},
				{3, nil, nil, nil, nil, nil, nil},
				{nil, 7, 1, "z", "y", true, "-1.00"}}},
		{name: "first-last-ignore-nulls", groupBy: byK(),
			aggs: []vector.AggregateCall{
				{Func: vector.AggFirst, Args: []vector.Expr{vector.Col("d")}, IgnoreNulls: true, Name: "fd"},
				{Func: vector.AggLast, Args: []vector.Expr{vector.Col("v")}, IgnoreNulls: true, Name: "lv"},
				{Func: vector.AggLast, Args: []vector.Expr{vector.Col("str")}, IgnoreNulls: true, Name: "ls"}},
			want: []vt.Row{{1, 1.5, -3, "c"}, {2, 2.5, 20, "a"}, {3, nil, nil, nil}, {nil, 0.5, 1, "y"}}},
		{name: "approx-count-distinct", groupBy: byK(),
			aggs: []vector.AggregateCall{call(vector.AggApproxCountDistinct, "v", "v"), call(vector.AggApproxCountDistinct, "s", "str"),
				{Func: vector.AggApproxCountDistinct, Args: []vector.Expr{vector.Col("dec"), vector.Lit(0.01)}, Name: "dec"}},
			want: []vt.Row{{1, 2, 2, 2}, {2, 1, 1, 1}, {3, 0, 0, 0}, {nil, 2, 2, 1}}},
		{name: "global", aggs: []vector.AggregateCall{call(vector.AggCountStar, "n"), call(vector.AggSum, "s", "v"),
			call(vector.AggMin, "m", "str"), call(vector.AggAvg, "a", "d"), call(vector.AggFirst, "f", "ts"), call(vector.AggApproxCountDistinct, "c", "b")},
			want: []vt.Row{{8, 35, "a", 2.125, 100, 2}}},
		{name: "global-empty", rows: []vt.Row{}, aggs: []vector.AggregateCall{call(vector.AggCountStar, "n"), call(vector.AggCount, "nv", "v"),
			call(vector.AggSum, "s", "v"), call(vector.AggMax, "m", "str"), call(vector.AggAvg, "a", "d"), call(vector.AggLast, "l", "ts"), call(vector.AggApproxCountDistinct, "c", "b")},
			want: []vt.Row{{0, 0, nil, nil, nil, nil, 0}}},
		{name: "grouped-empty", rows: []vt.Row{}, groupBy: byK(), aggs: []vector.AggregateCall{call(vector.AggCountStar, "n")}, want: []vt.Row{}},
		{name: "only-keys", groupBy: byK(), want: []vt.Row{{1}, {2}, {3}, {nil}}},
	}
	for _, c := range cases {
		runAggCase(t, c)
	}
}

var distinctSchema = arrow.NewSchema([]arrow.Field{
	{Name: "k", Type: vector.String, Nullable: true},
	{Name: "v", Type: vector.Int64, Nullable: true},
	{Name: "s", Type: vector.String, Nullable: true},
}, nil)

func TestHashAggregateDistinct(t *testing.T) {
	rows := []vt.Row{
		{"a", 1, "x"}, {"a", 1, "x"}, {"a", 2, "y"}, {"a", nil, nil}, {"b", 5, "x"},
		{"b", 5, "y"}, {"b", 5, "x"}, {nil, 3, nil}, {"a", 2, "x"},
	}
	distinct := func(f vector.AggFunc, name string, args ...string) vector.AggregateCall {
		c := call(f, name, args...)
		c.Distinct = true
		return c
	}
	runAggCase(t, aggCase{name: "distinct", schema: distinctSchema, rows: rows, completeOnly: true,
		groupBy: []vector.NamedExpr{vector.As(vector.Col("k"), "k")},
		aggs: []vector.AggregateCall{distinct(vector.AggCount, "cv", "v"), distinct(vector.AggSum, "sv", "v"), distinct(vector.AggAvg, "av", "v"),
			distinct(vector.AggCount, "cs", "s"), distinct(vector.AggCount, "cvs", "v", "s"), call(vector.AggCount, "n", "v"),
			distinct(vector.AggMax, "mx", "v")},
		want: []vt.Row{
			{"a", 2, 3, 1.5, 2, 3, 4, 2},
			{"b", 1, 5, 5.0, 2, 2, 3, 5},
			{nil, 1, 3, 3.0, 0, 0, 1, 3},
		}})
	runAggCase(t, aggCase{name: "distinct-global", schema: distinctSchema, rows: rows, completeOnly: true,
		aggs: []vector.AggregateCall{distinct(vector.AggCount, "cv", "v"), distinct(vector.AggSum, "sv", "v")},
		want: []vt.Row{{4, 11}}})
	vt.RunOperator(t, vt.OperatorCase{
		Name:    "distinct-partial-mode",
		Inputs:  []vt.Input{{Schema: distinctSchema, Rows: rows}},
		Build:   completeBuild(vector.AggregateSpec{Aggregates: []vector.AggregateCall{distinct(vector.AggSum, "s", "v")}, Mode: vector.AggPartial}),
		WantErr: "cannot bind sum(DISTINCT v): DISTINCT aggregates are supported only in complete aggregation",
	})
}

var keySchema = arrow.NewSchema([]arrow.Field{
	{Name: "i64", Type: vector.Int64, Nullable: true},
	{Name: "s", Type: vector.String, Nullable: true},
	{Name: "ds", Type: &arrow.DictionaryType{IndexType: arrow.PrimitiveTypes.Int32, ValueType: vector.String}, Nullable: true},
	{Name: "w", Type: vector.WindowType, Nullable: true},
	{Name: "f", Type: vector.Float64, Nullable: true},
	{Name: "b", Type: vector.Boolean, Nullable: true},
	{Name: "ts", Type: vector.Timestamp, Nullable: true},
	{Name: "dt", Type: vector.Date, Nullable: true},
	{Name: "dec", Type: vector.Decimal(12, 3), Nullable: true},
	{Name: "v", Type: vector.Int64, Nullable: true},
}, nil)

// Rows 0, 2, 5 share every key; rows 1, 4 share every key; row 3 is all
// nulls; row 6 differs from rows 1, 4 in every key.
var keyRows = []vt.Row{
	{int64(1) << 40, "x", "x", []any{0, 10}, 0.0, true, 100, 1, "1.500", 1},
	{-7, "", "", []any{nil, 10}, 1.5, false, -100, -1, "-0.001", 2},
	{int64(1) << 40, "x", "x", []any{0, 10}, 0.0, true, 100, 1, "1.500", 4},
	{nil, nil, nil, nil, nil, nil, nil, nil, nil, 8},
	{-7, "", "", []any{nil, 10}, 1.5, false, -100, -1, "-0.001", 16},
	{int64(1) << 40, "x", "x", []any{0, 10}, -0.0, true, 100, 1, "1.500", 32},
	{-8, "y", "y", []any{0, 11}, 2.5, true, 101, 2, "-0.002", 64},
}

func TestHashAggregateKeyTypes(t *testing.T) {
	keyVals := map[string][3]any{ // group of rows 0, 1 and 6
		"i64": {int64(1) << 40, -7, -8},
		"s":   {"x", "", "y"},
		"ds":  {"x", "", "y"},
		"w":   {[]any{0, 10}, []any{nil, 10}, []any{0, 11}},
		"f":   {0.0, 1.5, 2.5},
		"ts":  {100, -100, 101},
		"dt":  {1, -1, 2},
		"dec": {"1.500", "-0.001", "-0.002"},
	}
	for col, kv := range keyVals {
		runAggCase(t, aggCase{name: "key-" + col, schema: keySchema, rows: keyRows,
			groupBy: []vector.NamedExpr{vector.As(vector.Col(col), "key")},
			aggs:    []vector.AggregateCall{call(vector.AggCountStar, "n"), call(vector.AggSum, "s", "v")},
			want:    []vt.Row{{kv[0], 3, 37}, {kv[1], 2, 18}, {nil, 1, 8}, {kv[2], 1, 64}}})
	}
	// Booleans have only two values: rows 1 and 4 are false, the rest true.
	runAggCase(t, aggCase{name: "key-bool", schema: keySchema, rows: keyRows,
		groupBy: []vector.NamedExpr{vector.As(vector.Col("b"), "b")},
		aggs:    []vector.AggregateCall{call(vector.AggCountStar, "n"), call(vector.AggSum, "s", "v")},
		want:    []vt.Row{{true, 4, 101}, {false, 2, 18}, {nil, 1, 8}}})
	runAggCase(t, aggCase{name: "key-composite", schema: keySchema, rows: keyRows,
		groupBy: []vector.NamedExpr{vector.As(vector.Col("s"), "s"), vector.As(vector.Col("i64"), "i"), vector.As(vector.Col("w"), "w")},
		aggs:    []vector.AggregateCall{call(vector.AggCountStar, "n"), call(vector.AggMax, "m", "v")},
		want: []vt.Row{{"x", int64(1) << 40, []any{0, 10}, 3, 32}, {"", -7, []any{nil, 10}, 2, 16},
			{nil, nil, nil, 1, 8}, {"y", -8, []any{0, 11}, 1, 64}}})
	// Dictionary strings as aggregate arguments.
	runAggCase(t, aggCase{name: "dictionary-args", schema: keySchema, rows: keyRows,
		aggs: []vector.AggregateCall{call(vector.AggMin, "mn", "ds"), call(vector.AggMax, "mx", "ds"), call(vector.AggFirst, "f", "ds"),
			call(vector.AggLast, "l", "ds"), call(vector.AggCount, "c", "ds"), call(vector.AggApproxCountDistinct, "a", "ds")},
		want: []vt.Row{{"", "y", "x", "y", 6, 3}}})
	runAggCase(t, aggCase{name: "dictionary-distinct", schema: keySchema, rows: keyRows, completeOnly: true,
		aggs: []vector.AggregateCall{{Func: vector.AggCount, Args: []vector.Expr{vector.Col("ds")}, Distinct: true, Name: "c"}},
		want: []vt.Row{{3}}})
	runAggCase(t, aggCase{name: "key-expression", schema: keySchema, rows: keyRows,
		groupBy: []vector.NamedExpr{vector.As(vector.Col("w", "start"), "start")},
		aggs:    []vector.AggregateCall{call(vector.AggCountStar, "n")},
		want:    []vt.Row{{0, 4}, {nil, 3}}})
}

func TestHashAggregateSchema(t *testing.T) {
	spec := vector.AggregateSpec{
		GroupBy: byK(),
		Aggregates: []vector.AggregateCall{call(vector.AggCountStar, "n"), call(vector.AggSum, "s", "dec"), call(vector.AggAvg, "a", "v"),
			call(vector.AggMin, "m", "str"), call(vector.AggFirst, "f", "ts"), call(vector.AggApproxCountDistinct, "c", "v"),
			call(vector.AggSum, "", "v")},
	}
	got, err := vector.PartialSchema(aggSchema, spec)
	if err != nil {
		t.Fatal(err)
	}
	want := arrow.NewSchema([]arrow.Field{
		{Name: "k", Type: vector.Int32, Nullable: true},
		{Name: "n.count", Type: vector.Int64},
		{Name: "s.sum", Type: vector.Decimal(20, 2)},
		{Name: "s.count", Type: vector.Int64},
		{Name: "a.sum", Type: vector.Float64},
		{Name: "a.count", Type: vector.Int64},
		{Name: "m.value", Type: vector.String, Nullable: true},
		{Name: "f.value", Type: vector.Timestamp, Nullable: true},
		{Name: "f.set", Type: vector.Boolean},
		{Name: "c.hll", Type: vector.Binary},
		{Name: "sum(v).sum", Type: vector.Int64},
		{Name: "sum(v).count", Type: vector.Int64},
	}, nil)
	if !got.Equal(want) {
		t.Errorf("partial schema:\n got %s\nwant %s", got, want)
	}
	mem := vt.NewAllocator(t)
	scan, _ := vector.NewScan(aggSchema)
	op, err := vector.NewHashAggregate(mem, scan, spec)
	if err != nil {
		t.Fatal(err)
	}
	defer op.Close()
	wantFinal := arrow.NewSchema([]arrow.Field{
		{Name: "k", Type: vector.Int32, Nullable: true},
		{Name: "n", Type: vector.Int64},
		{Name: "s", Type: vector.Decimal(20, 2), Nullable: true},
		{Name: "a", Type: vector.Float64, Nullable: true},
		{Name: "m", Type: vector.String, Nullable: true},
		{Name: "f", Type: vector.Timestamp, Nullable: true},
		{Name: "c", Type: vector.Int64},
		{Name: "sum(v)", Type: vector.Int64, Nullable: true},
	}, nil)
	if !op.Schema().Equal(wantFinal) {
		t.Errorf("final schema:\n got %s\nwant %s", op.Schema(), wantFinal)
	}
}

func TestHashAggregateErrors(t *testing.T) {
	bad := func(name string, spec vector.AggregateSpec, want string) {
		vt.RunOperator(t, vt.OperatorCase{Name: name, Inputs: []vt.Input{{Schema: aggSchema, Rows: aggRows}},
			Build: completeBuild(spec), WantErr: want, Shapes: vt.Shapes[:2]})
	}
	aggs := func(c ...vector.AggregateCall) vector.AggregateSpec {
		return vector.AggregateSpec{GroupBy: byK(), Aggregates: c}
	}
	cols := "(available columns: k, v, d, str, dec, b, ts, dt)"
	bad("sum-string", aggs(call(vector.AggSum, "x", "str")),
		"cannot bind sum(str): function sum requires a numeric argument, not string: type mismatch "+cols)
	bad("avg-bool", aggs(call(vector.AggAvg, "x", "b")), "cannot bind avg(b): function avg requires a numeric argument, not boolean")
	bad("sum-two-args", aggs(call(vector.AggSum, "x", "v", "d")), "cannot bind sum(v, d): sum takes 1 argument, got 2 "+cols)
	bad("count-star-args", aggs(call(vector.AggCountStar, "x", "v")), "count(*) takes no arguments, got 1")
	bad("count-no-args", aggs(call(vector.AggCount, "x")), "count takes at least 1 argument, got 0")
	bad("acd-three-args", aggs(call(vector.AggApproxCountDistinct, "x", "v", "d", "k")), "approx_count_distinct takes 1 or 2 arguments, got 3")
	bad("acd-rsd-column", aggs(call(vector.AggApproxCountDistinct, "x", "v", "d")), "relative SD of approx_count_distinct must be a constant double")
	bad("acd-rsd-range", aggs(vector.AggregateCall{Func: vector.AggApproxCountDistinct, Args: []vector.Expr{vector.Col("v"), vector.Lit(0.9)}}),
		"needs HyperLogLog precision 1, outside [4, 18]")
	bad("unknown-func", aggs(vector.AggregateCall{Func: vector.AggFunc(99), Args: []vector.Expr{vector.Col("v")}}), "unknown aggregate function 99")
	bad("unknown-column", aggs(call(vector.AggMax, "x", "nope")), "cannot bind nope: unknown column nope")
	bad("unknown-key", vector.AggregateSpec{GroupBy: []vector.NamedExpr{vector.As(vector.Col("nope"), "k")}}, "unknown column nope")
	bad("final-missing-state", vector.AggregateSpec{Aggregates: []vector.AggregateCall{call(vector.AggSum, "s", "v")}, Mode: vector.AggFinal},
		"cannot bind sum(v): partial state column `s.sum`: unknown column `s.sum`")

	stateSchema := arrow.NewSchema([]arrow.Field{{Name: "s.sum", Type: vector.String}, {Name: "s.count", Type: vector.Int64}}, nil)
	vt.RunOperator(t, vt.OperatorCase{Name: "final-bad-state-type", Inputs: []vt.Input{{Schema: stateSchema, Rows: []vt.Row{{"x", 1}}}},
		Build:   completeBuild(vector.AggregateSpec{Aggregates: []vector.AggregateCall{call(vector.AggSum, "s", "v")}, Mode: vector.AggMerge}),
		WantErr: "cannot bind sum(v): partial state of sum must be (bigint|double|decimal, bigint), not (string, bigint): type mismatch (available columns: s.sum, s.count)",
		Shapes:  vt.Shapes[:1]})

	winSchema := arrow.NewSchema([]arrow.Field{{Name: "w", Type: vector.WindowType, Nullable: true}, {Name: "l", Type: vector.MapOf(vector.Int64, vector.Int64), Nullable: true}}, nil)
	winBad := func(name string, spec vector.AggregateSpec, want string) {
		vt.RunOperator(t, vt.OperatorCase{Name: name, Inputs: []vt.Input{{Schema: winSchema, Rows: []vt.Row{{[]any{0, 1}, nil}}}},
			Build: completeBuild(spec), WantErr: want, Shapes: vt.Shapes[:1]})
	}
	winBad("min-map", vector.AggregateSpec{Aggregates: []vector.AggregateCall{call(vector.AggMin, "m", "l")}},
		"cannot bind min(l): function min requires a number, string, binary, boolean, date, timestamp, decimal or an orderable struct or array, not map<bigint,bigint>")
	winBad("map-key", vector.AggregateSpec{GroupBy: []vector.NamedExpr{vector.As(vector.Col("l"), "l")}}, "map<bigint,bigint> cannot be a grouping or join key: [GROUP_EXPRESSION_TYPE_IS_NOT_ORDERABLE]")
}

func TestHashAggregateOverflow(t *testing.T) {
	s := arrow.NewSchema([]arrow.Field{
		{Name: "k", Type: vector.Int64, Nullable: true},
		{Name: "v", Type: vector.Int64, Nullable: true},
		{Name: "dec", Type: vector.Decimal(38, 0), Nullable: true},
	}, nil)
	rows := []vt.Row{{1, int64(9223372036854775000), "1"}, {2, 5, "1"}, {1, nil, nil}, {1, 1000, "1"}}
	spec := vector.AggregateSpec{GroupBy: []vector.NamedExpr{vector.As(vector.Col("k"), "k")},
		Aggregates: []vector.AggregateCall{call(vector.AggSum, "s", "v")}}
	vt.RunOperator(t, vt.OperatorCase{Name: "sum-bigint", Inputs: []vt.Input{{Schema: s, Rows: rows}}, Build: completeBuild(spec),
		WantErr: "arithmetic overflow in sum(v) at row"})
	vt.RunOperator(t, vt.OperatorCase{Name: "sum-bigint-values", Inputs: []vt.Input{{Schema: s, Rows: rows}}, Build: completeBuild(spec),
		WantErr: "(v=1000, sum(v)=9223372036854775000)", Shapes: vt.Shapes[:1]})
	// The partial sums of each batch fit; their merge does not.
	vt.RunOperator(t, vt.OperatorCase{Name: "sum-bigint-merge", Inputs: []vt.Input{{Schema: s, Rows: rows}}, Build: mergeBuild(spec),
		WantErr: "arithmetic overflow in sum(v)", Shapes: []vt.Shape{{BatchSize: 1}}})
	big := "99999999999999999999999999999999999999"
	decRows := []vt.Row{{1, 0, big}, {1, 0, "1"}}
	decSpec := vector.AggregateSpec{Aggregates: []vector.AggregateCall{call(vector.AggSum, "s", "dec")}}
	vt.RunOperator(t, vt.OperatorCase{Name: "sum-decimal", Inputs: []vt.Input{{Schema: s, Rows: decRows}}, Build: completeBuild(decSpec),
		WantErr: "arithmetic overflow in sum(dec) at row"})
	negRows := []vt.Row{{1, 0, "-" + big}, {1, 0, "-" + big}}
	vt.RunOperator(t, vt.OperatorCase{Name: "sum-decimal-negative", Inputs: []vt.Input{{Schema: s, Rows: negRows}}, Build: completeBuild(decSpec),
		WantErr: "arithmetic overflow in sum(dec)"})
	// Large sums that fit.
	vt.RunOperator(t, vt.OperatorCase{Name: "sum-decimal-fits", Inputs: []vt.Input{{Schema: s, Rows: []vt.Row{{1, 0, big}, {1, 0, "-1"}, {1, 0, nil}}}},
		Build: completeBuild(decSpec), Want: []vt.Row{{"99999999999999999999999999999999999998"}}})
}

func TestHashAggregateNaN(t *testing.T) {
	s := arrow.NewSchema([]arrow.Field{{Name: "k", Type: vector.Int64, Nullable: true}, {Name: "d", Type: vector.Float64, Nullable: true}}, nil)
	nan := math.NaN()
	rows := []vt.Row{{1, 1.0}, {1, nan}, {1, -5.0}, {2, nan}, {3, math.Inf(-1)}, {3, nil}, {4, math.Inf(1)}, {4, nan}}
	runAggCase(t, aggCase{name: "nan", schema: s, rows: rows, groupBy: []vector.NamedExpr{vector.As(vector.Col("k"), "k")},
		aggs: []vector.AggregateCall{call(vector.AggMin, "mn", "d"), call(vector.AggMax, "mx", "d"), call(vector.AggSum, "s", "d")},
		want: []vt.Row{{1, -5.0, nan, nan}, {2, nan, nan, nan}, {3, math.Inf(-1), math.Inf(-1), math.Inf(-1)}, {4, math.Inf(1), nan, nan}}})
}

// TestHashAggregateManyGroups checks table growth, several output batches
// and the partial-state pipelines against a reference computed with maps.
func TestHashAggregateManyGroups(t *testing.T) {
	const n, keys = 100_000, 70_000
	s := arrow.NewSchema([]arrow.Field{{Name: "k", Type: vector.Int64, Nullable: true}, {Name: "v", Type: vector.Int64, Nullable: true},
		{Name: "s", Type: vector.String, Nullable: true}}, nil)
	r := rand.New(rand.NewPCG(7, 7))
	type ref struct {
		n, cnt, sum, min int64
		last             any
	}
	want := map[any]*ref{}
	rows := make([]vt.Row, n)
	for i := range rows {
		var k any = int64(r.IntN(keys)) * 7919
		if r.IntN(1000) == 0 {
			k = nil
		}
		var v any = int64(r.IntN(1000)) - 500
		if r.IntN(10) == 0 {
			v = nil
		}
		sv := fmt.Sprint(k)
		rows[i] = vt.Row{k, v, sv}
		g := want[k]
		if g == nil {
			g = &ref{min: math.MaxInt64}
			want[k] = g
		}
		g.n++
		g.last = v
		if v != nil {
			g.cnt++
			g.sum += v.(int64)
			g.min = min(g.min, v.(int64))
		}
	}
	var wantRows, wantByString []vt.Row
	for k, g := range want {
		var sum, mn any
		if g.cnt > 0 {
			sum, mn = g.sum, g.min
		}
		wantRows = append(wantRows, vt.Row{k, g.n, g.cnt, sum, mn, g.last})
		wantByString = append(wantByString, vt.Row{fmt.Sprint(k), g.n, sum})
	}
	spec := vector.AggregateSpec{GroupBy: []vector.NamedExpr{vector.As(vector.Col("k"), "k")},
		Aggregates: []vector.AggregateCall{call(vector.AggCountStar, "n"), call(vector.AggCount, "c", "v"), call(vector.AggSum, "s", "v"),
			call(vector.AggMin, "m", "v"), call(vector.AggLast, "l", "v")}}
	shapes := []vt.Shape{{BatchSize: 64 << 10}, {BatchSize: 1000, Sliced: true, GarbageUnderNulls: true}}
	for name, build := range map[string]func(vector.AggregateSpec) func(memory.Allocator, []vector.Operator) (vector.Operator, error){
		"complete": completeBuild, "merge": mergeBuild} {
		runLarge(t, name, s, rows, build(spec), wantRows, shapes)
	}
	strSpec := vector.AggregateSpec{GroupBy: []vector.NamedExpr{vector.As(vector.Col("s"), "s")},
		Aggregates: []vector.AggregateCall{call(vector.AggCountStar, "n"), call(vector.AggSum, "s", "v")}}
	runLarge(t, "string-keys", s, rows, completeBuild(strSpec), wantByString, shapes[:1])
}

// runLarge is RunOperator without its batch-size-1 early-close run, which
// takes minutes on large inputs.
func runLarge(t *testing.T, name string, s *arrow.Schema, rows []vt.Row, build func(memory.Allocator, []vector.Operator) (vector.Operator, error), want []vt.Row, shapes []vt.Shape) {
	for _, shape := range shapes {
		t.Run(name+"/"+shape.String(), func(t *testing.T) {
			mem := vt.NewAllocator(t)
			recs := vt.BuildRecords(mem, s, rows, shape)
			scan, err := vector.NewScan(s, recs...)
			releaseRecords(recs)
			if err != nil {
				t.Fatal(err)
			}
			op, err := build(mem, []vector.Operator{scan})
			if err != nil {
				scan.Close()
				t.Fatal(err)
			}
			defer op.Close()
			out, err := vector.Drain(context.Background(), op)
			if err != nil {
				t.Fatal(err)
			}
			got := vt.RowsOf(out...)
			if len(out) < 2 && len(want) > 64<<10 {
				t.Errorf("%d groups in %d batches; want batches of at most 64K rows", len(got), len(out))
			}
			releaseRecords(out)
			if !vt.RowsEqual(vt.SortRows(want), vt.SortRows(got)) {
				t.Errorf("wrong result: %d rows, want %d", len(got), len(want))
			}
		})
	}
}

// TestHashAggregateRowCountFlush makes the group tables flush their 32-bit
// row counters every few rows: counts must not change.
func TestHashAggregateRowCountFlush(t *testing.T) {
	defer vector.SetRowCountLimit(4)()
	runAggCase(t, aggCase{name: "flush", groupBy: byK(),
		aggs: []vector.AggregateCall{call(vector.AggCountStar, "n"), call(vector.AggCount, "nv", "v"), call(vector.AggSum, "sv", "v")},
		want: []vt.Row{{1, 3, 2, 7}, {2, 2, 1, 20}, {3, 1, 0, nil}, {nil, 2, 2, 8}}})
	runAggCase(t, aggCase{name: "flush-bytes", schema: keySchema, rows: keyRows,
		groupBy: []vector.NamedExpr{vector.As(vector.Col("s"), "s")},
		aggs:    []vector.AggregateCall{call(vector.AggCountStar, "n")},
		want:    []vt.Row{{"x", 3}, {"", 2}, {nil, 1}, {"y", 1}}})
}
