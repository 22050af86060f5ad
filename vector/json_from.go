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

// FromJSON is from_json(x, schema[, options]): the JSON object in the
// string x parsed into a struct of the DDL schema (a constant string, see
// ParseDDLSchema). Fields missing from the object are NULL and keys the
// schema does not name are ignored; a NULL or blank x gives a NULL struct.
// options is a constant string holding a JSON object of Spark's options;
// only "mode" is read: PERMISSIVE (the default) makes a row that is not
// valid JSON, or does not fit the schema, a NULL struct; FAILFAST makes it
// an error naming the row.
func FromJSON(x, schema, options Expr) Expr {
	return &FuncExpr{Name: "from_json", Args: withOptional([]Expr{x, schema}, options), bind: bindFromJSON}
}

func bindFromJSON(f *FuncExpr, in *arrow.Schema, mem memory.Allocator, args []Evaluator) (Evaluator, error) {
	v, ok := fnConstValue(args[1])
	text, isString := v.(string)
	if !ok || !isString {
		return nil, fmt.Errorf("the schema %s of from_json must be a constant string: %w", f.Args[1], ErrType)
	}
	st, err := ParseDDLSchema(text)
	if err != nil {
		return nil, fmt.Errorf("from_json: %w: %w", err, ErrType)
	}
	failFast := false
	if len(args) == 3 {
		ov, ok := fnConstValue(args[2])
		otext, isString := ov.(string)
		if !ok || !isString {
			return nil, fmt.Errorf("the options %s of from_json must be a constant string holding a JSON object: %w", f.Args[2], ErrType)
		}
		if failFast, err = parseFromJSONOptions(otext); err != nil {
			return nil, fmt.Errorf("from_json options %s: %w: %w", otext, err, ErrType)
		}
	}
	dt := args[0].DataType()
	if dt.ID() == arrow.NULL {
		return fnNullResult(st, mem), nil
	}
	if Unwrap(dt).ID() != arrow.STRING {
		return nil, fmt.Errorf("from_json needs a string to parse, not %s (CAST a binary value AS STRING first): %w", TypeName(dt), ErrType)
	}
	loc := f.Loc
	if loc == time.UTC {
		loc = nil
	}
	if loc != nil && nestedTimestamp(st, 0) {
		return nil, fmt.Errorf("from_json: a TIMESTAMP inside a nested field is read in the session time zone %s, which is not supported (only top-level TIMESTAMP fields, or the UTC zone): %w", loc, ErrType)
	}
	return &fromJSONEval{x: args[0], dt: st, failFast: failFast, mem: mem, expr: f.String(), loc: loc}, nil
}

// parseFromJSONOptions reads {"mode": "..."} (keys in any case).
func parseFromJSONOptions(text string) (failFast bool, err error) {
	var opts map[string]any
	if err := json.Unmarshal([]byte(text), &opts); err != nil {
		return false, fmt.Errorf("not a JSON object: %w", err)
	}
	for k, v := range opts {
		if !strings.EqualFold(k, "mode") {
			continue // Spark's other JSON options do not apply here
		}
		s, _ := v.(string)
		switch strings.ToUpper(s) {
		case "PERMISSIVE":
			failFast = false
		case "FAILFAST":
			failFast = true
		default:
			return false, fmt.Errorf("mode %v is not supported by from_json (want PERMISSIVE or FAILFAST)", v)
		}
	}
	return failFast, nil
}

// fromJSONEval decodes a whole column with arrow's JSON decoding: the rows
// become one JSON array that a struct builder reads in one pass. Rows that
// are not valid JSON on their own are replaced by null before that (so a
// broken row cannot swallow its neighbours); when the pass fails on a row
// that does not fit the schema, the range is split in halves until the
// failing rows are found, which costs O(bad rows × log n) extra passes.
type fromJSONEval struct {
	x        Evaluator
	dt       *arrow.StructType
	failFast bool
	mem      memory.Allocator
	expr     string
	loc      *time.Location // session zone of zoneless timestamps; nil is UTC
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
	return e.decode(arr)
}

var jsonNull = []byte("null")

// decode parses every row of the string array arr.
func (e *fromJSONEval) decode(arr arrow.Array) (arrow.Array, error) {
	n := arr.Len()
	offs, data := BinaryParts(arr) // offsets already account for slicing
	rows := make([][]byte, n)      // each row's JSON text, or "null"
	size := 2
	for i := range rows {
		rows[i] = jsonNull
		if arr.IsValid(i) {
			b := data[offs[i]:offs[i+1]]
			switch {
			case isBlankJSON(b):
			case validJSON(b):
				rows[i] = b
			case e.failFast:
				return nil, e.rowError(i, b, ErrMalformedJSON)
			}
		}
		size += len(rows[i]) + 1
	}
	buf := make([]byte, 0, size)
	var segs []arrow.Array
	release := func() {
		for _, s := range segs {
			s.Release()
		}
	}
	segs, err := e.decodeRange(rows, 0, n, buf, segs)
	if err != nil {
		release()
		return nil, err
	}
	var out arrow.Array
	if len(segs) == 1 {
		out = segs[0]
	} else {
		defer release()
		if out, err = array.Concatenate(segs, e.mem); err != nil {
			return nil, err
		}
	}
	if e.loc == nil {
		return out, nil
	}
	defer out.Release()
	return zonedJSONTimestamps(e.mem, out.(*array.Struct), rows, e.loc)
}

// decodeRange appends the decoded rows lo..hi-1 to segs.
func (e *fromJSONEval) decodeRange(rows [][]byte, lo, hi int, buf []byte, segs []arrow.Array) ([]arrow.Array, error) {
	buf = append(buf[:0], '[')
	for i := lo; i < hi; i++ {
		if i > lo {
			buf = append(buf, ',')
		}
		buf = append(buf, rows[i]...)
	}
	buf = append(buf, ']')
	b := array.NewStructBuilder(e.mem, e.dt)
	defer b.Release()
	err := b.UnmarshalJSON(buf)
	if err == nil && b.Len() == hi-lo {
		return append(segs, b.NewArray()), nil
	}
	if hi-lo == 1 {
		if e.failFast {
			if err == nil {
				err = fmt.Errorf("one value gave %d rows", b.Len())
			}
			return segs, e.rowError(lo, rows[lo], fmt.Errorf("%w: %w", ErrMalformedJSON, err))
		}
		nb := array.NewStructBuilder(e.mem, e.dt)
		defer nb.Release()
		nb.AppendNull()
		return append(segs, nb.NewArray()), nil
	}
	mid := lo + (hi-lo)/2
	segs, err = e.decodeRange(rows, lo, mid, buf, segs)
	if err != nil {
		return segs, err
	}
	return e.decodeRange(rows, mid, hi, buf, segs)
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
