package vector

import (
	"encoding/binary"
	"fmt"
	"math/bits"
	"unsafe"

	"github.com/apache/arrow/go/v17/arrow"
	"github.com/apache/arrow/go/v17/arrow/array"
	"github.com/apache/arrow/go/v17/arrow/bitutil"
	"github.com/apache/arrow/go/v17/arrow/memory"
)

// A selection vector lists, in increasing order, the rows of a batch that an
// operator keeps. This file builds selection vectors from boolean masks and
// gathers columns through them (and through the row lists of explode,
// sliding windows and sort). Unlike Take's indices these are always valid
// rows, never -1 for null, which lets the gathers skip the per-row null and
// bounds checks that Take makes.

// selSlack is the number of int32 slots the builders may write past the last
// selected row: the branch-free expansion stores 8 candidates per mask byte
// and only then advances by the number that were selected.
const selSlack = 64

// selByte is the expansion of one mask byte: the positions of its set bits
// as int32 pairs packed in uint64s (low half first, so that a little-endian
// store writes them in order). Adding a base row to both halves at once
// cannot carry from the low half into the high one: positions are below 8
// and rows fit in 31 bits.
type selByte struct {
	pos [4]uint64
}

var selBytes = func() (t [256]selByte) {
	for b := range t {
		var pos [8]uint32
		n := 0
		for j := 0; j < 8; j++ {
			if b>>j&1 == 1 {
				pos[n] = uint32(j)
				n++
			}
		}
		for k := range t[b].pos {
			t[b].pos[k] = uint64(pos[2*k]) | uint64(pos[2*k+1])<<32
		}
	}
	return t
}()

// selLoadBits returns the 64 bits of bm starting at bit pos; bits past the end
// of bm read as zero. Arrow bitmaps are little-endian bit order, so a
// little-endian load of 8 bytes yields bits pos..pos+63 after shifting out
// the sub-byte offset.
func selLoadBits(bm []byte, pos int) uint64 {
	i, shift := pos>>3, uint(pos&7)
	if i+9 <= len(bm) {
		w := binary.LittleEndian.Uint64(bm[i:])
		if shift != 0 {
			w = w>>shift | uint64(bm[i+8])<<(64-shift)
		}
		return w
	}
	var w uint64
	for k := 0; k < 8 && i+k < len(bm); k++ {
		w |= uint64(bm[i+k]) << (8 * k)
	}
	w >>= shift
	if shift != 0 && i+8 < len(bm) {
		w |= uint64(bm[i+8]) << (64 - shift)
	}
	return w
}

// selectBits appends to sel[:0] the positions i in [0, n) whose bit
// off+i is set in vals and, when valid is not nil, also in valid. It reuses
// sel's storage when it is large enough.
//
// It works on 64-bit words of the combined mask: all-zero words are
// skipped, all-ones words write 64 consecutive positions, sparse words
// (fewer than 16 bits) take one iteration per set bit, and denser words
// expand byte by byte through a table with no data-dependent branch, which
// keeps the cost flat at about one store per row whatever the selectivity.
func selectBits(sel []int32, vals, valid []byte, off, n int) []int32 {
	if cap(sel) < n+selSlack {
		sel = make([]int32, n+selSlack)
	}
	sel = sel[:cap(sel)]
	cnt := 0
	for base := 0; base < n; base += 64 {
		w := selLoadBits(vals, off+base)
		if valid != nil {
			w &= selLoadBits(valid, off+base)
		}
		if rem := n - base; rem < 64 {
			w &= 1<<uint(rem) - 1
		}
		switch {
		case w == 0:
		case w == ^uint64(0):
			s := sel[cnt : cnt+64]
			for j := range s {
				s[j] = int32(base + j)
			}
			cnt += 64
		case bits.OnesCount64(w) < 16:
			b := int32(base)
			for w != 0 {
				sel[cnt] = b + int32(bits.TrailingZeros64(w))
				cnt++
				w &= w - 1
			}
		default:
			expandDense(sel[cnt:cnt+64], w, base)
			cnt += bits.OnesCount64(w)
		}
	}
	return sel[:cnt]
}

