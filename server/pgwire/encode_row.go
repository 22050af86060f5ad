package pgwire

import "encoding/binary"

// appendDataRow appends row i of the loaded batch to dst as a complete
// DataRow message, written straight from the columns' encoded bytes:
// no per-row slice of values and no second pass to measure them.
func (e *rowEncoder) appendDataRow(dst []byte, i int) []byte {
	start := len(dst)
	dst = append(dst, 'D', 0, 0, 0, 0, 0, 0)
	binary.BigEndian.PutUint16(dst[start+5:], uint16(len(e.cols)))
	for _, c := range e.cols {
		v := c.value(i)
		if v == nil {
			dst = append(dst, 0xff, 0xff, 0xff, 0xff)
			continue
		}
		dst = binary.BigEndian.AppendUint32(dst, uint32(len(v)))
		dst = append(dst, v...)
	}
	binary.BigEndian.PutUint32(dst[start+1:], uint32(len(dst)-start-1))
	return dst
}
