package vector

import (
	"fmt"
	"regexp"
	"sort"
	"strings"

	"github.com/apache/arrow/go/v17/arrow"
	"github.com/apache/arrow/go/v17/arrow/memory"
)

// schema_of_json(json[, options]) is the DDL type Spark infers for the
// JSON text json (a constant string), as Spark's JsonInferSchema does:
// integers are BIGINT (DECIMAL(p,0) past 64 bits, DOUBLE past 38 digits),
// other numbers DOUBLE (DECIMAL with prefersDecimal), true/false BOOLEAN,
// strings STRING, objects STRUCT with fields sorted by name, arrays the
// common type of their elements (types that do not merge become STRING),
// nulls, empty strings and empty arrays STRING, empty objects dropped.
// options (a map() of strings) reads primitivesAsString, prefersDecimal
// and dropFieldIfAllNull. The text, "STRUCT<a: BIGINT, b: ARRAY<STRING>>",
// is a schema from_json takes.

func init() {
	functions["schema_of_json"] = funcSpec{1, 2, func(a []Expr) Expr {
		return &FuncExpr{Name: "schema_of_json", Args: a, bind: bindSchemaOfJSON}
	}}
}

type jsonInferOptions struct {
	primitivesAsString, prefersDecimal, dropAllNull bool
}

func bindSchemaOfJSON(f *FuncExpr, in *arrow.Schema, mem memory.Allocator, args []Evaluator) (Evaluator, error) {
	v, ok := fnConstValue(args[0])
	text, isString := v.(string)
	if !ok || !isString {
		return nil, fmt.Errorf("[DATATYPE_MISMATCH.NON_FOLDABLE_INPUT] the input json of schema_of_json should be a foldable string expression and not null, however, got %s: %w", f.Args[0], ErrType)
	}
	var o jsonInferOptions
	if len(args) == 2 {
		opts, err := jsonOptions(f, mem, args[1], f.Args[1])
		if err != nil {
			return nil, err
		}
		for k, v := range opts {
			on := strings.EqualFold(v, "true")
			switch strings.ToLower(k) {
			case "primitivesasstring":
				o.primitivesAsString = on
			case "prefersdecimal":
				o.prefersDecimal = on
			case "dropfieldifallnull":
				o.dropAllNull = on
			default:
				return nil, fmt.Errorf("schema_of_json does not support the option %s: %w", k, ErrType)
			}
		}
	}
	b := trimJSON([]byte(text))
	if !validJSON(b) {
		return nil, fmt.Errorf("[MALFORMED_RECORD_IN_PARSING] schema_of_json cannot parse %q: %w", text, ErrMalformedJSON)
	}
	t := o.infer(b)
	var out *jsonType
	switch t.kind {
	case jtStruct:
		out = o.canonical(t)
		if out == nil {
			out = &jsonType{kind: jtStruct}
		}
	case jtArray:
		out = o.canonical(t.elem)
		if out == nil {
			out = &jsonType{kind: jtStruct}
		}
		out = &jsonType{kind: jtArray, elem: out}
	default:
		out = o.canonical(t)
		if out == nil {
			out = &jsonType{kind: jtString}
		}
	}
	return &constEval{v: out.sql(), dt: String, mem: mem}, nil
}

type jsonKind int

const (
	jtNull jsonKind = iota
	jtBool
	jtLong
	jtDouble
	jtDecimal
	jtString
	jtArray
	jtStruct
)

type jsonType struct {
	kind   jsonKind
	p, s   int
	elem   *jsonType
	fields []jsonField // sorted by name
}

type jsonField struct {
	name string
	t    *jsonType
}

// infer is the type of the valid JSON value b.
func (o *jsonInferOptions) infer(b []byte) *jsonType {
	b = trimJSON(b)
	switch b[0] {
	case 'n':
		return &jsonType{kind: jtNull}
	case 't', 'f':
		if o.primitivesAsString {
			return &jsonType{kind: jtString}
		}
		return &jsonType{kind: jtBool}
	case '"':
		if len(b) == 2 {
			return &jsonType{kind: jtNull} // an empty string counts as null
		}
		if o.prefersDecimal {
			var r jsonReader
			if s, ok := r.unquote(b); ok {
				if p, sc, ok := decimalShape(trimJSON(s)); ok {
					return &jsonType{kind: jtDecimal, p: p, s: sc}
				}
			}
		}
		return &jsonType{kind: jtString}
	case '{':
		t := &jsonType{kind: jtStruct}
		var r jsonReader
		jsonMembers(b, 0, '{', func(key []byte, s, e int) bool {
			name, _ := r.unquote(key)
			t.fields = append(t.fields, jsonField{name: string(name), t: o.infer(b[s:e])})
			return true
		})
		sort.SliceStable(t.fields, func(i, j int) bool { return t.fields[i].name < t.fields[j].name })
		return t
	case '[':
		elem := &jsonType{kind: jtNull}
		jsonMembers(b, 0, '[', func(_ []byte, s, e int) bool {
			elem = mergeJSONTypes(elem, o.infer(b[s:e]))
			return true
		})
		return &jsonType{kind: jtArray, elem: elem}
	}
	if o.primitivesAsString {
		return &jsonType{kind: jtString}
	}
	p, s, ok := decimalShape(b)
	if integerToken(b) {
		if ok && p <= 18 || fitsInt64(b) {
			return &jsonType{kind: jtLong}
		}
		if ok && p <= 38 {
			return &jsonType{kind: jtDecimal, p: p, s: 0}
		}
		return &jsonType{kind: jtDouble}
	}
	if o.prefersDecimal && ok && p <= 38 {
		return &jsonType{kind: jtDecimal, p: p, s: s}
	}
	return &jsonType{kind: jtDouble}
}

