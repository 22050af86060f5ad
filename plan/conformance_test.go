package plan_test

import (
	"encoding/json"
	"fmt"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/apache/arrow/go/v17/arrow"

	"github.com/arrowstream/arrowstream/plan"
	"github.com/arrowstream/arrowstream/streamtest/conformance/spec"
	"github.com/arrowstream/arrowstream/vector"
)

// The conformance scenarios (streamtest/testdata/conformance, read with
// package spec): every SQL query and every DataFrame plan must analyze
// against its sources' schemas, and where both exist they must have the
// same output types.

const conformanceDir = "../streamtest/testdata/conformance"

type column = spec.Column

// scenario is a scenario with its plan as plain JSON values, the form
// buildPlan walks.
type scenario struct {
	*spec.Scenario
	plan []map[string]any
}

// loadScenarios reads the scenarios by file name.
func loadScenarios(t testing.TB) map[string][]scenario {
	t.Helper()
	scs, err := spec.Load(conformanceDir)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string][]scenario{}
	for _, sc := range scs {
		s := scenario{Scenario: sc}
		if sc.Query != nil && sc.Query.Plan != nil {
			if s.plan, err = spec.Generic(sc.Query.Plan); err != nil {
				t.Fatalf("%s %s: %v", sc.File, sc.Name, err)
			}
		}
		f := filepath.Base(sc.File)
		out[f] = append(out[f], s)
	}
	return out
}

func conformanceType(t testing.TB, name string) arrow.DataType {
	switch name {
	case "int":
		return vector.Int32
	case "bigint":
		return vector.Int64
	case "double":
		return vector.Float64
	case "string":
		return vector.String
	case "boolean":
		return vector.Boolean
	case "timestamp":
		return vector.Timestamp
	}
	t.Fatalf("unknown conformance type %q", name)
	return nil
}

func schemaOf(t testing.TB, cols []column) *arrow.Schema {
	fields := make([]arrow.Field, len(cols))
	for i, c := range cols {
		fields[i] = arrow.Field{Name: c.Name, Type: conformanceType(t, c.Type), Nullable: true}
	}
	return arrow.NewSchema(fields, nil)
}

func scenarioCatalog(t testing.TB, s scenario) *plan.MemoryCatalog {
	cat := plan.NewMemoryCatalog()
	for name, cols := range s.Sources {
		cat.Register(name, &plan.SourceTable{TableSchema: schemaOf(t, cols)})
	}
	for name, st := range s.Static {
		mt, err := plan.NewMemTable(schemaOf(t, st.Columns))
		if err != nil {
			t.Fatal(err)
		}
		cat.Register(name, mt)
	}
	return cat
}

// expectsAnalysisFailure reports whether the scenario's first failure is
// an analysis failure (the streaming checker's job, not the analyzer's).
func expectsAnalysisFailure(s scenario) bool {
	for _, st := range s.Steps {
		if st.Action == "expect_failure" && string(st.Fields["phase"]) == `"analysis"` {
			return true
		}
	}
	return false
}

// confRefused reports whether the scenario sets a query option that the
// query's start refuses whatever the plan (an unknown watermark policy):
// its analysis failure is not the plan's.
func confRefused(s scenario) bool {
	raw, ok := s.Query.Options["spark.sql.streaming.multipleWatermarkPolicy"]
	if !ok {
		return false
	}
	var v string
	if err := json.Unmarshal(raw, &v); err != nil {
		return true
	}
	v = strings.ToLower(strings.TrimSpace(v))
	return v != "min" && v != "max"
}

