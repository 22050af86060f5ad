package vector

import (
	"context"
	"encoding/base64"
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/apache/arrow/go/v17/arrow"
	"github.com/apache/arrow/go/v17/arrow/array"
	"github.com/apache/arrow/go/v17/arrow/bitutil"
	"github.com/apache/arrow/go/v17/arrow/memory"
)

// ToJSON is to_json(x[, options]): the STRUCT, ARRAY or MAP x as JSON
// text, struct fields in schema order, NULL fields left out (Spark's
// ignoreNullFields default), a NULL x giving NULL. Timestamps are written
// as "2024-01-02T03:04:05.000Z" in the session time zone (with its offset)
// and dates as "2024-01-02" (Spark's default formats; the options
// timestampFormat and dateFormat change them), binary values in base64,
// doubles as Spark writes them (1.0, "NaN", "Infinity"). Map keys are
// written as their text (string, integer or boolean keys only). options
// is a constant map(...) of strings; timestampFormat, dateFormat and
// ignoreNullFields are read, others ignored.
func ToJSON(x, options Expr) Expr {
	return &FuncExpr{Name: "to_json", Args: withOptional([]Expr{x}, options), bind: bindToJSON}
}

func bindToJSON(f *FuncExpr, in *arrow.Schema, mem memory.Allocator, args []Evaluator) (Evaluator, error) {
	w := &jsonWriter{loc: f.Loc, ignoreNull: true}
	if w.loc == nil {
		w.loc = time.UTC
	}
	if len(args) == 2 {
		opts, err := jsonOptions(f, mem, args[1], f.Args[1])
		if err != nil {
			return nil, err
		}
		if err := w.setOptions(opts); err != nil {
			return nil, fmt.Errorf("to_json options: %w: %w", err, ErrType)
		}
	}
	dt := args[0].DataType()
	if dt.ID() == arrow.NULL {
		return fnNullResult(String, mem), nil
	}
	switch dt.ID() {
	case arrow.STRUCT, arrow.LIST, arrow.MAP:
	default:
		return nil, fmt.Errorf("[DATATYPE_MISMATCH.INVALID_JSON_SCHEMA] to_json needs a STRUCT, ARRAY or MAP, not %s: %w", TypeName(dt), ErrType)
	}
	if err := checkJSONWritable(dt, 0); err != nil {
		return nil, fmt.Errorf("to_json cannot write %s: %w: %w", TypeName(dt), err, ErrType)
	}
	ev := &toJSONEval{x: args[0], mem: mem, w: w}
	return fnFoldConstant(f, in, mem, ev, args...)
}

// jsonWriter holds the options of one to_json call.
type jsonWriter struct {
	loc        *time.Location
	zc         zoneCache
	tsFmt      *datetimePattern // nil: Spark's default
	dateFmt    *datetimePattern // nil: yyyy-MM-dd
	ignoreNull bool
}

func (w *jsonWriter) setOptions(opts map[string]string) (err error) {
	for k, v := range opts {
		switch strings.ToLower(k) {
		case "timestampformat":
			if w.tsFmt, err = compileDatetimePattern(v); err != nil {
				return fmt.Errorf("timestampFormat %q: %w", v, err)
			}
		case "dateformat":
			if w.dateFmt, err = compileDatetimePattern(v); err != nil {
				return fmt.Errorf("dateFormat %q: %w", v, err)
			}
		case "ignorenullfields":
			switch strings.ToLower(v) {
			case "true":
				w.ignoreNull = true
			case "false":
				w.ignoreNull = false
			default:
				return fmt.Errorf("ignoreNullFields %q must be true or false", v)
			}
		}
	}
	return nil
}

// checkJSONWritable reports types the writer does not handle.
func checkJSONWritable(dt arrow.DataType, depth int) error {
	if depth > maxDDLDepth {
		return fmt.Errorf("nested too deeply")
	}
	switch t := dt.(type) {
	case *arrow.StructType:
		for _, f := range t.Fields() {
			if err := checkJSONWritable(f.Type, depth+1); err != nil {
				return err
			}
		}
		return nil
	case *arrow.MapType:
		switch t.KeyType().ID() {
		case arrow.STRING, arrow.INT8, arrow.INT16, arrow.INT32, arrow.INT64, arrow.BOOL:
		default:
			return fmt.Errorf("map keys of type %s are not supported", TypeName(t.KeyType()))
		}
		return checkJSONWritable(t.ItemType(), depth+1)
	case *arrow.ListType:
		return checkJSONWritable(t.Elem(), depth+1)
	case *arrow.DictionaryType:
		return fmt.Errorf("dictionary fields are not supported")
	}
	switch dt.ID() {
	case arrow.BOOL, arrow.INT8, arrow.INT16, arrow.INT32, arrow.INT64, arrow.FLOAT32, arrow.FLOAT64,
		arrow.STRING, arrow.BINARY, arrow.DATE32, arrow.TIMESTAMP, arrow.DECIMAL128:
		return nil
	}
	return fmt.Errorf("%s fields are not supported", TypeName(dt))
}

