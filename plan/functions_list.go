package plan

import (
	"slices"

	"github.com/arrowstream/arrowstream/vector"
)

// internalFunctions are names in the scalar registry that the planner
// calls for syntax (date - date, a[i], arrays_zip's named form, ...) and
// that are not functions a user calls.
var internalFunctions = map[string]bool{
	"date_subtract": true, "subscript": true, "arrays_zip_named": true, "posexplode_entries": true,
	"json_tuple_item": true, "timestamp_subtract": true,
}

// rewrittenFunctions are the functions the analyzer rewrites into other
// expressions (nvl2 into CASE, pmod into %, extract into the field's
// function) rather than calls of the scalar registry: SHOW FUNCTIONS and
// DESCRIBE FUNCTION list them, and the higher-order functions, too
// (TestFunctionListComplete).
var rewrittenFunctions = []string{
	"concat_ws", "date_part", "datepart", "dateadd", "equal_null", "extract", "ilike",
	"mod", "nanvl", "negative", "nullif", "nvl2", "pmod", "positive", "struct",
	"try_add", "try_divide", "try_multiply", "try_subtract",
}

// FunctionNames lists, sorted and once each, the functions a query can
// call: the scalar registry the planner resolves calls from, the
// functions the analyzer resolves itself, the aggregates, the window-only
// functions and the generators (SHOW FUNCTIONS).
func FunctionNames() []string {
	var names []string
	for _, n := range vector.FunctionNames() {
		if !internalFunctions[n] {
			names = append(names, n)
		}
	}
	names = append(names, specialFuncs...)
	names = append(names, rewrittenFunctions...)
	for n := range higherOrderFuncs {
		names = append(names, n)
	}
	names = append(names, AggregateFunctionNames()...)
	for n := range windowOnly {
		names = append(names, n)
	}
	names = append(names, "explode", "explode_outer", "posexplode", "posexplode_outer", "inline", "inline_outer",
		"json_tuple", "stack", "grouping", "grouping_id")
	slices.Sort(names)
	return slices.Compact(names)
}
