package stateful

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"io"

	"github.com/apache/arrow/go/v17/arrow"
	"github.com/apache/arrow/go/v17/arrow/array"
	"github.com/apache/arrow/go/v17/arrow/bitutil"
	"github.com/apache/arrow/go/v17/arrow/ipc"
	"github.com/apache/arrow/go/v17/arrow/memory"
)

// A record batch message written without ipc.Writer, for a schema of flat
// columns (fixed width, boolean, string and binary). ipc.Writer spends
// most of a small batch's cost on allocations (a flatbuffers builder, a
// payload, retained or sliced buffers, the message copied into an
// allocator buffer: about 37 per batch), and the join logs a batch per
// side, partition and epoch. For such a schema the message's flatbuffer
// has the same layout for every batch with rows: only the row count, the
// body length and the nodes' and buffers' numbers change. So the encoder
// takes the message ipc.Writer writes for a one-row batch once, finds
// where those numbers are (reading the flatbuffer's tables, not guessing
// offsets), and for each batch patches a copy and writes the body's
// buffers straight from the columns. The bytes are those ipc.Writer
// writes, buffer truncation and padding included
// (TestIPCStreamEncoderMatchesWriter compares them), so readers and the
// files already written are unaffected.

// directMessage is the template of a schema's record batch message and
// where its numbers are.
type directMessage struct {
	head     []byte // continuation, length, flatbuffer and padding
	length   int    // position of RecordBatch.length (int64)
	bodyLen  int    // position of Message.bodyLength (int64)
	nodes    int    // position of the first FieldNode (16 bytes each)
	buffers  int    // position of the first Buffer (16 bytes each)
	nNodes   int    // field nodes of a batch (a struct's children count)
	nBuffers int    // body buffers of a batch
	scratch  []byte // shifted bitmaps and rebased offsets
	bufs     []directBuf
	counts   []int64 // each node's length and null count, in order
	// sbufs and selRows: the body buffers and rows of the selection
	// planSel planned (ipc_batch_select.go).
	sbufs   []selBuf
	selRows []int32
}

// directKind is how an array's buffers are written.
type directKind uint8

const (
	directFixed directKind = iota
	directBool
	directBinary
	directStruct // its validity, then its children
)

// directBuf is one body buffer of a batch: bytes of a column (or of the
// scratch, from scratchAt, when they were shifted or rebased).
type directBuf struct {
	b         []byte
	scratchAt int // >= 0: b is scratch[scratchAt:scratchAt+n]
	n         int
}

// directKindOf returns how an array of type dt is written, false when
// the direct path does not take it.
func directKindOf(dt arrow.DataType) (directKind, bool) {
	switch dt.ID() {
	case arrow.INT8, arrow.INT16, arrow.INT32, arrow.INT64,
		arrow.UINT8, arrow.UINT16, arrow.UINT32, arrow.UINT64,
		arrow.FLOAT16, arrow.FLOAT32, arrow.FLOAT64,
		arrow.DATE32, arrow.DATE64, arrow.TIMESTAMP, arrow.TIME32, arrow.TIME64,
		arrow.DURATION, arrow.INTERVAL_MONTHS, arrow.INTERVAL_DAY_TIME,
		arrow.INTERVAL_MONTH_DAY_NANO, arrow.DECIMAL128, arrow.DECIMAL256,
		arrow.FIXED_SIZE_BINARY:
		if _, ok := dt.(arrow.FixedWidthDataType); !ok {
			return 0, false
		}
		return directFixed, true
	case arrow.BOOL:
		return directBool, true
	case arrow.STRING, arrow.BINARY:
		return directBinary, true
	case arrow.STRUCT:
		return directStruct, true
	}
	return 0, false
}

