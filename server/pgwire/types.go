package pgwire

import (
	"fmt"

	"github.com/apache/arrow/go/v17/arrow"
)

// PostgreSQL type OIDs (pg_type.oid) of the types results are sent as.
const (
	oidBool        = 16
	oidBytea       = 17
	oidInt8        = 20
	oidInt2        = 21
	oidInt4        = 23
	oidText        = 25
	oidJSON        = 114
	oidFloat4      = 700
	oidFloat8      = 701
	oidUnknown     = 705
	oidBoolArr     = 1000
	oidByteaArr    = 1001
	oidInt2Arr     = 1005
	oidInt4Arr     = 1007
	oidTextArr     = 1009
	oidInt8Arr     = 1016
	oidFloat4Arr   = 1021
	oidFloat8Arr   = 1022
	oidVarchar     = 1043
	oidDate        = 1082
	oidTimestamp   = 1114
	oidTimestampA  = 1115
	oidDateArr     = 1182
	oidTimestamptz = 1184
	oidTstzArr     = 1185
	oidInterval    = 1186
	oidIntervalArr = 1187
	oidNumericArr  = 1231
	oidNumeric     = 1700
	oidJSONArr     = 199
)

// pgType is how a column travels: its type OID, pg_type.typlen, and the
// OID of its element for arrays (0 otherwise).
type pgType struct {
	oid  uint32
	size int16
	elem uint32
	name string
}

var scalarTypes = map[uint32]pgType{
	oidBool:        {oidBool, 1, 0, "boolean"},
	oidBytea:       {oidBytea, -1, 0, "bytea"},
	oidInt2:        {oidInt2, 2, 0, "smallint"},
	oidInt4:        {oidInt4, 4, 0, "integer"},
	oidInt8:        {oidInt8, 8, 0, "bigint"},
	oidText:        {oidText, -1, 0, "text"},
	oidJSON:        {oidJSON, -1, 0, "json"},
	oidFloat4:      {oidFloat4, 4, 0, "real"},
	oidFloat8:      {oidFloat8, 8, 0, "double precision"},
	oidDate:        {oidDate, 4, 0, "date"},
	oidTimestamp:   {oidTimestamp, 8, 0, "timestamp without time zone"},
	oidTimestamptz: {oidTimestamptz, 8, 0, "timestamp with time zone"},
	oidInterval:    {oidInterval, 16, 0, "interval"},
	oidNumeric:     {oidNumeric, -1, 0, "numeric"},
}

// arrayOf maps an element OID to its array type's OID.
var arrayOf = map[uint32]uint32{
	oidBool: oidBoolArr, oidBytea: oidByteaArr, oidInt2: oidInt2Arr, oidInt4: oidInt4Arr, oidInt8: oidInt8Arr,
	oidText: oidTextArr, oidFloat4: oidFloat4Arr, oidFloat8: oidFloat8Arr, oidDate: oidDateArr,
	oidTimestamp: oidTimestampA, oidTimestamptz: oidTstzArr, oidInterval: oidIntervalArr, oidNumeric: oidNumericArr,
	oidJSON: oidJSONArr,
}

// typeOf is the PostgreSQL type an Arrow column is sent as. Structs and
// maps travel as json; lists of a scalar as its array type.
func typeOf(dt arrow.DataType) (pgType, error) {
	switch t := dt.(type) {
	case *arrow.BooleanType:
		return scalarTypes[oidBool], nil
	case *arrow.Int8Type, *arrow.Int16Type, *arrow.Uint8Type:
		return scalarTypes[oidInt2], nil
	case *arrow.Int32Type, *arrow.Uint16Type:
		return scalarTypes[oidInt4], nil
	case *arrow.Int64Type, *arrow.Uint32Type:
		return scalarTypes[oidInt8], nil
	case *arrow.Uint64Type:
		return scalarTypes[oidNumeric], nil
	case *arrow.Float16Type, *arrow.Float32Type:
		return scalarTypes[oidFloat4], nil
	case *arrow.Float64Type:
		return scalarTypes[oidFloat8], nil
	case *arrow.Decimal128Type:
		return scalarTypes[oidNumeric], nil
	case *arrow.StringType, *arrow.LargeStringType, *arrow.NullType:
		return scalarTypes[oidText], nil
	case *arrow.BinaryType, *arrow.LargeBinaryType, *arrow.FixedSizeBinaryType:
		return scalarTypes[oidBytea], nil
	case *arrow.Date32Type:
		return scalarTypes[oidDate], nil
	case *arrow.TimestampType:
		if t.TimeZone == "" {
			return scalarTypes[oidTimestamp], nil
		}
		return scalarTypes[oidTimestamptz], nil
	case *arrow.DurationType, *arrow.MonthDayNanoIntervalType, *arrow.MonthIntervalType, *arrow.DayTimeIntervalType:
		return scalarTypes[oidInterval], nil
	case *arrow.StructType, *arrow.MapType:
		return scalarTypes[oidJSON], nil
	case *arrow.ListType:
		et, err := typeOf(t.Elem())
		if err != nil {
			return pgType{}, err
		}
		a, ok := arrayOf[et.oid]
		if !ok {
			// Lists of lists or of structs: their JSON text.
			return scalarTypes[oidJSON], nil
		}
		return pgType{oid: a, size: -1, elem: et.oid, name: et.name + "[]"}, nil
	case *arrow.DictionaryType:
		return typeOf(t.ValueType)
	}
	return pgType{}, fmt.Errorf("column type %s has no PostgreSQL counterpart", dt)
}
