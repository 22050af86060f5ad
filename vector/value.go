package vector

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/apache/arrow/go/v17/arrow"
	"github.com/apache/arrow/go/v17/arrow/array"
	"github.com/apache/arrow/go/v17/arrow/decimal128"
)

// Canonical Go values of the supported types, as Literal, ValueAt and
// AppendValue use them:
//
//	boolean        bool
//	int / bigint   int32 / int64
//	float / double float64 (a float column's values are float32 values)
//	string         string
//	binary         []byte
//	timestamp      arrow.Timestamp (microseconds since the Unix epoch, UTC)
//	date           arrow.Date32 (days since the Unix epoch)
//	decimal(p,s)   decimal128.Num (unscaled)
//	interval       arrow.Duration (microseconds)
//	struct         []any, one value per field
//	array<T>       []any
//	NULL           nil

// ValueAt returns the value of arr at row i in its canonical Go form, nil for
// a null. Dictionary arrays yield their decoded value. It is meant for error
// messages, tests and constant folding, not for hot loops.
//
// The value owns its bytes: strings and binaries are copied out of the
// array's buffers, so the value stays valid after arr is released (the
// pool allocator zeroes and reuses released buffers; a string aliasing
// one would silently change).
func ValueAt(arr arrow.Array, i int) any {
	if arr.IsNull(i) {
		return nil
	}
	switch a := arr.(type) {
	case *array.Boolean:
		return a.Value(i)
	case *array.Int8:
		return int32(a.Value(i))
	case *array.Int16:
		return int32(a.Value(i))
	case *array.Int32:
		return a.Value(i)
	case *array.Int64:
		return a.Value(i)
	case *array.Float32:
		return float64(a.Value(i))
	case *array.Float64:
		return a.Value(i)
	case *array.String:
		return strings.Clone(a.Value(i))
	case *array.LargeString:
		return strings.Clone(a.Value(i))
	case *array.Binary:
		return append([]byte(nil), a.Value(i)...)
	case *array.Timestamp:
		return a.Value(i)
	case *array.Date32:
		return a.Value(i)
	case *array.Decimal128:
		return a.Value(i)
	case *array.Duration:
		return a.Value(i)
	case *array.MonthInterval:
		return a.Value(i)
	case *array.MonthDayNanoInterval:
		return a.Value(i)
	case *array.Dictionary:
		return ValueAt(a.Dictionary(), a.GetValueIndex(i))
	case *array.Struct:
		out := make([]any, a.NumField())
		for f := range out {
			out[f] = ValueAt(a.Field(f), i)
		}
		return out
	case *array.Map:
		start, end := a.ValueOffsets(i)
		m := MapValue{Keys: make([]any, 0, end-start), Values: make([]any, 0, end-start)}
		for j := start; j < end; j++ {
			m.Keys = append(m.Keys, ValueAt(a.Keys(), int(j)))
			m.Values = append(m.Values, ValueAt(a.Items(), int(j)))
		}
		return m
	case *array.List:
		start, end := a.ValueOffsets(i)
		vals := a.ListValues()
		out := make([]any, 0, end-start)
		for j := start; j < end; j++ {
			out = append(out, ValueAt(vals, int(j)))
		}
		return out
	case *array.Null:
		return nil
	default:
		return fmt.Sprintf("<%s>", arr.DataType())
	}
}

