package stateful

import (
	"encoding/binary"
	"io"
	"slices"

	"github.com/apache/arrow/go/v17/arrow"
	"github.com/apache/arrow/go/v17/arrow/array"
	"github.com/apache/arrow/go/v17/arrow/bitutil"
)

// The record batch message of rows sel of a record, written through the
// selection. A join batch that views its epoch's input (stateful_join_view.go)
// is logged as the rows it selects; gathering them into a record of their
// own first (vector.TakeRecord) only to copy that record into the log cost
// a second copy of every stored row and the gather's buffers (13 % of
// Nexmark q20's engine). Here the message's numbers are computed from the
// selection (null counts, string bytes), then each body buffer is gathered
// straight into the log's buffer when the writer can lend its space
// (bufferExtender), else into the encoder's scratch and written from
// there. The bytes are those the direct path writes for the gathered
// record (TestIPCSelectMatchesGather compares them): a buffer
// vector.TakeRecord makes starts at its rows and is as long as they need,
// which ipc.Writer writes unchanged.

// bufferExtender is a writer that lends the space for n more bytes: the
// caller fills all of them (the log's arena, checkpoint.arenaValues).
type bufferExtender interface {
	Extend(n int) []byte
}

// selBufKind is how a body buffer of a selection is produced.
type selBufKind uint8

const (
	selNone       selBufKind = iota // absent (no nulls): no bytes
	selZeros                        // an all-null column's validity: zeros
	selBits                         // a bitmap gathered bit by bit
	selFixed                        // fixed-width values gathered
	selOffsets                      // string offsets rebased from zero
	selBinaryData                   // string bytes gathered
)

// selBuf is one body buffer of a selection's message.
type selBuf struct {
	kind  selBufKind
	n     int    // bytes (before padding)
	in    []byte // the source buffer (bitmap, values, offsets)
	off   int    // the source's first row (array offset)
	width int    // bytes a value (selFixed)
	data  []byte // a string column's bytes (selOffsets, selBinaryData)
}

// planSel prepares the message of rows sel of rec (of the template's
// schema) and returns its size with the join entry's magic and end marker;
// false when the template does not fit (no rows, another schema).
func (d *directMessage) planSel(rec arrow.Record, sel []int32) (int, bool) {
	rows := len(sel)
	if rows == 0 {
		return 0, false
	}
	d.sbufs, d.counts = d.sbufs[:0], d.counts[:0]
	for _, col := range rec.Columns() {
		if !d.selColumn(col, sel) {
			d.dropSel()
			return 0, false
		}
	}
	if len(d.sbufs) != d.nBuffers || len(d.counts) != 2*d.nNodes {
		d.dropSel()
		return 0, false
	}
	var pos int64
	for i := range d.sbufs {
		n := int64(d.sbufs[i].n)
		binary.LittleEndian.PutUint64(d.head[d.buffers+16*i:], uint64(pos))
		binary.LittleEndian.PutUint64(d.head[d.buffers+16*i+8:], uint64(n))
		pos += bitutil.CeilByte64(n)
	}
	if pos == 0 {
		d.dropSel()
		return 0, false
	}
	for i, v := range d.counts {
		binary.LittleEndian.PutUint64(d.head[d.nodes+8*i:], uint64(v))
	}
	binary.LittleEndian.PutUint64(d.head[d.length:], uint64(rows))
	binary.LittleEndian.PutUint64(d.head[d.bodyLen:], uint64(pos))
	d.selRows = sel
	return len(joinBatchMagic) + len(d.head) + int(pos) + len(ipcEOS), true
}

// writeSel writes the join batch entry planned by planSel to dst.
func (d *directMessage) writeSel(dst io.Writer) error {
	defer d.dropSel()
	if _, err := dst.Write(joinBatchMagic[:]); err != nil {
		return err
	}
	if _, err := dst.Write(d.head); err != nil {
		return err
	}
	ext, _ := dst.(bufferExtender)
	for i := range d.sbufs {
		b := &d.sbufs[i]
		if b.n == 0 {
			continue
		}
		padded := int(bitutil.CeilByte64(int64(b.n)))
		var out []byte
		if ext != nil {
			out = ext.Extend(padded)
		} else {
			if cap(d.scratch) < padded {
				d.scratch = make([]byte, padded)
			}
			out = d.scratch[:padded]
		}
		d.fillSel(b, out[:b.n])
		clear(out[b.n:])
		if ext == nil {
			if _, err := dst.Write(out); err != nil {
				return err
			}
		}
	}
	_, err := dst.Write(ipcEOS[:])
	return err
}

