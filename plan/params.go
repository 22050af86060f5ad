package plan

import (
	"encoding/hex"
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/apache/arrow/go/v17/arrow"
	"github.com/apache/arrow/go/v17/arrow/array"

	"github.com/arrowstream/arrowstream/sql"
)

// Statement parameters ($1, $2, ...) are bound while parsing
// (sql.ParseWithParams): ParamExpr turns a value of a parameter batch
// into the expression the placeholder stands for, a literal of the
// value's type, and NullParam a typed NULL for describing a statement
// before its values are known. A value is never spliced into the text.

// ParamExpr is the expression of row row of a parameter column: a
// literal of its type (CAST('v' AS type) for types without a literal of
// their own), NULL when the value is null.
func ParamExpr(col arrow.Array, row int, pos sql.Pos) (sql.Expr, error) {
	if row < 0 || row >= col.Len() {
		return nil, fmt.Errorf("parameter row %d of %d", row, col.Len())
	}
	if d, ok := col.(*array.Dictionary); ok {
		return ParamExpr(d.Dictionary(), d.GetValueIndex(row), pos)
	}
	if col.IsNull(row) {
		if col.DataType().ID() == arrow.NULL {
			return &sql.Literal{Pos: pos, Kind: sql.LitNull}, nil
		}
		return NullParam(col.DataType(), pos)
	}
	cast := func(v, typ string) sql.Expr {
		return &sql.Cast{Pos: pos, X: &sql.Literal{Pos: pos, Kind: sql.LitString, Value: v}, Type: typeName(typ, pos)}
	}
	switch c := col.(type) {
	case *array.Boolean:
		return &sql.Literal{Pos: pos, Kind: sql.LitBool, Value: strconv.FormatBool(c.Value(row))}, nil
	case *array.Int8:
		return cast(strconv.FormatInt(int64(c.Value(row)), 10), "TINYINT"), nil
	case *array.Int16:
		return cast(strconv.FormatInt(int64(c.Value(row)), 10), "SMALLINT"), nil
	case *array.Int32:
		return cast(strconv.FormatInt(int64(c.Value(row)), 10), "INT"), nil
	case *array.Int64:
		return cast(strconv.FormatInt(c.Value(row), 10), "BIGINT"), nil
	case *array.Uint8:
		return cast(strconv.FormatUint(uint64(c.Value(row)), 10), "SMALLINT"), nil
	case *array.Uint16:
		return cast(strconv.FormatUint(uint64(c.Value(row)), 10), "INT"), nil
	case *array.Uint32:
		return cast(strconv.FormatUint(uint64(c.Value(row)), 10), "BIGINT"), nil
	case *array.Uint64:
		return &sql.Cast{Pos: pos, X: &sql.Literal{Pos: pos, Kind: sql.LitString, Value: strconv.FormatUint(c.Value(row), 10)},
			Type: &sql.TypeName{Pos: pos, Name: "DECIMAL", Params: []int{20, 0}}}, nil
	case *array.Float32:
		return cast(floatText(float64(c.Value(row)), 32), "FLOAT"), nil
	case *array.Float64:
		return cast(floatText(c.Value(row), 64), "DOUBLE"), nil
	case *array.Decimal128:
		t := c.DataType().(*arrow.Decimal128Type)
		return &sql.Cast{Pos: pos, X: &sql.Literal{Pos: pos, Kind: sql.LitString, Value: c.Value(row).ToString(t.Scale)},
			Type: &sql.TypeName{Pos: pos, Name: "DECIMAL", Params: []int{int(t.Precision), int(t.Scale)}}}, nil
	case *array.String:
		return &sql.Literal{Pos: pos, Kind: sql.LitString, Value: strings.Clone(c.Value(row))}, nil
	case *array.LargeString:
		return &sql.Literal{Pos: pos, Kind: sql.LitString, Value: strings.Clone(c.Value(row))}, nil
	case *array.Binary:
		return &sql.Literal{Pos: pos, Kind: sql.LitBinary, Value: hex.EncodeToString(c.Value(row))}, nil
	case *array.LargeBinary:
		return &sql.Literal{Pos: pos, Kind: sql.LitBinary, Value: hex.EncodeToString(c.Value(row))}, nil
	case *array.Date32:
		return cast(c.Value(row).ToTime().Format(time.DateOnly), "DATE"), nil
	case *array.Date64:
		return cast(c.Value(row).ToTime().Format(time.DateOnly), "DATE"), nil
	case *array.Timestamp:
		t := c.DataType().(*arrow.TimestampType)
		toTime, err := t.GetToTimeFunc()
		if err != nil {
			return nil, err
		}
		v := toTime(c.Value(row)).UTC()
		if t.TimeZone == "" {
			return cast(v.Format("2006-01-02 15:04:05.999999"), "TIMESTAMP_NTZ"), nil
		}
		// An instant: exact, whatever the session's time zone.
		us := v.UnixMicro()
		return &sql.FuncCall{Pos: pos, Name: sql.Ident{Pos: pos, Name: "timestamp_micros"},
			Args: []sql.Expr{cast(strconv.FormatInt(us, 10), "BIGINT")}}, nil
	case *array.Duration:
		d := c.DataType().(*arrow.DurationType)
		us := int64(c.Value(row)) * int64(d.Unit.Multiplier()) / int64(time.Microsecond)
		return &sql.IntervalLit{Pos: pos, Text: strconv.FormatInt(us, 10) + " microseconds"}, nil
	}
	return nil, fmt.Errorf("parameter of type %s cannot be bound (bind booleans, integers, floats, decimals, strings, binary, dates, timestamps or durations)", col.DataType())
}

