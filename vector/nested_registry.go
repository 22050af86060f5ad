package vector

// nestedFunctions are the ARRAY, MAP and STRUCT functions of issue #20,
// merged into the registry at package initialisation.
var nestedFunctions = map[string]funcSpec{
	"array":          {0, -1, func(a []Expr) Expr { return ArrayOf(a...) }},
	"map":            {0, -1, func(a []Expr) Expr { return MapOfPairs(a...) }},
	"named_struct":   {2, -1, func(a []Expr) Expr { return NamedStruct(a...) }},
	"subscript":      {2, 2, func(a []Expr) Expr { return accessExpr(accessSubscript, a[0], a[1]) }},
	"get":            {2, 2, func(a []Expr) Expr { return accessExpr(accessGet, a[0], a[1]) }},
	"element_at":     {2, 2, func(a []Expr) Expr { return accessExpr(accessElementAt, a[0], a[1]) }},
	"try_element_at": {2, 2, func(a []Expr) Expr { return accessExpr(accessTryElementAt, a[0], a[1]) }},
	"size":           {1, 1, func(a []Expr) Expr { return Size("size", a[0], false) }},
	"cardinality":    {1, 1, func(a []Expr) Expr { return Size("cardinality", a[0], false) }},
	"array_size":     {1, 1, func(a []Expr) Expr { return Size("array_size", a[0], true) }},
	"map_keys":       mapPart("map_keys", 0),
	"map_values":     mapPart("map_values", 1),
	"map_entries":    mapPart("map_entries", 2),
}

func init() {
	for name, spec := range nestedFunctions {
		functions[name] = spec
	}
}
