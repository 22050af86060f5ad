package stateful

// Splitting an epoch's new rows of a side by state partition. Each
// partition gets a view of the one record of the side's new rows: the
// record (retained) and the selection of its rows in the partition, with
// their keys, hashes and flags gathered into partition order (small
// slices; the rows' columns are not copied). A partition's stored batch
// keeps the view (stateful_join_view.go): the rows reach the state
// without a copy. When every row belongs to one partition the selection
// is nil (the identity).

// splitSide splits a side's new rows by their key's partition (entry p
// nil when partition p has none). The parts are owned by the caller; they
// share in, the view of r's record.
func (s *statefulJoin) splitSide(r *sideRows, n int) ([]*sideRows, error) {
	out := make([]*sideRows, n)
	rows := r.count()
	if rows == 0 {
		return out, nil
	}
	in := r.in
	if in == nil {
		in = newJoinInput(r.rec, &s.viewHeld)
	}
	// Settled here, once: the partitions' batches view the record from
	// their goroutines, and the background snapshot encodes it (see
	// settleNullCounts).
	settleNullCounts(r.rec)
	whole := func(p int) []*sideRows {
		r.rec.Retain()
		out[p] = &sideRows{rec: r.rec, sel: r.sel, in: in, keys: r.keys, words: r.words, keyNull: r.keyNull, hashes: r.hashes, excluded: r.excluded, unstored: r.unstored}
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
	// The selection of each part: rows of r's record.
	sel := selRows(r.sel, order)
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
		r.rec.Retain()
		part := &sideRows{rec: r.rec, sel: sel[lo:hi:hi], in: in,
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
