package pgwire

import (
	"encoding/json"
	"fmt"
	"math"
	"strconv"
	"time"

	"github.com/apache/arrow/go/v17/arrow"
	"github.com/apache/arrow/go/v17/arrow/array"
)

// textBatch is the typed loop of a column in text format, nil for the
// types encoded value by value.
func textBatch(dt arrow.DataType) func(*column, arrow.Array) {
	switch dt.(type) {
	case *arrow.Int16Type:
		return func(c *column, a arrow.Array) { intText(c, a.(*array.Int16).Int16Values()) }
	case *arrow.Int32Type:
		return func(c *column, a arrow.Array) { intText(c, a.(*array.Int32).Int32Values()) }
	case *arrow.Int64Type:
		return func(c *column, a arrow.Array) { intText(c, a.(*array.Int64).Int64Values()) }
	case *arrow.Float64Type:
		return func(c *column, a arrow.Array) {
			for _, v := range a.(*array.Float64).Float64Values() {
				c.data = appendFloat(c.data, v, 64)
				c.ends = append(c.ends, int32(len(c.data)))
			}
		}
	case *arrow.StringType:
		return func(c *column, a arrow.Array) {
			s := a.(*array.String)
			c.view, c.offs = s.ValueBytes(), s.ValueOffsets()
		}
	}
	return nil
}

func intText[T int16 | int32 | int64](c *column, vals []T) {
	for _, v := range vals {
		c.data = strconv.AppendInt(c.data, int64(v), 10)
		c.ends = append(c.ends, int32(len(c.data)))
	}
}

