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
		slots := make([]uint64, newLen*(g.k+1))
		moveSlots(slots, newLen-1, g.slots, g.k)
		bigFree(&g.big, g.slots)
		g.slots, g.mask = slots, newLen-1
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
		slots := make([]uint64, newLen*(g.k+1))
		moveSlots(slots, newLen-1, g.slots, g.k)
		bigFree(&g.big, g.slots)
		g.slots, g.mask = slots, newLen-1
	}
}

// grownSlots is the slot count growTable grows the table to.
func (g *wordsGrouper) grownSlots() int {
	n := g.numSlots()
	if 4*n*(g.k+1)*8 <= smallGrowBytes {
		return 4 * n
	}
	return 2 * n
}

// rehashContext moves every group into a table of newLen slots (from
// bigAlloc, faulted in with ctx checks), cancelCheckRows old slots at a
// time with ctx checked between; on cancellation the table is left as it
// was.
func (g *wordsGrouper) rehashContext(ctx context.Context, newLen int) error {
	slots, err := bigAlloc[uint64](ctx, &g.big, newLen*(g.k+1))
	if err != nil {
		return err
	}
	mask, sw := newLen-1, g.k+1
	step := cancelCheckRows * sw
	for lo := 0; lo < len(g.slots); lo += step {
		if err := ctx.Err(); err != nil {
			bigFree(&g.big, slots)
			return err
		}
		moveSlots(slots, mask, g.slots[lo:min(lo+step, len(g.slots))], g.k)
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

// moveSlots places the groups of the slot table old (or a run of its
// slots; k+1 words a slot, as wordsGrouper.slots) into slots, an empty
// table of mask+1 slots of the same width, taking them in old's slot
// order. A growth doubles the table, so a group found at old position p
// (its home plus its run) lands at about p or p + len(old): two ascending
// streams of writes the cache and the prefetcher follow, where placing
// the groups in id order (the tuples' order) wrote each to a random slot
// of the new table, a cache miss per group once the table is larger than
// the cache (a slot holding the key's words is 24 bytes for two words).
// Any order of insertion makes the same set of probe chains valid.
func moveSlots(slots []uint64, mask int, old []uint64, k int) {
	sw := k + 1
	for b := 0; b+sw <= len(old); b += sw {
		s := old[b : b+sw : b+sw]
		if s[0] == 0 {
			continue
		}
		// The slot's words are the group's stored tuple: its hash is the
		// one the group was placed with.
		p := int(tupleHash(s[1:])) & mask
		for slots[p*sw] != 0 {
			p = (p + 1) & mask
		}
		copy(slots[p*sw:p*sw+sw:p*sw+sw], s)
	}
}
