package pgwire

import (
	"fmt"
	"math"
	"math/big"

	"github.com/apache/arrow/go/v17/arrow"
	"github.com/apache/arrow/go/v17/arrow/array"
)

// binaryBatch is the typed loop of a column in binary format, nil for the
// types encoded value by value.
func binaryBatch(dt arrow.DataType) func(*column, arrow.Array) {
	switch dt.(type) {
	case *arrow.BooleanType:
		return func(c *column, a arrow.Array) {
			b := a.(*array.Boolean)
			c.data = c.data[:0]
			for i := 0; i < b.Len(); i++ {
				v := byte(0)
				if b.Value(i) {
					v = 1
				}
				c.data = append(c.data, v)
			}
			c.width = 1
		}
	case *arrow.Int8Type:
		return func(c *column, a arrow.Array) {
			fixed(c, a.(*array.Int8).Int8Values(), 2, func(b []byte, v int8) { putU16(b, uint16(int16(v))) })
		}
	case *arrow.Uint8Type:
		return func(c *column, a arrow.Array) {
			fixed(c, a.(*array.Uint8).Uint8Values(), 2, func(b []byte, v uint8) { putU16(b, uint16(v)) })
		}
	case *arrow.Int16Type:
		return func(c *column, a arrow.Array) {
			fixed(c, a.(*array.Int16).Int16Values(), 2, func(b []byte, v int16) { putU16(b, uint16(v)) })
		}
	case *arrow.Uint16Type:
		return func(c *column, a arrow.Array) {
			fixed(c, a.(*array.Uint16).Uint16Values(), 4, func(b []byte, v uint16) { putU32(b, uint32(v)) })
		}
	case *arrow.Int32Type:
		return func(c *column, a arrow.Array) {
			fixed(c, a.(*array.Int32).Int32Values(), 4, func(b []byte, v int32) { putU32(b, uint32(v)) })
		}
	case *arrow.Uint32Type:
		return func(c *column, a arrow.Array) {
			fixed(c, a.(*array.Uint32).Uint32Values(), 8, func(b []byte, v uint32) { putU64(b, uint64(v)) })
		}
	case *arrow.Int64Type:
		return func(c *column, a arrow.Array) {
			fixed(c, a.(*array.Int64).Int64Values(), 8, func(b []byte, v int64) { putU64(b, uint64(v)) })
		}
	case *arrow.Float32Type:
		return func(c *column, a arrow.Array) {
			fixed(c, a.(*array.Float32).Float32Values(), 4, putF32)
		}
	case *arrow.Float16Type:
		return func(c *column, a arrow.Array) {
			fixed(c, float16Values(a.(*array.Float16)), 4, putF32)
		}
	case *arrow.Float64Type:
		return func(c *column, a arrow.Array) {
			fixed(c, a.(*array.Float64).Float64Values(), 8, func(b []byte, v float64) { putU64(b, math.Float64bits(v)) })
		}
	case *arrow.Date32Type:
		return func(c *column, a arrow.Array) {
			fixed(c, a.(*array.Date32).Date32Values(), 4, func(b []byte, v arrow.Date32) { putU32(b, uint32(int32(v)-pgEpochDays)) })
		}
	case *arrow.TimestampType:
		return func(c *column, a arrow.Array) {
			ts := a.(*array.Timestamp)
			unit := ts.DataType().(*arrow.TimestampType).Unit
			fixed(c, ts.TimestampValues(), 8, func(b []byte, v arrow.Timestamp) { putU64(b, uint64(toMicros(int64(v), unit)-pgEpochMicros)) })
		}
	case *arrow.DurationType:
		return func(c *column, a arrow.Array) {
			d := a.(*array.Duration)
			unit := d.DataType().(*arrow.DurationType).Unit
			fixed(c, d.DurationValues(), 16, func(b []byte, v arrow.Duration) {
				putU64(b, uint64(toMicros(int64(v), unit)))
				putU64(b[8:], 0)
			})
		}
	case *arrow.StringType:
		return func(c *column, a arrow.Array) {
			s := a.(*array.String)
			c.view, c.offs = s.ValueBytes(), s.ValueOffsets()
		}
	case *arrow.BinaryType:
		return func(c *column, a arrow.Array) {
			s := a.(*array.Binary)
			c.view, c.offs = s.ValueBytes(), s.ValueOffsets()
		}
	}
	return nil
}

