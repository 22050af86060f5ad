package plan

import (
	"fmt"
	"slices"
	"strings"

	"github.com/arrowstream/arrowstream/sql"
	"github.com/arrowstream/arrowstream/vector"
)

// DescribeFunction answers DESCRIBE FUNCTION [EXTENDED] name: one line per
// row, in the shape of Spark's answer (Function:, then the kind where Spark
// names its implementing class, then Usage:), from the same list as SHOW
// FUNCTIONS and the usage lines of functionUsage. EXTENDED adds the number
// of arguments the registry accepts, where it knows it. A function Spark has
// and the engine has not is refused as unsupported; an unknown name is
// Spark's UNRESOLVED_ROUTINE.
func DescribeFunction(pos sql.Pos, name string, extended bool) ([]string, error) {
	key := strings.ToLower(strings.TrimSpace(name))
	usage, ok := functionUsage[key]
	if !ok || !slices.Contains(FunctionNames(), key) && !operatorFunctions[key] {
		if sparkBuiltins[key] {
			return nil, errorAt(pos, ErrUnsupported, "The Spark SQL function %s is not supported by this engine.", backquote(name))
		}
		return nil, errorAt(pos, ErrUnresolved, "[UNRESOLVED_ROUTINE] Cannot resolve routine %s on search path [`system`.`builtin`, `system`.`session`].%s",
			backquote(name), didYouMean(key, FunctionNames()))
	}
	rows := []string{
		"Function: " + key,
		"Kind: " + functionKind(key),
		"Usage: " + usage,
	}
	if extended {
		rows = append(rows, "Extended Usage:")
		if lo, hi, ok := vector.FunctionArity(key); ok {
			rows = append(rows, "    Arguments: "+arityText(lo, hi))
		}
		rows = append(rows, "    Documented with examples in docs/sql.md.")
	}
	return rows, nil
}

// operatorFunctions are the operators Spark also lists as functions and
// functionUsage describes.
var operatorFunctions = map[string]bool{"&": true, "|": true, "^": true, "~": true}

// functionKind names what kind of function name is: where Spark's answer
// names the class that implements it, the engine says how a query calls it.
func functionKind(name string) string {
	switch {
	case operatorFunctions[name]:
		return "operator"
	case isGenerator(name) || name == "json_tuple" || name == "stack":
		return "generator (a table-valued function of SELECT or LATERAL VIEW)"
	case isWindowOnly(name):
		return "window function (needs OVER)"
	case slices.Contains(AggregateFunctionNames(), name):
		return "aggregate function (also a window function with OVER)"
	case name == "grouping" || name == "grouping_id":
		return "grouping function (GROUPING SETS, CUBE, ROLLUP)"
	}
	return "scalar function"
}

// arityText writes an argument count range.
func arityText(lo, hi int) string {
	switch {
	case hi < 0:
		return fmt.Sprintf("%d or more", lo)
	case lo == hi:
		return fmt.Sprintf("%d", lo)
	}
	return fmt.Sprintf("%d to %d", lo, hi)
}

func isWindowOnly(name string) bool {
	_, ok := windowOnly[name]
	return ok
}
