package plan

import (
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/arrowstream/arrowstream/sql"
)

// TestFunctionUsage checks that DESCRIBE FUNCTION has a usage line for
// every function SHOW FUNCTIONS lists, and none for a name it does not.
func TestFunctionUsage(t *testing.T) {
	names := FunctionNames()
	for _, n := range names {
		u, ok := functionUsage[n]
		if !ok {
			t.Errorf("%s: no usage line in functionUsage", n)
			continue
		}
		if !strings.Contains(u, ":") {
			t.Errorf("%s: usage %q does not say what the call returns", n, u)
		}
	}
	for n := range functionUsage {
		if !slices.Contains(names, n) {
			t.Errorf("%s: a usage line for a function SHOW FUNCTIONS does not list", n)
		}
	}
}

func TestDescribeFunction(t *testing.T) {
	rows, err := DescribeFunction(sql.Pos{}, "SUBSTR", true)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{
		"Function: substr",
		"Kind: scalar function",
		"Usage: " + functionUsage["substr"],
		"Extended Usage:",
		"    Arguments: 2 to 3",
		"    Documented with examples in docs/sql.md.",
	}
	if !slices.Equal(rows, want) {
		t.Errorf("DESCRIBE FUNCTION EXTENDED substr:\n%s\nwant\n%s", strings.Join(rows, "\n"), strings.Join(want, "\n"))
	}
	kinds := map[string]string{
		"sum": "aggregate function", "row_number": "window function", "explode": "generator",
		"grouping_id": "grouping function", "&": "operator", "upper": "scalar function",
	}
	for name, kind := range kinds {
		rows, err := DescribeFunction(sql.Pos{}, name, false)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if len(rows) != 3 || !strings.HasPrefix(rows[1], "Kind: "+kind) {
			t.Errorf("%s: %q, want kind %q", name, rows, kind)
		}
	}
	// A function Spark has and the engine has not is unsupported; an
	// unknown name is Spark's UNRESOLVED_ROUTINE.
	if _, err := DescribeFunction(sql.Pos{}, "randn", false); !errors.Is(err, ErrUnsupported) {
		t.Errorf("randn: %v, want unsupported", err)
	}
	if _, err := DescribeFunction(sql.Pos{}, "no_such_fn", false); !errors.Is(err, ErrUnresolved) || !strings.Contains(err.Error(), "[UNRESOLVED_ROUTINE]") {
		t.Errorf("no_such_fn: %v, want UNRESOLVED_ROUTINE", err)
	}
	// Internal names the planner calls for syntax are not functions.
	if _, err := DescribeFunction(sql.Pos{}, "timestamp_subtract", false); err == nil {
		t.Error("timestamp_subtract: described, want an error")
	}
}

// TestFunctionListComplete: every Spark function the engine resolves is
// listed by SHOW FUNCTIONS and described by DESCRIBE FUNCTION. A function
// that the analyzer rewrites (nvl2, pmod, extract, the lambda functions)
// once answered DESCRIBE FUNCTION with "not supported by this engine"
// while queries used it. Each of Spark's built-in names is called with no
// arguments: an answer other than "not supported" or UNRESOLVED_ROUTINE
// (an arity error, a result) means the engine knows it. The rewritten
// functions are called properly as well, so that the list holds nothing
// the engine does not run.
func TestFunctionListComplete(t *testing.T) {
	listed := FunctionNames()
	unknown := func(err error) bool {
		return err != nil && (strings.Contains(err.Error(), "not supported by this engine") || strings.Contains(err.Error(), "UNRESOLVED_ROUTINE") || strings.Contains(err.Error(), "Undefined function"))
	}
	analyze := func(query string) error {
		st, err := sql.Parse(query)
		if err != nil {
			return err
		}
		_, err = Analyze(st, nil)
		return err
	}
	for name := range sparkBuiltins {
		if slices.Contains(listed, name) {
			continue
		}
		st, err := sql.Parse("SELECT " + name + "()")
		if err != nil {
			continue // an operator, or a name the parser takes as syntax
		}
		if _, err := Analyze(st, nil); !unknown(err) {
			t.Errorf("%s() resolves (%v) but SHOW FUNCTIONS does not list it", name, err)
		}
	}
	calls := map[string]string{
		"aggregate":        "aggregate(array(1, 2), 0, (a, x) -> a + x)",
		"reduce":           "reduce(array(1, 2), 0, (a, x) -> a + x)",
		"transform":        "transform(array(1, 2), x -> x + 1)",
		"filter":           "filter(array(1, 2), x -> x > 1)",
		"exists":           "exists(array(1, 2), x -> x > 1)",
		"forall":           "forall(array(1, 2), x -> x > 1)",
		"date_part":        "date_part('year', DATE '2024-01-01')",
		"datepart":         "datepart('year', DATE '2024-01-01')",
		"extract":          "extract(YEAR FROM DATE '2024-01-01')",
		"dateadd":          "dateadd(DATE '2024-01-01', 1)",
		"concat_ws":        "concat_ws(',', 'a', array('b'))",
		"ilike":            "ilike('A', 'a')",
		"nanvl":            "nanvl(1.0, 2.0)",
		"equal_null":       "equal_null(1, NULL)",
		"mod":              "mod(7, 3)",
		"pmod":             "pmod(-7, 3)",
		"positive":         "positive(1)",
		"negative":         "negative(1)",
		"nullif":           "nullif(1, 2)",
		"nvl2":             "nvl2(1, 2, 3)",
		"struct":           "struct(1, 'a')",
		"try_add":          "try_add(1, 2)",
		"try_subtract":     "try_subtract(1, 2)",
		"try_multiply":     "try_multiply(1, 2)",
		"try_divide":       "try_divide(1, 2)",
		"zip_with":         "zip_with(array(1), array(2), (x, y) -> x + y)",
		"map_filter":       "map_filter(map(1, 2), (k, v) -> v > 1)",
		"transform_keys":   "transform_keys(map(1, 2), (k, v) -> k + 1)",
		"transform_values": "transform_values(map(1, 2), (k, v) -> v + 1)",
	}
	names := append([]string(nil), rewrittenFunctions...)
	for n := range higherOrderFuncs {
		names = append(names, n)
	}
	for _, name := range names {
		call, ok := calls[name]
		if !ok {
			t.Errorf("no test call for the rewritten function %s", name)
			continue
		}
		if err := analyze("SELECT " + call); err != nil {
			t.Errorf("%s: %v", call, err)
		}
		if !slices.Contains(listed, name) {
			t.Errorf("SHOW FUNCTIONS does not list %s", name)
		}
		rows, err := DescribeFunction(sql.Pos{}, name, false)
		if err != nil || len(rows) < 3 || !strings.HasPrefix(rows[2], "Usage: "+name) {
			t.Errorf("DESCRIBE FUNCTION %s: %q, %v", name, rows, err)
		}
	}
}
