package vector

import (
	"bytes"
	"math"
	"strconv"
	"unsafe"

	"github.com/apache/arrow/go/v17/arrow"
	"github.com/apache/arrow/go/v17/arrow/bitutil"
	"github.com/apache/arrow/go/v17/arrow/memory"
)

// Casts from and to strings: Spark's string parsers (strict under ANSI,
// lenient without) and its string formatting of every type.

// bytesString views b as a string without copying; the string must not
// outlive the call it is passed to.
func bytesString(b []byte) string {
	if len(b) == 0 {
		return ""
	}
	return unsafe.String(unsafe.SliceData(b), len(b))
}

// isSparkSpace is UTF8String.isWhitespaceOrISOControl on a byte: ASCII
// whitespace and control characters (bytes of multi-byte characters are
// negative in Java and never match).
func isSparkSpace(c byte) bool { return c <= ' ' || c == 0x7f }

// trimSpark trims what Spark's trimAll trims.
func trimSpark(b []byte) []byte {
	i, j := 0, len(b)
	for i < j && isSparkSpace(b[i]) {
		i++
	}
	for j > i && isSparkSpace(b[j-1]) {
		j--
	}
	return b[i:j]
}

// parseSparkInteger parses like UTF8String.toLong/toInt: an optional sign,
// decimal digits, and when allowFraction (without ANSI) an optional '.'
// followed by digits that are dropped. min is the smallest value of the
// target type (math.MinInt8 ... math.MinInt64); out-of-range values fail. It
// accumulates negatively so that min itself parses.
func parseSparkInteger(b []byte, min int64, allowFraction bool) (int64, bool) {
	b = trimSpark(b)
	if len(b) == 0 {
		return 0, false
	}
	i := 0
	neg := b[0] == '-'
	if neg || b[0] == '+' {
		if len(b) == 1 {
			return 0, false
		}
		i++
	}
	stop := min / 10
	var r int64
	for ; i < len(b); i++ {
		ch := b[i]
		if ch == '.' && allowFraction {
			i++
			break
		}
		if ch < '0' || ch > '9' {
			return 0, false
		}
		d := int64(ch - '0')
		if r < stop {
			return 0, false
		}
		t := r * 10
		if t < min+d {
			return 0, false
		}
		r = t - d
	}
	for ; i < len(b); i++ {
		if b[i] < '0' || b[i] > '9' {
			return 0, false
		}
	}
	if !neg {
		if r == min {
			return 0, false
		}
		r = -r
	}
	return r, true
}

// parseJavaDouble parses like Java's Double.parseDouble, then Spark's
// special literals (inf, +inf, infinity, -inf, -infinity, nan in any case).
func parseJavaDouble(b []byte) (float64, bool) { return parseJavaFloating(b, 64) }

// parseJavaFloat is Float.parseFloat: the decimal text rounded once, to the
// nearest float32 (parsing a double and narrowing it could round twice).
func parseJavaFloat(b []byte) (float32, bool) {
	f, ok := parseJavaFloating(b, 32)
	return float32(f), ok
}

func parseJavaFloating(b []byte, bitSize int) (float64, bool) {
	i, j := 0, len(b)
	for i < j && b[i] <= ' ' {
		i++
	}
	for j > i && b[j-1] <= ' ' {
		j--
	}
	b = b[i:j]
	if len(b) == 0 || bytes.IndexByte(b, '_') >= 0 {
		return 0, false
	}
	// Java accepts a type suffix after a number: 1.5d, 2f.
	if k := len(b) - 1; k > 0 {
		switch b[k] {
		case 'd', 'D', 'f', 'F':
			if p := b[k-1]; p >= '0' && p <= '9' || p == '.' {
				b = b[:k]
			}
		}
	}
	f, err := strconv.ParseFloat(bytesString(b), bitSize)
	if err != nil {
		if ne, ok := err.(*strconv.NumError); !ok || ne.Err != strconv.ErrRange {
			return 0, false
		}
	}
	return f, true
}