// textElem is the text encoding of one value of type dt, as PostgreSQL
// prints it (DateStyle ISO, IntervalStyle postgres, bytea_output hex).
func textElem(dt arrow.DataType) (elemFunc, error) {
	switch t := dt.(type) {
	case *arrow.BooleanType:
		return func(dst []byte, a arrow.Array, i int, _ *encodeOpts) []byte {
			if a.(*array.Boolean).Value(i) {
				return append(dst, 't')
			}
			return append(dst, 'f')
		}, nil
	case *arrow.Int8Type, *arrow.Int16Type, *arrow.Int32Type, *arrow.Int64Type:
		return func(dst []byte, a arrow.Array, i int, _ *encodeOpts) []byte {
			return strconv.AppendInt(dst, intAt(a, i), 10)
		}, nil
	case *arrow.Uint8Type, *arrow.Uint16Type, *arrow.Uint32Type, *arrow.Uint64Type:
		return func(dst []byte, a arrow.Array, i int, _ *encodeOpts) []byte {
			return strconv.AppendUint(dst, uintAt(a, i), 10)
		}, nil
	case *arrow.Float16Type:
		return func(dst []byte, a arrow.Array, i int, _ *encodeOpts) []byte {
			return appendFloat(dst, float64(a.(*array.Float16).Value(i).Float32()), 32)
		}, nil
	case *arrow.Float32Type:
		return func(dst []byte, a arrow.Array, i int, _ *encodeOpts) []byte {
			return appendFloat(dst, float64(a.(*array.Float32).Value(i)), 32)
		}, nil
	case *arrow.Float64Type:
		return func(dst []byte, a arrow.Array, i int, _ *encodeOpts) []byte {
			return appendFloat(dst, a.(*array.Float64).Value(i), 64)
		}, nil
	case *arrow.Decimal128Type:
		scale := t.Scale
		return func(dst []byte, a arrow.Array, i int, _ *encodeOpts) []byte {
			return append(dst, a.(*array.Decimal128).Value(i).ToString(scale)...)
		}, nil
	case *arrow.StringType, *arrow.LargeStringType:
		return func(dst []byte, a arrow.Array, i int, _ *encodeOpts) []byte {
			return append(dst, a.(array.StringLike).Value(i)...)
		}, nil
	case *arrow.NullType:
		return func(dst []byte, _ arrow.Array, _ int, _ *encodeOpts) []byte { return dst }, nil
	case *arrow.BinaryType, *arrow.LargeBinaryType, *arrow.FixedSizeBinaryType:
		return func(dst []byte, a arrow.Array, i int, _ *encodeOpts) []byte {
			return appendHexBytea(dst, a.(interface{ Value(int) []byte }).Value(i))
		}, nil
	case *arrow.Date32Type:
		return func(dst []byte, a arrow.Array, i int, _ *encodeOpts) []byte {
			d := time.Unix(int64(a.(*array.Date32).Value(i))*86400, 0).UTC()
			return appendDate(dst, d)
		}, nil
	case *arrow.TimestampType:
		// Timestamps with a zone are labelled with the session's time
		// zone by the engine (server.announced): print them in it.
		unit, tz := t.Unit, t.TimeZone != ""
		loc := time.UTC
		if tz {
			if l, err := time.LoadLocation(t.TimeZone); err == nil {
				loc = l
			}
		}
		return func(dst []byte, a arrow.Array, i int, _ *encodeOpts) []byte {
			us := toMicros(int64(a.(*array.Timestamp).Value(i)), unit)
			return appendTimestamp(dst, time.UnixMicro(us).In(loc), tz)
		}, nil
	case *arrow.DurationType:
		unit := t.Unit
		return func(dst []byte, a arrow.Array, i int, _ *encodeOpts) []byte {
			return appendInterval(dst, 0, 0, toMicros(int64(a.(*array.Duration).Value(i)), unit))
		}, nil
	case *arrow.MonthDayNanoIntervalType:
		return func(dst []byte, a arrow.Array, i int, _ *encodeOpts) []byte {
			v := a.(*array.MonthDayNanoInterval).Value(i)
			return appendInterval(dst, v.Months, v.Days, v.Nanoseconds/1000)
		}, nil
	case *arrow.MonthIntervalType:
		return func(dst []byte, a arrow.Array, i int, _ *encodeOpts) []byte {
			return appendInterval(dst, int32(a.(*array.MonthInterval).Value(i)), 0, 0)
		}, nil
	case *arrow.DayTimeIntervalType:
		return func(dst []byte, a arrow.Array, i int, _ *encodeOpts) []byte {
			v := a.(*array.DayTimeInterval).Value(i)
			return appendInterval(dst, 0, v.Days, int64(v.Milliseconds)*1000)
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
		inner, err := textElem(t.Elem())
		if err != nil {
			return nil, err
		}
		return func(dst []byte, a arrow.Array, i int, o *encodeOpts) []byte {
			l := a.(*array.List)
			start, end := l.ValueOffsets(i)
			vals := l.ListValues()
			dst = append(dst, '{')
			for j := start; j < end; j++ {
				if j > start {
					dst = append(dst, ',')
				}
				if vals.IsNull(int(j)) {
					dst = append(dst, "NULL"...)
					continue
				}
				at := len(dst)
				dst = inner(dst, vals, int(j), o)
				dst = quoteArrayElem(dst, at)
			}
			return append(dst, '}')
		}, nil
	}
	return nil, fmt.Errorf("column type %s has no PostgreSQL text encoding", dt)
}

func intAt(a arrow.Array, i int) int64 {
	switch x := a.(type) {
	case *array.Int8:
		return int64(x.Value(i))
	case *array.Int16:
		return int64(x.Value(i))
	case *array.Int32:
		return int64(x.Value(i))
	case *array.Int64:
		return x.Value(i)
	}
	return 0
}

func uintAt(a arrow.Array, i int) uint64 {
	switch x := a.(type) {
	case *array.Uint8:
		return uint64(x.Value(i))
	case *array.Uint16:
		return uint64(x.Value(i))
	case *array.Uint32:
		return uint64(x.Value(i))
	case *array.Uint64:
		return x.Value(i)
	}
	return 0
}

// appendFloat prints a float as PostgreSQL does with extra_float_digits
// >= 1 (the default since version 12): the shortest exact form, in
// exponent notation when the exponent is below -4 or at least 15 (6 for
// float4).
func appendFloat(dst []byte, v float64, bits int) []byte {
	switch {
	case math.IsNaN(v):
		return append(dst, "NaN"...)
	case math.IsInf(v, 1):
		return append(dst, "Infinity"...)
	case math.IsInf(v, -1):
		return append(dst, "-Infinity"...)
	case v == 0:
		if math.Signbit(v) {
			return append(dst, "-0"...)
		}
		return append(dst, '0')
	}
	limit := 15
	if bits == 32 {
		limit = 6
	}
	exp := int(math.Floor(math.Log10(math.Abs(v))))
	if exp < -4 || exp >= limit {
		// Both Go and PostgreSQL write at least two exponent digits.
		return strconv.AppendFloat(dst, v, 'e', -1, bits)
	}
	return strconv.AppendFloat(dst, v, 'f', -1, bits)
}

func appendHexBytea(dst, b []byte) []byte {
	const hex = "0123456789abcdef"
	dst = append(dst, '\\', 'x')
	for _, c := range b {
		dst = append(dst, hex[c>>4], hex[c&15])
	}
	return dst
}

// appendDate prints an ISO date; years before 1 AD as PostgreSQL's "BC".
func appendDate(dst []byte, t time.Time) []byte {
	dst, bc := appendYMD(dst, t)
	if bc {
		dst = append(dst, " BC"...)
	}
	return dst
}

func appendYMD(dst []byte, t time.Time) ([]byte, bool) {
	y := t.Year()
	bc := y <= 0
	if bc {
		y = 1 - y
	}
	dst = appendPadded(dst, y, 4)
	dst = append(dst, '-')
	dst = appendPadded(dst, int(t.Month()), 2)
	dst = append(dst, '-')
	dst = appendPadded(dst, t.Day(), 2)
	return dst, bc
}

// appendTimestamp prints "YYYY-MM-DD HH:MM:SS[.ffffff][+HH[:MM]][ BC]".
func appendTimestamp(dst []byte, t time.Time, zone bool) []byte {
	dst, bc := appendYMD(dst, t)
	dst = append(dst, ' ')
	dst = appendPadded(dst, t.Hour(), 2)
	dst = append(dst, ':')
	dst = appendPadded(dst, t.Minute(), 2)
	dst = append(dst, ':')
	dst = appendPadded(dst, t.Second(), 2)
	dst = appendFraction(dst, int64(t.Nanosecond()/1000))
	if zone {
		_, off := t.Zone()
		if off < 0 {
			dst = append(dst, '-')
			off = -off
		} else {
			dst = append(dst, '+')
		}
		dst = appendPadded(dst, off/3600, 2)
		if m := off % 3600 / 60; m != 0 {
			dst = append(dst, ':')
			dst = appendPadded(dst, m, 2)
		}
	}
	if bc {
		dst = append(dst, " BC"...)
	}
	return dst
}

// appendFraction appends ".ffffff" without trailing zeros (nothing for 0).
func appendFraction(dst []byte, us int64) []byte {
	if us == 0 {
		return dst
	}
	at := len(dst)
	dst = append(dst, '.')
	dst = appendPadded(dst, int(us), 6)
	for dst[len(dst)-1] == '0' {
		dst = dst[:len(dst)-1]
	}
	if len(dst) == at+1 {
		dst = dst[:at]
	}
	return dst
}

func appendPadded(dst []byte, v, width int) []byte {
	var buf [20]byte
	s := strconv.AppendInt(buf[:0], int64(v), 10)
	for k := len(s); k < width; k++ {
		dst = append(dst, '0')
	}
	return append(dst, s...)
}

// appendInterval prints an interval in IntervalStyle postgres:
// "1 year 2 mons 3 days 04:05:06.5".
func appendInterval(dst []byte, months, days int32, us int64) []byte {
	start := len(dst)
	part := func(n int64, unit string) {
		if n == 0 {
			return
		}
		if len(dst) > start {
			dst = append(dst, ' ')
		}
		dst = strconv.AppendInt(dst, n, 10)
		dst = append(dst, ' ')
		dst = append(dst, unit...)
		if n != 1 && n != -1 {
			dst = append(dst, 's')
		}
	}
	part(int64(months/12), "year")
	part(int64(months%12), "mon")
	part(int64(days), "day")
	if us != 0 || len(dst) == start {
		if len(dst) > start {
			dst = append(dst, ' ')
		}
		if us < 0 {
			dst = append(dst, '-')
			us = -us
		}
		h := us / 3_600_000_000
		dst = appendPadded(dst, int(h), 2)
		dst = append(dst, ':')
		dst = appendPadded(dst, int(us/60_000_000%60), 2)
		dst = append(dst, ':')
		dst = appendPadded(dst, int(us/1_000_000%60), 2)
		dst = appendFraction(dst, us%1_000_000)
	}
	return dst
}

// quoteArrayElem quotes the element text written at dst[at:] when an
// array literal needs it: empty, NULL, or holding braces, commas, quotes,
// backslashes or spaces.
func quoteArrayElem(dst []byte, at int) []byte {
	elem := dst[at:]
	need := len(elem) == 0 || (len(elem) == 4 && (elem[0]|0x20) == 'n' && (elem[1]|0x20) == 'u' && (elem[2]|0x20) == 'l' && (elem[3]|0x20) == 'l')
	for _, c := range elem {
		switch c {
		case '{', '}', ',', '"', '\\', ' ', '\t', '\n', '\r':
			need = true
		}
	}
	if !need {
		return dst
	}
	quoted := make([]byte, 0, len(elem)+2)
	quoted = append(quoted, '"')
	for _, c := range elem {
		if c == '"' || c == '\\' {
			quoted = append(quoted, '\\')
		}
		quoted = append(quoted, c)
	}
	quoted = append(quoted, '"')
	return append(dst[:at], quoted...)
}

// jsonElem renders nested values (structs, maps, nested lists) as JSON.
func jsonElem(dst []byte, a arrow.Array, i int, _ *encodeOpts) []byte {
	b, err := json.Marshal(a.GetOneForMarshal(i))
	if err != nil {
		return append(dst, "null"...)
	}
	return append(dst, b...)
}