// binaryElem is the binary encoding of one value of type dt.
func binaryElem(dt arrow.DataType) (elemFunc, error) {
	switch t := dt.(type) {
	case *arrow.BooleanType:
		return func(dst []byte, a arrow.Array, i int, _ *encodeOpts) []byte {
			if a.(*array.Boolean).Value(i) {
				return append(dst, 1)
			}
			return append(dst, 0)
		}, nil
	case *arrow.Int8Type:
		return func(dst []byte, a arrow.Array, i int, _ *encodeOpts) []byte {
			return appendU16(dst, uint16(int16(a.(*array.Int8).Value(i))))
		}, nil
	case *arrow.Uint8Type:
		return func(dst []byte, a arrow.Array, i int, _ *encodeOpts) []byte {
			return appendU16(dst, uint16(a.(*array.Uint8).Value(i)))
		}, nil
	case *arrow.Int16Type:
		return func(dst []byte, a arrow.Array, i int, _ *encodeOpts) []byte {
			return appendU16(dst, uint16(a.(*array.Int16).Value(i)))
		}, nil
	case *arrow.Uint16Type:
		return func(dst []byte, a arrow.Array, i int, _ *encodeOpts) []byte {
			return appendU32(dst, uint32(a.(*array.Uint16).Value(i)))
		}, nil
	case *arrow.Int32Type:
		return func(dst []byte, a arrow.Array, i int, _ *encodeOpts) []byte {
			return appendU32(dst, uint32(a.(*array.Int32).Value(i)))
		}, nil
	case *arrow.Uint32Type:
		return func(dst []byte, a arrow.Array, i int, _ *encodeOpts) []byte {
			return appendU64(dst, uint64(a.(*array.Uint32).Value(i)))
		}, nil
	case *arrow.Int64Type:
		return func(dst []byte, a arrow.Array, i int, _ *encodeOpts) []byte {
			return appendU64(dst, uint64(a.(*array.Int64).Value(i)))
		}, nil
	case *arrow.Uint64Type:
		return func(dst []byte, a arrow.Array, i int, _ *encodeOpts) []byte {
			return appendNumeric(dst, new(big.Int).SetUint64(a.(*array.Uint64).Value(i)), 0)
		}, nil
	case *arrow.Float16Type:
		return func(dst []byte, a arrow.Array, i int, _ *encodeOpts) []byte {
			return appendU32(dst, math.Float32bits(a.(*array.Float16).Value(i).Float32()))
		}, nil
	case *arrow.Float32Type:
		return func(dst []byte, a arrow.Array, i int, _ *encodeOpts) []byte {
			return appendU32(dst, math.Float32bits(a.(*array.Float32).Value(i)))
		}, nil
	case *arrow.Float64Type:
		return func(dst []byte, a arrow.Array, i int, _ *encodeOpts) []byte {
			return appendU64(dst, math.Float64bits(a.(*array.Float64).Value(i)))
		}, nil
	case *arrow.Decimal128Type:
		scale := t.Scale
		return func(dst []byte, a arrow.Array, i int, _ *encodeOpts) []byte {
			return appendNumeric(dst, a.(*array.Decimal128).Value(i).BigInt(), scale)
		}, nil
	case *arrow.StringType, *arrow.LargeStringType:
		return func(dst []byte, a arrow.Array, i int, _ *encodeOpts) []byte {
			return append(dst, a.(array.StringLike).Value(i)...)
		}, nil
	case *arrow.NullType:
		return func(dst []byte, _ arrow.Array, _ int, _ *encodeOpts) []byte { return dst }, nil
	case *arrow.BinaryType, *arrow.LargeBinaryType:
		return func(dst []byte, a arrow.Array, i int, _ *encodeOpts) []byte {
			return append(dst, a.(interface{ Value(int) []byte }).Value(i)...)
		}, nil
	case *arrow.FixedSizeBinaryType:
		return func(dst []byte, a arrow.Array, i int, _ *encodeOpts) []byte {
			return append(dst, a.(*array.FixedSizeBinary).Value(i)...)
		}, nil
	case *arrow.Date32Type:
		return func(dst []byte, a arrow.Array, i int, _ *encodeOpts) []byte {
			return appendU32(dst, uint32(int32(a.(*array.Date32).Value(i))-pgEpochDays))
		}, nil
	case *arrow.TimestampType:
		unit := t.Unit
		return func(dst []byte, a arrow.Array, i int, _ *encodeOpts) []byte {
			return appendU64(dst, uint64(toMicros(int64(a.(*array.Timestamp).Value(i)), unit)-pgEpochMicros))
		}, nil
	case *arrow.DurationType:
		unit := t.Unit
		return func(dst []byte, a arrow.Array, i int, _ *encodeOpts) []byte {
			dst = appendU64(dst, uint64(toMicros(int64(a.(*array.Duration).Value(i)), unit)))
			return appendU64(dst, 0)
		}, nil
	case *arrow.MonthDayNanoIntervalType:
		return func(dst []byte, a arrow.Array, i int, _ *encodeOpts) []byte {
			v := a.(*array.MonthDayNanoInterval).Value(i)
			dst = appendU64(dst, uint64(v.Nanoseconds/1000))
			dst = appendU32(dst, uint32(v.Days))
			return appendU32(dst, uint32(v.Months))
		}, nil
	case *arrow.MonthIntervalType:
		return func(dst []byte, a arrow.Array, i int, _ *encodeOpts) []byte {
			dst = appendU64(dst, 0)
			dst = appendU32(dst, 0)
			return appendU32(dst, uint32(a.(*array.MonthInterval).Value(i)))
		}, nil
	case *arrow.DayTimeIntervalType:
		return func(dst []byte, a arrow.Array, i int, _ *encodeOpts) []byte {
			v := a.(*array.DayTimeInterval).Value(i)
			dst = appendU64(dst, uint64(int64(v.Milliseconds)*1000))
			dst = appendU32(dst, uint32(v.Days))
			return appendU32(dst, 0)
		}, nil
	case *arrow.StructType, *arrow.MapType:
		return jsonElem, nil
	case *arrow.ListType:
		et, err := typeOf(t.Elem())
		if err != nil {
			return nil, err
		}
		if _, ok := arrayOf[et.oid]; !ok {
			return jsonElem, nil
		}
		inner, err := binaryElem(t.Elem())
		if err != nil {
			return nil, err
		}
		return func(dst []byte, a arrow.Array, i int, o *encodeOpts) []byte {
			l := a.(*array.List)
			start, end := l.ValueOffsets(i)
			vals := l.ListValues()
			hasNull := uint32(0)
			for j := start; j < end; j++ {
				if vals.IsNull(int(j)) {
					hasNull = 1
					break
				}
			}
			if end == start {
				dst = appendU32(dst, 0) // no dimensions
				dst = appendU32(dst, 0)
				return appendU32(dst, et.oid)
			}
			dst = appendU32(dst, 1)
			dst = appendU32(dst, hasNull)
			dst = appendU32(dst, et.oid)
			dst = appendU32(dst, uint32(end-start))
			dst = appendU32(dst, 1) // lower bound
			for j := start; j < end; j++ {
				if vals.IsNull(int(j)) {
					dst = appendU32(dst, math.MaxUint32) // -1: NULL
					continue
				}
				at := len(dst)
				dst = appendU32(dst, 0)
				dst = inner(dst, vals, int(j), o)
				putU32(dst[at:], uint32(len(dst)-at-4))
			}
			return dst
		}, nil
	case *arrow.DictionaryType:
		return nil, fmt.Errorf("dictionary column %s: decode it first", dt)
	}
	return nil, fmt.Errorf("column type %s has no PostgreSQL binary encoding", dt)
}