// expandDense writes the positions base+j of the set bits j of w to the
// start of dst, which must have room for 64, eight candidates per mask byte
// with no data-dependent branch: each byte's table entry is stored whole
// and the cursor then advances by the number of set bits. The byte loop is
// unrolled by hand so that every shift is a constant.
func expandDense(dst []int32, w uint64, base int) {
	dst = dst[:64]
	p := unsafe.Pointer(unsafe.SliceData(dst))
	b := uint64(uint32(base)) * (1 | 1<<32)
	const step = 8 * (1 | 1<<32)
	// After k bytes the cursor is at most 8k, so each byte's 8 slots stay
	// within dst's 64.
	c := expandByte(p, 0, uint8(w), b)
	c = expandByte(p, c, uint8(w>>8), b+step)
	c = expandByte(p, c, uint8(w>>16), b+2*step)
	c = expandByte(p, c, uint8(w>>24), b+3*step)
	c = expandByte(p, c, uint8(w>>32), b+4*step)
	c = expandByte(p, c, uint8(w>>40), b+5*step)
	c = expandByte(p, c, uint8(w>>48), b+6*step)
	expandByte(p, c, uint8(w>>56), b+7*step)
}

// expandByte stores the positions of byte x's set bits, plus base (in both
// halves), at slot c of p and returns the next slot.
func expandByte(p unsafe.Pointer, c uintptr, x uint8, base uint64) uintptr {
	e := &selBytes[x]
	d := (*[4]uint64)(unsafe.Add(p, c*4))
	d[0] = base + e.pos[0]
	d[1] = base + e.pos[1]
	d[2] = base + e.pos[2]
	d[3] = base + e.pos[3]
	return c + uintptr(bits.OnesCount8(x))
}

// selectTrue returns the rows where mask is true (null and false rows are
// dropped), reusing sel's storage.
func selectTrue(sel []int32, mask *array.Boolean) []int32 {
	d := mask.Data()
	var valid []byte
	if mask.NullN() > 0 {
		valid = mask.NullBitmapBytes()
	}
	return selectBits(sel, bufferBytes(d, 1), valid, d.Offset(), mask.Len())
}

// allTrue reports whether mask is true (and not null) at every row.
func allTrue(mask *array.Boolean) bool {
	n := mask.Len()
	if mask.NullN() > 0 || n == 0 {
		return false
	}
	d := mask.Data()
	return bitutil.CountSetBits(bufferBytes(d, 1), d.Offset(), n) == n
}

// selectValid returns the rows where arr is not null, reusing sel's
// storage.
func selectValid(sel []int32, arr arrow.Array) []int32 {
	return selectBits(sel, arr.NullBitmapBytes(), nil, arr.Data().Offset(), arr.Len())
}

// selIsRange reports whether sel is a contiguous run of rows, in which case a
// zero-copy slice replaces the gather.
func selIsRange(sel []int32) bool {
	return len(sel) > 0 && int(sel[len(sel)-1]-sel[0]) == len(sel)-1
}

// gatherRecord returns the rows sel of rec, which must be valid and
// strictly increasing (a selection vector). It returns rec itself
// (retained) when sel selects every row, and a zero-copy slice when sel is
// one contiguous run; otherwise every column is gathered.
func gatherRecord(mem memory.Allocator, rec arrow.Record, sel []int32) (arrow.Record, error) {
	if int64(len(sel)) == rec.NumRows() {
		rec.Retain()
		return rec, nil
	}
	if selIsRange(sel) {
		return rec.NewSlice(int64(sel[0]), int64(sel[len(sel)-1])+1), nil
	}
	return gatherRows(mem, rec, sel)
}

// gatherRows returns the rows idx of rec, which must all be valid row
// indices (in any order, repeats allowed).
func gatherRows(mem memory.Allocator, rec arrow.Record, idx []int32) (arrow.Record, error) {
	return mapColumns(rec, len(idx), func(c arrow.Array) (arrow.Array, error) { return gather(mem, c, idx) })
}

// checkGatherRows reports an error unless every index of idx is a row of an
// array of n rows.
func checkGatherRows(idx []int32, n int) error {
	for _, i := range idx {
		if uint32(i) >= uint32(n) {
			return fmt.Errorf("vector: gather of row %d out of %d rows", i, n)
		}
	}
	return nil
}