// parseSparkBool is StringUtils.isTrueString / isFalseString after trimAll.
func parseSparkBool(b []byte) (value, ok bool) {
	b = trimSpark(b)
	if len(b) > 5 {
		return false, false
	}
	var low [5]byte
	for i, c := range b {
		if c >= 'A' && c <= 'Z' {
			c += 'a' - 'A'
		}
		low[i] = c
	}
	switch string(low[:len(b)]) {
	case "t", "true", "y", "yes", "1":
		return true, true
	case "f", "false", "n", "no", "0":
		return false, true
	}
	return false, false
}

// fromStringKernel picks the kernel parsing strings into to.
func fromStringKernel(to arrow.DataType) castKernel {
	switch to.ID() {
	case arrow.INT8:
		return stringToInteger[int8](math.MinInt8)
	case arrow.INT16:
		return stringToInteger[int16](math.MinInt16)
	case arrow.INT32:
		return stringToInteger[int32](math.MinInt32)
	case arrow.INT64:
		return stringToInteger[int64](math.MinInt64)
	case arrow.FLOAT32:
		return func(c *castEval, arr arrow.Array) (arrow.Array, error) {
			return parseStrings(c, arr, parseJavaFloat)
		}
	case arrow.FLOAT64:
		return func(c *castEval, arr arrow.Array) (arrow.Array, error) {
			return parseStrings(c, arr, parseJavaDouble)
		}
	case arrow.BOOL:
		return stringToBool
	case arrow.TIMESTAMP:
		return func(c *castEval, arr arrow.Array) (arrow.Array, error) {
			loc := c.loc
			var timeOnly []byte
			out, err := parseStrings(c, arr, func(b []byte) (int64, bool) {
				v, ok := parseTimestampIn(b, loc)
				if !ok && timeOnly == nil && isTimeOfDayOnly(b) {
					timeOnly = bytes.Clone(b)
				}
				return v, ok
			})
			if err == nil && timeOnly != nil {
				out.Release()
				return nil, errTimeOfDayOnly(timeOnly)
			}
			return out, err
		}
	case arrow.DATE32:
		return func(c *castEval, arr arrow.Array) (arrow.Array, error) {
			return parseStrings(c, arr, parseDate)
		}
	case arrow.BINARY:
		return shareBuffers
	case arrow.DECIMAL128:
		return stringToDecimal
	}
	return nil
}

// stringToInteger parses strings into an integer type whose smallest value
// is min: Spark's lenient parser (a fraction is dropped) without ANSI, its
// exact one (digits only) under ANSI.
func stringToInteger[D int8 | int16 | int32 | int64](min int64) castKernel {
	return func(c *castEval, arr arrow.Array) (arrow.Array, error) {
		allowFraction := c.mode == ModeLegacy
		return parseStrings(c, arr, func(b []byte) (D, bool) {
			x, ok := parseSparkInteger(b, min, allowFraction)
			return D(x), ok
		})
	}
}

// parseStrings is the loop every string → fixed-width cast shares: one pass
// over the offsets, no allocation per row. A string that does not parse is
// CAST_INVALID_INPUT under ANSI and NULL otherwise.
func parseStrings[D any](c *castEval, arr arrow.Array, parse func([]byte) (D, bool)) (arrow.Array, error) {
	n := arr.Len()
	offs, data := fnBinaryView(arr)
	buf, dst := fnFixedBuf[D](c.mem, n)
	v := newValidityOut(c.mem, n, arr)
	inputNulls := v.hasNulls()
	var zero D
	for i := 0; i < n; i++ {
		if inputNulls && !v.valid(i) {
			dst[i] = zero
			continue
		}
		x, ok := parse(data[offs[i]:offs[i+1]])
		if !ok {
			if c.mode == ModeANSI {
				buf.Release()
				v.release()
				return nil, c.invalidError(arr, i)
			}
			v.setNull(i)
		}
		dst[i] = x
	}
	bm, nulls := v.finish()
	return fnNewArray(c.to, n, []*memory.Buffer{bm, buf}, nil, nulls), nil
}

