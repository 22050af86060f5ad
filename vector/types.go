package vector

import (
	"fmt"
	"strings"

	"github.com/apache/arrow/go/v17/arrow"
)

// The Arrow types that carry Arrowstream's SQL types. Timestamps are
// microseconds in UTC (Spark's TIMESTAMP); dates are days since the Unix
// epoch.
var (
	Boolean   arrow.DataType = arrow.FixedWidthTypes.Boolean
	Int8      arrow.DataType = arrow.PrimitiveTypes.Int8  // TINYINT
	Int16     arrow.DataType = arrow.PrimitiveTypes.Int16 // SMALLINT
	Int32     arrow.DataType = arrow.PrimitiveTypes.Int32
	Int64     arrow.DataType = arrow.PrimitiveTypes.Int64
	Float64   arrow.DataType = arrow.PrimitiveTypes.Float64
	String    arrow.DataType = arrow.BinaryTypes.String
	Binary    arrow.DataType = arrow.BinaryTypes.Binary
	Timestamp arrow.DataType = &arrow.TimestampType{Unit: arrow.Microsecond, TimeZone: "UTC"}
	Date      arrow.DataType = arrow.FixedWidthTypes.Date32
	Null      arrow.DataType = arrow.Null
)

// WindowType is the struct produced by window() and session_window():
// {start: timestamp, end: timestamp}, end exclusive.
var WindowType = arrow.StructOf(
	arrow.Field{Name: "start", Type: Timestamp, Nullable: true},
	arrow.Field{Name: "end", Type: Timestamp, Nullable: true},
)

// Decimal returns the DECIMAL(precision, scale) type.
func Decimal(precision, scale int32) arrow.DataType {
	return &arrow.Decimal128Type{Precision: precision, Scale: scale}
}

// ListOf returns ARRAY<elem>.
func ListOf(elem arrow.DataType) arrow.DataType { return arrow.ListOf(elem) }

// TypeName renders a type in Spark SQL's words (bigint, string, ...), as
// users see it in errors and DESCRIBE.
func TypeName(dt arrow.DataType) string {
	switch t := dt.(type) {
	case nil:
		return "unknown"
	case *arrow.BooleanType:
		return "boolean"
	case *arrow.Int8Type:
		return "tinyint"
	case *arrow.Int16Type:
		return "smallint"
	case *arrow.Int32Type:
		return "int"
	case *arrow.Int64Type:
		return "bigint"
	case *arrow.Float32Type:
		return "float"
	case *arrow.Float64Type:
		return "double"
	case *arrow.StringType, *arrow.LargeStringType:
		return "string"
	case *arrow.BinaryType, *arrow.LargeBinaryType:
		return "binary"
	case *arrow.TimestampType:
		if t.TimeZone == "" {
			return "timestamp_ntz"
		}
		return "timestamp"
	case *arrow.Date32Type:
		return "date"
	case *arrow.NullType:
		return "void"
	case *arrow.MonthDayNanoIntervalType:
		return "interval" // Spark's CalendarIntervalType
	case *arrow.MonthIntervalType:
		return "interval year to month"
	case *arrow.Decimal128Type:
		return fmt.Sprintf("decimal(%d,%d)", t.Precision, t.Scale)
	case *arrow.DictionaryType:
		return TypeName(t.ValueType)
	case *arrow.ListType:
		return "array<" + TypeName(t.Elem()) + ">"
	case *arrow.MapType:
		return "map<" + TypeName(t.KeyType()) + "," + TypeName(t.ItemType()) + ">"
	case *arrow.StructType:
		parts := make([]string, t.NumFields())
		for i, f := range t.Fields() {
			parts[i] = f.Name + ":" + TypeName(f.Type)
		}
		return "struct<" + strings.Join(parts, ",") + ">"
	default:
		return dt.String()
	}
}

