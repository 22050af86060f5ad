package stateful

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"

	"github.com/apache/arrow/go/v17/arrow"
	"github.com/apache/arrow/go/v17/arrow/ipc"
	"github.com/apache/arrow/go/v17/arrow/memory"
)

// A join batch entry is written without its schema: "ASJ1" followed by
// the Arrow IPC stream of the rows from its first message after the
// schema (dictionaries, the record batch, the end marker). Every batch of
// a side has the side's schema, which the reader knows (the state schema
// file checks it at start), so the schema message (about 100 bytes a
// column) was written again into every entry: for a side that stores a
// batch per partition and epoch, the same bytes 200 times an epoch, and
// then every epoch into the state log. The reader puts the side's schema
// message back in front of the stream.
//
// An entry without the magic is a whole IPC stream (the format before);
// it is still read. A stream written by this build starts with the IPC
// continuation marker 0xFFFFFFFF, so the two cannot be confused.
var joinBatchMagic = [4]byte{'A', 'S', 'J', '1'}

// writeJoinRecord writes rec to w as a join batch entry: the magic, then
// rec's Arrow IPC stream without its schema message.
func writeJoinRecord(mem memory.Allocator, w io.Writer, rec arrow.Record) error {
	if _, err := w.Write(joinBatchMagic[:]); err != nil {
		return err
	}
	skip := &schemaSkipper{w: w}
	iw := ipc.NewWriter(skip, ipc.WithSchema(rec.Schema()), ipc.WithAllocator(mem))
	if err := iw.Write(rec); err != nil {
		iw.Close()
		return err
	}
	if err := iw.Close(); err != nil {
		return err
	}
	if !skip.done {
		return errors.New("arrow IPC: the stream ended inside its schema message")
	}
	return nil
}

// schemaSkipper passes an IPC stream through to w without its first
// message (the schema, which has no body): the 8 bytes of continuation
// marker and metadata length, then that many bytes of metadata.
type schemaSkipper struct {
	w    io.Writer
	head [8]byte
	have int // bytes of head seen
	left int // metadata bytes still to skip once head is complete
	done bool
}

func (s *schemaSkipper) Write(p []byte) (int, error) {
	n := len(p)
	for len(p) > 0 && !s.done {
		if s.have < len(s.head) {
			c := copy(s.head[s.have:], p)
			s.have += c
			p = p[c:]
			if s.have < len(s.head) {
				continue
			}
			if binary.LittleEndian.Uint32(s.head[:4]) != 0xFFFFFFFF {
				return 0, errors.New("arrow IPC: the stream does not start with a continuation marker")
			}
			s.left = int(int32(binary.LittleEndian.Uint32(s.head[4:])))
			if s.left <= 0 {
				return 0, fmt.Errorf("arrow IPC: schema message of %d bytes", s.left)
			}
			continue
		}
		c := min(s.left, len(p))
		s.left -= c
		p = p[c:]
		s.done = s.left == 0
	}
	if len(p) > 0 {
		if _, err := s.w.Write(p); err != nil {
			return 0, err
		}
	}
	return n, nil
}

// joinSchemaMessage returns the IPC schema message of schema (the bytes
// writeJoinRecord leaves out), without the end-of-stream marker.
func joinSchemaMessage(mem memory.Allocator, schema *arrow.Schema) ([]byte, error) {
	var buf bytes.Buffer
	iw := ipc.NewWriter(&buf, ipc.WithSchema(schema), ipc.WithAllocator(mem))
	if err := iw.Close(); err != nil {
		return nil, err
	}
	const eos = 8 // continuation marker and a zero length
	if buf.Len() < eos {
		return nil, errors.New("arrow IPC: no schema message written")
	}
	return buf.Bytes()[:buf.Len()-eos], nil
}

// joinBatchStream returns the IPC stream of a join batch entry (raw) and
// the part of it read from the entry, whose framing the caller checks:
// for an entry without schema, the schema message of schema followed by
// the entry's messages; for an entry of the older format, raw itself.
func joinBatchStream(mem memory.Allocator, raw []byte, schema *arrow.Schema) (stream io.Reader, stored []byte, err error) {
	if !bytes.HasPrefix(raw, joinBatchMagic[:]) {
		return bytes.NewReader(raw), raw, nil
	}
	head, err := joinSchemaMessage(mem, schema)
	if err != nil {
		return nil, nil, err
	}
	body := raw[len(joinBatchMagic):]
	return io.MultiReader(bytes.NewReader(head), bytes.NewReader(body)), body, nil
}
