package plan_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/apache/arrow/go/v17/arrow"
	"github.com/apache/arrow/go/v17/arrow/memory"

	"github.com/arrowstream/arrowstream/plan"
	"github.com/arrowstream/arrowstream/vector"
	vt "github.com/arrowstream/arrowstream/vector/vectortest"
)

func fieldsOf(fields ...any) *arrow.Schema {
	var fs []arrow.Field
	for i := 0; i < len(fields); i += 2 {
		fs = append(fs, arrow.Field{Name: fields[i].(string), Type: fields[i+1].(arrow.DataType), Nullable: true})
	}
	return arrow.NewSchema(fs, nil)
}

var (
	inSchema    = fieldsOf("k", vector.String, "v", vector.Int32, "ts", vector.Timestamp)
	rightSchema = fieldsOf("k2", vector.String, "w", vector.Int64)
)

func sec(s int64) arrow.Timestamp { return arrow.Timestamp(s * 1_000_000) }

var inRows = []vt.Row{
	{"a", 1, sec(1)},
	{"b", 2, sec(4)},
	{"a", 3, sec(12)},
	{nil, 4, sec(15)},
	{"b", nil, nil},
}

// streamPlan builds a plan over the streaming sources "in" (inSchema) and
// "right" (rightSchema) with f; its operators then run over the harness's
// inputs through BuildTree, as the streaming engine composes them.
func streamPlan(t *testing.T, f func(cat plan.Catalog) (plan.Node, error)) plan.Node {
	t.Helper()
	cat := plan.NewMemoryCatalog()
	cat.Register("in", &plan.SourceTable{TableSchema: inSchema})
	cat.Register("right", &plan.SourceTable{TableSchema: rightSchema})
	n, err := f(cat)
	if err != nil {
		t.Fatal(err)
	}
	return n
}

var testEnv = &plan.Env{BatchTimestamp: time.Unix(10, 0)}

func buildOver(n plan.Node) func(mem memory.Allocator, inputs []vector.Operator) (vector.Operator, error) {
	return func(mem memory.Allocator, inputs []vector.Operator) (vector.Operator, error) {
		used := make([]bool, len(inputs))
		op, err := plan.BuildTree(context.Background(), mem, n, testEnv, func(s *plan.Scan) (vector.Operator, error) {
			i := 0
			if s.Name == "right" {
				i = 1
			}
			if used[i] {
				return nil, errors.New("input used twice")
			}
			used[i] = true
			return inputs[i], nil
		})
		if err != nil {
			return nil, err
		}
		return op, nil
	}
}