// FormatValue renders a canonical value for messages in SQL literal style.
func FormatValue(v any, dt arrow.DataType) string {
	switch x := v.(type) {
	case nil:
		return "NULL"
	case string:
		return fmt.Sprintf("'%s'", x)
	case []byte:
		return fmt.Sprintf("X'%X'", x)
	case arrow.Timestamp:
		if IsTimestampNTZ(dt) {
			return "TIMESTAMP_NTZ '" + time.UnixMicro(int64(x)).UTC().Format("2006-01-02 15:04:05.999999") + "'"
		}
		return "TIMESTAMP '" + time.UnixMicro(int64(x)).UTC().Format("2006-01-02 15:04:05.999999") + "'"
	case arrow.Date32:
		return "DATE '" + x.ToTime().Format("2006-01-02") + "'"
	case arrow.Duration:
		return "INTERVAL '" + FormatInterval(int64(x)) + "'"
	case arrow.MonthInterval:
		return FormatYearMonth(int32(x), YMYearToMonth)
	case arrow.MonthDayNanoInterval:
		return "INTERVAL '" + FormatCalendarInterval(x.Months, x.Days, x.Nanoseconds/1000) + "'"
	case float64:
		if dt != nil && dt.ID() == arrow.FLOAT32 {
			// The shortest text of the float, not of its double.
			return strconv.FormatFloat(x, 'g', -1, 32)
		}
		return fmt.Sprint(x)
	case decimal128.Num:
		if d, ok := dt.(*arrow.Decimal128Type); ok {
			return x.ToString(d.Scale)
		}
		return x.BigInt().String()
	case []any:
		s := "["
		for i, e := range x {
			if i > 0 {
				s += ", "
			}
			s += FormatValue(e, nil)
		}
		return s + "]"
	case MapValue:
		s := "map("
		for i := range x.Keys {
			if i > 0 {
				s += ", "
			}
			s += FormatValue(x.Keys[i], nil) + ", " + FormatValue(x.Values[i], nil)
		}
		return s + ")"
	default:
		return fmt.Sprint(x)
	}
}

// AppendValue appends a Go value to a builder of the matching type. Besides
// the canonical representation it accepts the obvious conversions (any Go
// integer for integer, timestamp and date columns, time.Time for timestamps
// and dates, a decimal string for decimals, string for binary). It returns an
// error naming the value and type when they do not fit.
func AppendValue(b array.Builder, v any) error {
	if v == nil {
		b.AppendNull()
		return nil
	}
	bad := func() error {
		return fmt.Errorf("vector: cannot append %v (%T) to a %s column: %w", v, v, TypeName(b.Type()), ErrType)
	}
	switch bb := b.(type) {
	case *array.BooleanBuilder:
		x, ok := v.(bool)
		if !ok {
			return bad()
		}
		bb.Append(x)
	case *array.Int8Builder:
		x, ok := toInt64(v)
		if !ok || x != int64(int8(x)) {
			return bad()
		}
		bb.Append(int8(x))
	case *array.Int16Builder:
		x, ok := toInt64(v)
		if !ok || x != int64(int16(x)) {
			return bad()
		}
		bb.Append(int16(x))
	case *array.Int32Builder:
		x, ok := toInt64(v)
		if !ok || x != int64(int32(x)) {
			return bad()
		}
		bb.Append(int32(x))
	case *array.Int64Builder:
		x, ok := toInt64(v)
		if !ok {
			return bad()
		}
		bb.Append(x)
	case *array.Float32Builder:
		// The canonical value of a float column is a float64 holding a
		// float32; rounding is what a wider value asks for.
		switch x := v.(type) {
		case float64:
			bb.Append(float32(x))
		case float32:
			bb.Append(x)
		default:
			i, ok := toInt64(v)
			if !ok {
				return bad()
			}
			bb.Append(float32(i))
		}
	case *array.Float64Builder:
		switch x := v.(type) {
		case float64:
			bb.Append(x)
		case float32:
			bb.Append(float64(x))
		default:
			i, ok := toInt64(v)
			if !ok {
				return bad()
			}
			bb.Append(float64(i))
		}
	case *array.StringBuilder:
		x, ok := v.(string)
		if !ok {
			return bad()
		}
		bb.Append(x)
	case *array.BinaryBuilder:
		switch x := v.(type) {
		case []byte:
			bb.Append(x)
		case string:
			bb.AppendString(x)
		default:
			return bad()
		}
	case *array.TimestampBuilder:
		if t, ok := v.(time.Time); ok {
			bb.Append(arrow.Timestamp(t.UnixMicro()))
			return nil
		}
		x, ok := toInt64(v)
		if !ok {
			return bad()
		}
		bb.Append(arrow.Timestamp(x))
	case *array.Date32Builder:
		if t, ok := v.(time.Time); ok {
			bb.Append(arrow.Date32FromTime(t))
			return nil
		}
		x, ok := toInt64(v)
		if !ok {
			return bad()
		}
		bb.Append(arrow.Date32(x))
	case *array.DurationBuilder:
		x, ok := v.(arrow.Duration)
		if !ok {
			return bad()
		}
		bb.Append(x)
	case *array.MonthIntervalBuilder:
		x, ok := v.(arrow.MonthInterval)
		if !ok {
			return bad()
		}
		bb.Append(x)
	case *array.MonthDayNanoIntervalBuilder:
		x, ok := v.(arrow.MonthDayNanoInterval)
		if !ok {
			return bad()
		}
		bb.Append(x)
	case *array.Decimal128Builder:
		dt := bb.Type().(*arrow.Decimal128Type)
		switch x := v.(type) {
		case decimal128.Num:
			bb.Append(x)
		case string:
			n, err := decimal128.FromString(x, dt.Precision, dt.Scale)
			if err != nil {
				return fmt.Errorf("vector: decimal %q: %w", x, err)
			}
			bb.Append(n)
		default:
			i, ok := toInt64(v)
			if !ok {
				return bad()
			}
			n, err := decimal128.FromI64(i).Rescale(0, dt.Scale)
			if err != nil {
				return fmt.Errorf("vector: decimal %d: %w", i, err)
			}
			bb.Append(n)
		}
	case *array.BinaryDictionaryBuilder:
		x, ok := v.(string)
		if !ok {
			return bad()
		}
		return bb.AppendString(x)
	case *array.StructBuilder:
		x, ok := v.([]any)
		if !ok || len(x) != bb.NumField() {
			return bad()
		}
		bb.Append(true)
		for i, fv := range x {
			if err := AppendValue(bb.FieldBuilder(i), fv); err != nil {
				return err
			}
		}
	case *array.MapBuilder:
		x, ok := v.(MapValue)
		if !ok || len(x.Keys) != len(x.Values) {
			return bad()
		}
		bb.Append(true)
		for i := range x.Keys {
			if x.Keys[i] == nil {
				return fmt.Errorf("vector: a map key cannot be NULL: %w", ErrType)
			}
			if err := AppendValue(bb.KeyBuilder(), x.Keys[i]); err != nil {
				return err
			}
			if err := AppendValue(bb.ItemBuilder(), x.Values[i]); err != nil {
				return err
			}
		}
	case *array.ListBuilder:
		x, ok := v.([]any)
		if !ok {
			return bad()
		}
		bb.Append(true)
		for _, ev := range x {
			if err := AppendValue(bb.ValueBuilder(), ev); err != nil {
				return err
			}
		}
	default:
		return bad()
	}
	return nil
}

