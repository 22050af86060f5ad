package pgwire

import (
	"fmt"

	"github.com/apache/arrow/go/v17/arrow"
	"github.com/apache/arrow/go/v17/arrow/array"
	"github.com/apache/arrow/go/v17/arrow/decimal128"
	"github.com/apache/arrow/go/v17/arrow/memory"
	"github.com/jackc/pgx/v5/pgtype"
)

// paramArrowType is the Arrow type a parameter of a PostgreSQL type is
// bound as.
func paramArrowType(oid uint32) arrow.DataType {
	switch oid {
	case oidBool:
		return arrow.FixedWidthTypes.Boolean
	case oidInt2:
		return arrow.PrimitiveTypes.Int16
	case oidInt4:
		return arrow.PrimitiveTypes.Int32
	case oidInt8:
		return arrow.PrimitiveTypes.Int64
	case oidFloat4:
		return arrow.PrimitiveTypes.Float32
	case oidFloat8:
		return arrow.PrimitiveTypes.Float64
	case oidNumeric:
		return &arrow.Decimal128Type{Precision: 38, Scale: 18}
	case oidBytea:
		return arrow.BinaryTypes.Binary
	case oidDate:
		return arrow.FixedWidthTypes.Date32
	case oidTimestamp:
		return &arrow.TimestampType{Unit: arrow.Microsecond}
	case oidTimestamptz:
		return &arrow.TimestampType{Unit: arrow.Microsecond, TimeZone: "UTC"}
	case oidInterval:
		return arrow.FixedWidthTypes.Duration_us
	}
	return arrow.BinaryTypes.String
}

// paramRecord decodes a Bind message's values into a one-row batch, a
// column per parameter; values nil describes the statement (every
// parameter a NULL of its type). The caller releases the batch.
func paramRecord(mem memory.Allocator, m *pgtype.Map, types []uint32, formats []int16, values [][]byte) (arrow.Record, error) {
	describe := values == nil
	if !describe && len(values) != len(types) {
		return nil, &pgError{code: stateProtocolViolation, msg: fmt.Sprintf("bind message supplies %d parameters, but the statement has %d", len(values), len(types))}
	}
	if len(formats) > 1 && len(formats) != len(values) {
		return nil, &pgError{code: stateProtocolViolation, msg: fmt.Sprintf("%d parameter format codes for %d parameters", len(formats), len(values))}
	}
	fields := make([]arrow.Field, len(types))
	cols := make([]arrow.Array, 0, len(types))
	defer func() {
		for _, c := range cols {
			c.Release()
		}
	}()
	for k, oid := range types {
		var src []byte
		format := formatText
		if !describe {
			src = values[k]
			switch len(formats) {
			case 0:
			case 1:
				format = formats[0]
			default:
				format = formats[k]
			}
			if format != formatText && format != formatBinary {
				return nil, &pgError{code: stateProtocolViolation, msg: fmt.Sprintf("parameter $%d: format code %d", k+1, format)}
			}
		}
		dt := paramArrowType(oid)
		b := array.NewBuilder(mem, dt)
		err := appendParam(b, m, oid, format, src)
		col := b.NewArray()
		b.Release()
		cols = append(cols, col)
		if err != nil {
			return nil, &pgError{code: stateInvalidText, msg: fmt.Sprintf("parameter $%d: %v", k+1, err)}
		}
		fields[k] = arrow.Field{Name: fmt.Sprintf("$%d", k+1), Type: dt, Nullable: true}
	}
	return array.NewRecord(arrow.NewSchema(fields, nil), cols, 1), nil
}

// appendParam decodes one value (nil: NULL) onto b.
func appendParam(b array.Builder, m *pgtype.Map, oid uint32, format int16, src []byte) error {
	if src == nil {
		b.AppendNull()
		return nil
	}
	fail := func(err error) error {
		b.AppendNull()
		return err
	}
	switch b := b.(type) {
	case *array.BooleanBuilder:
		var v bool
		if err := m.Scan(oid, format, src, &v); err != nil {
			return fail(err)
		}
		b.Append(v)
	case *array.Int16Builder:
		var v int16
		if err := m.Scan(oid, format, src, &v); err != nil {
			return fail(err)
		}
		b.Append(v)
	case *array.Int32Builder:
		var v int32
		if err := m.Scan(oid, format, src, &v); err != nil {
			return fail(err)
		}
		b.Append(v)
	case *array.Int64Builder:
		var v int64
		if err := m.Scan(oid, format, src, &v); err != nil {
			return fail(err)
		}
		b.Append(v)
	case *array.Float32Builder:
		var v float32
		if err := m.Scan(oid, format, src, &v); err != nil {
			return fail(err)
		}
		b.Append(v)
	case *array.Float64Builder:
		var v float64
		if err := m.Scan(oid, format, src, &v); err != nil {
			return fail(err)
		}
		b.Append(v)
	case *array.Decimal128Builder:
		var v pgtype.Numeric
		if err := m.Scan(oid, format, src, &v); err != nil {
			return fail(err)
		}
		if !v.Valid || v.NaN || v.InfinityModifier != pgtype.Finite {
			return fail(fmt.Errorf("numeric NaN and infinity are not supported"))
		}
		text, _ := pgNumericText(v)
		d, err := decimal128.FromString(text, 38, 18)
		if err != nil {
			return fail(fmt.Errorf("numeric %s does not fit decimal(38,18): %w", text, err))
		}
		b.Append(d)
	case *array.BinaryBuilder:
		var v []byte
		if err := m.Scan(oid, format, src, &v); err != nil {
			return fail(err)
		}
		b.Append(v)
	case *array.Date32Builder:
		var v pgtype.Date
		if err := m.Scan(oid, format, src, &v); err != nil {
			return fail(err)
		}
		if v.InfinityModifier != pgtype.Finite {
			return fail(fmt.Errorf("infinite dates are not supported"))
		}
		b.Append(arrow.Date32FromTime(v.Time))
	case *array.TimestampBuilder:
		var us int64
		if oid == oidTimestamp {
			var v pgtype.Timestamp
			if err := m.Scan(oid, format, src, &v); err != nil {
				return fail(err)
			}
			if v.InfinityModifier != pgtype.Finite {
				return fail(fmt.Errorf("infinite timestamps are not supported"))
			}
			us = v.Time.UnixMicro()
		} else {
			var v pgtype.Timestamptz
			if err := m.Scan(oid, format, src, &v); err != nil {
				return fail(err)
			}
			if v.InfinityModifier != pgtype.Finite {
				return fail(fmt.Errorf("infinite timestamps are not supported"))
			}
			us = v.Time.UnixMicro()
		}
		b.Append(arrow.Timestamp(us))
	case *array.DurationBuilder:
		var v pgtype.Interval
		if err := m.Scan(oid, format, src, &v); err != nil {
			return fail(err)
		}
		if v.Months != 0 {
			return fail(fmt.Errorf("intervals with months are not supported"))
		}
		b.Append(arrow.Duration(v.Microseconds + int64(v.Days)*86_400_000_000))
	case *array.StringBuilder:
		// text, varchar, json, unknown: the bytes are the string (also in
		// binary format).
		b.Append(string(src))
	default:
		return fail(fmt.Errorf("type %T", b))
	}
	return nil
}
