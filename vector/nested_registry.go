package vector

import (
	"github.com/apache/arrow/go/v17/arrow"
	"github.com/apache/arrow/go/v17/arrow/memory"
)

// nestedFunctions are the ARRAY, MAP and STRUCT functions of issue #20,
// merged into the registry at package initialisation.
var nestedFunctions = map[string]funcSpec{
	"array":              {0, -1, func(a []Expr) Expr { return ArrayOf(a...) }},
	"map":                {0, -1, func(a []Expr) Expr { return MapOfPairs(a...) }},
	"named_struct":       {2, -1, func(a []Expr) Expr { return NamedStruct(a...) }},
	"subscript":          {2, 2, func(a []Expr) Expr { return accessExpr(accessSubscript, a[0], a[1]) }},
	"get":                {2, 2, func(a []Expr) Expr { return accessExpr(accessGet, a[0], a[1]) }},
	"element_at":         {2, 2, func(a []Expr) Expr { return accessExpr(accessElementAt, a[0], a[1]) }},
	"try_element_at":     {2, 2, func(a []Expr) Expr { return accessExpr(accessTryElementAt, a[0], a[1]) }},
	"size":               {1, 1, func(a []Expr) Expr { return Size("size", a[0], false) }},
	"cardinality":        {1, 1, func(a []Expr) Expr { return Size("cardinality", a[0], false) }},
	"array_size":         {1, 1, func(a []Expr) Expr { return Size("array_size", a[0], true) }},
	"map_keys":           mapPart("map_keys", 0),
	"map_values":         mapPart("map_values", 1),
	"map_entries":        mapPart("map_entries", 2),
	"array_contains":     arrayFuncContext("array_contains", 2, 2, typeContains),
	"array_position":     arrayFuncContext("array_position", 2, 2, typeContains),
	"array_remove":       arrayFuncContext("array_remove", 2, 2, typeContains),
	"array_distinct":     arrayFuncContext("array_distinct", 1, 1, typeSetOp),
	"array_union":        arrayFuncContext("array_union", 2, 2, typeSetOp),
	"array_intersect":    arrayFuncContext("array_intersect", 2, 2, typeSetOp),
	"array_except":       arrayFuncContext("array_except", 2, 2, typeSetOp),
	"sort_array":         arrayFuncContext("sort_array", 1, 2, typeSort),
	"array_sort":         arrayFuncContext("array_sort", 1, 1, typeSort),
	"array_min":          arrayFuncContext("array_min", 1, 1, typeMinMax),
	"array_max":          arrayFuncContext("array_max", 1, 1, typeMinMax),
	"array_compact":      arrayFuncContext("array_compact", 1, 1, typeArrayArg(kernCompact)),
	"slice":              arrayFuncContext("slice", 3, 3, typeSlice),
	"flatten":            arrayFuncContext("flatten", 1, 1, typeFlatten),
	"array_repeat":       arrayFuncContext("array_repeat", 2, 2, typeRepeat),
	"array_join":         arrayFuncContext("array_join", 2, 3, typeJoin),
	"arrays_zip":         arrayFuncContext("arrays_zip", 1, -1, typeZip),
	"arrays_zip_named":   zipNamed(),
	"sequence":           arrayFuncContext("sequence", 2, 3, typeSequence),
	"map_from_arrays":    arrayFunc("map_from_arrays", 2, 2, typeMapFromArrays),
	"map_from_entries":   arrayFunc("map_from_entries", 1, 1, typeMapFromEntries),
	"map_concat":         arrayFunc("map_concat", 0, -1, typeMapConcat),
	"str_to_map":         arrayFunc("str_to_map", 1, 3, typeStrToMap),
	"map_contains_key":   arrayFunc("map_contains_key", 2, 2, typeMapContainsKey),
	"float":              castFunc(Float32),
	"posexplode_entries": posexplodeEntries(),
	"get_json_object":    arrayFunc("get_json_object", 2, 2, typeGetJSONObject),
	"json_array_length":  arrayFunc("json_array_length", 1, 1, typeJSONArrayLength),
	"json_object_keys":   arrayFunc("json_object_keys", 1, 1, typeJSONObjectKeys),
}

// onArrays makes the string function name also take arrays: reverse and
// concat of ARRAY arguments run kern, other arguments the string kernel.
func onArrays(name string, kern arrayKernelContext) {
	base, ok := functions[name]
	if !ok {
		return
	}
	functions[name] = funcSpec{base.min, base.max, func(a []Expr) Expr {
		e := base.build(a)
		f, ok := e.(*FuncExpr)
		if !ok {
			return e
		}
		strBind := f.bind
		f.bind = func(f *FuncExpr, in *arrow.Schema, mem memory.Allocator, args []Evaluator) (Evaluator, error) {
			if len(args) == 0 || Unwrap(args[0].DataType()).ID() != arrow.LIST {
				return strBind(f, in, mem, args)
			}
			lt, err := sameElemArgs(f, args)
			if err != nil {
				return nil, err
			}
			ev := &arrayFnEval{name: name, args: args, dt: lt, mem: mem, mode: f.Mode, expr: f.String(), kernCtx: kern}
			return fnFoldConstant(f, in, mem, ev, args...)
		}
		return f
	}}
}

func init() {
	for name, spec := range nestedFunctions {
		functions[name] = spec
	}
	onArrays("reverse", kernReverse)
	onArrays("concat", kernConcat)
}
