package stateful

import (
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
		out[p] = &sideRows{rec: r.rec, keys: r.keys, words: r.words, keyNull: r.keyNull, hashes: r.hashes, excluded: r.excluded, unstored: r.unstored, sliced: r.sliced}
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
	rec, err := vector.TakeRecord(s.keep, r.rec, order)
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
	var unstored []bool
	if r.unstored != nil {
		unstored = make([]bool, rows)
		for k, j := range order {
			unstored[k] = r.unstored[j]
		}
	}
	for p := 0; p < n; p++ {
		lo, hi := start[p], start[p+1]
		if lo == hi {
			continue
		}
		part := &sideRows{rec: rec.NewSlice(int64(lo), int64(hi)), sliced: true,
			keyNull: keyNull[lo:hi:hi], hashes: hashes[lo:hi:hi], excluded: excluded[lo:hi:hi]}
		if unstored != nil {
			part.unstored = unstored[lo:hi:hi]
		}
		if words != nil {
			part.words = words[lo:hi:hi]
		} else {
			part.keys = keys[lo:hi:hi]
		}
		out[p] = part
	}
	return out, nil
}
