package sql

import (
	"path/filepath"
	"testing"

	"github.com/arrowstream/arrowstream/streamtest/conformance/spec"
)

// conformanceDir holds the conformance scenarios
// (streamtest/testdata/conformance/FORMAT.md): their SQL and their plans'
// expression strings must all parse.
const conformanceDir = "../streamtest/testdata/conformance"

// loadScenarios reads the scenarios by file name.
func loadScenarios(t testing.TB) map[string][]*spec.Scenario {
	t.Helper()
	scs, err := spec.Load(conformanceDir)
	if err != nil {
		t.Fatal(err)
	}
	all := map[string][]*spec.Scenario{}
	for _, sc := range scs {
		f := filepath.Base(sc.File)
		all[f] = append(all[f], sc)
	}
	return all
}

// conformanceSQL returns every query.sql of the scenarios.
func conformanceSQL(t testing.TB) []string {
	var out []string
	for _, ss := range loadScenarios(t) {
		for _, s := range ss {
			if s.Query != nil && s.Query.SQL != "" {
				out = append(out, s.Query.SQL)
			}
		}
	}
	return out
}

func TestConformanceSQL(t *testing.T) {
	n := 0
	for file, ss := range loadScenarios(t) {
		for _, s := range ss {
			if s.Query == nil || s.Query.SQL == "" {
				continue
			}
			n++
			stmt, err := Parse(s.Query.SQL)
			if err != nil {
				t.Errorf("%s %s: %v\n%s", file, s.Name, err, s.Query.SQL)
				continue
			}
			if _, ok := stmt.(*Query); !ok {
				t.Errorf("%s %s: parsed as %T, want a query", file, s.Name, stmt)
			}
			checkPositions(t, s.Query.SQL, stmt)
			checkRoundTrip(t, s.Query.SQL, stmt, Parse)
		}
	}
	if n < 20 {
		t.Errorf("only %d scenarios have SQL; is %s complete?", n, conformanceDir)
	}
}

// TestConformancePlanStrings parses the expression strings of the
// scenarios' DataFrame plans with the entry points the Go API will use.
func TestConformancePlanStrings(t *testing.T) {
	n := 0
	// A scenario that expects its query to be refused at analysis may
	// hold an invalid string on purpose (a delay threshold that is not an
	// interval): its strings are parsed, but an error is no failure.
	refused := false
	check := func(where, kind, s string) {
		n++
		var err error
		switch kind {
		case "expr":
			var e Expr
			if e, err = ParseExpr(s); err == nil {
				checkRoundTrip(t, s, e, ParseExpr)
			}
		case "item":
			var it *SelectItem
			if it, err = ParseSelectItem(s); err == nil {
				checkRoundTrip(t, s, it, ParseSelectItem)
			}
		case "order":
			var it *OrderItem
			if it, err = ParseOrderItem(s); err == nil {
				checkRoundTrip(t, s, it, ParseOrderItem)
			}
		case "type":
			_, err = ParseType(s)
		case "interval":
			_, err = ParseInterval(s)
		}
		if err != nil && !refused {
			t.Errorf("%s: %s %q: %v", where, kind, s, err)
		}
	}
	strs := func(v any) []string {
		var out []string
		switch v := v.(type) {
		case string:
			out = append(out, v)
		case []any:
			for _, x := range v {
				if s, ok := x.(string); ok {
					out = append(out, s)
				}
			}
		}
		return out
	}
	var walk func(where string, ops []any)
	walk = func(where string, ops []any) {
		for _, op := range ops {
			m, _ := op.(map[string]any)
			for k, v := range m {
				switch k {
				case "select", "group_by", "agg":
					for _, s := range strs(v) {
						check(where, "item", s)
					}
				case "filter":
					check(where, "expr", v.(string))
				case "with_column":
					check(where, "expr", strs(v)[1])
				case "with_watermark":
					check(where, "interval", strs(v)[1])
				case "order_by":
					for _, s := range strs(v) {
						check(where, "order", s)
					}
				case "join":
					j := v.(map[string]any)
					if on, ok := j["on"].(string); ok {
						check(where, "expr", on)
					}
					walk(where, j["right"].([]any))
				case "union":
					walk(where, v.([]any))
				case "flat_map_groups_with_state", "map_groups_with_state":
					check(where, "expr", v.(map[string]any)["key"].(string))
				}
			}
		}
	}
	for file, ss := range loadScenarios(t) {
		for _, s := range ss {
			where := file + " " + s.Name
			refused = false
			for _, st := range s.Steps {
				if st.Action == "expect_failure" && string(st.Fields["phase"]) == `"analysis"` {
					refused = true
				}
			}
			for _, cols := range s.Sources {
				for _, c := range cols {
					check(where, "type", c.Type)
				}
			}
			if s.Query != nil {
				plan, err := spec.Generic(s.Query.Plan)
				if err != nil {
					t.Fatalf("%s: %v", where, err)
				}
				ops := make([]any, len(plan))
				for i, op := range plan {
					ops[i] = op
				}
				walk(where, ops)
			}
		}
	}
	if n < 50 {
		t.Errorf("only %d plan strings checked", n)
	}
}