type toJSONEval struct {
	x   Evaluator
	mem memory.Allocator
	w   *jsonWriter
}

func (e *toJSONEval) DataType() arrow.DataType { return String }

// Eval writes every row into one byte slice, then copies it into an Arrow
// buffer once.
func (e *toJSONEval) Eval(ctx context.Context, rec arrow.Record) (arrow.Array, error) {
	arr, err := e.x.Eval(ctx, rec)
	if err != nil {
		return nil, err
	}
	defer arr.Release()
	w := *e.w // the zone cache is per call
	n := arr.Len()
	offsBuf := memory.NewResizableBuffer(e.mem)
	offsBuf.Resize(4 * (n + 1))
	defer offsBuf.Release()
	offs := arrow.Int32Traits.CastFromBytes(offsBuf.Bytes())
	var text []byte
	var valid *memory.Buffer
	nulls := arr.NullN()
	if nulls > 0 {
		valid = memory.NewResizableBuffer(e.mem)
		defer valid.Release()
		valid.Resize(int(bitutil.BytesForBits(int64(n))))
		bits := valid.Bytes()
		clear(bits)
		for i := 0; i < n; i++ {
			if arr.IsValid(i) {
				bitutil.SetBit(bits, i)
			}
		}
	}
	for i := 0; i < n; i++ {
		offs[i] = int32(len(text))
		if arr.IsValid(i) {
			text = w.appendValue(text, arr, i)
		}
		if len(text) > math.MaxInt32 {
			return nil, fmt.Errorf("to_json: the batch's JSON text exceeds 2 GiB")
		}
	}
	offs[n] = int32(len(text))
	data := memory.NewResizableBuffer(e.mem)
	defer data.Release()
	data.Resize(len(text))
	copy(data.Bytes(), text)
	d := array.NewData(String, n, []*memory.Buffer{valid, offsBuf, data}, nil, nulls, 0)
	defer d.Release()
	return array.MakeFromData(d), nil
}

// appendValue appends row i of arr (valid) as JSON.
func (w *jsonWriter) appendValue(b []byte, arr arrow.Array, i int) []byte {
	switch a := arr.(type) {
	case *array.Struct:
		st := a.DataType().(*arrow.StructType)
		b = append(b, '{')
		first := true
		for j := 0; j < a.NumField(); j++ {
			f := a.Field(j)
			if f.IsNull(i) && w.ignoreNull {
				continue
			}
			if !first {
				b = append(b, ',')
			}
			first = false
			b = appendJSONString(b, st.Field(j).Name)
			b = append(b, ':')
			b = w.appendOrNull(b, f, i)
		}
		return append(b, '}')
	case *array.Map:
		start, end := a.ValueOffsets(i)
		keys, items := a.Keys(), a.Items()
		b = append(b, '{')
		for j := int(start); j < int(end); j++ {
			if j > int(start) {
				b = append(b, ',')
			}
			b = appendJSONMapKey(b, keys, j)
			b = append(b, ':')
			b = w.appendOrNull(b, items, j)
		}
		return append(b, '}')
	case *array.List:
		start, end := a.ValueOffsets(i)
		vals := a.ListValues()
		b = append(b, '[')
		for j := start; j < end; j++ {
			if j > start {
				b = append(b, ',')
			}
			b = w.appendOrNull(b, vals, int(j))
		}
		return append(b, ']')
	case *array.Boolean:
		return strconv.AppendBool(b, a.Value(i))
	case *array.Int8:
		return strconv.AppendInt(b, int64(a.Value(i)), 10)
	case *array.Int16:
		return strconv.AppendInt(b, int64(a.Value(i)), 10)
	case *array.Int32:
		return strconv.AppendInt(b, int64(a.Value(i)), 10)
	case *array.Int64:
		return strconv.AppendInt(b, a.Value(i), 10)
	case *array.Float32:
		return appendJSONFloat(b, a.Value(i))
	case *array.Float64:
		return appendJSONDouble(b, a.Value(i))
	case *array.String:
		return appendJSONString(b, a.Value(i))
	case *array.Binary:
		b = append(b, '"')
		b = base64.StdEncoding.AppendEncode(b, a.Value(i))
		return append(b, '"')
	case *array.Date32:
		b = append(b, '"')
		if w.dateFmt != nil {
			if out, ok := w.dateFmt.format(b, int64(a.Value(i))*fnMicrosPerDay); ok {
				return append(out, '"')
			}
		}
		b = a.Value(i).ToTime().AppendFormat(b, "2006-01-02")
		return append(b, '"')
	case *array.Timestamp:
		m := int64(a.Value(i))
		b = append(b, '"')
		if w.tsFmt != nil {
			if out, ok := w.tsFmt.format(b, toWall(&w.zc, w.loc, m)); ok {
				return append(out, '"')
			}
		}
		b = time.UnixMicro(m).In(w.loc).AppendFormat(b, "2006-01-02T15:04:05.000Z07:00")
		return append(b, '"')
	case *array.Decimal128:
		return append(b, a.Value(i).ToString(a.DataType().(*arrow.Decimal128Type).Scale)...)
	}
	return append(b, "null"...) // excluded at bind time
}

