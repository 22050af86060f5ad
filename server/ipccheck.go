package server

import (
	"encoding/binary"
	"errors"
	"fmt"
)

// checkIPCMessage checks the IPC metadata of one FlightData message a
// client sent (its data header, a flatbuffer Message) before arrow-go's
// IPC reader sees it. That reader trusts the counts and sizes the header
// claims: a 200-byte schema message claiming 10⁹ fields, or a record
// batch claiming a 1 TiB buffer, makes it allocate that much at once,
// and the Go runtime ends the whole process ("fatal error: out of
// memory") instead of failing the call. So every table and vector the
// reader will follow must lie inside the header, and every buffer a
// record batch names inside the body. Compressed record batches are
// refused: arrow-go allocates a compressed buffer's claimed size before
// decompressing it, and a frame that decompresses to less makes it panic
// and leak (a client-side compressed DoPut would need the server to
// decompress every buffer twice to rule that out).
func checkIPCMessage(header, body []byte) (ipcInfo, error) {
	var info ipcInfo
	if len(header) == 0 {
		return info, nil // no IPC message (a descriptor or app metadata alone)
	}
	c := fbCheck{b: header}
	msg, err := c.root()
	if err != nil {
		return info, fmt.Errorf("IPC message header: %w", err)
	}
	if err := c.keyValues(msg, 4); err != nil {
		return info, fmt.Errorf("IPC message header: custom metadata: %w", err)
	}
	if info.kind, err = c.u8Field(msg, 1); err != nil {
		return info, fmt.Errorf("IPC message header: %w", err)
	}
	hdr, err := c.tableField(msg, 2)
	if err != nil || hdr < 0 {
		return info, errors.Join(fmt.Errorf("IPC message header: no header table"), err)
	}
	switch info.kind {
	case ipcSchema:
		fields := 0
		err = c.schema(hdr, &fields)
	case ipcDictionaryBatch:
		var data int64
		if data, err = c.tableField(hdr, 1); err == nil && data >= 0 {
			info.nodes, info.buffers, err = c.recordBatch(data, body)
		}
	case ipcRecordBatch:
		info.nodes, info.buffers, err = c.recordBatch(hdr, body)
		if err == nil {
			err = c.batchInfo(hdr, &info)
		}
	default:
		err = fmt.Errorf("message type %d is not part of a record batch stream", info.kind)
	}
	if err != nil {
		return info, fmt.Errorf("IPC message header: %w", err)
	}
	return info, nil
}

// IPC message types (MessageHeader in Message.fbs).
const (
	ipcSchema          = 1
	ipcDictionaryBatch = 2
	ipcRecordBatch     = 3
)

// ipcInfo is what checkIPCMessage learnt of a message: its type and, for
// a batch, the number of field nodes and buffers it describes.
type ipcInfo struct {
	kind           int
	nodes, buffers int64
	// Of a record batch: its length, and where its node and buffer lists
	// start in the header.
	length             int64
	nodesAt, buffersAt int64
}

// Limits on what a schema message may declare: ingest tables and
// parameter lists are far smaller.
const (
	maxIPCFields     = 1 << 14
	maxIPCFieldDepth = 64
)

// fbCheck reads a flatbuffer with every offset checked against its
// length (arrow's generated accessors index it unchecked).
type fbCheck struct{ b []byte }

var errFBBounds = errors.New("an offset or length points outside the message")

func (c *fbCheck) u32(pos int64) (int64, error) {
	if pos < 0 || pos+4 > int64(len(c.b)) {
		return 0, errFBBounds
	}
	return int64(binary.LittleEndian.Uint32(c.b[pos:])), nil
}

func (c *fbCheck) u16(pos int64) (int64, error) {
	if pos < 0 || pos+2 > int64(len(c.b)) {
		return 0, errFBBounds
	}
	return int64(binary.LittleEndian.Uint16(c.b[pos:])), nil
}

// root returns the position of the root table.
func (c *fbCheck) root() (int64, error) {
	off, err := c.u32(0)
	if err != nil {
		return 0, err
	}
	return off, c.table(off)
}