func TestConformanceAnalyze(t *testing.T) {
	nSQL, nPlan := 0, 0
	files := loadScenarios(t)
	names := make([]string, 0, len(files))
	for f := range files {
		names = append(names, f)
	}
	sort.Strings(names)
	for _, file := range names {
		for _, s := range files[file] {
			if s.Query == nil {
				continue
			}
			t.Run(s.Name, func(t *testing.T) {
				cat := scenarioCatalog(t, s)
				var fromSQL, fromPlan plan.Node
				if s.Query.SQL != "" {
					nSQL++
					n, err := plan.AnalyzeSQL(s.Query.SQL, cat)
					switch {
					case err != nil && !expectsAnalysisFailure(s):
						t.Fatalf("%s: SQL: %v\n%s", file, err, s.Query.SQL)
					case err != nil:
						// The analyzer refused it (a bad column, type or
						// delay): the failure the scenario expects.
						t.Logf("SQL refused by the analyzer: %v", err)
					default:
						fromSQL = n
					}
				}
				if s.plan != nil {
					nPlan++
					n, err := buildPlan(t, cat, s.plan, s.Output)
					switch {
					case err != nil && !expectsAnalysisFailure(s):
						t.Fatalf("%s: plan: %v\n%v", file, err, s.plan)
					case err != nil:
						t.Logf("plan refused by the analyzer: %v", err)
					default:
						fromPlan = n
					}
				}
				for _, n := range []plan.Node{fromSQL, fromPlan} {
					if n == nil {
						continue
					}
					isPlan := n == fromPlan
					if !n.IsStreaming() {
						t.Errorf("plan is not streaming:\n%s", plan.Explain(n))
					}
					if len(s.Output) > 0 && !expectsAnalysisFailure(s) {
						checkOutput(t, n, s.Output, isPlan)
					}
					mode, err := parseMode(s.Query.OutputMode)
					if err != nil {
						t.Fatal(err)
					}
					err = plan.CheckStreaming(n, mode)
					if err == nil {
						err = streamJoinWithoutKeys(t, n)
					}
					if expectsAnalysisFailure(s) != (err != nil) && !(err == nil && confRefused(s)) {
						t.Errorf("CheckStreaming(%s) = %v, want failure %v\n%s", mode, err, expectsAnalysisFailure(s), plan.Explain(n))
					}
				}
				if fromSQL != nil && fromPlan != nil {
					a, b := typesOf(fromSQL.Schema()), typesOf(fromPlan.Schema())
					if a != b {
						t.Errorf("SQL and plan output types differ: %s vs %s\nSQL:\n%s\nplan:\n%s", a, b, plan.Explain(fromSQL), plan.Explain(fromPlan))
					}
				}
			})
		}
	}
	if nSQL < 20 || nPlan < 30 {
		t.Errorf("only %d SQL queries and %d plans analyzed", nSQL, nPlan)
	}
}

// streamJoinWithoutKeys returns the error with which the engine refuses to
// start a query whose optimized plan has a stream-stream join without an
// equality between its sides (Spark: "Stream-stream join without equality
// predicate is not supported"). It is found after optimization, not by
// CheckStreaming, because a WHERE conjunct may become the join's key.
func streamJoinWithoutKeys(t *testing.T, n plan.Node) error {
	t.Helper()
	opt, err := plan.Optimize(n)
	if err != nil {
		t.Fatalf("optimize: %v", err)
	}
	var walk func(plan.Node) error
	walk = func(n plan.Node) error {
		if j, ok := n.(*plan.Join); ok && j.Left.IsStreaming() && j.Right.IsStreaming() {
			if lk, _, _, _ := plan.EquiJoinKeys(j); len(lk) == 0 {
				return fmt.Errorf("stream-stream join without an equality condition: %s", j.String())
			}
		}
		for _, c := range n.Children() {
			if err := walk(c); err != nil {
				return err
			}
		}
		return nil
	}
	return walk(opt)
}

func parseMode(s string) (plan.OutputMode, error) {
	switch strings.ToLower(s) {
	case "", "append":
		return plan.Append, nil
	case "update":
		return plan.Update, nil
	case "complete":
		return plan.Complete, nil
	}
	return 0, fmt.Errorf("unknown output mode %q", s)
}

func typesOf(s *arrow.Schema) string {
	parts := make([]string, s.NumFields())
	for i, f := range s.Fields() {
		parts[i] = vector.TypeName(f.Type)
	}
	return strings.Join(parts, ", ")
}

func checkOutput(t *testing.T, n plan.Node, want []column, names bool) {
	t.Helper()
	s := n.Schema()
	if s.NumFields() != len(want) {
		t.Errorf("output has %d columns %s, want %d\n%s", s.NumFields(), s, len(want), plan.Explain(n))
		return
	}
	for i, c := range want {
		f := s.Field(i)
		if names && f.Name != c.Name || !arrow.TypeEqual(f.Type, conformanceType(t, c.Type)) {
			t.Errorf("output column %d is %s %s, want %s %s", i, f.Name, vector.TypeName(f.Type), c.Name, c.Type)
		}
	}
}

