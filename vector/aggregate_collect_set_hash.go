package vector

import (
	"fmt"
	"math"

	"github.com/apache/arrow/go/v17/arrow"
	"github.com/apache/arrow/go/v17/arrow/array"
)

// Scala's ## of the values Spark keeps in a collect_set buffer (boxed
// Java numbers, UTF8String, UnsafeArrayData for binaries), improved as
// mutable.HashSet improves it, and the equality word of fixed-width
// values (Scala's == on boxed numbers: -0.0 equals 0.0, NaN equals
// nothing).

// hashRows fills c.h (and, for fixed widths, c.w and c.nan) for rows of src.
func (c *collectSetAcc) hashRows(src arrow.Array, rows []int32) error {
	n := len(rows)
	c.h = growTo(c.h, n)
	c.w = growTo(c.w, n)
	c.nan = growTo(c.nan, n)
	clear(c.nan)
	switch a := src.(type) {
	case *array.Boolean:
		for j, r := range rows {
			v := a.Value(int(r))
			c.h[j], c.w[j] = 1237, 0
			if v {
				c.h[j], c.w[j] = 1231, 1
			}
		}
	case *array.Int8:
		intHashes(c, a.Int8Values(), rows)
	case *array.Int16:
		intHashes(c, a.Int16Values(), rows)
	case *array.Int32:
		intHashes(c, a.Int32Values(), rows)
	case *array.Date32:
		intHashes(c, castSlice[int32](a.Data().Buffers()[1].Bytes())[a.Data().Offset():], rows)
	case *array.Int64:
		longHashes(c, a.Int64Values(), rows)
	case *array.Timestamp:
		longHashes(c, castSlice[int64](a.Data().Buffers()[1].Bytes())[a.Data().Offset():], rows)
	case *array.Float32:
		v := a.Float32Values()
		for j, r := range rows {
			x := v[r]
			c.h[j] = improveHash(scalaFloatHash(x))
			c.nan[j] = x != x
			if x == 0 {
				x = 0 // -0.0 == 0.0
			}
			c.w[j] = uint64(math.Float32bits(x))
		}
	case *array.Float64:
		v := a.Float64Values()
		for j, r := range rows {
			x := v[r]
			c.h[j] = improveHash(scalaDoubleHash(x))
			c.nan[j] = x != x
			if x == 0 {
				x = 0
			}
			c.w[j] = math.Float64bits(x)
		}
	case *array.String:
		offs, b := a.ValueOffsets(), a.ValueBytes()
		for j, r := range rows {
			c.h[j] = improveHash(murmurBytes(b[offs[r]:offs[r+1]], 42))
		}
	case *array.Binary:
		offs, b := a.ValueOffsets(), a.ValueBytes()
		for j, r := range rows {
			c.h[j] = improveHash(unsafeByteArrayHash(b[offs[r]:offs[r+1]]))
		}
	default:
		return fmt.Errorf("vector: collect_set of %s: %w", TypeName(src.DataType()), ErrType)
	}
	return nil
}

func growTo[T any](s []T, n int) []T {
	if cap(s) < n {
		return make([]T, n)
	}
	return s[:n]
}

func intHashes[T int8 | int16 | int32](c *collectSetAcc, v []T, rows []int32) {
	for j, r := range rows {
		x := int32(v[r])
		c.h[j], c.w[j] = improveHash(x), uint64(uint32(x))
	}
}

func longHashes(c *collectSetAcc, v []int64, rows []int32) {
	for j, r := range rows {
		x := v[r]
		c.h[j], c.w[j] = improveHash(scalaLongHash(x)), uint64(x)
	}
}

// improveHash is mutable.HashSet's improveHash.
func improveHash(h int32) int32 { return h ^ int32(uint32(h)>>16) }

// javaLongHash is java.lang.Long.hashCode.
func javaLongHash(v int64) int32 { return int32(v ^ int64(uint64(v)>>32)) }

// scalaLongHash is Scala's ## of a Long: an Int's hash when it fits one.
func scalaLongHash(v int64) int32 {
	if int64(int32(v)) == v {
		return int32(v)
	}
	return javaLongHash(v)
}

// javaFloatHash is java.lang.Float.hashCode (floatToIntBits: one NaN).
func javaFloatHash(f float32) int32 {
	if f != f {
		return 0x7fc00000
	}
	return int32(math.Float32bits(f))
}

func javaDoubleHash(d float64) int32 {
	b := math.Float64bits(d)
	if d != d {
		b = 0x7ff8000000000000
	}
	return int32(b ^ b>>32)
}

// scalaDoubleHash is Scala's ## of a Double (Statics.doubleHash).
func scalaDoubleHash(d float64) int32 {
	if iv := javaDoubleToInt(d); float64(iv) == d {
		return iv
	}
	if lv := javaDoubleToLong(d); float64(lv) == d {
		return javaLongHash(lv)
	}
	if fv := float32(d); float64(fv) == d {
		return javaFloatHash(fv)
	}
	return javaDoubleHash(d)
}

// scalaFloatHash is Scala's ## of a Float (Statics.floatHash).
func scalaFloatHash(f float32) int32 {
	d := float64(f)
	if iv := javaDoubleToInt(d); float32(iv) == f {
		return iv
	}
	if lv := javaDoubleToLong(d); float32(lv) == f {
		return javaLongHash(lv)
	}
	return javaFloatHash(f)
}

// unsafeByteArrayHash is the hashCode of the UnsafeArrayData Spark makes
// of a binary value (fromPrimitiveArray): the element count as a long,
// a zero null bitmap of one long per 64 elements, the bytes, zero padding
// to a multiple of 8, hashed as hashUnsafeBytes with seed 42.
func unsafeByteArrayHash(v []byte) int32 {
	n := len(v)
	header := 8 + (n+63)/64*8
	size := (header + n + 7) / 8 * 8
	buf := make([]byte, size)
	buf[0], buf[1], buf[2], buf[3] = byte(n), byte(n>>8), byte(n>>16), byte(n>>24)
	copy(buf[header:], v)
	return murmurBytes(buf, 42)
}
