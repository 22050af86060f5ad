package stateful

import (
	"context"

	"github.com/apache/arrow/go/v17/arrow"
	"github.com/apache/arrow/go/v17/arrow/array"

	"github.com/arrowstream/arrowstream/plan"
	"github.com/arrowstream/arrowstream/vector"
)

// The join's matched pairs, assembled once per epoch. Without a residual
// condition every candidate pair is output, and a partition's epoch
// records its pairs as row numbers into the records they read (its new
// rows, its stored batches) instead of gathering them: with 200 state
// partitions an epoch's pairs are spread over hundreds of small sources
// (a partition's new rows and each stored batch a probe hit), and one
// Take per source and column cost mostly allocations. The epoch gathers
// every partition's pairs with one vector.GatherChunks per output column.
//
// A residual condition is evaluated here too, over the gathered pairs of
// every partition at once (residualDeferred), when no partition needs its
// answer: an inner join, whose sides keep no matched flags. Per partition
// and source it had cost a gather of both sides, a bind of the condition,
// its evaluation and a Take of the passing pairs, for a few rows each: at
// 200 partitions, most of an epoch of Nexmark q4's join. The pairs of an
// outer or semi join, whose matched flags follow the condition, are still
// filtered in their partition.

// joinOutPairs are output pairs: rows li of l beside rows ri of r (both
// retained until the epoch gathers them).
type joinOutPairs struct {
	l, r   arrow.Record
	li, ri []int32
}

func releaseOutPairs(ps []joinOutPairs) {
	for _, p := range ps {
		p.l.Release()
		p.r.Release()
	}
}

// residualRows bounds the candidate pairs gathered at once for a deferred
// residual condition: the condition's input is held only for a block of
// pairs, not for the whole epoch's.
const residualRows = 1 << 16

// residualDeferred: the residual condition filters the epoch's gathered
// pairs instead of each partition's (see above).
func (s *statefulJoin) residualDeferred() bool {
	return s.residual != nil && s.typ == plan.InnerJoin && !s.tracksMatches(0) && !s.tracksMatches(1)
}

// gatherOutPairs gathers pairs (of every partition) into records of the
// join's output schema, filtered by a deferred residual condition; none
// for no pairs. Without a residual it is one record; with one, a record
// per block of at most residualRows candidate pairs (fewer when a block
// has no passing pair).
func (s *statefulJoin) gatherOutPairs(ctx context.Context, pairs []joinOutPairs) ([]arrow.Record, error) {
	if !s.residualDeferred() {
		rec, err := s.gatherPairs(s.reducePairs(pairs), s.out)
		if rec == nil || err != nil {
			return nil, err
		}
		return []arrow.Record{rec}, nil
	}
	var out []arrow.Record
	for from := 0; from < len(pairs); {
		to, n := from, 0
		for to < len(pairs) && (to == from || n+len(pairs[to].li) <= residualRows) {
			n += len(pairs[to].li)
			to++
		}
		rec, err := s.filterPairs(ctx, pairs[from:to])
		if err != nil {
			releaseRecords(out)
			return nil, err
		}
		if rec != nil {
			out = append(out, rec)
		}
		from = to
	}
	return out, nil
}

// filterPairs gathers pairs and keeps those the residual condition
// passes, as a record of the output schema (nil: none).
func (s *statefulJoin) filterPairs(ctx context.Context, pairs []joinOutPairs) (arrow.Record, error) {
	if s.inPlace != nil && s.inPlace.fits(pairs) {
		return s.filterPairsInPlace(pairs)
	}
	if s.narrow != nil {
		return s.filterPairsNarrow(ctx, pairs)
	}
	joined, err := s.gatherPairs(pairs, s.joined)
	if joined == nil || err != nil {
		return nil, err
	}
	defer joined.Release()
	keep, err := s.residualMask(ctx, joined)
	if err != nil {
		return nil, err
	}
	if keep == nil { // every pair passes
		return array.NewRecord(s.out, joined.Columns(), joined.NumRows()), nil
	}
	kept := make([]int32, 0, countTrue(keep))
	for k, ok := range keep {
		if ok {
			kept = append(kept, int32(k))
		}
	}
	switch {
	case len(kept) == 0:
		return nil, nil
	case len(kept) == len(keep):
		return array.NewRecord(s.out, joined.Columns(), joined.NumRows()), nil
	}
	t, err := vector.TakeRecord(s.mem, joined, kept)
	if err != nil {
		return nil, err
	}
	defer t.Release()
	return array.NewRecord(s.out, t.Columns(), t.NumRows()), nil
}

