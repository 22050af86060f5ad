package vector

import (
	"github.com/apache/arrow/go/v17/arrow"
	"github.com/apache/arrow/go/v17/arrow/array"
)

// The words grouper's run-length path. A streaming batch's rows often come
// in long runs of one key: q7's GROUP BY window(dateTime, '10 seconds')
// sees an epoch's ten thousand bids fall in one or two windows. Such a
// batch is grouped by its runs: the rows where some leaf differs from the
// row before start a run, the first row of each run (its representative)
// goes through the table as any row does, and every row of a run takes its
// representative's group. The groups, their numbering (first appearance:
// the representatives are in row order) and the layout learned are those
// of the generic path, since the representatives hold every distinct key
// of the batch and two consecutive rows with equal leaves have equal keys.
// A batch with nulls in its keys, or with more runs than a sixteenth of
// its rows, takes the generic path; whether it has few runs is first
// checked on a prefix, so that a batch keyed by window and id (windowed,
// q5) pays for a few hundred comparisons only.

const (
	// runsMinRows is the smallest batch the run path is tried on.
	runsMinRows = 64
	// runsPrefix is the rows checked before the whole batch is scanned.
	runsPrefix = 256
	// runsShare: the run path is taken with at most rows/runsShare runs.
	runsShare = 16
)

// groupRuns groups a batch of n rows by its runs; false, with nothing
// written to the table or to gids, when the batch is not one for the run
// path (the caller then takes the generic path).
func (g *wordsGrouper) groupRuns(keys []arrow.Array, gids []int32) bool {
	n := len(gids)
	if n < runsMinRows || g.noRuns {
		return false
	}
	leaves, ok := g.runLeaves(keys, n)
	if !ok {
		return false
	}
	defer clear(leaves) // the columns are the caller's: hold none past the batch
	p := min(n, runsPrefix)
	if _, ok := g.findRuns(leaves, p, p/runsShare); !ok {
		return false
	}
	starts, ok := g.findRuns(leaves, n, n/runsShare)
	if !ok {
		return false
	}
	m := len(starts)
	if cap(g.cols) < g.nw {
		g.cols = make([][]uint64, g.nw)
	}
	g.cols = g.cols[:g.nw]
	for i := range g.cols {
		g.cols[i] = grow(g.cols[i], m)[:m]
	}
	clear(g.cols[g.nw-1]) // no nulls: the null word is zero
	for i, col := range leaves {
		wordsAt(col, starts, g.cols[i])
	}
	g.fitLayout(m, false)
	hashes := g.hashStored(m)
	g.runGids = grow(g.runGids, m)[:m]
	rg := g.runGids
	probeWords(g, rg, hashes, g.k)
	for r, s := range starts {
		e := n
		if r+1 < m {
			e = int(starts[r+1])
		}
		fillGids(gids[s:e], rg[r])
	}
	g.runBatches++
	return true
}

// fillGids sets every entry of dst to gid.
func fillGids(dst []int32, gid int32) {
	for i := range dst {
		dst[i] = gid
	}
}

// runLeaves returns the batch's leaf columns (struct fields resolved), or
// false when a key column or leaf has nulls or is not n rows long.
func (g *wordsGrouper) runLeaves(keys []arrow.Array, n int) ([]arrow.Array, bool) {
	if len(keys) != len(g.types) {
		return nil, false
	}
	for _, col := range keys {
		if col.Len() != n || col.NullN() > 0 {
			return nil, false
		}
	}
	leaves := g.runCols[:0]
	for _, l := range g.leaves {
		col := keys[l.col]
		if l.field >= 0 {
			st, ok := col.(*array.Struct)
			if !ok {
				return nil, false
			}
			col = st.Field(l.field)
		}
		if col.Len() != n || col.NullN() > 0 {
			return nil, false
		}
		leaves = append(leaves, col)
	}
	g.runCols = leaves
	return leaves, true
}