func fitsInt64(b []byte) bool {
	_, _, ok := decimalShape(b)
	if !ok {
		return false
	}
	v, scale, ok := parseBigDecimal(b)
	return ok && scale == 0 && v.IsInt64()
}

// decimalShape is the precision and scale of Java's BigDecimal of the
// number text b: max(precision, scale) and scale.
func decimalShape(b []byte) (p, s int, ok bool) {
	v, scale, ok := parseBigDecimal(b)
	if !ok {
		return 0, 0, false
	}
	digits := len(strings.TrimPrefix(v.String(), "-"))
	if v.Sign() == 0 {
		digits = 1
	}
	s = int(scale)
	if s < 0 { // 1E+2: a precision-1 integer; Spark's DECIMAL has no negative scale
		digits -= s
		s = 0
	}
	return max(digits, s), s, true
}

// mergeJSONTypes is JsonInferSchema.compatibleType.
func mergeJSONTypes(a, b *jsonType) *jsonType {
	switch {
	case a.kind == jtNull:
		return b
	case b.kind == jtNull:
		return a
	case a.kind == b.kind && a.kind != jtDecimal && a.kind != jtArray && a.kind != jtStruct:
		return a
	}
	num := func(k jsonKind) bool { return k == jtLong || k == jtDouble || k == jtDecimal }
	if num(a.kind) && num(b.kind) {
		if a.kind == jtDouble || b.kind == jtDouble {
			return &jsonType{kind: jtDouble}
		}
		da, db := a, b
		if da.kind == jtLong {
			da = &jsonType{kind: jtDecimal, p: 20}
		}
		if db.kind == jtLong {
			db = &jsonType{kind: jtDecimal, p: 20}
		}
		scale := max(da.s, db.s)
		rng := max(da.p-da.s, db.p-db.s)
		if rng+scale > 38 {
			return &jsonType{kind: jtDouble}
		}
		return &jsonType{kind: jtDecimal, p: rng + scale, s: scale}
	}
	switch {
	case a.kind == jtArray && b.kind == jtArray:
		return &jsonType{kind: jtArray, elem: mergeJSONTypes(a.elem, b.elem)}
	case a.kind == jtStruct && b.kind == jtStruct:
		out := &jsonType{kind: jtStruct}
		i, j := 0, 0
		for i < len(a.fields) && j < len(b.fields) {
			fa, fb := a.fields[i], b.fields[j]
			switch {
			case fa.name == fb.name:
				out.fields = append(out.fields, jsonField{fa.name, mergeJSONTypes(fa.t, fb.t)})
				i++
				j++
			case fa.name < fb.name:
				out.fields = append(out.fields, fa)
				i++
			default:
				out.fields = append(out.fields, fb)
				j++
			}
		}
		out.fields = append(append(out.fields, a.fields[i:]...), b.fields[j:]...)
		return out
	}
	return &jsonType{kind: jtString}
}

// canonical drops empty structs (and, with dropFieldIfAllNull, nulls) and
// makes the remaining nulls STRING; nil is dropped.
func (o *jsonInferOptions) canonical(t *jsonType) *jsonType {
	switch t.kind {
	case jtArray:
		e := o.canonical(t.elem)
		if e == nil {
			return nil
		}
		return &jsonType{kind: jtArray, elem: e}
	case jtStruct:
		out := &jsonType{kind: jtStruct}
		for _, f := range t.fields {
			if f.name == "" {
				continue
			}
			if ft := o.canonical(f.t); ft != nil {
				out.fields = append(out.fields, jsonField{f.name, ft})
			}
		}
		if len(out.fields) == 0 {
			return nil
		}
		return out
	case jtNull:
		if o.dropAllNull {
			return nil
		}
		return &jsonType{kind: jtString}
	}
	return t
}

var plainFieldName = regexp.MustCompile(`^[a-zA-Z0-9_]+$`)
var digitsOnly = regexp.MustCompile(`^[0-9]+$`)

// sql renders t as Spark's DataType.sql.
func (t *jsonType) sql() string {
	switch t.kind {
	case jtBool:
		return "BOOLEAN"
	case jtLong:
		return "BIGINT"
	case jtDouble:
		return "DOUBLE"
	case jtDecimal:
		return fmt.Sprintf("DECIMAL(%d,%d)", t.p, t.s)
	case jtArray:
		return "ARRAY<" + t.elem.sql() + ">"
	case jtStruct:
		parts := make([]string, len(t.fields))
		for i, f := range t.fields {
			name := f.name
			if !plainFieldName.MatchString(name) || digitsOnly.MatchString(name) {
				name = "`" + strings.ReplaceAll(name, "`", "``") + "`"
			}
			parts[i] = name + ": " + f.t.sql()
		}
		return "STRUCT<" + strings.Join(parts, ", ") + ">"
	}
	return "STRING"
}
