package server

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"

	"github.com/apache/arrow/go/v17/arrow"
	"github.com/apache/arrow/go/v17/arrow/ipc"
)

// ipcStreamCheck checks the messages of one DoPut stream in order. The
// reader takes the i-th field node and buffer of a record batch for the
// i-th array of the schema without checking that the batch lists that
// many (it then reads whatever bytes follow the list as buffer offsets
// and lengths), so each batch must describe at least the nodes and
// buffers its schema's layout has.
type ipcStreamCheck struct {
	schema         *arrow.Schema
	nodes, buffers int64 // what a record batch of the schema describes
}

func (sc *ipcStreamCheck) check(header, body []byte) error {
	info, err := checkIPCMessage(header, body)
	if err != nil || len(header) == 0 {
		return err
	}
	switch info.kind {
	case ipcSchema:
		if sc.schema != nil {
			return errors.New("a second schema message")
		}
		schema, err := decodeIPCSchema(header)
		if err != nil {
			return err
		}
		for _, f := range schema.Fields() {
			n, b, err := ipcLayout(f.Type)
			if err != nil {
				return fmt.Errorf("column %q: %w", f.Name, err)
			}
			sc.nodes += n
			sc.buffers += b
		}
		sc.schema = schema
	case ipcDictionaryBatch:
		return errors.New("dictionary batches are not accepted: send dictionary-encoded columns decoded")
	case ipcRecordBatch:
		if sc.schema == nil {
			return errors.New("a record batch before the schema")
		}
		if info.nodes < sc.nodes || info.buffers < sc.buffers {
			return fmt.Errorf("the record batch describes %d field nodes and %d buffers, its schema's columns have %d and %d",
				info.nodes, info.buffers, sc.nodes, sc.buffers)
		}
		return checkBatchLayout(sc.schema, header, body, info)
	}
	return nil
}

// decodeIPCSchema decodes a checked schema message with arrow-go, framed
// as an IPC stream of that one message.
func decodeIPCSchema(header []byte) (*arrow.Schema, error) {
	padded := (len(header) + 7) &^ 7
	framed := make([]byte, 8+padded+8)
	binary.LittleEndian.PutUint32(framed, 0xFFFFFFFF)
	binary.LittleEndian.PutUint32(framed[4:], uint32(padded))
	copy(framed[8:], header)
	binary.LittleEndian.PutUint32(framed[8+padded:], 0xFFFFFFFF) // end of stream
	rdr, err := ipc.NewReader(bytes.NewReader(framed))
	if err != nil {
		return nil, fmt.Errorf("schema message: %w", err)
	}
	defer rdr.Release()
	return rdr.Schema(), nil
}

// ipcLayout is the number of field nodes and buffers a record batch holds
// for a column of type dt (the IPC format's buffer layout). Layouts with
// variadic buffers or several variants (views, unions, run-end encoding)
// are refused: no table or parameter of the dialect has them.
func ipcLayout(dt arrow.DataType) (nodes, buffers int64, err error) {
	switch dt := dt.(type) {
	case *arrow.NullType:
		return 1, 0, nil
	case *arrow.BinaryType, *arrow.StringType, *arrow.LargeBinaryType, *arrow.LargeStringType:
		return 1, 3, nil
	case *arrow.DictionaryType:
		return 1, 2, nil
	case *arrow.ListType, *arrow.LargeListType, *arrow.MapType, *arrow.FixedSizeListType:
		var elem arrow.DataType
		own := int64(2)
		switch x := dt.(type) {
		case *arrow.ListType:
			elem = x.Elem()
		case *arrow.LargeListType:
			elem = x.Elem()
		case *arrow.MapType:
			elem = x.Elem()
		case *arrow.FixedSizeListType:
			elem, own = x.Elem(), 1
		}
		n, b, err := ipcLayout(elem)
		return 1 + n, own + b, err
	case *arrow.StructType:
		nodes, buffers = 1, 1
		for _, f := range dt.Fields() {
			n, b, err := ipcLayout(f.Type)
			if err != nil {
				return 0, 0, err
			}
			nodes, buffers = nodes+n, buffers+b
		}
		return nodes, buffers, nil
	case arrow.FixedWidthDataType:
		return 1, 2, nil
	}
	return 0, 0, fmt.Errorf("%s columns are not accepted from clients", dt)
}