// deferSel hands the entry planned by planSel (size bytes) over as a
// value the changelog writes at the commit (checkpoint.DeferredValue):
// the record retained, the message's header and buffers copied from the
// plan, which the encoder's next entry overwrites. rec's buffers and sel
// are not changed while the batch lives (a view's selection is its own
// slice), so the value reads what writeSel would have read now.
func (d *directMessage) deferSel(rec arrow.Record, size int) *selValue {
	v := &selValue{rec: rec, head: slices.Clone(d.head), sbufs: slices.Clone(d.sbufs), sel: d.selRows, size: size}
	rec.Retain()
	d.dropSel()
	return v
}

// selValue is a join batch entry of rows sel of rec, written by the state
// log's commit straight into the epoch's record: the rows a batch views
// in its epoch's input go from the input to the log with one copy, not
// into the changelog's arena first and from there into the record.
type selValue struct {
	rec   arrow.Record
	head  []byte
	sbufs []selBuf
	sel   []int32
	size  int
}

// Len implements checkpoint.DeferredValue.
func (v *selValue) Len() int { return v.size }

// Fill implements checkpoint.DeferredValue: the bytes writeSel writes.
func (v *selValue) Fill(dst []byte) {
	pos := copy(dst, joinBatchMagic[:])
	pos += copy(dst[pos:], v.head)
	for i := range v.sbufs {
		b := &v.sbufs[i]
		if b.n == 0 {
			continue
		}
		padded := int(bitutil.CeilByte64(int64(b.n)))
		out := dst[pos : pos+padded]
		fillSelBuf(b, v.sel, out[:b.n])
		clear(out[b.n:])
		pos += padded
	}
	copy(dst[pos:], ipcEOS[:])
}

// Release implements checkpoint.DeferredValue.
func (v *selValue) Release() {
	if v.rec != nil {
		v.rec.Release()
	}
	*v = selValue{}
}

// deferSel hands the entry planSel prepared over as a deferred value.
func (e *ipcStreamEncoder) deferSel(rec arrow.Record, size int) *selValue {
	return e.direct.deferSel(rec, size)
}

// dropSel forgets the planned selection's source buffers and rows, so that
// the encoder does not keep a released record's memory reachable.
func (d *directMessage) dropSel() {
	clear(d.sbufs)
	d.sbufs, d.selRows = d.sbufs[:0], nil
}

// selColumn adds the field nodes and buffers of rows sel of arr, in the
// order column does; false for a type the direct path does not write.
func (d *directMessage) selColumn(arr arrow.Array, sel []int32) bool {
	k, ok := directKindOf(arr.DataType())
	if !ok {
		return false
	}
	data := arr.Data()
	n := len(sel)
	off := data.Offset()
	nulls := 0
	validity := bufBytes(data, 0)
	if arr.NullN() > 0 {
		if validity == nil {
			return false
		}
		nulls = n - countSetAt(validity, off, sel)
	}
	d.counts = append(d.counts, int64(n), int64(nulls))
	switch {
	case nulls == 0:
		d.sbufs = append(d.sbufs, selBuf{kind: selNone})
	case nulls == n:
		d.sbufs = append(d.sbufs, selBuf{kind: selZeros, n: int(pad64(bitutil.BytesForBits(int64(n))))})
	default:
		d.sbufs = append(d.sbufs, selBuf{kind: selBits, n: int(bitutil.BytesForBits(int64(n))), in: validity, off: off})
	}
	switch k {
	case directStruct:
		st := arr.(*array.Struct)
		for i := 0; i < st.NumField(); i++ {
			if !d.selColumn(st.Field(i), sel) {
				return false
			}
		}
	case directBool:
		vals := bufBytes(data, 1)
		if vals == nil {
			return false
		}
		d.sbufs = append(d.sbufs, selBuf{kind: selBits, n: int(bitutil.BytesForBits(int64(n))), in: vals, off: off})
	case directFixed:
		vals := bufBytes(data, 1)
		w := data.DataType().(arrow.FixedWidthDataType).BitWidth() / 8
		if vals == nil || w == 0 {
			return false
		}
		d.sbufs = append(d.sbufs, selBuf{kind: selFixed, n: n * w, in: vals, off: off, width: w})
	case directBinary:
		offs := bufBytes(data, 1)
		if len(offs) == 0 {
			return false // no offsets: not a valid array with rows
		}
		all := arrow.Int32Traits.CastFromBytes(offs)[off : off+data.Len()+1]
		total := 0
		for _, r := range sel {
			total += int(all[r+1] - all[r])
		}
		vals := bufBytes(data, 2)
		d.sbufs = append(d.sbufs,
			selBuf{kind: selOffsets, n: 4 * (n + 1), in: offs, off: off},
			selBuf{kind: selBinaryData, n: total, in: offs, off: off, data: vals})
	}
	return true
}

