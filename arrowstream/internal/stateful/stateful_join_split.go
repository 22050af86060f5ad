package stateful

import (
	"github.com/apache/arrow/go/v17/arrow"

	"github.com/arrowstream/arrowstream/vector"
)

// Splitting an epoch's new rows of a side by state partition. The rows are
// gathered once into partition order, and each partition gets a zero-copy
// slice of that one record (and of its keys, hashes and flags): one Take
// of every column per side and epoch instead of one per partition (with
// 200 shuffle partitions an epoch of 10K rows made 200 Takes of ~50 rows
// per column, most of their cost allocation), and none at all when every
// row belongs to one partition. A partition that stores all its new rows
// keeps its slice as the stored batch (buildJoinBatch retains it): the
// rows are so copied once on their way into the state, not twice. The
// slices share the epoch's buffers until the last of them is released
// (merged, compacted or evicted), so a sliced batch counts its own rows'
// bytes (slicedRecordBytes), not the shared buffers'.

// splitSide splits a side's new rows by their key's partition (entry p
// nil when partition p has none). The parts are owned by the caller.
func (s *statefulJoin) splitSide(r *sideRows, n int) ([]*sideRows, error) {
	out := make([]*sideRows, n)
	rows := int(r.rec.NumRows())
	if rows == 0 {
		return out, nil
	}
	whole := func(p int) []*sideRows {
		r.rec.Retain()
		out[p] = &sideRows{rec: r.rec, keys: r.keys, words: r.words, keyNull: r.keyNull, hashes: r.hashes, excluded: r.excluded, sliced: r.sliced}
		return out
	}
	if n == 1 {
		return whole(0), nil
	}
	// A counting sort of the rows by partition: start[p] is where
	// partition p's rows begin in order.
	part := make([]int32, rows)
	start := make([]int32, n+1)
	for j, h := range r.hashes {
		p := s.state.scheme.partition(h, n)
		part[j] = int32(p)
		start[p+1]++
	}
	for p := 0; p < n; p++ {
		if int(start[p+1]) == rows {
			return whole(p), nil
		}
		start[p+1] += start[p]
	}
	order := make([]int32, rows)
	next := append([]int32(nil), start[:n]...)
	for j, p := range part {
		order[next[p]] = int32(j)
		next[p]++
	}
	rec, err := vector.TakeRecord(s.mem, r.rec, order)
	if err != nil {
		return nil, err
	}
	defer rec.Release()
	var words []uint64
	var keys []string
	if r.words != nil {
		words = make([]uint64, rows)
	} else {
		keys = make([]string, rows)
	}
	keyNull, hashes, excluded := make([]bool, rows), make([]uint64, rows), make([]bool, rows)
	for k, j := range order {
		if words != nil {
			words[k] = r.words[j]
		} else {
			keys[k] = r.keys[j]
		}
		keyNull[k], hashes[k], excluded[k] = r.keyNull[j], r.hashes[j], r.excluded[j]
	}
	for p := 0; p < n; p++ {
		lo, hi := start[p], start[p+1]
		if lo == hi {
			continue
		}
		part := &sideRows{rec: rec.NewSlice(int64(lo), int64(hi)), sliced: true,
			keyNull: keyNull[lo:hi:hi], hashes: hashes[lo:hi:hi], excluded: excluded[lo:hi:hi]}
		if words != nil {
			part.words = words[lo:hi:hi]
		} else {
			part.keys = keys[lo:hi:hi]
		}
		out[p] = part
	}
	return out, nil
}

// slicedRecordBytes is the bytes of rec's rows in its buffers, for a
// record that may be a slice of larger buffers: exact for fixed-width and
// string/binary columns, the rows' share of the buffers for other types.
func slicedRecordBytes(rec arrow.Record) int64 {
	var n int64
	for _, c := range rec.Columns() {
		n += slicedDataBytes(c.Data())
	}
	return n
}

func slicedDataBytes(d arrow.ArrayData) int64 {
	length, offset := int64(d.Len()), int64(d.Offset())
	bufs := d.Buffers()
	var n int64
	if len(bufs) > 0 && bufs[0] != nil {
		n += (length + 7) / 8
	}
	switch dt := d.DataType().(type) {
	case *arrow.BooleanType:
		return n + (length+7)/8
	case arrow.FixedWidthDataType:
		return n + length*int64(dt.BitWidth())/8
	case *arrow.StringType, *arrow.BinaryType:
		if len(bufs) < 3 || bufs[1] == nil || length == 0 {
			return n
		}
		offs := arrow.Int32Traits.CastFromBytes(bufs[1].Bytes())
		if int64(len(offs)) > offset+length {
			n += int64(offs[offset+length] - offs[offset])
		}
		return n + 4*(length+1)
	case *arrow.LargeStringType, *arrow.LargeBinaryType:
		if len(bufs) < 3 || bufs[1] == nil || length == 0 {
			return n
		}
		offs := arrow.Int64Traits.CastFromBytes(bufs[1].Bytes())
		if int64(len(offs)) > offset+length {
			n += offs[offset+length] - offs[offset]
		}
		return n + 8*(length+1)
	}
	var total int64
	for _, b := range bufs {
		if b != nil {
			total += int64(b.Len())
		}
	}
	for _, c := range d.Children() {
		total += slicedDataBytes(c)
	}
	if all := offset + length; all > 0 && d.DataType().ID() != arrow.STRUCT {
		total = total * length / all
	}
	return n + total
}