// table checks that a table and its vtable lie inside the buffer.
func (c *fbCheck) table(pos int64) error {
	soff, err := c.u32(pos)
	if err != nil {
		return err
	}
	vt := pos - int64(int32(uint32(soff)))
	vlen, err := c.u16(vt)
	if err != nil {
		return err
	}
	size, err := c.u16(vt + 2)
	if err != nil {
		return err
	}
	if vlen < 4 || vlen%2 != 0 || vt+vlen > int64(len(c.b)) || size < 4 || pos+size > int64(len(c.b)) {
		return errFBBounds
	}
	for f := vt + 4; f < vt+vlen; f += 2 {
		o, _ := c.u16(f)
		if o != 0 && (o < 4 || o >= size) {
			return errFBBounds
		}
	}
	return nil
}

// field returns the absolute position of field i of a checked table, or
// -1 when it is absent.
func (c *fbCheck) field(tab int64, i int) int64 {
	soff, _ := c.u32(tab)
	vt := tab - int64(int32(uint32(soff)))
	vlen, _ := c.u16(vt)
	slot := int64(4 + 2*i)
	if slot >= vlen {
		return -1
	}
	o, _ := c.u16(vt + slot)
	if o == 0 {
		return -1
	}
	return tab + o
}

func (c *fbCheck) u8Field(tab int64, i int) (int, error) {
	p := c.field(tab, i)
	if p < 0 {
		return 0, nil
	}
	if p >= int64(len(c.b)) {
		return 0, errFBBounds
	}
	return int(c.b[p]), nil
}

// tableField follows an offset field to a table and checks it (-1 when
// absent).
func (c *fbCheck) tableField(tab int64, i int) (int64, error) {
	p := c.field(tab, i)
	if p < 0 {
		return -1, nil
	}
	off, err := c.u32(p)
	if err != nil {
		return 0, err
	}
	return p + off, c.table(p + off)
}

// vectorField follows an offset field to a vector of n elements of size
// elem and checks that they lie inside the buffer. It returns the first
// element's position (-1 and 0 when absent).
func (c *fbCheck) vectorField(tab int64, i int, elem int64) (int64, int64, error) {
	p := c.field(tab, i)
	if p < 0 {
		return -1, 0, nil
	}
	off, err := c.u32(p)
	if err != nil {
		return 0, 0, err
	}
	v := p + off
	n, err := c.u32(v)
	if err != nil {
		return 0, 0, err
	}
	if v+4+n*elem > int64(len(c.b)) {
		return 0, 0, fmt.Errorf("a vector of %d elements does not fit in the message", n)
	}
	return v + 4, n, nil
}

// tables checks a vector of tables and calls f on each.
func (c *fbCheck) tables(tab int64, i int, f func(int64) error) (int64, error) {
	start, n, err := c.vectorField(tab, i, 4)
	if err != nil || n == 0 {
		return n, err
	}
	for k := range n {
		p := start + 4*k
		off, _ := c.u32(p)
		if err := c.table(p + off); err != nil {
			return n, err
		}
		if f != nil {
			if err := f(p + off); err != nil {
				return n, err
			}
		}
	}
	return n, nil
}

// keyValues checks a custom_metadata vector (KeyValue tables of two
// strings).
func (c *fbCheck) keyValues(tab int64, i int) error {
	_, err := c.tables(tab, i, func(kv int64) error {
		for f := range 2 {
			if _, _, err := c.vectorField(kv, f, 1); err != nil {
				return err
			}
		}
		return nil
	})
	return err
}

func (c *fbCheck) schema(s int64, fields *int) error {
	// arrow-go byte-swaps the buffers of a big-endian stream after
	// loading them; the layout checks read little-endian values.
	if p := c.field(s, 0); p >= 0 {
		if e, err := c.u16(p); err != nil || e != 0 {
			return errors.Join(errors.New("big-endian IPC is not accepted"), err)
		}
	}
	if err := c.keyValues(s, 2); err != nil {
		return fmt.Errorf("schema metadata: %w", err)
	}
	if _, _, err := c.vectorField(s, 3, 8); err != nil {
		return fmt.Errorf("schema features: %w", err)
	}
	_, err := c.tables(s, 1, func(f int64) error { return c.field1(f, fields, 1) })
	return err
}