// IsStringLike reports whether dt is a string or a dictionary of strings.
func IsStringLike(dt arrow.DataType) bool {
	switch t := dt.(type) {
	case *arrow.StringType:
		return true
	case *arrow.DictionaryType:
		return t.ValueType.ID() == arrow.STRING
	}
	return false
}

// IsIntegral reports whether dt is an integer type.
func IsIntegral(dt arrow.DataType) bool {
	switch dt.ID() {
	case arrow.INT8, arrow.INT16, arrow.INT32, arrow.INT64:
		return true
	}
	return false
}

// IsNumeric reports whether dt is an integer, floating-point or decimal type.
func IsNumeric(dt arrow.DataType) bool {
	switch dt.ID() {
	case arrow.INT8, arrow.INT16, arrow.INT32, arrow.INT64, arrow.FLOAT32, arrow.FLOAT64, arrow.DECIMAL128:
		return true
	}
	return false
}

// numericRank orders numeric types for widening: int32 < int64 < decimal <
// double.
func numericRank(dt arrow.DataType) int {
	switch dt.ID() {
	case arrow.INT8:
		return 1
	case arrow.INT16:
		return 2
	case arrow.INT32:
		return 3
	case arrow.INT64:
		return 4
	case arrow.DECIMAL128:
		return 5
	case arrow.FLOAT32:
		return 6
	case arrow.FLOAT64:
		return 7
	}
	return 0
}

// integralDigits is the decimal precision needed to hold any value of an
// integer type, as Spark's DecimalType.forType.
func integralDigits(dt arrow.DataType) int32 {
	switch dt.ID() {
	case arrow.INT8:
		return 3
	case arrow.INT16:
		return 5
	case arrow.INT32:
		return 10
	}
	return 20
}

// CommonType returns the type both a and b widen to for comparison and
// arithmetic, following Spark's implicit numeric widening (int < bigint <
// decimal < double), or false when there is none. Null widens to anything;
// dictionary strings widen to string.
func CommonType(a, b arrow.DataType) (arrow.DataType, bool) {
	if a.ID() == arrow.NULL {
		return Unwrap(b), true
	}
	if b.ID() == arrow.NULL {
		return Unwrap(a), true
	}
	a, b = Unwrap(a), Unwrap(b)
	if arrow.TypeEqual(a, b) {
		return a, true
	}
	if IsNumeric(a) && IsNumeric(b) {
		ra, rb := numericRank(a), numericRank(b)
		if a.ID() == arrow.DECIMAL128 && b.ID() == arrow.DECIMAL128 {
			da, db := a.(*arrow.Decimal128Type), b.(*arrow.Decimal128Type)
			scale := max(da.Scale, db.Scale)
			intDigits := max(da.Precision-da.Scale, db.Precision-db.Scale)
			return Decimal(min(intDigits+scale, 38), scale), true
		}
		if a.ID() == arrow.DECIMAL128 && IsIntegral(b) {
			return CommonType(a, Decimal(integralDigits(b), 0))
		}
		if b.ID() == arrow.DECIMAL128 && IsIntegral(a) {
			return CommonType(Decimal(integralDigits(a), 0), b)
		}
		if a.ID() == arrow.DECIMAL128 || b.ID() == arrow.DECIMAL128 {
			// Spark: a decimal with a float or double is a double.
			return Float64, true
		}
		if ra >= rb {
			return a, true
		}
		return b, true
	}
	if a.ID() == arrow.DATE32 && b.ID() == arrow.TIMESTAMP {
		return b, true // TIMESTAMP or TIMESTAMP_NTZ
	}
	if a.ID() == arrow.TIMESTAMP && b.ID() == arrow.DATE32 {
		return a, true
	}
	return nil, false
}

// Unwrap returns the value type of a dictionary type, or dt itself.
func Unwrap(dt arrow.DataType) arrow.DataType {
	if d, ok := dt.(*arrow.DictionaryType); ok {
		return d.ValueType
	}
	return dt
}