func stringToBool(c *castEval, arr arrow.Array) (arrow.Array, error) {
	n := arr.Len()
	offs, data := fnBinaryView(arr)
	buf := memory.NewResizableBuffer(c.mem)
	buf.Resize(int(bitutil.BytesForBits(int64(n))))
	out := buf.Bytes()
	clear(out)
	v := newValidityOut(c.mem, n, arr)
	inputNulls := v.hasNulls()
	for i := 0; i < n; i++ {
		if inputNulls && !v.valid(i) {
			continue
		}
		x, ok := parseSparkBool(data[offs[i]:offs[i+1]])
		switch {
		case !ok && c.mode == ModeANSI:
			buf.Release()
			v.release()
			return nil, c.invalidError(arr, i)
		case !ok:
			v.setNull(i)
		case x:
			bitutil.SetBit(out, i)
		}
	}
	bm, nulls := v.finish()
	return fnNewArray(c.to, n, []*memory.Buffer{bm, buf}, nil, nulls), nil
}

// toStringKernel picks the formatter of from.
func toStringKernel(from arrow.DataType) castKernel {
	switch from.ID() {
	case arrow.BOOL:
		return boolToString
	case arrow.INT8:
		return intToString[int8]
	case arrow.INT16:
		return intToString[int16]
	case arrow.INT32:
		return intToString[int32]
	case arrow.INT64:
		return intToString[int64]
	case arrow.FLOAT32:
		return floatToString[float32]
	case arrow.FLOAT64:
		return floatToString[float64]
	case arrow.DECIMAL128:
		return decimalToString
	case arrow.TIMESTAMP:
		if !arrow.TypeEqual(from, Timestamp) {
			return nil
		}
		return timestampToString
	case arrow.DATE32:
		return dateToString
	case arrow.BINARY:
		return shareBuffers
	}
	return nil
}

// stringResult finishes a string column that keeps the input's nulls.
func stringResult(c *castEval, arr arrow.Array, s *strOut) (arrow.Array, error) {
	return s.build(c.to, newValidityOut(c.mem, arr.Len(), arr))
}

func boolToString(c *castEval, arr arrow.Array) (arrow.Array, error) {
	n := arr.Len()
	bits, off := bufferBytes(arr.Data(), 1), arr.Data().Offset()
	s := newStrOut(c.mem, n, n*5)
	for i := 0; i < n; i++ {
		if arr.IsValid(i) {
			if bitutil.BitIsSet(bits, off+i) {
				s.appendString("true")
			} else {
				s.appendString("false")
			}
		}
		s.next()
	}
	return stringResult(c, arr, s)
}

func intToString[T int8 | int16 | int32 | int64](c *castEval, arr arrow.Array) (arrow.Array, error) {
	src := fnRawValues[T](arr)
	s := newStrOut(c.mem, len(src), len(src)*8)
	mayNull := arr.NullN() != 0
	for i, v := range src {
		if !mayNull || arr.IsValid(i) {
			s.reserve(20)
			s.data = strconv.AppendInt(s.data, int64(v), 10)
		}
		s.next()
	}
	return stringResult(c, arr, s)
}

func floatToString[T float32 | float64](c *castEval, arr arrow.Array) (arrow.Array, error) {
	src := fnRawValues[T](arr)
	bitSize := int(sizeOf(T(0))) * 8
	s := newStrOut(c.mem, len(src), len(src)*12)
	mayNull := arr.NullN() != 0
	for i, v := range src {
		if !mayNull || arr.IsValid(i) {
			s.reserve(32)
			s.data = appendJavaDouble(s.data, float64(v), bitSize)
		}
		s.next()
	}
	return stringResult(c, arr, s)
}