// findRuns returns the starts of the runs of the first n rows (rows where
// some leaf differs from the row before; row 0 always), or false when
// there are more than limit+1 of them.
func (g *wordsGrouper) findRuns(leaves []arrow.Array, n, limit int) ([]int32, bool) {
	starts := append(g.runStarts[:0], 0)
	var ok bool
	for _, col := range leaves {
		// Each leaf splits the runs of the leaves before it.
		g.runSplit = append(g.runSplit[:0], starts...)
		if starts, ok = splitLeaf(col, g.runSplit, starts[:0], n, limit); !ok {
			g.runStarts = starts[:0]
			return nil, false
		}
	}
	g.runStarts = starts
	return starts, true
}

// splitLeaf appends to out the starts of the runs of the first n rows of
// col within the runs that start at in; false past limit+1 runs.
func splitLeaf(col arrow.Array, in, out []int32, n, limit int) ([]int32, bool) {
	switch a := col.(type) {
	case *array.Int8:
		return splitRuns(a.Int8Values()[:n], in, out, limit)
	case *array.Int16:
		return splitRuns(a.Int16Values()[:n], in, out, limit)
	case *array.Int32:
		return splitRuns(a.Int32Values()[:n], in, out, limit)
	case *array.Int64:
		return splitRuns(a.Int64Values()[:n], in, out, limit)
	case *array.Uint8:
		return splitRuns(a.Uint8Values()[:n], in, out, limit)
	case *array.Uint16:
		return splitRuns(a.Uint16Values()[:n], in, out, limit)
	case *array.Uint32:
		return splitRuns(a.Uint32Values()[:n], in, out, limit)
	case *array.Uint64:
		return splitRuns(a.Uint64Values()[:n], in, out, limit)
	case *array.Timestamp:
		return splitRuns(a.TimestampValues()[:n], in, out, limit)
	case *array.Date32:
		return splitRuns(a.Date32Values()[:n], in, out, limit)
	case *array.Date64:
		return splitRuns(a.Date64Values()[:n], in, out, limit)
	case *array.Time32:
		return splitRuns(a.Time32Values()[:n], in, out, limit)
	case *array.Time64:
		return splitRuns(a.Time64Values()[:n], in, out, limit)
	case *array.Duration:
		return splitRuns(a.DurationValues()[:n], in, out, limit)
	}
	return out, false
}

// splitRuns appends to out the starts of in, and every row of vals that
// differs from the row before within one of in's runs; false as soon as
// out would pass limit+1 entries.
func splitRuns[T wordValue](vals []T, in, out []int32, limit int) ([]int32, bool) {
	for r, s := range in {
		e := len(vals)
		if r+1 < len(in) {
			e = int(in[r+1])
		}
		out = append(out, s)
		prev := vals[s]
		for i := int(s) + 1; i < e; i++ {
			if v := vals[i]; v != prev {
				if len(out) > limit {
					return out, false
				}
				out = append(out, int32(i))
				prev = v
			}
		}
	}
	return out, len(out) <= limit+1
}

// wordsAt writes the words of col's rows at (a fixed-width column with no
// nulls, as runLeaves checked) to out.
func wordsAt(col arrow.Array, at []int32, out []uint64) {
	switch a := col.(type) {
	case *array.Int8:
		gatherWords(a.Int8Values(), at, out)
	case *array.Int16:
		gatherWords(a.Int16Values(), at, out)
	case *array.Int32:
		gatherWords(a.Int32Values(), at, out)
	case *array.Int64:
		gatherWords(a.Int64Values(), at, out)
	case *array.Uint8:
		gatherWords(a.Uint8Values(), at, out)
	case *array.Uint16:
		gatherWords(a.Uint16Values(), at, out)
	case *array.Uint32:
		gatherWords(a.Uint32Values(), at, out)
	case *array.Uint64:
		gatherWords(a.Uint64Values(), at, out)
	case *array.Timestamp:
		gatherWords(a.TimestampValues(), at, out)
	case *array.Date32:
		gatherWords(a.Date32Values(), at, out)
	case *array.Date64:
		gatherWords(a.Date64Values(), at, out)
	case *array.Time32:
		gatherWords(a.Time32Values(), at, out)
	case *array.Time64:
		gatherWords(a.Time64Values(), at, out)
	case *array.Duration:
		gatherWords(a.DurationValues(), at, out)
	}
}

func gatherWords[T wordValue](vals []T, at []int32, out []uint64) {
	for i, r := range at[:len(out)] {
		out[i] = uint64(vals[r])
	}
}
