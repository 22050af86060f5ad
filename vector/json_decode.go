package vector

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"strconv"
	"time"
	"unicode/utf8"

	"github.com/apache/arrow/go/v17/arrow"
	"github.com/apache/arrow/go/v17/arrow/array"
)

// The JSON reader of from_json: one JSON value into a builder of any
// schema type (STRUCT, ARRAY, MAP with STRING keys, scalars), following
// the token rules of Spark's JacksonParser: an integer field takes only an
// integer token, a floating-point field a number or "NaN"/"Infinity", a
// STRING field a string or the compact text of any other value, a DATE or
// TIMESTAMP field a string in the dateFormat/timestampFormat (or as a cast
// reads it), a TIMESTAMP also an integer of seconds. A row is checked in
// a first pass without building, so a row that does not fit the schema
// leaves no partial values in the builders.

// errJSONShape is a value that does not fit the schema.
var errJSONShape = errors.New("the value does not fit the schema")

// errJSONPattern is a date or time string the dateFormat/timestampFormat
// pattern does not read. Spark then tries its legacy parser and raises
// when that one reads it (INCONSISTENT_BEHAVIOR_CROSS_VERSION), NULL only
// when neither does; without the legacy parser the row always raises
// rather than risk a NULL where Spark raises.
var errJSONPattern = errors.New("[INCONSISTENT_BEHAVIOR_CROSS_VERSION.PARSE_DATETIME_BY_NEW_PARSER] the value does not parse in the dateFormat/timestampFormat pattern")

// jsonReader holds the options of one from_json call.
type jsonReader struct {
	loc     *time.Location   // session zone of zoneless timestamps; nil is UTC
	dateFmt *datetimePattern // nil: read as CAST(s AS DATE)
	tsFmt   *datetimePattern // nil: read as CAST(s AS TIMESTAMP)
	scratch []byte
	spans   [][2]int
}

// trimJSON strips JSON whitespace around b.
func trimJSON(b []byte) []byte {
	return bytes.Trim(b, " \t\r\n")
}

// read appends the JSON value v (valid JSON, trimmed) to b as type dt; b
// nil only checks. root allows a single object where an array of structs
// is wanted, as Spark does at the top level.
func (r *jsonReader) read(dt arrow.DataType, b array.Builder, v []byte, root bool) error {
	if len(v) == 0 {
		return errJSONShape
	}
	if v[0] == 'n' { // null
		if b != nil {
			b.AppendNull()
		}
		return nil
	}
	switch t := dt.(type) {
	case *arrow.StructType:
		return r.readStruct(t, b, v)
	case *arrow.MapType:
		return r.readMap(t, b, v)
	case *arrow.ListType:
		if v[0] == '{' && root {
			if _, isStruct := t.Elem().(*arrow.StructType); isStruct {
				var lb *array.ListBuilder
				if b != nil {
					lb = b.(*array.ListBuilder)
					lb.Append(true)
					return r.read(t.Elem(), lb.ValueBuilder(), v, false)
				}
				return r.read(t.Elem(), nil, v, false)
			}
		}
		if v[0] != '[' {
			return errJSONShape
		}
		var eb array.Builder
		if b != nil {
			lb := b.(*array.ListBuilder)
			lb.Append(true)
			eb = lb.ValueBuilder()
		}
		var err error
		jsonMembers(v, 0, '[', func(_ []byte, s, e int) bool {
			err = r.read(t.Elem(), eb, trimJSON(v[s:e]), false)
			return err == nil
		})
		return err
	}
	return r.readScalar(dt, b, v)
}

func (r *jsonReader) readStruct(t *arrow.StructType, b array.Builder, v []byte) error {
	if v[0] != '{' {
		return errJSONShape
	}
	base := len(r.spans)
	for range t.Fields() {
		r.spans = append(r.spans, [2]int{-1, -1})
	}
	defer func() { r.spans = r.spans[:base] }()
	var err error
	jsonMembers(v, 0, '{', func(key []byte, s, e int) bool {
		name, ok := r.unquote(key)
		if !ok {
			err = errJSONShape
			return false
		}
		if k, found := t.FieldIdx(string(name)); found {
			r.spans[base+k] = [2]int{s, e}
		}
		return true
	})
	if err != nil {
		return err
	}
	var sb *array.StructBuilder
	if b != nil {
		sb = b.(*array.StructBuilder)
		sb.Append(true)
	}
	for k, f := range t.Fields() {
		sp := r.spans[base+k]
		var fb array.Builder
		if sb != nil {
			fb = sb.FieldBuilder(k)
		}
		if sp[0] < 0 {
			if fb != nil {
				fb.AppendNull()
			}
			continue
		}
		if err := r.read(f.Type, fb, trimJSON(v[sp[0]:sp[1]]), false); err != nil {
			return err
		}
	}
	return nil
}

