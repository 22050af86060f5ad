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

// growTable grows the slot table: fourfold while the grown table is
// small (smallGrowBytes), else twofold, so that a table growing from
// nothing moves its groups about a third as often. While growCtx is set the new table is
// taken from the large-buffer cache and filled cancelCheckRows groups at a
// time; a cancelled growth leaves the table as it was and records
// growErr, and probeWords ends the batch after the row that asked for the
// growth (the table has room for it: it grows at half full). Should the
// batch go on regardless, the table grows in one step at three quarters
// full so that it can never fill up.
func (g *wordsGrouper) growTable() {
	newLen := g.grownSlots()
	switch {
	case g.growCtx == nil:
		g.moveTable(freshSlots[uint64](newLen))
	case g.growErr == nil:
		if g.growReserve != nil {
			if err := g.growReserve(int64(newLen-len(g.slots)) * 8); err != nil {
				g.growErr = err
				return
			}
		}
		if err := g.rehashContext(g.growCtx, newLen); err != nil {
			g.growErr = err
		}
	case 4*(g.numGroups()+1) > 3*g.numSlots():
		g.moveTable(freshSlots[uint64](newLen))
	}
}

// grownSlots is the slot count growTable grows the table to. Fourfold
// only up to a quarter of smallGrowBytes: an 8-byte slot's table grows
// by the slot counts a 24-byte slot's did (16K slots, then doubling), so
// that a state of 10–16K groups (q17) has 32K slots, not 64K.
func (g *wordsGrouper) grownSlots() int {
	n := g.numSlots()
	if 4*n*8 <= smallGrowBytes/4 {
		return 4 * n
	}
	return 2 * n
}

// rehashContext moves every group into a table of newLen slots (from
// bigAlloc, faulted in with ctx checks), cancelCheckRows old slots at a
// time with ctx checked between; on cancellation the table is left as it
// was.
func (g *wordsGrouper) rehashContext(ctx context.Context, newLen int) error {
	slots, err := bigAlloc[uint64](ctx, &g.big, newLen)
	if err != nil {
		return err
	}
	touchSlots(slots)
	shift := slotShift(newLen)
	for lo := 0; lo < len(g.slots); lo += cancelCheckRows {
		if err := ctx.Err(); err != nil {
			bigFree(&g.big, slots)
			return err
		}
		moveSlots(slots, shift, g.slots[lo:min(lo+cancelCheckRows, len(g.slots))])
	}
	bigFree(&g.big, g.slots)
	g.setSlots(slots)
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
		t := make([]uint64, len(g.tuples), groupGrownCap[uint64](cap(g.tuples), need))
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