func toInt64(v any) (int64, bool) {
	switch x := v.(type) {
	case int:
		return int64(x), true
	case int8:
		return int64(x), true
	case int16:
		return int64(x), true
	case int32:
		return int64(x), true
	case int64:
		return x, true
	case uint8:
		return int64(x), true
	case uint16:
		return int64(x), true
	case uint32:
		return int64(x), true
	case arrow.Timestamp:
		return int64(x), true
	case arrow.Date32:
		return int64(x), true
	case arrow.Duration:
		return int64(x), true
	}
	return 0, false
}

// BinaryParts returns the offsets (already adjusted for the array's slice
// offset, len+1 entries) and the whole data buffer of a string or binary
// array, so that row i is data[offs[i]:offs[i+1]]. arrow-go's ValueBytes is
// not usable with ValueOffsets on a sliced array: it starts at the first
// row's bytes while the offsets stay absolute.
func BinaryParts(arr arrow.Array) (offs []int32, data []byte) {
	if bufferBytes(arr.Data(), 1) == nil {
		// A zero-length array may have no offsets buffer, and ValueOffsets
		// would panic on it.
		switch arr.(type) {
		case *array.String, *array.Binary:
			return []int32{0}, nil
		}
		return nil, nil
	}
	switch a := arr.(type) {
	case *array.String:
		offs = a.ValueOffsets()
	case *array.Binary:
		offs = a.ValueOffsets()
	default:
		return nil, nil
	}
	if b := arr.Data().Buffers()[2]; b != nil {
		data = b.Bytes()
	}
	return offs, data
}