// countSetAt counts the set bits of bitmap at rows off+sel[i].
func countSetAt(bitmap []byte, off int, sel []int32) int {
	n := 0
	for _, r := range sel {
		p := off + int(r)
		n += int(bitmap[p>>3] >> (p & 7) & 1)
	}
	return n
}

// fillSel writes buffer b of the planned selection into out (len b.n).
func (d *directMessage) fillSel(b *selBuf, out []byte) { fillSelBuf(b, d.selRows, out) }

// fillSelBuf writes buffer b of rows sel into out (len b.n).
func fillSelBuf(b *selBuf, sel []int32, out []byte) {
	switch b.kind {
	case selZeros:
		clear(out)
	case selBits:
		gatherBitsInto(out, b.in, b.off, sel)
	case selFixed:
		gatherFixedInto(out, b.in, b.off, b.width, sel)
	case selOffsets:
		all := arrow.Int32Traits.CastFromBytes(b.in)[b.off:]
		pos := int32(0)
		binary.LittleEndian.PutUint32(out, 0)
		for i, r := range sel {
			pos += all[r+1] - all[r]
			binary.LittleEndian.PutUint32(out[4*(i+1):], uint32(pos))
		}
	case selBinaryData:
		all := arrow.Int32Traits.CastFromBytes(b.in)[b.off:]
		pos := 0
		for _, r := range sel {
			lo, hi := int(all[r]), int(all[r+1])
			// A short value is copied as one 16-byte block when both
			// sides have the room, not through a call to memmove.
			if hi-lo <= 16 && lo+16 <= len(b.data) && pos+16 <= len(out) {
				*(*[16]byte)(out[pos : pos+16]) = *(*[16]byte)(b.data[lo : lo+16])
			} else {
				copy(out[pos:], b.data[lo:hi])
			}
			pos += hi - lo
		}
	}
}

// gatherBitsInto sets bit o of out to bit off+sel[o] of in, whole bytes at
// a time (out's bits past len(sel) are zero).
func gatherBitsInto(out, in []byte, off int, sel []int32) {
	n := len(sel)
	full := n &^ 7
	for o := 0; o < full; o += 8 {
		s := (*[8]int32)(sel[o : o+8])
		var v byte
		for k, r := range s {
			p := off + int(r)
			v |= (in[p>>3] >> (p & 7) & 1) << k
		}
		out[o>>3] = v
	}
	if full < n {
		var v byte
		for k, r := range sel[full:] {
			p := off + int(r)
			v |= (in[p>>3] >> (p & 7) & 1) << k
		}
		out[full>>3] = v
	}
}

// gatherFixedInto copies the width-byte values at rows off+sel[o] of in to
// out, value o at o*width. out may be unaligned (inside the log's
// buffer), so values move as bytes of known length, not typed words.
func gatherFixedInto(out, in []byte, off, width int, sel []int32) {
	switch width {
	case 8:
		in = in[8*off:]
		for o, r := range sel {
			binary.LittleEndian.PutUint64(out[8*o:], binary.LittleEndian.Uint64(in[8*int(r):]))
		}
	case 4:
		in = in[4*off:]
		for o, r := range sel {
			binary.LittleEndian.PutUint32(out[4*o:], binary.LittleEndian.Uint32(in[4*int(r):]))
		}
	case 16:
		in = in[16*off:]
		for o, r := range sel {
			*(*[16]byte)(out[16*o:]) = *(*[16]byte)(in[16*int(r):])
		}
	case 2:
		in = in[2*off:]
		for o, r := range sel {
			binary.LittleEndian.PutUint16(out[2*o:], binary.LittleEndian.Uint16(in[2*int(r):]))
		}
	case 1:
		in = in[off:]
		for o, r := range sel {
			out[o] = in[r]
		}
	default:
		in = in[width*off:]
		for o, r := range sel {
			copy(out[width*o:width*o+width], in[width*int(r):])
		}
	}
}

// planSel prepares the join batch entry of rows sel of rec through the
// direct path and returns its size; false when the direct path does not
// take it (then the caller gathers the rows and calls write).
func (e *ipcStreamEncoder) planSel(rec arrow.Record, sel []int32) (int, bool) {
	if e.direct == nil || rec.Schema() != e.schema {
		return 0, false
	}
	return e.direct.planSel(rec, sel)
}

// writeSel writes the entry planSel prepared to dst.
func (e *ipcStreamEncoder) writeSel(dst io.Writer) error { return e.direct.writeSel(dst) }