// Gather returns arr[sel[0]], arr[sel[1]], ..., owned by the caller. Unlike
// Take's indices, those of sel must all be valid rows (0 <= i < arr.Len();
// an error otherwise); they are usually increasing (a selection vector) but
// may repeat or come in any order. Fixed-width and boolean columns use
// gathers specialised for this; other types go through Take.
func Gather(mem memory.Allocator, arr arrow.Array, sel []int32) (arrow.Array, error) {
	if err := checkGatherRows(sel, arr.Len()); err != nil {
		return nil, err
	}
	return gather(mem, arr, sel)
}

// gather is Gather for indices known to be valid rows of arr: the operators
// build them from arr itself.
func gather(mem memory.Allocator, arr arrow.Array, sel []int32) (arrow.Array, error) {
	d := arr.Data().(*array.Data)
	if d.Len() == 0 {
		// An empty array may have no buffers to gather from (sel is empty
		// too); the general take handles that.
		return takeArray(mem, arr, sel)
	}
	var data *array.Data
	switch d.DataType().ID() {
	case arrow.INT8, arrow.UINT8:
		data = gatherFixed[uint8](mem, arr, d, sel)
	case arrow.INT16, arrow.UINT16:
		data = gatherFixed[uint16](mem, arr, d, sel)
	case arrow.INT32, arrow.UINT32, arrow.FLOAT32, arrow.DATE32:
		data = gatherFixed[uint32](mem, arr, d, sel)
	case arrow.INT64, arrow.UINT64, arrow.FLOAT64, arrow.TIMESTAMP, arrow.DATE64, arrow.DURATION:
		data = gatherFixed[uint64](mem, arr, d, sel)
	case arrow.DECIMAL128:
		data = gatherFixed[[16]byte](mem, arr, d, sel)
	case arrow.BOOL:
		data = gatherBool(mem, arr, d, sel)
	case arrow.STRING, arrow.BINARY:
		data = gatherBinary(mem, arr, d, sel)
	default:
		return takeArray(mem, arr, sel)
	}
	defer data.Release()
	return array.MakeFromData(data), nil
}

// gatherValidity returns the validity bitmap of arr gathered through sel,
// or nil when no selected row is null. It assembles each output byte in a
// register from 8 input bits rather than setting bits one by one in memory.
func gatherValidity(mem memory.Allocator, arr arrow.Array, sel []int32) (*memory.Buffer, int) {
	if arr.NullN() == 0 {
		return nil, 0
	}
	in := arr.NullBitmapBytes()
	off := int32(arr.Data().Offset())
	n := len(sel)
	buf := memory.NewResizableBuffer(mem)
	buf.Resize(int(bitutil.BytesForBits(int64(n))))
	out := buf.Bytes()
	full := n &^ 7
	for o := 0; o < full; o += 8 {
		s := (*[8]int32)(sel[o : o+8])
		var b byte
		for k, i := range s {
			p := off + i
			b |= (in[p>>3] >> (p & 7) & 1) << k
		}
		out[o>>3] = b
	}
	if full < n {
		var b byte
		for k, i := range sel[full:] {
			p := off + i
			b |= (in[p>>3] >> (p & 7) & 1) << k
		}
		out[full>>3] = b
	}
	valid := 0
	for _, b := range out[:n>>3] {
		valid += bits.OnesCount8(b)
	}
	if n&7 != 0 {
		valid += bits.OnesCount8(out[n>>3] & (1<<uint(n&7) - 1))
	}
	if valid == n {
		buf.Release()
		return nil, 0
	}
	return buf, n - valid
}

func gatherFixed[T uint8 | uint16 | uint32 | uint64 | [16]byte](mem memory.Allocator, arr arrow.Array, d *array.Data, sel []int32) *array.Data {
	validity, nulls := gatherValidity(mem, arr, sel)
	var zero T
	vals := memory.NewResizableBuffer(mem)
	vals.Resize(len(sel) * int(sizeOf(zero)))
	out := castSlice[T](vals.Bytes())[:len(sel)]
	in := castSlice[T](bufferBytes(d, 1))[d.Offset():]
	gatherValues(out, in[:d.Len()], sel)
	data := array.NewData(d.DataType(), len(sel), []*memory.Buffer{validity, vals}, nil, nulls, 0)
	if validity != nil {
		validity.Release()
	}
	vals.Release()
	return data
}