// directShape counts the field nodes and body buffers of an array of
// type dt, false when a type in it is not one the direct path writes.
func directShape(dt arrow.DataType) (nodes, buffers int, ok bool) {
	k, ok := directKindOf(dt)
	if !ok {
		return 0, 0, false
	}
	switch k {
	case directBinary:
		return 1, 3, true
	case directStruct:
		nodes, buffers = 1, 1
		for _, f := range dt.(*arrow.StructType).Fields() {
			n, b, ok := directShape(f.Type)
			if !ok {
				return 0, 0, false
			}
			nodes, buffers = nodes+n, buffers+b
		}
		return nodes, buffers, true
	}
	return 1, 2, true
}

// newDirectMessage prepares the direct path for schema: nil (and no
// error) when a column's type is not one it takes or the template does
// not have the expected shape, so that records go through ipc.Writer.
func newDirectMessage(mem memory.Allocator, w *ipc.Writer, out *retargetWriter, schema *arrow.Schema) (*directMessage, error) {
	d := &directMessage{}
	for _, f := range schema.Fields() {
		n, b, ok := directShape(f.Type)
		if !ok {
			return nil, nil
		}
		d.nNodes, d.nBuffers = d.nNodes+n, d.nBuffers+b
	}
	if d.nNodes == 0 {
		return nil, nil
	}
	cols := make([]arrow.Array, schema.NumFields())
	for i, f := range schema.Fields() {
		cols[i] = array.MakeArrayOfNull(mem, f.Type, 1)
	}
	probe := array.NewRecord(schema, cols, 1)
	for _, c := range cols {
		c.Release()
	}
	defer probe.Release()
	var buf bytes.Buffer
	out.w = &buf
	err := w.Write(probe)
	out.w = io.Discard
	if err != nil {
		return nil, fmt.Errorf("arrow IPC writer: %w", err)
	}
	if !d.parse(buf.Bytes()) {
		return nil, nil
	}
	return d, nil
}

// clone returns a template of d's schema that shares nothing with d:
// write patches its head in place.
func (d *directMessage) clone() *directMessage {
	return &directMessage{
		head: append([]byte(nil), d.head...), length: d.length, bodyLen: d.bodyLen,
		nodes: d.nodes, buffers: d.buffers, nNodes: d.nNodes, nBuffers: d.nBuffers,
	}
}

// parse finds the numbers in msg, the message of a one-row batch; false
// when its shape is not the expected one.
func (d *directMessage) parse(msg []byte) bool {
	if len(msg) < 8 || binary.LittleEndian.Uint32(msg) != 0xFFFFFFFF {
		return false
	}
	metaLen := int(int32(binary.LittleEndian.Uint32(msg[4:])))
	if metaLen <= 0 || 8+metaLen > len(msg) {
		return false
	}
	fb := msg[8 : 8+metaLen]
	u32 := func(p int) (int, bool) {
		if p < 0 || p+4 > len(fb) {
			return 0, false
		}
		return int(binary.LittleEndian.Uint32(fb[p:])), true
	}
	// field returns the position of table t's field i, 0 when absent.
	field := func(t, i int) int {
		so, ok := u32(t)
		if !ok {
			return -1
		}
		vt := t - int(int32(so))
		if vt < 0 || vt+4 > len(fb) {
			return -1
		}
		vtSize := int(binary.LittleEndian.Uint16(fb[vt:]))
		at := 4 + 2*i
		if at+2 > vtSize || vt+at+2 > len(fb) {
			return 0
		}
		off := int(binary.LittleEndian.Uint16(fb[vt+at:]))
		if off == 0 {
			return 0
		}
		return t + off
	}
	ref := func(p int) int {
		o, ok := u32(p)
		if !ok {
			return -1
		}
		return p + o
	}
	root, ok := u32(0)
	if !ok {
		return false
	}
	// Message: version 0, header_type 1, header 2, bodyLength 3,
	// custom_metadata 4. RecordBatch: length 0, nodes 1, buffers 2,
	// compression 3, variadicBufferCounts 4.
	ht := field(root, 1)
	if ht <= 0 || ht >= len(fb) || fb[ht] != 3 || field(root, 4) != 0 {
		return false
	}
	hdr := field(root, 2)
	body := field(root, 3)
	if hdr <= 0 || body <= 0 || body+8 > len(fb) {
		return false
	}
	rb := ref(hdr)
	length, nodes, buffers := field(rb, 0), field(rb, 1), field(rb, 2)
	if length <= 0 || length+8 > len(fb) || nodes <= 0 || buffers <= 0 || field(rb, 3) != 0 || field(rb, 4) != 0 {
		return false
	}
	nv, bv := ref(nodes), ref(buffers)
	nn, ok1 := u32(nv)
	nb, ok2 := u32(bv)
	if !ok1 || !ok2 || nn != d.nNodes || nb != d.nBuffers ||
		nv+4+16*nn > len(fb) || bv+4+16*nb > len(fb) {
		return false
	}
	d.head = append([]byte(nil), msg[:8+metaLen]...)
	// Positions in head, which starts 8 bytes before the flatbuffer.
	d.length, d.bodyLen, d.nodes, d.buffers = 8+length, 8+body, 8+nv+4, 8+bv+4
	return true
}