func TestBuildOperators(t *testing.T) {
	in := []vt.Input{{Schema: inSchema, Rows: inRows}}
	both := []vt.Input{{Schema: inSchema, Rows: inRows}, {Schema: rightSchema, Rows: []vt.Row{{"a", int64(10)}, {"c", int64(30)}, {"a", int64(11)}}}}
	cases := []struct {
		name   string
		inputs []vt.Input
		build  func(cat plan.Catalog) (plan.Node, error)
		want   []vt.Row
	}{
		{"project", in, func(cat plan.Catalog) (plan.Node, error) {
			n, _ := plan.Read(cat, "in")
			return plan.Select(n, "upper(k) AS k", "v * 2 AS v2")
		}, []vt.Row{{"A", 2}, {"B", 4}, {"A", 6}, {nil, 8}, {"B", nil}}},
		{"filter-current-timestamp", in, func(cat plan.Catalog) (plan.Node, error) {
			n, _ := plan.Read(cat, "in")
			n, _ = plan.Where(n, "ts < current_timestamp()")
			return plan.Select(n, "v")
		}, []vt.Row{{1}, {2}}},
		{"aggregate", in, func(cat plan.Catalog) (plan.Node, error) {
			n, _ := plan.Read(cat, "in")
			return plan.GroupBy(n, []string{"k"}, []string{"count(*) AS c", "sum(v) AS s", "max(ts) AS m"})
		}, []vt.Row{{"a", 2, 4, sec(12)}, {"b", 2, 2, sec(4)}, {nil, 1, 4, sec(15)}}},
		{"window-aggregate", in, func(cat plan.Catalog) (plan.Node, error) {
			n, _ := plan.Read(cat, "in")
			n, _ = plan.WithWatermark(n, "ts", "5 seconds")
			n, _ = plan.GroupBy(n, []string{"window(ts, '10 seconds') AS window"}, []string{"count(*) AS count"})
			return plan.Select(n, "CAST(window.start AS BIGINT) AS s", "count")
		}, []vt.Row{{0, 2}, {10, 2}}},
		{"dedup-first-row", in, func(cat plan.Catalog) (plan.Node, error) {
			n, _ := plan.Read(cat, "in")
			return plan.DropDuplicates(n, []string{"k"}, false)
		}, []vt.Row{{"a", 1, sec(1)}, {"b", 2, sec(4)}, {nil, 4, sec(15)}}},
		{"explode", in, func(cat plan.Catalog) (plan.Node, error) {
			n, _ := plan.Read(cat, "in")
			n, _ = plan.Where(n, "v < 3")
			return plan.Select(n, "explode(split(concat(k, ',x'), ',')) AS e", "v")
		}, []vt.Row{{"a", 1}, {"x", 1}, {"b", 2}, {"x", 2}}},
		{"join-left-outer", both, func(cat plan.Catalog) (plan.Node, error) {
			l, _ := plan.Read(cat, "in")
			r, _ := plan.Read(cat, "right")
			n, err := plan.JoinOn(l, r, "k = k2 AND v < 3", "left_outer")
			if err != nil {
				return nil, err
			}
			return plan.Select(n, "v", "w")
		}, []vt.Row{{1, int64(10)}, {1, int64(11)}, {2, nil}, {3, nil}, {4, nil}, {nil, nil}}},
		{"join-using", both, func(cat plan.Catalog) (plan.Node, error) {
			l, _ := plan.Read(cat, "in")
			r, _ := plan.Read(cat, "right")
			r, _ = plan.ToDF(r, "k", "w")
			return plan.JoinUsing(l, r, []string{"k"}, "inner")
		}, []vt.Row{{"a", 1, sec(1), int64(10)}, {"a", 1, sec(1), int64(11)}, {"a", 3, sec(12), int64(10)}, {"a", 3, sec(12), int64(11)}}},
		{"union-widening", both, func(cat plan.Catalog) (plan.Node, error) {
			l, _ := plan.Read(cat, "in")
			l, _ = plan.Select(l, "k", "v")
			r, _ := plan.Read(cat, "right")
			return plan.UnionAll(l, r)
		}, []vt.Row{{"a", 1}, {"b", 2}, {"a", 3}, {nil, 4}, {"b", nil}, {"a", 10}, {"c", 30}, {"a", 11}}},
		{"limit", in, func(cat plan.Catalog) (plan.Node, error) {
			n, _ := plan.Read(cat, "in")
			n, _ = plan.OrderBy(n, "v DESC NULLS LAST")
			n, _ = plan.WithLimit(n, 2)
			return plan.Select(n, "v")
		}, []vt.Row{{4}, {3}}},
	}
	for _, c := range cases {
		n := streamPlan(t, c.build)
		for _, optimized := range []bool{false, true} {
			node := n
			name := c.name
			if optimized {
				var err error
				if node, err = plan.Optimize(n); err != nil {
					t.Fatal(err)
				}
				name += "/optimized"
			}
			vt.RunOperator(t, vt.OperatorCase{Name: name, Inputs: c.inputs, Build: buildOver(node), Want: c.want,
				WantSchema: node.Schema(), Ordered: c.name == "limit"})
		}
	}
}

