package vector_test

import (
	"context"
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
			aggs: []vector.AggregateCall{call(vector.AggCountStar, "n"), call(vector.AggCount, "nv", "v"), call(vector.AggCount, "nvd", "v", "d")},
			want: []vt.Row{{1, 3, 2, 2}, {2, 2, 1, 1}, {3, 1, 0, 0}, {nil, 2, 2, 1}}},
		{name: "sum", groupBy: byK(),
			aggs: []vector.AggregateCall{call(vector.AggSum, "sv", "v"), call(vector.AggSum, "sd", "d"), call(vector.AggSum, "sdec", "dec")},
			want: []vt.Row{{1, 7, 5.5, "2.00"}, {2, 20, 2.5, "2.50"}, {3, nil, nil, nil}, {nil, 8, 0.5, "-1.00"}}},
		{name: "avg", groupBy: byK(),
			aggs: []vector.AggregateCall{call(vector.AggAvg, "av", "v"), call(vector.AggAvg, "ad", "d"), call(vector.AggAvg, "adec", "dec")},
			want: []vt.Row{{1, 3.5, 2.75, 1.0}, {2, 20.0, 2.5, 2.5}, {3, nil, nil, nil}, {nil, 4.0, 0.5, -1.0}}},
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