func appendU16(b []byte, v uint16) []byte { return append(b, byte(v>>8), byte(v)) }
func appendU32(b []byte, v uint32) []byte {
	return append(b, byte(v>>24), byte(v>>16), byte(v>>8), byte(v))
}
func appendU64(b []byte, v uint64) []byte {
	return appendU32(appendU32(b, uint32(v>>32)), uint32(v))
}

// appendNumeric appends the binary numeric of unscaled × 10^-scale:
// ndigits, weight, sign, dscale, then base-10000 digits, most significant
// first, grouped around the decimal point.
func appendNumeric(dst []byte, unscaled *big.Int, scale int32) []byte {
	const (
		signPos = 0x0000
		signNeg = 0x4000
	)
	sign := uint16(signPos)
	if unscaled.Sign() < 0 {
		sign = signNeg
		unscaled = new(big.Int).Neg(unscaled)
	}
	digits := unscaled.String() // decimal digits of the magnitude
	dscale := max(scale, 0)
	if scale < 0 {
		for k := int32(0); k < -scale; k++ {
			digits += "0"
		}
		scale = 0
	}
	// Split into integer and fraction digit strings.
	for int32(len(digits)) <= scale {
		digits = "0" + digits
	}
	intPart, frac := digits[:int32(len(digits))-scale], digits[int32(len(digits))-scale:]
	// Pad to whole groups of four: the integer part on the left, the
	// fraction on the right.
	if r := len(intPart) % 4; r != 0 {
		intPart = "0000"[:4-r] + intPart
	}
	if r := len(frac) % 4; r != 0 {
		frac += "0000"[:4-r]
	}
	all := intPart + frac
	groups := make([]uint16, 0, len(all)/4)
	for k := 0; k < len(all); k += 4 {
		g := uint16(0)
		for _, ch := range all[k : k+4] {
			g = g*10 + uint16(ch-'0')
		}
		groups = append(groups, g)
	}
	weight := len(intPart)/4 - 1
	// Strip leading and trailing zero groups (PostgreSQL's canonical form).
	for len(groups) > 0 && groups[0] == 0 {
		groups = groups[1:]
		weight--
	}
	for len(groups) > 0 && groups[len(groups)-1] == 0 {
		groups = groups[:len(groups)-1]
	}
	if len(groups) == 0 {
		weight, sign = 0, signPos
	}
	dst = appendU16(dst, uint16(len(groups)))
	dst = appendU16(dst, uint16(int16(weight)))
	dst = appendU16(dst, sign)
	dst = appendU16(dst, uint16(dscale))
	for _, g := range groups {
		dst = appendU16(dst, g)
	}
	return dst
}