// appendJavaDouble formats f as Java's Double.toString (Float.toString for
// bitSize 32): the shortest digits that round-trip, in plain notation with
// at least one fractional digit when 1e-3 <= |f| < 1e7, otherwise as
// d.dddE±n.
func appendJavaDouble(dst []byte, f float64, bitSize int) []byte {
	switch {
	case math.IsNaN(f):
		return append(dst, "NaN"...)
	case math.IsInf(f, 1):
		return append(dst, "Infinity"...)
	case math.IsInf(f, -1):
		return append(dst, "-Infinity"...)
	case f == 0:
		if math.Signbit(f) {
			return append(dst, "-0.0"...)
		}
		return append(dst, "0.0"...)
	}
	abs := math.Abs(f)
	if abs >= 1e-3 && abs < 1e7 {
		start := len(dst)
		dst = strconv.AppendFloat(dst, f, 'f', -1, bitSize)
		if bytes.IndexByte(dst[start:], '.') < 0 {
			dst = append(dst, ".0"...)
		}
		return dst
	}
	var tmp [32]byte
	e := strconv.AppendFloat(tmp[:0], f, 'e', -1, bitSize) // -1.2345e+20
	k := bytes.IndexByte(e, 'e')
	mant, exp := e[:k], e[k+1:]
	dst = append(dst, mant...)
	if bytes.IndexByte(mant, '.') < 0 {
		dst = append(dst, ".0"...)
	}
	dst = append(dst, 'E')
	if exp[0] == '-' {
		dst = append(dst, '-')
	}
	exp = exp[1:]
	for len(exp) > 1 && exp[0] == '0' {
		exp = exp[1:]
	}
	return append(dst, exp...)
}

// timestampToString formats instants in the session time zone.
func timestampToString(c *castEval, arr arrow.Array) (arrow.Array, error) {
	src := fnRawValues[int64](arr)
	s := newStrOut(c.mem, len(src), len(src)*19)
	mayNull := arr.NullN() != 0
	var z zoneCache
	for i, v := range src {
		if !mayNull || arr.IsValid(i) {
			s.reserve(40)
			s.data = appendTimestamp(s.data, toWall(&z, c.loc, v))
		}
		s.next()
	}
	return stringResult(c, arr, s)
}

func dateToString(c *castEval, arr arrow.Array) (arrow.Array, error) {
	src := fnRawValues[int32](arr)
	s := newStrOut(c.mem, len(src), len(src)*10)
	mayNull := arr.NullN() != 0
	for i, v := range src {
		if !mayNull || arr.IsValid(i) {
			s.reserve(20)
			s.data = appendDate(s.data, int64(v))
		}
		s.next()
	}
	return stringResult(c, arr, s)
}

// appendPadded appends v (>= 0) with at least width digits.
func appendPadded(dst []byte, v int64, width int) []byte {
	var tmp [20]byte
	d := strconv.AppendInt(tmp[:0], v, 10)
	for k := len(d); k < width; k++ {
		dst = append(dst, '0')
	}
	return append(dst, d...)
}

// appendDate formats days since the epoch as yyyy-MM-dd (years beyond four
// digits get a sign, as Java's formatter prints them).
func appendDate(dst []byte, days int64) []byte {
	y, m, d := civilFromDays(days)
	switch {
	case y < 0:
		dst = append(dst, '-')
		dst = appendPadded(dst, -y, 4)
	case y > 9999:
		dst = append(dst, '+')
		dst = appendPadded(dst, y, 4)
	default:
		dst = appendPadded(dst, y, 4)
	}
	dst = append(dst, '-')
	dst = appendPadded(dst, int64(m), 2)
	dst = append(dst, '-')
	return appendPadded(dst, int64(d), 2)
}

// appendTimestamp formats microseconds since the epoch (UTC) as
// yyyy-MM-dd HH:mm:ss with the fraction of a second, if any, without
// trailing zeros.
func appendTimestamp(dst []byte, micros int64) []byte {
	days := fnFloorDiv(micros, fnMicrosPerDay)
	rest := micros - days*fnMicrosPerDay
	dst = appendDate(dst, days)
	secs := rest / fnMicrosPerSecond
	frac := rest % fnMicrosPerSecond
	dst = append(dst, ' ')
	dst = appendPadded(dst, secs/3600, 2)
	dst = append(dst, ':')
	dst = appendPadded(dst, secs/60%60, 2)
	dst = append(dst, ':')
	dst = appendPadded(dst, secs%60, 2)
	if frac != 0 {
		digits := 6
		for frac%10 == 0 {
			frac /= 10
			digits--
		}
		dst = append(dst, '.')
		dst = appendPadded(dst, frac, digits)
	}
	return dst
}
