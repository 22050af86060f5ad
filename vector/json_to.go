package vector

import (
	"context"
	"encoding/base64"
	"fmt"
	"math"
	"strconv"
	"time"
	"unicode/utf8"

	"github.com/apache/arrow/go/v17/arrow"
	"github.com/apache/arrow/go/v17/arrow/array"
	"github.com/apache/arrow/go/v17/arrow/bitutil"
	"github.com/apache/arrow/go/v17/arrow/memory"
)

// ToJSON is to_json(x): the struct x as a JSON object, fields in schema
// order, NULL fields left out (Spark's ignoreNullFields default), a NULL
// struct giving NULL. Timestamps are written as
// "2024-01-02T03:04:05.000Z" and dates as "2024-01-02" (Spark's default
// formats), binary values in base64, doubles as Spark writes them (1.0,
// "NaN", "Infinity").
func ToJSON(x Expr) Expr {
	return &FuncExpr{Name: "to_json", Args: []Expr{x}, bind: bindToJSON}
}

func bindToJSON(f *FuncExpr, in *arrow.Schema, mem memory.Allocator, args []Evaluator) (Evaluator, error) {
	dt := args[0].DataType()
	if dt.ID() == arrow.NULL {
		return fnNullResult(String, mem), nil
	}
	if err := checkJSONWritable(dt, 0); err != nil {
		return nil, fmt.Errorf("to_json needs a struct of writable fields, not %s: %w: %w", TypeName(dt), err, ErrType)
	}
	if dt.ID() != arrow.STRUCT {
		return nil, fmt.Errorf("to_json needs a struct, not %s: %w", TypeName(dt), ErrType)
	}
	return &toJSONEval{x: args[0], mem: mem}, nil
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
	case *arrow.ListType:
		return checkJSONWritable(t.Elem(), depth+1)
	case *arrow.DictionaryType:
		return fmt.Errorf("dictionary fields are not supported")
	}
	switch dt.ID() {
	case arrow.BOOL, arrow.INT32, arrow.INT64, arrow.FLOAT64, arrow.STRING, arrow.BINARY, arrow.DATE32, arrow.TIMESTAMP, arrow.DECIMAL128:
		return nil
	}
	return fmt.Errorf("%s fields are not supported", TypeName(dt))
}

type toJSONEval struct {
	x   Evaluator
	mem memory.Allocator
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
			text = appendJSONValue(text, arr, i)
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

// appendJSONValue appends row i of arr (valid) as JSON.
func appendJSONValue(b []byte, arr arrow.Array, i int) []byte {
	switch a := arr.(type) {
	case *array.Struct:
		st := a.DataType().(*arrow.StructType)
		b = append(b, '{')
		first := true
		for j := 0; j < a.NumField(); j++ {
			f := a.Field(j)
			if f.IsNull(i) {
				continue
			}
			if !first {
				b = append(b, ',')
			}
			first = false
			b = appendJSONString(b, st.Field(j).Name)
			b = append(b, ':')
			b = appendJSONValue(b, f, i)
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
			if vals.IsNull(int(j)) {
				b = append(b, "null"...)
			} else {
				b = appendJSONValue(b, vals, int(j))
			}
		}
		return append(b, ']')
	case *array.Boolean:
		return strconv.AppendBool(b, a.Value(i))
	case *array.Int32:
		return strconv.AppendInt(b, int64(a.Value(i)), 10)
	case *array.Int64:
		return strconv.AppendInt(b, a.Value(i), 10)
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
		b = a.Value(i).ToTime().AppendFormat(b, "2006-01-02")
		return append(b, '"')
	case *array.Timestamp:
		b = append(b, '"')
		b = time.UnixMicro(int64(a.Value(i))).UTC().AppendFormat(b, "2006-01-02T15:04:05.000Z07:00")
		return append(b, '"')
	case *array.Decimal128:
		return append(b, a.Value(i).ToString(a.DataType().(*arrow.Decimal128Type).Scale)...)
	}
	return append(b, "null"...) // excluded at bind time
}

// appendJSONDouble writes a double as Spark (Jackson) does: always with a
// fraction or exponent, non-finite values as strings.
func appendJSONDouble(b []byte, v float64) []byte {
	switch {
	case math.IsNaN(v):
		return append(b, `"NaN"`...)
	case math.IsInf(v, 1):
		return append(b, `"Infinity"`...)
	case math.IsInf(v, -1):
		return append(b, `"-Infinity"`...)
	}
	start := len(b)
	b = strconv.AppendFloat(b, v, 'g', -1, 64)
	for _, c := range b[start:] {
		if c == '.' || c == 'e' || c == 'E' {
			return b
		}
	}
	return append(b, ".0"...)
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
