package vector

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/apache/arrow/go/v17/arrow"
	"github.com/apache/arrow/go/v17/arrow/array"
	"github.com/apache/arrow/go/v17/arrow/memory"
)

// ErrMalformedJSON is a row from_json could not parse in FAILFAST mode.
var ErrMalformedJSON = errors.New("malformed JSON")

// FromJSON is from_json(x, schema[, options]): the JSON text in the
// string x parsed into the type of schema (a constant string: a DDL field
// list or STRUCT<...>, ARRAY<t> or MAP<STRING, t>, see ParseDDLType).
// Fields missing from an object are NULL and keys the schema does not name
// are ignored; a NULL or blank x gives NULL. An ARRAY of structs also
// takes a single object (an array of one), as Spark does. options is
// map('key', 'value', ...) of constant strings (or, as before, a constant
// string holding a JSON object) of Spark's JSON options; "mode",
// "dateFormat" and "timestampFormat" are read, others ignored. mode
// PERMISSIVE (the default) makes a row that is not valid JSON a struct of
// NULL fields (NULL for ARRAY and MAP schemas), as Spark does, and a row
// that is JSON but does not fit the schema NULL (Spark fills the fields
// that fit: a known difference, docs/sql.md); FAILFAST makes either an
// error naming the row.
func FromJSON(x, schema, options Expr) Expr {
	return &FuncExpr{Name: "from_json", Args: withOptional([]Expr{x, schema}, options), bind: bindFromJSON}
}

func bindFromJSON(f *FuncExpr, in *arrow.Schema, mem memory.Allocator, args []Evaluator) (Evaluator, error) {
	v, ok := fnConstValue(args[1])
	text, isString := v.(string)
	if !ok || !isString {
		return nil, fmt.Errorf("the schema %s of from_json must be a constant string: %w", f.Args[1], ErrType)
	}
	dt, err := ParseDDLType(text)
	if err != nil {
		return nil, fmt.Errorf("from_json: %w: %w", err, ErrType)
	}
	if err := checkJSONReadable(dt, 0); err != nil {
		return nil, fmt.Errorf("from_json schema %s: %w: %w", text, err, ErrType)
	}
	loc := f.Loc
	if loc == time.UTC {
		loc = nil
	}
	r := &jsonReader{loc: loc}
	failFast := false
	if len(args) == 3 {
		opts, err := jsonOptions(f, mem, args[2], f.Args[2])
		if err != nil {
			return nil, err
		}
		if failFast, err = r.setOptions(opts); err != nil {
			return nil, fmt.Errorf("from_json options: %w: %w", err, ErrType)
		}
	}
	in0 := args[0].DataType()
	if in0.ID() == arrow.NULL {
		return fnNullResult(dt, mem), nil
	}
	if Unwrap(in0).ID() != arrow.STRING {
		return nil, fmt.Errorf("from_json needs a string to parse, not %s (CAST a binary value AS STRING first): %w", TypeName(in0), ErrType)
	}
	return &fromJSONEval{x: args[0], dt: dt, failFast: failFast, mem: mem, expr: f.String(), r: r}, nil
}

// setOptions reads mode, dateFormat and timestampFormat (keys in any
// case) and reports whether the mode is FAILFAST.
func (r *jsonReader) setOptions(opts map[string]string) (failFast bool, err error) {
	for k, v := range opts {
		switch strings.ToLower(k) {
		case "mode":
			switch strings.ToUpper(v) {
			case "PERMISSIVE":
			case "FAILFAST":
				failFast = true
			default:
				return false, fmt.Errorf("mode %s is not supported by from_json (want PERMISSIVE or FAILFAST)", v)
			}
		case "dateformat":
			if r.dateFmt, err = compileParsePattern(v); err != nil {
				return false, fmt.Errorf("dateFormat %q: %w", v, err)
			}
		case "timestampformat":
			if r.tsFmt, err = compileParsePattern(v); err != nil {
				return false, fmt.Errorf("timestampFormat %q: %w", v, err)
			}
		}
	}
	return failFast, nil
}