// gatherPairs gathers pairs into one record of schema (the output's or
// the residual's, of the same columns); nil for no pairs.
func (s *statefulJoin) gatherPairs(pairs []joinOutPairs, schema *arrow.Schema) (arrow.Record, error) {
	return s.gatherPairCols(pairs, schema, nil)
}

// gatherPairCols is gatherPairs of the joined columns cols (ascending;
// nil: all) into a record of schema, their fields.
func (s *statefulJoin) gatherPairCols(pairs []joinOutPairs, schema *arrow.Schema, cols []int) (arrow.Record, error) {
	n := 0
	for _, p := range pairs {
		n += len(p.li)
	}
	if n == 0 {
		return nil, nil
	}
	out := make([]arrow.Array, 0, schema.NumFields())
	defer func() {
		for _, c := range out {
			c.Release()
		}
	}()
	// The record's buffers other than string data come from one slab whose
	// fresh pages are mapped in at once: the output is kept (a memory sink
	// holds it), so its fixed-width values, offsets and bitmaps, each below
	// the size a buffer is prefaulted at, were faulted in a page at a time.
	size := 0
	for _, f := range schema.Fields() {
		size += vector.GatherChunksSlabBytes(f.Type, n)
	}
	mem := vector.NewSlabAllocator(s.mem, size)
	defer mem.Done()
	off := 0 // the side's first joined ordinal
	for side := 0; side < 2; side++ {
		// The side's columns gathered: all, or those of cols.
		ncols := int(pairs[0].l.NumCols())
		if side == 1 {
			off, ncols = ncols, int(pairs[0].r.NumCols())
		}
		var want []int
		for _, c := range cols {
			if c >= off && c < off+ncols {
				want = append(want, c-off)
			}
		}
		if cols != nil && len(want) == 0 {
			continue
		}
		if cols != nil {
			ncols = len(want)
		}
		// The distinct records of the side, and each output row's record
		// and row there.
		var recs []arrow.Record
		index := map[arrow.Record]int32{}
		// src and rows are the join's scratch: GatherChunks copies the
		// values, nothing keeps them.
		src, rows := int32s(&s.scratch.src, n)[:0], int32s(&s.scratch.rows, n)[:0]
		for _, p := range pairs {
			rec, idx := p.l, p.li
			if side == 1 {
				rec, idx = p.r, p.ri
			}
			k, ok := index[rec]
			if !ok {
				k = int32(len(recs))
				index[rec] = k
				recs = append(recs, rec)
			}
			for range idx {
				src = append(src, k)
			}
			rows = append(rows, idx...)
		}
		chunks := make([]arrow.Array, len(recs))
		for x := 0; x < ncols; x++ {
			c := x
			if cols != nil {
				c = want[x]
			}
			for k, rec := range recs {
				chunks[k] = rec.Column(c)
			}
			a, err := vector.GatherChunks(mem, chunks, src, rows)
			if err != nil {
				return nil, err
			}
			out = append(out, a)
		}
	}
	return array.NewRecord(schema, out, int64(n)), nil
}

// countTrue counts the set flags of keep (to size the rows it selects).
func countTrue(keep []bool) int {
	n := 0
	for _, ok := range keep {
		if ok {
			n++
		}
	}
	return n
}
