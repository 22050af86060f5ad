package stateful

import "slices"

// Splitting an epoch's new rows of a side by state partition. Each
// partition gets a view of the one record of the side's new rows: the
// record (retained) and the selection of its rows in the partition, with
// their keys, hashes and flags gathered into partition order (small
// slices; the rows' columns are not copied). A partition's stored batch
// keeps the view (stateful_join_view.go): the rows reach the state
// without a copy. When every row belongs to one partition the selection
// is nil (the identity).

// splitSide splits side i's new rows by their key's partition (entry p
// nil when partition p has none). The parts are owned by the caller; they
// share in, the view of r's record. Their selections and fixed keys are
// side i's scratch (joinScratch.sel, words): valid until the side's next
// split, which is the next epoch's (a stored batch copies them).
func (s *statefulJoin) splitSide(i int, r *sideRows, n int) ([]*sideRows, error) {
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
	// partition p's rows begin in order. part, start and next are the
	// join's scratch (nothing keeps them after the split).
	part := int32s(&s.scratch.part, rows)
	start := int32s(&s.scratch.start, n+1)
	clear(start)
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
	// One pass scatters each row's selection and key to its place. The
	// parts carry no hashes: nothing after the split reads them.
	next := int32s(&s.scratch.next, n)
	copy(next, start[:n])
	sel := int32s(&s.scratch.sel[i], rows)
	var words []uint64
	var keys []string
	switch {
	case r.words != nil:
		words = uint64s(&s.scratch.words[i], rows)
		for j, p := range part {
			k := next[p]
			next[p]++
			sel[k] = int32(selRow(r.sel, j))
			words[k] = r.words[j]
		}
	default:
		keys = make([]string, rows)
		for j, p := range part {
			k := next[p]
			next[p]++
			sel[k] = int32(selRow(r.sel, j))
			keys[k] = r.keys[j]
		}
	}
	// The flags: a set without a true one (nearly always: keys are rarely
	// null, most joins have no side condition) is read in place, its
	// slices as false as the gathered ones.
	keyNull := gatherFlags(r.keyNull, part, start, n)
	excluded := gatherFlags(r.excluded, part, start, n)
	var unstored []bool
	if r.unstored != nil {
		unstored = gatherFlags(r.unstored, part, start, n)
	}
	for p := 0; p < n; p++ {
		lo, hi := start[p], start[p+1]
		if lo == hi {
			continue
		}
		r.rec.Retain()
		part := &sideRows{rec: r.rec, sel: sel[lo:hi:hi], in: in,
			keyNull: keyNull[lo:hi:hi], excluded: excluded[lo:hi:hi]}
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

// gatherFlags returns flags in partition order (row j at its part's
// next place from start): flags itself when none is set, since then
// every part's slice of it holds the same falses.
func gatherFlags(flags []bool, part, start []int32, n int) []bool {
	if !slices.Contains(flags, true) {
		return flags
	}
	out := make([]bool, len(flags))
	next := append([]int32(nil), start[:n]...)
	for j, p := range part {
		out[next[p]] = flags[j]
		next[p]++
	}
	return out
}
