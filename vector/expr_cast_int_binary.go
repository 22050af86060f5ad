package vector

import (
	"encoding/binary"

	"github.com/apache/arrow/go/v17/arrow"
	"github.com/apache/arrow/go/v17/arrow/memory"
)

// CAST(integer AS BINARY) is, as in Spark (without ANSI: the analyzer
// refuses it under ANSI, as Spark does), the value's two's-complement
// bytes, big-endian, as wide as its type: 1 byte for TINYINT, 2 for
// SMALLINT, 4 for INT, 8 for BIGINT (CAST(-123 AS BINARY) is FFFFFF85).

// intToBinaryKernel casts an integer column of type f to BINARY.
func intToBinaryKernel(f arrow.Type) castKernel {
	switch f {
	case arrow.INT8:
		return intBytesKernel(1, func(dst []byte, v int8) { dst[0] = byte(v) })
	case arrow.INT16:
		return intBytesKernel(2, func(dst []byte, v int16) { binary.BigEndian.PutUint16(dst, uint16(v)) })
	case arrow.INT32:
		return intBytesKernel(4, func(dst []byte, v int32) { binary.BigEndian.PutUint32(dst, uint32(v)) })
	case arrow.INT64:
		return intBytesKernel(8, func(dst []byte, v int64) { binary.BigEndian.PutUint64(dst, uint64(v)) })
	}
	return nil
}

// intBytesKernel writes each row's w bytes (null rows are empty).
func intBytesKernel[T int8 | int16 | int32 | int64](w int, put func([]byte, T)) castKernel {
	return func(c *castEval, arr arrow.Array) (arrow.Array, error) {
		n := arr.Len()
		src := fnRawValues[T](arr)
		valid := n - arr.NullN()
		offBuf, offs := fnFixedBuf[int32](c.mem, n+1)
		dataBuf := memory.NewResizableBuffer(c.mem)
		dataBuf.Resize(valid * w)
		data := dataBuf.Bytes()
		pos := 0
		noNulls := arr.NullN() == 0
		for i := 0; i < n; i++ {
			offs[i] = int32(pos)
			if !noNulls && arr.IsNull(i) {
				continue
			}
			put(data[pos:pos+w], src[i])
			pos += w
		}
		offs[n] = int32(pos)
		bm, nulls := newValidityOut(c.mem, n, arr).finish()
		return fnNewArray(arrow.BinaryTypes.Binary, n, []*memory.Buffer{bm, offBuf, dataBuf}, nil, nulls), nil
	}
}