// NullParam is a NULL of a parameter's type.
func NullParam(dt arrow.DataType, pos sql.Pos) (sql.Expr, error) {
	name, params := "", []int(nil)
	switch t := dt.(type) {
	case *arrow.BooleanType:
		name = "BOOLEAN"
	case *arrow.Int8Type:
		name = "TINYINT"
	case *arrow.Int16Type, *arrow.Uint8Type:
		name = "SMALLINT"
	case *arrow.Int32Type, *arrow.Uint16Type:
		name = "INT"
	case *arrow.Int64Type, *arrow.Uint32Type:
		name = "BIGINT"
	case *arrow.Uint64Type:
		name, params = "DECIMAL", []int{20, 0}
	case *arrow.Float32Type:
		name = "FLOAT"
	case *arrow.Float64Type:
		name = "DOUBLE"
	case *arrow.Decimal128Type:
		name, params = "DECIMAL", []int{int(t.Precision), int(t.Scale)}
	case *arrow.StringType, *arrow.LargeStringType:
		name = "STRING"
	case *arrow.BinaryType, *arrow.LargeBinaryType:
		name = "BINARY"
	case *arrow.Date32Type, *arrow.Date64Type:
		name = "DATE"
	case *arrow.TimestampType:
		name = "TIMESTAMP"
		if t.TimeZone == "" {
			name = "TIMESTAMP_NTZ"
		}
	case *arrow.NullType, *arrow.DurationType:
		return &sql.Literal{Pos: pos, Kind: sql.LitNull}, nil
	case *arrow.DictionaryType:
		return NullParam(t.ValueType, pos)
	default:
		return nil, fmt.Errorf("parameter of type %s cannot be bound", dt)
	}
	// LTZ: a TIMESTAMP parameter is an instant under either
	// spark.sql.timestampType.
	return &sql.Cast{Pos: pos, X: &sql.Literal{Pos: pos, Kind: sql.LitNull}, Type: &sql.TypeName{Pos: pos, Name: name, Params: params, LTZ: name == "TIMESTAMP"}}, nil
}

func typeName(name string, pos sql.Pos) *sql.TypeName { return &sql.TypeName{Pos: pos, Name: name} }

// floatText is a float's text that a cast reads back exactly.
func floatText(v float64, bits int) string {
	switch {
	case math.IsNaN(v):
		return "NaN"
	case math.IsInf(v, 1):
		return "Infinity"
	case math.IsInf(v, -1):
		return "-Infinity"
	}
	return strconv.FormatFloat(v, 'g', -1, bits)
}