// ipcPad is zero bytes for padding a buffer to 8 bytes.
var ipcPad [8]byte

// write writes rec (rows > 0, of the template's schema) to dst as the
// record batch message ipc.Writer writes; false (nothing written) when
// rec is one the template does not fit.
func (d *directMessage) write(dst io.Writer, rec arrow.Record) (bool, error) {
	rows := rec.NumRows()
	if rows <= 0 {
		return false, nil
	}
	d.bufs, d.scratch, d.counts = d.bufs[:0], d.scratch[:0], d.counts[:0]
	for _, col := range rec.Columns() {
		d.column(col)
	}
	if len(d.bufs) != d.nBuffers || len(d.counts) != 2*d.nNodes {
		return false, nil // not the template's schema
	}
	var pos int64
	for i := range d.bufs {
		n := int64(d.bufs[i].n)
		binary.LittleEndian.PutUint64(d.head[d.buffers+16*i:], uint64(pos))
		binary.LittleEndian.PutUint64(d.head[d.buffers+16*i+8:], uint64(n))
		pos += bitutil.CeilByte64(n)
	}
	if pos == 0 {
		return false, nil // the flatbuffer would leave bodyLength out
	}
	for i, v := range d.counts {
		binary.LittleEndian.PutUint64(d.head[d.nodes+8*i:], uint64(v))
	}
	binary.LittleEndian.PutUint64(d.head[d.length:], uint64(rows))
	binary.LittleEndian.PutUint64(d.head[d.bodyLen:], uint64(pos))
	if _, err := dst.Write(d.head); err != nil {
		return true, err
	}
	for _, b := range d.bufs {
		if b.n == 0 {
			continue
		}
		bs := b.b
		if b.scratchAt >= 0 {
			bs = d.scratch[b.scratchAt : b.scratchAt+b.n]
		}
		if _, err := dst.Write(bs); err != nil {
			return true, err
		}
		if pad := bitutil.CeilByte64(int64(b.n)) - int64(b.n); pad > 0 {
			if _, err := dst.Write(ipcPad[:pad]); err != nil {
				return true, err
			}
		}
	}
	return true, nil
}

func (d *directMessage) add(b []byte) {
	d.bufs = append(d.bufs, directBuf{b: b, scratchAt: -1, n: len(b)})
}

// grow reserves n zeroed bytes of scratch and returns them and where
// they start.
func (d *directMessage) grow(n int) ([]byte, int) {
	at := len(d.scratch)
	d.scratch = append(d.scratch, make([]byte, n)...)
	return d.scratch[at : at+n], at
}

func (d *directMessage) addScratch(at, n int) {
	d.bufs = append(d.bufs, directBuf{scratchAt: at, n: n})
}

// bufBytes returns buffer i of data, nil when absent.
func bufBytes(data arrow.ArrayData, i int) []byte {
	bs := data.Buffers()
	if i >= len(bs) || bs[i] == nil {
		return nil
	}
	return bs[i].Bytes()
}