// TestBuildKeepsWatermarkMetadata: the operators built for a plan carry
// the logical schema, so the event-time column keeps its marker through
// projections and windows.
func TestBuildKeepsWatermarkMetadata(t *testing.T) {
	n := streamPlan(t, func(cat plan.Catalog) (plan.Node, error) {
		n, _ := plan.Read(cat, "in")
		n, err := plan.WithWatermark(n, "ts", "10 seconds")
		if err != nil {
			return nil, err
		}
		return plan.Select(n, "ts AS event", "window(ts, '5 seconds') AS w")
	})
	s := n.Schema()
	for _, f := range s.Fields() {
		if d, ok := plan.WatermarkDelay(f); !ok || d != 10000 {
			t.Errorf("column %s: delay %d, %v", f.Name, d, ok)
		}
	}
	vt.RunOperator(t, vt.OperatorCase{Name: "metadata", Inputs: []vt.Input{{Schema: inSchema, Rows: inRows[:1]}},
		Build: buildOver(n), WantSchema: s,
		Want: []vt.Row{{sec(1), []any{sec(0), sec(5)}}}})
}

func TestBuildOperatorErrors(t *testing.T) {
	n := streamPlan(t, func(cat plan.Catalog) (plan.Node, error) { return plan.Read(cat, "in") })
	mem := vt.NewAllocator(t)
	ctx := context.Background()
	if _, err := plan.BuildOperator(ctx, mem, n, nil, nil); !errors.Is(err, plan.ErrUnsupported) {
		t.Errorf("streaming scan without data: %v", err)
	}
	if _, err := plan.Execute(ctx, mem, n, nil); !errors.Is(err, plan.ErrStreaming) {
		t.Errorf("Execute of a streaming plan: %v", err)
	}
	sel, _ := plan.Select(n, "v")
	if _, err := plan.BuildOperator(ctx, mem, sel, nil, nil); err == nil {
		t.Error("BuildOperator without its child operator succeeded")
	}
	ts := streamPlan(t, func(cat plan.Catalog) (plan.Node, error) {
		n, _ := plan.Read(cat, "in")
		return plan.Select(n, "current_timestamp() AS now")
	})
	if _, err := plan.ToVectorExpr(ts.(*plan.Project).Exprs[0].Expr, nil); !errors.Is(err, plan.ErrUnsupported) {
		t.Errorf("current_timestamp() without a batch time: %v", err)
	}
	ve, err := plan.ToVectorExpr(ts.(*plan.Project).Exprs[0].Expr, testEnv)
	if err != nil || ve.String() != "TIMESTAMP '1970-01-01 00:00:10'" {
		t.Errorf("current_timestamp() = %v, %v", ve, err)
	}
}

func TestAggregateAndJoinSpecs(t *testing.T) {
	n := streamPlan(t, func(cat plan.Catalog) (plan.Node, error) {
		l, _ := plan.Read(cat, "in")
		r, _ := plan.Read(cat, "right")
		j, err := plan.JoinOn(l, r, "k = k2 AND v <=> w AND v + w > 1", "inner")
		if err != nil {
			return nil, err
		}
		return plan.GroupBy(j, []string{"k"}, []string{"count(*) AS c", "approx_count_distinct(w) AS d", "first(v, true) AS f"})
	})
	agg := n.(*plan.Aggregate)
	spec, err := plan.AggregateSpecFor(agg, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(spec.GroupBy) != 1 || spec.GroupBy[0].Name != "k" || len(spec.Aggregates) != 3 ||
		spec.Aggregates[1].Func != vector.AggApproxCountDistinct || !spec.Aggregates[2].IgnoreNulls || spec.Aggregates[0].Name != "c" {
		t.Errorf("aggregate spec %+v", spec)
	}
	j := agg.Input.(*plan.Join)
	js, err := plan.JoinSpecFor(j, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(js.LeftKeys) != 2 || js.NullSafe[0] || !js.NullSafe[1] || js.Residual == nil {
		t.Errorf("join spec %+v", js)
	}
	// v (int) <=> w (bigint): vector's join widens int keys to bigint
	// itself, so no cast is added.
	if got := js.LeftKeys[1].String(); got != "v" {
		t.Errorf("left key %s", got)
	}
	if got := js.Residual.String(); got != "((v + w) > 1L)" && got != "((v + w) > 1)" {
		t.Errorf("residual %s", got)
	}
}
