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
	if _, err := DescribeFunction(sql.Pos{}, "nanvl", false); !errors.Is(err, ErrUnsupported) {
		t.Errorf("nanvl: %v, want unsupported", err)
	}
	if _, err := DescribeFunction(sql.Pos{}, "no_such_fn", false); !errors.Is(err, ErrUnresolved) || !strings.Contains(err.Error(), "[UNRESOLVED_ROUTINE]") {
		t.Errorf("no_such_fn: %v, want UNRESOLVED_ROUTINE", err)
	}
	// Internal names the planner calls for syntax are not functions.
	if _, err := DescribeFunction(sql.Pos{}, "timestamp_subtract", false); err == nil {
		t.Error("timestamp_subtract: described, want an error")
	}
}
