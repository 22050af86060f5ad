package vector

import (
	"context"

	"github.com/apache/arrow/go/v17/arrow"
)

// Growth of the multi-key grouper (wordsGrouper): its slot table doubles,
// and its tuples and row counts double their capacity, in steps that are
// interruptible while a context is set (groupContext), as the single-key
// tables' are (slotTable.rehashContext): GROUP BY a, b over millions of
// groups would otherwise hold a cancelled query for the whole copy.

// groupContext is group with the growth steps checking ctx; a cancelled
// growth stops the batch with ctx's error (the groups made before it
// stay, the grouper is consistent).
func (g *wordsGrouper) groupContext(ctx context.Context, keys []arrow.Array, gids []int32) error {
	g.growCtx, g.growErr = ctx, nil
	err := g.group(keys, gids)
	if g.growErr != nil {
		err = g.growErr
	}
	g.growCtx, g.growErr = nil, nil
	return err
}

// reserve makes room for extra more groups in the slots (kept at most half
// full), the tuples and the row counts; false when a growth was cancelled
// (growErr says why).
func (g *wordsGrouper) reserve(extra int) bool {
	n := len(g.rows) + extra
	if 2*n <= len(g.slots) && cap(g.rows) >= n && cap(g.tuples) >= n*g.k {
		return true
	}
	ctx := g.growCtx
	if ctx == nil {
		ctx = context.Background()
	}
	err := g.reserveContext(ctx, n)
	if err != nil {
		g.growErr = err
		return false
	}
	return true
}

func (g *wordsGrouper) reserveContext(ctx context.Context, n int) error {
	if 2*n > len(g.slots) {
		l := len(g.slots)
		for 2*n > l {
			l *= 2
		}
		if err := g.rehashContext(ctx, l); err != nil {
			return err
		}
	}
	tuples, err := growCapContext(ctx, g.tuples, n*g.k)
	if err != nil {
		return err
	}
	g.tuples = tuples
	rows, err := growCapContext(ctx, g.rows, n)
	if err != nil {
		return err
	}
	g.rows = rows
	return nil
}

// rehashContext moves every group into a table of newLen slots (from
// bigAlloc), cancelCheckRows groups at a time with ctx checked between;
// on cancellation the table is left as it was.
func (g *wordsGrouper) rehashContext(ctx context.Context, newLen int) error {
	slots, err := bigAlloc[int32](ctx, &g.big, newLen)
	if err != nil {
		return err
	}
	mask := newLen - 1
	k := g.k
	for lo := 0; lo < len(g.rows); lo += cancelCheckRows {
		if err := ctx.Err(); err != nil {
			bigFree(&g.big, slots)
			return err
		}
		for gid := lo; gid < min(lo+cancelCheckRows, len(g.rows)); gid++ {
			p := int(tupleHash(g.tuples[gid*k:gid*k+k])) & mask
			for slots[p] != 0 {
				p = (p + 1) & mask
			}
			slots[p] = int32(gid) + 1
		}
	}
	bigFree(&g.big, g.slots)
	g.slots, g.mask = slots, mask
	return nil
}

// release returns the slots that came from the large-buffer cache; the
// grouper must not group afterwards (its keys stay readable).
func (g *wordsGrouper) release() {
	if len(g.big.maps) == 0 {
		return
	}
	g.slots, g.mask = nil, 0
	g.big.release()
}