func (r *jsonReader) readMap(t *arrow.MapType, b array.Builder, v []byte) error {
	if v[0] != '{' {
		return errJSONShape
	}
	var mb *array.MapBuilder
	var kb *array.StringBuilder
	var ib array.Builder
	if b != nil {
		mb = b.(*array.MapBuilder)
		mb.Append(true)
		kb = mb.KeyBuilder().(*array.StringBuilder)
		ib = mb.ItemBuilder()
	}
	var err error
	jsonMembers(v, 0, '{', func(key []byte, s, e int) bool {
		name, ok := r.unquote(key)
		if !ok {
			err = errJSONShape
			return false
		}
		if kb != nil {
			kb.BinaryBuilder.Append(name)
		}
		err = r.read(t.ItemType(), ib, trimJSON(v[s:e]), false)
		return err == nil
	})
	return err
}

// unquote decodes the JSON string token q (with its quotes) into scratch.
func (r *jsonReader) unquote(q []byte) ([]byte, bool) {
	if len(q) < 2 || q[0] != '"' {
		return nil, false
	}
	inner := q[1 : len(q)-1]
	if bytes.IndexByte(inner, '\\') < 0 && utf8.Valid(inner) {
		return inner, true
	}
	var s string
	if json.Unmarshal(q, &s) != nil {
		return nil, false
	}
	r.scratch = append(r.scratch[:0], s...)
	return r.scratch, true
}

// integerToken reports whether v is a JSON number without fraction or
// exponent.
func integerToken(v []byte) bool {
	if len(v) == 0 || v[0] != '-' && (v[0] < '0' || v[0] > '9') {
		return false
	}
	return bytes.IndexAny(v, ".eE") < 0
}

func numberToken(v []byte) bool {
	return len(v) > 0 && (v[0] == '-' || v[0] >= '0' && v[0] <= '9')
}

