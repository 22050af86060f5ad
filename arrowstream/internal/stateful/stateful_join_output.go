package stateful

import (
	"github.com/apache/arrow/go/v17/arrow"
	"github.com/apache/arrow/go/v17/arrow/array"

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
// With a residual condition the pairs are gathered per source as before:
// the condition is evaluated over them.

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

// gatherOutPairs gathers pairs (of every partition) into one record of
// the join's output schema; nil for no pairs.
func (s *statefulJoin) gatherOutPairs(pairs []joinOutPairs) (arrow.Record, error) {
	n := 0
	for _, p := range pairs {
		n += len(p.li)
	}
	if n == 0 {
		return nil, nil
	}
	cols := make([]arrow.Array, 0, s.out.NumFields())
	defer func() {
		for _, c := range cols {
			c.Release()
		}
	}()
	for side := 0; side < 2; side++ {
		// The distinct records of the side, and each output row's record
		// and row there.
		var recs []arrow.Record
		index := map[arrow.Record]int32{}
		src, rows := make([]int32, 0, n), make([]int32, 0, n)
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
		for c := 0; c < int(recs[0].NumCols()); c++ {
			for k, rec := range recs {
				chunks[k] = rec.Column(c)
			}
			a, err := vector.GatherChunks(s.mem, chunks, src, rows)
			if err != nil {
				return nil, err
			}
			cols = append(cols, a)
		}
	}
	return array.NewRecord(s.out, cols, int64(n)), nil
}