// buildPlan builds a scenario's plan (FORMAT.md beside the scenarios)
// with the builder API.
func buildPlan(t testing.TB, cat plan.Catalog, ops []map[string]any, output []column) (plan.Node, error) {
	var n plan.Node
	var err error
	strs := func(v any) []string {
		var out []string
		for _, x := range v.([]any) {
			out = append(out, x.(string))
		}
		return out
	}
	for i, op := range ops {
		last := i == len(ops)-1
		switch {
		case op["read"] != nil:
			n, err = plan.Read(cat, op["read"].(string))
		case op["read_static"] != nil:
			n, err = plan.ReadStatic(cat, op["read_static"].(string))
		case op["select"] != nil:
			n, err = plan.Select(n, strs(op["select"])...)
		case op["with_column"] != nil:
			a := strs(op["with_column"])
			n, err = plan.WithColumn(n, a[0], a[1])
		case op["to_df"] != nil:
			n, err = plan.ToDF(n, strs(op["to_df"])...)
		case op["filter"] != nil:
			n, err = plan.Where(n, op["filter"].(string))
		case op["with_watermark"] != nil:
			a := strs(op["with_watermark"])
			n, err = plan.WithWatermark(n, a[0], a[1])
		case op["group_by"] != nil:
			n, err = plan.GroupBy(n, strs(op["group_by"]), strs(op["agg"]))
		case op["drop_duplicates"] != nil:
			n, err = plan.DropDuplicates(n, strs(op["drop_duplicates"]), false)
		case op["drop_duplicates_within_watermark"] != nil:
			n, err = plan.DropDuplicates(n, strs(op["drop_duplicates_within_watermark"]), true)
		case op["join"] != nil:
			j := op["join"].(map[string]any)
			var right plan.Node
			if right, err = buildPlan(t, cat, toOps(j["right"]), nil); err != nil {
				return nil, err
			}
			typ, _ := j["type"].(string)
			if on, ok := j["on"].(string); ok {
				n, err = plan.JoinOn(n, right, on, typ)
			} else {
				n, err = plan.JoinUsing(n, right, strs(j["on"]), typ)
			}
		case op["union"] != nil:
			var other plan.Node
			if other, err = buildPlan(t, cat, toOps(op["union"]), nil); err != nil {
				return nil, err
			}
			n, err = plan.UnionAll(n, other)
		case op["limit"] != nil:
			n, err = plan.WithLimit(n, int64(op["limit"].(float64)))
		case op["order_by"] != nil:
			n, err = plan.OrderBy(n, strs(op["order_by"])...)
		case op["flat_map_groups_with_state"] != nil || op["map_groups_with_state"] != nil:
			m, _ := op["flat_map_groups_with_state"].(map[string]any)
			mapGroups := m == nil
			if mapGroups {
				m = op["map_groups_with_state"].(map[string]any)
			}
			spec := plan.FlatMapSpec{Key: m["key"].(string), FuncName: m["function"].(string), MapGroups: mapGroups}
			mode, _ := m["output_mode"].(string)
			if spec.Mode, err = parseMode(mode); err != nil {
				return nil, err
			}
			switch m["timeout"] {
			case "processing_time":
				spec.Timeout = plan.ProcessingTimeTimeout
			case "event_time":
				spec.Timeout = plan.EventTimeTimeout
			}
			spec.OutputSchema = arrow.NewSchema([]arrow.Field{{Name: "_1", Type: vector.String}, {Name: "_2", Type: vector.Int64}}, nil)
			if len(output) > 0 && last {
				spec.OutputSchema = schemaOf(t, output)
			}
			n, err = plan.FlatMapGroups(n, spec)
		default:
			return nil, fmt.Errorf("unknown op %v", op)
		}
		if err != nil {
			return nil, fmt.Errorf("op %v: %w", op, err)
		}
	}
	return n, nil
}

func toOps(v any) []map[string]any {
	var out []map[string]any
	for _, x := range v.([]any) {
		out = append(out, x.(map[string]any))
	}
	return out
}