// appendOrNull appends row i of arr, or null.
func (w *jsonWriter) appendOrNull(b []byte, arr arrow.Array, i int) []byte {
	if arr.IsNull(i) {
		return append(b, "null"...)
	}
	return w.appendValue(b, arr, i)
}

// appendJSONMapKey writes a map key as a JSON string of its text.
func appendJSONMapKey(b []byte, keys arrow.Array, j int) []byte {
	switch k := keys.(type) {
	case *array.String:
		return appendJSONString(b, k.Value(j))
	case *array.Boolean:
		return strconv.AppendQuote(b, strconv.FormatBool(k.Value(j)))
	case *array.Int8:
		return strconv.AppendQuote(b, strconv.FormatInt(int64(k.Value(j)), 10))
	case *array.Int16:
		return strconv.AppendQuote(b, strconv.FormatInt(int64(k.Value(j)), 10))
	case *array.Int32:
		return strconv.AppendQuote(b, strconv.FormatInt(int64(k.Value(j)), 10))
	case *array.Int64:
		return strconv.AppendQuote(b, strconv.FormatInt(k.Value(j), 10))
	}
	return append(b, `""`...) // excluded at bind time
}

// appendJSONFloat writes a float as Jackson writes a Java float.
func appendJSONFloat(b []byte, v float32) []byte {
	f := float64(v)
	if math.IsNaN(f) || math.IsInf(f, 0) {
		return appendJSONDouble(b, f)
	}
	return appendJavaDouble(b, f, 32)
}

// appendJSONDouble writes a double as Spark (Jackson) does: as Java's
// Double.toString, non-finite values as strings.
func appendJSONDouble(b []byte, v float64) []byte {
	switch {
	case math.IsNaN(v):
		return append(b, `"NaN"`...)
	case math.IsInf(v, 1):
		return append(b, `"Infinity"`...)
	case math.IsInf(v, -1):
		return append(b, `"-Infinity"`...)
	}
	return appendJavaDouble(b, v, 64) // Double.toString: 1.0, 1.0E10
}

// appendJSONString writes s as a JSON string; invalid UTF-8 becomes U+FFFD.
func appendJSONString(b []byte, s string) []byte {
	const hex = "0123456789abcdef"
	b = append(b, '"')
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			switch {
			case c == '"' || c == '\\':
				b = append(b, '\\', c)
			case c == '\n':
				b = append(b, '\\', 'n')
			case c == '\r':
				b = append(b, '\\', 'r')
			case c == '\t':
				b = append(b, '\\', 't')
			case c < 0x20:
				b = append(b, '\\', 'u', '0', '0', hex[c>>4], hex[c&0xf])
			default:
				b = append(b, c)
			}
			i++
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 {
			b = append(b, "\ufffd"...)
		} else {
			b = append(b, s[i:i+size]...)
		}
		i += size
	}
	return append(b, '"')
}