// jsonOptions reads the options argument of the JSON functions: a
// constant map(...) of strings, as Spark takes it, or a constant string
// holding a JSON object of strings.
func jsonOptions(f *FuncExpr, mem memory.Allocator, ev Evaluator, e Expr) (map[string]string, error) {
	if !fnConstantArgs(ev) {
		return nil, fmt.Errorf("the options %s of %s must be a constant map() of strings: %w", e, f.Name, ErrType)
	}
	if v := ev.(ConstantEvaluator).Value(); v != nil {
		if text, ok := v.(string); ok {
			var raw map[string]any
			if err := json.Unmarshal([]byte(text), &raw); err != nil {
				return nil, fmt.Errorf("the options %s of %s are not a JSON object: %w: %w", e, f.Name, err, ErrType)
			}
			out := make(map[string]string, len(raw))
			for k, v := range raw {
				out[k] = fmt.Sprint(v)
			}
			return out, nil
		}
	}
	mt, ok := Unwrap(ev.DataType()).(*arrow.MapType)
	if !ok {
		return nil, fmt.Errorf("[INVALID_OPTIONS.NON_MAP_FUNCTION] must use a map() function for the options %s of %s: %w", e, f.Name, ErrType)
	}
	if mt.KeyType().ID() != arrow.STRING || mt.ItemType().ID() != arrow.STRING {
		return nil, fmt.Errorf("[INVALID_OPTIONS.NON_STRING_TYPE] a type of keys and values in map() must be string, but got %s: %w", TypeName(mt), ErrType)
	}
	rec := array.NewRecord(arrow.NewSchema(nil, nil), nil, 1)
	defer rec.Release()
	arr, err := ev.Eval(context.Background(), rec)
	if err != nil {
		return nil, err
	}
	defer arr.Release()
	out := map[string]string{}
	m, ok := arr.(*array.Map)
	if !ok || m.IsNull(0) {
		return out, nil
	}
	keys, items := m.Keys().(*array.String), m.Items().(*array.String)
	start, end := m.ValueOffsets(0)
	for j := start; j < end; j++ {
		if items.IsValid(int(j)) {
			// Copied: the strings outlive the array.
			out[strings.Clone(keys.Value(int(j)))] = strings.Clone(items.Value(int(j)))
		}
	}
	return out, nil
}

// fromJSONEval parses a whole column row by row with jsonReader.
type fromJSONEval struct {
	x        Evaluator
	dt       arrow.DataType
	failFast bool
	mem      memory.Allocator
	expr     string
	r        *jsonReader
}

func (e *fromJSONEval) DataType() arrow.DataType { return e.dt }

func (e *fromJSONEval) Eval(ctx context.Context, rec arrow.Record) (arrow.Array, error) {
	arr, err := e.x.Eval(ctx, rec)
	if err != nil {
		return nil, err
	}
	defer arr.Release()
	if arr.DataType().ID() == arrow.DICTIONARY {
		plain, err := DecodeDictionary(e.mem, arr)
		if err != nil {
			return nil, err
		}
		defer plain.Release()
		arr = plain
	}
	return e.decode(ctx, arr)
}

// decode parses every row of the string array arr.
func (e *fromJSONEval) decode(ctx context.Context, arr arrow.Array) (arrow.Array, error) {
	n := arr.Len()
	offs, data := BinaryParts(arr) // offsets already account for slicing
	b := array.NewBuilder(e.mem, e.dt)
	defer b.Release()
	b.Reserve(n)
	r := *e.r // the reader's scratch space is per call
	r.scratch, r.spans = nil, nil
	for i := 0; i < n; i++ {
		if i&1023 == 1023 {
			if err := ctx.Err(); err != nil {
				return nil, err
			}
		}
		if arr.IsNull(i) {
			b.AppendNull()
			continue
		}
		text := data[offs[i]:offs[i+1]]
		v := trimJSON(text)
		if len(v) == 0 {
			b.AppendNull()
			continue
		}
		valid := validJSON(v)
		if !valid {
			// Spark's parser (Jackson) reads the first value and ignores
			// what follows it: `{"a": 2} {"a": 3}` is {"a": 2}.
			if end := skipJSONValue(v, 0); end > 0 && end < len(v) && validJSON(v[:end]) {
				v, valid = v[:end], true
			}
		}
		if !valid {
			if e.failFast {
				return nil, e.rowError(i, text, ErrMalformedJSON)
			}
			appendMalformedRow(b)
			continue
		}
		if err := r.read(e.dt, nil, v, true); err != nil {
			if e.failFast || errors.Is(err, errJSONPattern) {
				return nil, e.rowError(i, text, fmt.Errorf("%w: %w", ErrMalformedJSON, err))
			}
			b.AppendNull()
			continue
		}
		if err := r.read(e.dt, b, v, true); err != nil {
			return nil, e.rowError(i, text, err) // the check pass accepted it
		}
	}
	return b.NewArray(), nil
}

// appendMalformedRow appends what PERMISSIVE mode makes of text that is
// not JSON at all: for a STRUCT schema a struct whose fields are all NULL
// (Spark's FailureSafeParser returns its row of nulls), for ARRAY and MAP
// schemas NULL (the null value of that row).
func appendMalformedRow(b array.Builder) {
	sb, ok := b.(*array.StructBuilder)
	if !ok {
		b.AppendNull()
		return
	}
	sb.Append(true)
	for f := 0; f < sb.NumField(); f++ {
		sb.FieldBuilder(f).AppendNull()
	}
}

func (e *fromJSONEval) rowError(i int, text []byte, err error) error {
	s := string(text)
	if len(s) > 200 {
		s = s[:200] + "..."
	}
	return &EvalError{Expr: e.expr, Row: i, Values: FormatValue(s, String), Err: err}
}

// isBlankJSON reports whether b is empty or only whitespace.
func isBlankJSON(b []byte) bool {
	for _, c := range b {
		if c != ' ' && c != '\t' && c != '\n' && c != '\r' {
			return false
		}
	}
	return true
}
