package checkpoint

import "encoding/binary"

// Both providers keep keys in bytewise order (StateStore.Range), so keys
// built from these memcomparable encodings sort like the values they
// encode: an operator that starts its keys with the event time can evict
// everything below the watermark by ranging from the smallest key and
// stopping at the first key at or above it.

// AppendOrderedInt64 appends v in 8 bytes whose bytewise order is the
// numeric order of v (big-endian with the sign bit flipped).
func AppendOrderedInt64(dst []byte, v int64) []byte {
	return binary.BigEndian.AppendUint64(dst, uint64(v)^(1<<63))
}

// OrderedInt64 decodes the first 8 bytes written by AppendOrderedInt64; ok
// is false when b is shorter.
func OrderedInt64(b []byte) (v int64, ok bool) {
	if len(b) < 8 {
		return 0, false
	}
	return int64(binary.BigEndian.Uint64(b) ^ (1 << 63)), true
}

// AppendOrderedBytes appends b so that the encodings of two byte strings
// compare like the strings and no encoding is a prefix of another (0x00 is
// escaped as 0x00 0xFF, and 0x00 0x01 terminates), so that fields can
// follow it in a composite key.
func AppendOrderedBytes(dst, b []byte) []byte {
	for _, c := range b {
		if c == 0 {
			dst = append(dst, 0, 0xFF)
		} else {
			dst = append(dst, c)
		}
	}
	return append(dst, 0, 1)
}