func (r *jsonReader) readScalar(dt arrow.DataType, b array.Builder, v []byte) error {
	switch dt.ID() {
	case arrow.BOOL:
		var x bool
		switch string(v) {
		case "true":
			x = true
		case "false":
		default:
			return errJSONShape
		}
		if b != nil {
			b.(*array.BooleanBuilder).Append(x)
		}
		return nil
	case arrow.INT8, arrow.INT16, arrow.INT32, arrow.INT64:
		if !integerToken(v) {
			return errJSONShape
		}
		x, err := strconv.ParseInt(string(v), 10, dt.(arrow.FixedWidthDataType).BitWidth())
		if err != nil {
			return errJSONShape
		}
		if b != nil {
			switch bb := b.(type) {
			case *array.Int8Builder:
				bb.Append(int8(x))
			case *array.Int16Builder:
				bb.Append(int16(x))
			case *array.Int32Builder:
				bb.Append(int32(x))
			case *array.Int64Builder:
				bb.Append(x)
			}
		}
		return nil
	case arrow.FLOAT32, arrow.FLOAT64:
		var x float64
		if numberToken(v) {
			f, err := strconv.ParseFloat(string(v), 64)
			if err != nil && !errors.Is(err, strconv.ErrRange) {
				return errJSONShape
			}
			x = f
		} else {
			s, ok := r.unquote(v)
			if !ok {
				return errJSONShape
			}
			switch string(s) {
			case "NaN", "+NaN", "-NaN":
				x = math.NaN()
			case "Infinity", "+Infinity", "Inf", "+Inf", "INF", "+INF":
				x = math.Inf(1)
			case "-Infinity", "-Inf", "-INF":
				x = math.Inf(-1)
			default:
				return errJSONShape
			}
		}
		if b != nil {
			if fb, ok := b.(*array.Float32Builder); ok {
				fb.Append(float32(x))
			} else {
				b.(*array.Float64Builder).Append(x)
			}
		}
		return nil
	case arrow.DECIMAL128:
		if !numberToken(v) {
			return errJSONShape
		}
		big, scale, ok := parseBigDecimal(v)
		if !ok {
			return errJSONShape
		}
		n, ok := fitDecimal(big, scale, dt.(*arrow.Decimal128Type))
		if !ok {
			return errJSONShape
		}
		if b != nil {
			b.(*array.Decimal128Builder).Append(n)
		}
		return nil
	case arrow.STRING:
		if v[0] == '"' {
			s, ok := r.unquote(v)
			if !ok {
				return errJSONShape
			}
			if b != nil {
				b.(*array.StringBuilder).BinaryBuilder.Append(s)
			}
			return nil
		}
		// Any other value is kept as its compact JSON text.
		if b != nil {
			out, ok := appendJSONResult(r.scratch[:0], v)
			if !ok {
				return errJSONShape
			}
			r.scratch = out
			b.(*array.StringBuilder).BinaryBuilder.Append(out)
		}
		return nil
	case arrow.BINARY:
		s, ok := r.unquote(v)
		if !ok || v[0] != '"' {
			return errJSONShape
		}
		raw, err := base64.StdEncoding.DecodeString(string(s))
		if err != nil {
			return errJSONShape
		}
		if b != nil {
			b.(*array.BinaryBuilder).Append(raw)
		}
		return nil
	case arrow.DATE32:
		if v[0] != '"' {
			return errJSONShape
		}
		s, _ := r.unquote(v)
		var days int32
		if r.dateFmt != nil {
			// A date is read as the wall date the text names (Spark's
			// DateFormatter parses a LocalDate, a zone unused).
			t, ok := r.dateFmt.parse(s)
			d := fnFloorDiv(t.wall, fnMicrosPerDay)
			if !ok || d != int64(int32(d)) {
				return fmt.Errorf("%w: %q", errJSONPattern, s)
			}
			days = int32(d)
		} else {
			d, ok := parseDate(s)
			if !ok {
				return errJSONShape
			}
			days = d
		}
		if b != nil {
			b.(*array.Date32Builder).Append(arrow.Date32(days))
		}
		return nil
	case arrow.TIMESTAMP:
		var micros int64
		switch {
		case integerToken(v):
			secs, err := strconv.ParseInt(string(v), 10, 64)
			if err != nil || secs > math.MaxInt64/fnMicrosPerSecond || secs < math.MinInt64/fnMicrosPerSecond {
				return errJSONShape
			}
			micros = secs * fnMicrosPerSecond
		case v[0] == '"':
			s, _ := r.unquote(v)
			if r.tsFmt != nil {
				t, ok := r.tsFmt.parse(s)
				if ok {
					micros, ok = t.instant(r.loc)
				}
				if !ok {
					return fmt.Errorf("%w: %q", errJSONPattern, s)
				}
			} else {
				m, ok := parseTimestampIn(s, r.loc)
				if !ok {
					return errJSONShape
				}
				micros = m
			}
		default:
			return errJSONShape
		}
		if b != nil {
			b.(*array.TimestampBuilder).Append(arrow.Timestamp(micros))
		}
		return nil
	}
	return fmt.Errorf("from_json cannot read %s: %w", TypeName(dt), ErrType)
}

// checkJSONReadable reports a schema type the reader does not handle.
func checkJSONReadable(dt arrow.DataType, depth int) error {
	if depth > maxDDLDepth {
		return fmt.Errorf("nested too deeply")
	}
	switch t := dt.(type) {
	case *arrow.StructType:
		for _, f := range t.Fields() {
			if err := checkJSONReadable(f.Type, depth+1); err != nil {
				return err
			}
		}
		return nil
	case *arrow.MapType:
		if t.KeyType().ID() != arrow.STRING {
			return fmt.Errorf("a MAP read from JSON must have STRING keys, not %s", TypeName(t.KeyType()))
		}
		return checkJSONReadable(t.ItemType(), depth+1)
	case *arrow.ListType:
		return checkJSONReadable(t.Elem(), depth+1)
	}
	switch dt.ID() {
	case arrow.BOOL, arrow.INT8, arrow.INT16, arrow.INT32, arrow.INT64, arrow.FLOAT32, arrow.FLOAT64,
		arrow.DECIMAL128, arrow.STRING, arrow.BINARY, arrow.DATE32, arrow.TIMESTAMP:
		return nil
	}
	return fmt.Errorf("%s fields are not supported", TypeName(dt))
}