// gatherValues sets out[o] = in[sel[o]]. The indices are known to be in
// range (gather's contract), so the loads skip bounds checks, four at a
// time; that makes the gather about a third faster.
func gatherValues[T uint8 | uint16 | uint32 | uint64 | [16]byte](out, in []T, sel []int32) {
	out = out[:len(sel)]
	if len(in) == 0 {
		return
	}
	p := unsafe.Pointer(unsafe.SliceData(in))
	var zero T
	size := unsafe.Sizeof(zero)
	o := 0
	for ; o+4 <= len(sel); o += 4 {
		s := (*[4]int32)(sel[o : o+4])
		d := (*[4]T)(out[o : o+4])
		d[0] = *(*T)(unsafe.Add(p, uintptr(s[0])*size))
		d[1] = *(*T)(unsafe.Add(p, uintptr(s[1])*size))
		d[2] = *(*T)(unsafe.Add(p, uintptr(s[2])*size))
		d[3] = *(*T)(unsafe.Add(p, uintptr(s[3])*size))
	}
	for ; o < len(sel); o++ {
		out[o] = *(*T)(unsafe.Add(p, uintptr(sel[o])*size))
	}
}

func gatherBool(mem memory.Allocator, arr arrow.Array, d *array.Data, sel []int32) *array.Data {
	validity, nulls := gatherValidity(mem, arr, sel)
	n := len(sel)
	vals := memory.NewResizableBuffer(mem)
	vals.Resize(int(bitutil.BytesForBits(int64(n))))
	out := vals.Bytes()
	clear(out)
	in := bufferBytes(d, 1)
	off := int32(d.Offset())
	for o, i := range sel {
		p := off + i
		out[o>>3] |= (in[p>>3] >> (p & 7) & 1) << (o & 7)
	}
	data := array.NewData(d.DataType(), n, []*memory.Buffer{validity, vals}, nil, nulls, 0)
	if validity != nil {
		validity.Release()
	}
	vals.Release()
	return data
}

// gatherBinary gathers a string or binary column. Most strings are short,
// so a value of up to 16 bytes is copied as one 16-byte block (the data
// buffer has 16 bytes of slack at its end for that) instead of through a
// call to memmove.
func gatherBinary(mem memory.Allocator, arr arrow.Array, d *array.Data, sel []int32) *array.Data {
	validity, nulls := gatherValidity(mem, arr, sel)
	inOff := castSlice[int32](bufferBytes(d, 1))[d.Offset():]
	inOff = inOff[:d.Len()+1]
	var in []byte
	if b := d.Buffers()[2]; b != nil {
		in = b.Bytes()
	}
	total := 0
	for _, i := range sel {
		total += int(inOff[i+1] - inOff[i])
	}
	offBuf := memory.NewResizableBuffer(mem)
	offBuf.Resize((len(sel) + 1) * 4)
	offs := castSlice[int32](offBuf.Bytes())[:len(sel)+1]
	dataBuf := memory.NewResizableBuffer(mem)
	// 16 bytes of slack let short strings be copied as one 16-byte move.
	// ResizeNoShrink: Resize(0) would free the reserved bytes again.
	dataBuf.Reserve(total + 16)
	dataBuf.ResizeNoShrink(total)
	out := dataBuf.Buf()
	pos := int32(0)
	for o, i := range sel {
		offs[o] = pos
		lo, hi := inOff[i], inOff[i+1]
		if hi-lo <= 16 && int(lo)+16 <= len(in) {
			*(*[16]byte)(out[pos : pos+16]) = *(*[16]byte)(in[lo : lo+16])
		} else {
			copy(out[pos:], in[lo:hi])
		}
		pos += hi - lo
	}
	offs[len(sel)] = pos
	data := array.NewData(d.DataType(), len(sel), []*memory.Buffer{validity, offBuf, dataBuf}, nil, nulls, 0)
	if validity != nil {
		validity.Release()
	}
	offBuf.Release()
	dataBuf.Release()
	return data
}