// bitmap adds a bitmap of data's rows as newTruncatedBitmap of ipc.Writer
// does: the buffer as it is when it starts at the rows and is no longer
// than their bits padded to 64 bytes, else the bits copied to the start
// of a zeroed buffer of that padded length.
func (d *directMessage) bitmap(data arrow.ArrayData, in []byte) {
	if in == nil {
		d.add(nil)
		return
	}
	off, n := int64(data.Offset()), int64(data.Len())
	minLen := pad64(bitutil.BytesForBits(n))
	if off == 0 && minLen >= int64(len(in)) {
		d.add(in)
		return
	}
	out, at := d.grow(int(minLen))
	copyBits(in, int(off), int(n), out)
	d.addScratch(at, int(minLen))
}

// copyBits copies n bits of in from bit off to the start of out (zeroed),
// leaving out's bits after them zero, as bitutil.CopyBitmap does (which
// allocates a word reader and writer per call).
func copyBits(in []byte, off, n int, out []byte) {
	if n == 0 {
		return
	}
	s, b, nb := uint(off%8), off/8, (n+7)/8
	if s == 0 {
		copy(out[:nb], in[b:b+nb])
	} else {
		for i := 0; i < nb; i++ {
			v := in[b+i] >> s
			if b+i+1 < len(in) {
				v |= in[b+i+1] << (8 - s)
			}
			out[i] = v
		}
	}
	if r := n % 8; r != 0 {
		out[nb-1] &= byte(1)<<r - 1
	}
}

func pad64(n int64) int64 { return (n + 63) / 64 * 64 }

// column adds the field nodes and body buffers of one column, in the
// order ipc.Writer visits them (a struct, then its children as the struct
// array slices them).
func (d *directMessage) column(arr arrow.Array) {
	k, ok := directKindOf(arr.DataType())
	if !ok {
		return // counted as missing buffers by write
	}
	data := arr.Data()
	n := data.Len()
	// arr.NullN, not data.NullN: the data's count may not be computed yet
	// (-1), and the message carries the real count, as ipc.Writer's does.
	// A batch the join keeps has its counts settled (settleNullCounts), so
	// this only reads them while another goroutine reads the batch too.
	nulls := arr.NullN()
	d.counts = append(d.counts, int64(n), int64(nulls))
	switch {
	case nulls == 0:
		d.add(nil)
	case nulls == n:
		_, at := d.grow(int(pad64(bitutil.BytesForBits(int64(n)))))
		d.addScratch(at, int(pad64(bitutil.BytesForBits(int64(n)))))
	default:
		d.bitmap(data, bufBytes(data, 0))
	}
	off := data.Offset()
	switch k {
	case directStruct:
		st := arr.(*array.Struct)
		for i := 0; i < st.NumField(); i++ {
			d.column(st.Field(i))
		}
	case directBool:
		d.bitmap(data, bufBytes(data, 1))
	case directFixed:
		vals := bufBytes(data, 1)
		w := int64(data.DataType().(arrow.FixedWidthDataType).BitWidth() / 8)
		if vals != nil && (off != 0 || pad64(int64(n)*w) < int64(len(vals))) {
			start := int64(off) * w
			l := min(bitutil.CeilByte64(int64(n)*w), int64(len(vals))-start)
			vals = vals[start : start+l]
		}
		d.add(vals)
	case directBinary:
		offs := bufBytes(data, 1)
		vals := bufBytes(data, 2)
		if len(offs) == 0 {
			// No offsets (not a valid array with rows): ipc.Writer
			// writes neither buffer's bytes either.
			d.add(nil)
			d.add(nil)
			return
		}
		all := arrow.Int32Traits.CastFromBytes(offs)[off : off+n+1]
		beg, end := all[0], all[n]
		if need := 4 * (n + 1); off != 0 || need < len(offs) {
			out, at := d.grow(need)
			dst := arrow.Int32Traits.CastFromBytes(out)
			for i, o := range all {
				dst[i] = o - beg
			}
			d.addScratch(at, need)
		} else {
			d.add(offs)
		}
		total := int(end - beg)
		if vals != nil && (off != 0 || total < len(vals)) {
			vals = vals[beg : int(beg)+total]
		}
		d.add(vals)
	}
}
