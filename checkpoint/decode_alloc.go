package checkpoint

import (
	"encoding/binary"
	"errors"
	"fmt"

	"github.com/apache/arrow/go/v17/arrow/memory"
)

// maxDecodeBuffer bounds one buffer decoded from a state file. The IPC
// reader sizes buffers from the file's own lengths; a file that passed its
// checksum but was written wrongly (or crafted) could otherwise ask for
// any amount of memory. No state file needs more: keys and values are
// binary columns with 32-bit offsets.
const maxDecodeBuffer = 1 << 31

// boundedAllocator panics (decodeState recovers it into ErrCorrupt) on a
// buffer larger than max bytes.
type boundedAllocator struct {
	memory.Allocator
	max int
}

func (a boundedAllocator) Allocate(size int) []byte {
	if size < 0 || size > a.max {
		panic(fmt.Sprintf("buffer of %d bytes", size))
	}
	return a.Allocator.Allocate(size)
}

func (a boundedAllocator) Reallocate(size int, b []byte) []byte {
	if size < 0 || size > a.max {
		panic(fmt.Sprintf("buffer of %d bytes", size))
	}
	return a.Allocator.Reallocate(size, b)
}

// CheckIPCFraming walks the messages of an Arrow IPC stream and checks
// that every metadata and body length fits in the bytes that remain. The
// arrow-go v17 reader allocates a message's metadata (up to 2 GiB, with
// make, not through the allocator) before finding that the bytes are not
// there, which can exhaust memory and kill the process; checkpoint files
// are checked with this before they are decoded. It parses only the
// Message table's bodyLength field of each flatbuffer.
func CheckIPCFraming(stream []byte) error {
	pos := 0
	for pos < len(stream) {
		if len(stream)-pos < 4 {
			return fmt.Errorf("IPC stream: %d stray bytes at offset %d", len(stream)-pos, pos)
		}
		word := binary.LittleEndian.Uint32(stream[pos:])
		pos += 4
		if word == 0xFFFFFFFF { // continuation marker, then the length
			if len(stream)-pos < 4 {
				return fmt.Errorf("IPC stream: message length missing at offset %d", pos)
			}
			word = binary.LittleEndian.Uint32(stream[pos:])
			pos += 4
		}
		if word == 0 {
			return nil // end-of-stream marker
		}
		metaLen := int(int32(word))
		if metaLen < 0 || metaLen > len(stream)-pos {
			return fmt.Errorf("IPC stream: message metadata of %d bytes at offset %d, %d bytes left", metaLen, pos, len(stream)-pos)
		}
		bodyLen, err := messageBodyLength(stream[pos : pos+metaLen])
		if err != nil {
			return fmt.Errorf("IPC stream: message at offset %d: %w", pos, err)
		}
		pos += metaLen
		if bodyLen < 0 || bodyLen > int64(len(stream)-pos) {
			return fmt.Errorf("IPC stream: message body of %d bytes at offset %d, %d bytes left", bodyLen, pos, len(stream)-pos)
		}
		pos += int(bodyLen)
	}
	return nil
}

// messageBodyLength reads field 3 (bodyLength, a long) of the Message
// flatbuffer table in meta, with every offset bounds-checked.
func messageBodyLength(meta []byte) (int64, error) {
	u32 := func(at int) (uint32, bool) {
		if at < 0 || at+4 > len(meta) {
			return 0, false
		}
		return binary.LittleEndian.Uint32(meta[at:]), true
	}
	root, ok := u32(0)
	if !ok {
		return 0, errors.New("metadata too short")
	}
	table := int(root)
	soff, ok := u32(table)
	if !ok {
		return 0, errors.New("table offset out of range")
	}
	vtable := table - int(int32(soff))
	if vtable < 0 || vtable+4 > len(meta) {
		return 0, errors.New("vtable out of range")
	}
	vtSize := int(binary.LittleEndian.Uint16(meta[vtable:]))
	const field = 3 // Message.bodyLength
	entry := 4 + 2*field
	if entry+2 > vtSize || vtable+entry+2 > len(meta) {
		return 0, nil // absent: the default, 0
	}
	off := int(binary.LittleEndian.Uint16(meta[vtable+entry:]))
	if off == 0 {
		return 0, nil
	}
	at := table + off
	if at < 0 || at+8 > len(meta) {
		return 0, errors.New("bodyLength out of range")
	}
	return int64(binary.LittleEndian.Uint64(meta[at:])), nil
}