// checkBatchLayout checks, before arrow-go builds arrays from a record
// batch, that each buffer is as long as its array's
// length needs and that binary offsets end inside their data. arrow-go's
// array constructors panic on such lies; its IPC reader recovers the
// panic but leaks the buffers it had read, which a memory accounting
// allocator then counts forever. Deeper properties (offsets increasing,
// UTF-8, null counts) are validateRecord's.
func checkBatchLayout(schema *arrow.Schema, header, body []byte, info ipcInfo) error {
	w := layoutWalk{hdr: header, body: body, nodesAt: info.nodesAt, buffersAt: info.buffersAt}
	if info.length < 0 {
		return fmt.Errorf("record batch of length %d", info.length)
	}
	for _, f := range schema.Fields() {
		if n := w.peekLength(); n != info.length {
			return fmt.Errorf("column %q has %d rows, the record batch %d", f.Name, n, info.length)
		}
		if err := w.array(f.Type); err != nil {
			return fmt.Errorf("column %q: %w", f.Name, err)
		}
	}
	return nil
}

// layoutWalk consumes a record batch's field nodes and buffers in the
// order arrow-go's reader does (the counts were checked already).
type layoutWalk struct {
	hdr, body          []byte
	nodesAt, buffersAt int64
	ni, bi             int64
}

func (w *layoutWalk) peekLength() int64 {
	return int64(binary.LittleEndian.Uint64(w.hdr[w.nodesAt+16*w.ni:]))
}

func (w *layoutWalk) node() (length, nulls int64) {
	p := w.nodesAt + 16*w.ni
	w.ni++
	return int64(binary.LittleEndian.Uint64(w.hdr[p:])), int64(binary.LittleEndian.Uint64(w.hdr[p+8:]))
}

// buffer returns the next buffer's bytes (checkIPCMessage checked that it
// lies in the body).
func (w *layoutWalk) buffer() []byte {
	p := w.buffersAt + 16*w.bi
	w.bi++
	off := int64(binary.LittleEndian.Uint64(w.hdr[p:]))
	n := int64(binary.LittleEndian.Uint64(w.hdr[p+8:]))
	return w.body[off : off+n]
}

// need checks that buf holds length values of bits bits each (written so
// that a huge length cannot overflow).
func need(buf []byte, length int64, bits int64, what string) error {
	if bits > 0 && length > int64(len(buf))*8/bits {
		return fmt.Errorf("%s buffer of %d bytes is too short for %d rows", what, len(buf), length)
	}
	return nil
}

// array checks one array of type dt and its children.
func (w *layoutWalk) array(dt arrow.DataType) error {
	length, nulls := w.node()
	if _, ok := dt.(*arrow.NullType); ok {
		return nil
	}
	if validity := w.buffer(); nulls > 0 {
		if err := need(validity, length, 1, "validity"); err != nil {
			return err
		}
	}
	switch dt := dt.(type) {
	case *arrow.BinaryType, *arrow.StringType:
		return w.offsets(length, 4, true)
	case *arrow.LargeBinaryType, *arrow.LargeStringType:
		return w.offsets(length, 8, true)
	case *arrow.ListType:
		if err := w.offsets(length, 4, false); err != nil {
			return err
		}
		return w.array(dt.Elem())
	case *arrow.MapType:
		if err := w.offsets(length, 4, false); err != nil {
			return err
		}
		return w.array(dt.Elem())
	case *arrow.LargeListType:
		if err := w.offsets(length, 8, false); err != nil {
			return err
		}
		return w.array(dt.Elem())
	case *arrow.FixedSizeListType:
		return w.array(dt.Elem())
	case *arrow.StructType:
		for _, f := range dt.Fields() {
			if err := w.array(f.Type); err != nil {
				return fmt.Errorf("field %q: %w", f.Name, err)
			}
		}
		return nil
	case *arrow.DictionaryType:
		return w.fixed(length, dt.IndexType.(arrow.FixedWidthDataType).BitWidth())
	case arrow.FixedWidthDataType:
		return w.fixed(length, dt.BitWidth())
	}
	return fmt.Errorf("%s columns are not accepted from clients", dt)
}

// fixed checks a values buffer of bits-wide values.
func (w *layoutWalk) fixed(length int64, bits int) error {
	values := w.buffer()
	if length == 0 {
		return nil
	}
	return need(values, length, int64(bits), "values")
}

// offsets checks an offsets buffer of width-byte offsets and, with data,
// that the last offset ends inside the data buffer that follows it.
func (w *layoutWalk) offsets(length int64, width int64, data bool) error {
	offs := w.buffer()
	var values []byte
	if data {
		values = w.buffer()
	}
	if length == 0 {
		return nil
	}
	if length >= int64(len(offs))/width { // length+1 offsets do not fit
		return fmt.Errorf("offsets buffer of %d bytes is too short for %d rows", len(offs), length)
	}
	var last int64
	if width == 4 {
		last = int64(int32(binary.LittleEndian.Uint32(offs[length*4:])))
	} else {
		last = int64(binary.LittleEndian.Uint64(offs[length*8:]))
	}
	if data && (last < 0 || last > int64(len(values))) {
		return fmt.Errorf("last offset %d is outside the %d-byte data buffer", last, len(values))
	}
	return nil
}