// field1 checks one Field table and its children.
func (c *fbCheck) field1(f int64, fields *int, depth int) error {
	if *fields++; *fields > maxIPCFields {
		return fmt.Errorf("schema of more than %d fields", maxIPCFields)
	}
	if depth > maxIPCFieldDepth {
		return fmt.Errorf("fields nested deeper than %d", maxIPCFieldDepth)
	}
	if _, _, err := c.vectorField(f, 0, 1); err != nil { // name
		return err
	}
	if _, err := c.tableField(f, 3); err != nil { // type
		return err
	}
	dict, err := c.tableField(f, 4)
	if err != nil {
		return err
	}
	if dict >= 0 {
		if _, err := c.tableField(dict, 1); err != nil { // index type
			return err
		}
	}
	if err := c.keyValues(f, 6); err != nil {
		return err
	}
	_, err = c.tables(f, 5, func(ch int64) error { return c.field1(ch, fields, depth+1) })
	return err
}

// recordBatch checks a RecordBatch: node counts, and buffers inside the
// body. It returns the numbers of nodes and buffers.
func (c *fbCheck) recordBatch(rb int64, body []byte) (int64, int64, error) {
	nodes, nn, err := c.vectorField(rb, 1, 16)
	if err != nil {
		return 0, 0, fmt.Errorf("record batch nodes: %w", err)
	}
	nb, err := c.recordBatchBuffers(rb, body)
	return nn, nb, errors.Join(err, c.nodes(nodes, nn))
}

// batchInfo fills in a checked record batch's length and list positions.
func (c *fbCheck) batchInfo(rb int64, info *ipcInfo) error {
	if p := c.field(rb, 0); p >= 0 {
		if p+8 > int64(len(c.b)) {
			return errFBBounds
		}
		info.length = int64(binary.LittleEndian.Uint64(c.b[p:]))
	}
	info.nodesAt, _, _ = c.vectorField(rb, 1, 16)
	info.buffersAt, _, _ = c.vectorField(rb, 2, 16)
	return nil
}

func (c *fbCheck) nodes(nodes, n int64) error {
	for k := range n {
		length := int64(binary.LittleEndian.Uint64(c.b[nodes+16*k:]))
		nulls := int64(binary.LittleEndian.Uint64(c.b[nodes+16*k+8:]))
		if length < 0 || nulls < 0 || nulls > length {
			return fmt.Errorf("record batch node %d: length %d with %d nulls", k, length, nulls)
		}
	}
	return nil
}

func (c *fbCheck) recordBatchBuffers(rb int64, body []byte) (int64, error) {
	bufs, n, err := c.vectorField(rb, 2, 16)
	if err != nil {
		return 0, fmt.Errorf("record batch buffers: %w", err)
	}
	compression, err := c.tableField(rb, 3)
	if err != nil {
		return 0, fmt.Errorf("record batch compression: %w", err)
	}
	if compression >= 0 {
		return 0, errors.New("compressed record batches are not accepted: send uncompressed IPC")
	}
	if _, _, err := c.vectorField(rb, 4, 8); err != nil {
		return 0, fmt.Errorf("record batch variadic counts: %w", err)
	}
	for k := range n {
		off := int64(binary.LittleEndian.Uint64(c.b[bufs+16*k:]))
		length := int64(binary.LittleEndian.Uint64(c.b[bufs+16*k+8:]))
		if off < 0 || length < 0 || off > int64(len(body)) || length > int64(len(body))-off {
			return 0, fmt.Errorf("record batch buffer %d (offset %d, %d bytes) is outside the %d-byte body", k, off, length, len(body))
		}
	}
	return n, nil
}
