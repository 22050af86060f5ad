package vector

import (
	"context"

	"github.com/apache/arrow/go/v17/arrow"
)

// Growth of the multi-key grouper (wordsGrouper) made interruptible while
// a context is set (groupContext), as the single-key tables' growth is
// (slotTable.rehashContext): GROUP BY a, b over millions of groups doubles
// its slot table and its tuples in steps that a cancelled query would
// otherwise wait out (hundreds of milliseconds at 8M groups).

// groupContext is group with its growth steps checking ctx. A cancelled
// growth ends the batch with ctx's error; the groups made before it stay
// and the grouper stays consistent (a group whose rows were not counted
// yet has a count of zero), but the caller is expected to give up on it.
func (g *wordsGrouper) groupContext(ctx context.Context, keys []arrow.Array, gids []int32) error {
	g.growCtx, g.growErr = ctx, nil
	err := g.group(keys, gids)
	if g.growErr != nil {
		err = g.growErr
	}
	g.growCtx, g.growErr = nil, nil
	return err
}

// growTable doubles the slot table. While growCtx is set the new table is
// taken from the large-buffer cache and filled cancelCheckRows groups at a
// time; a cancelled growth leaves the table as it was and records
// growErr, and probeWords ends the batch after the row that asked for the
// growth (the table has room for it: it grows at half full). Should the
// batch go on regardless, the table grows in one step at three quarters
// full so that it can never fill up.
func (g *wordsGrouper) growTable() {
	newLen := 2 * g.numSlots()
	switch {
	case g.growCtx == nil:
		g.rehash(newLen)
	case g.growErr == nil:
		if g.growReserve != nil {
			if err := g.growReserve(int64(newLen*(g.k+1)-len(g.slots)) * 8); err != nil {
				g.growErr = err
				return
			}
		}
		if err := g.rehashContext(g.growCtx, newLen); err != nil {
			g.growErr = err
		}
	case 4*(g.numGroups()+1) > 3*g.numSlots():
		g.rehash(newLen)
	}
}

// rehashContext moves every group into a table of newLen slots (from
// bigAlloc, faulted in with ctx checks), cancelCheckRows groups at a time
// with ctx checked between; on cancellation the table is left as it was.
func (g *wordsGrouper) rehashContext(ctx context.Context, newLen int) error {
	slots, err := bigAlloc[uint64](ctx, &g.big, newLen*(g.k+1))
	if err != nil {
		return err
	}
	mask := newLen - 1
	k := g.k
	n := g.numGroups()
	for lo := 0; lo < n; lo += cancelCheckRows {
		if err := ctx.Err(); err != nil {
			bigFree(&g.big, slots)
			return err
		}
		for gid := lo; gid < min(lo+cancelCheckRows, n); gid++ {
			t := g.tuples[gid*k : gid*k+k]
			placeWords(slots, mask, tupleHash(t), int32(gid), t)
		}
	}
	bigFree(&g.big, g.slots)
	g.slots, g.mask = slots, mask
	return nil
}

// growTuples makes room for need words of tuples, copying interruptibly
// while growCtx is set; false when that copy was cancelled (growErr set,
// tuples unchanged).
func (g *wordsGrouper) growTuples(need int) bool {
	if g.growErr != nil {
		return false
	}
	if g.growCtx == nil {
		t := make([]uint64, len(g.tuples), max(need, 2*cap(g.tuples)))
		copy(t, g.tuples)
		g.tuples = t
		return true
	}
	t, err := growCapContext(g.growCtx, g.tuples, need)
	if err != nil {
		g.growErr = err
		return false
	}
	g.tuples = t
	return true
}

// growRows extends the row counts to n groups (new ones zero), copying
// interruptibly while growCtx is set; false when this batch's growth was
// cancelled (its rows are then not counted: finish and compaction extend
// the counts with zeros).
func (g *wordsGrouper) growRows(n int) bool {
	if g.growErr != nil {
		return false
	}
	if n > cap(g.rows) && g.growCtx != nil {
		r, err := growCapContext(g.growCtx, g.rows, n)
		if err != nil {
			g.growErr = err
			return false
		}
		g.rows = r
	}
	g.rows = growZero(g.rows, n)
	return true
}

// release returns the slot tables that came from the large-buffer cache;
// the grouper must not group afterwards (its keys stay readable).
func (g *wordsGrouper) release() {
	if len(g.big.maps) == 0 {
		return
	}
	g.slots, g.mask = nil, 0
	g.big.release()
}
