package vector

import "context"

// The finish pass of a grouper walks every slot of its table (twice the
// groups, or more): millions of slots are one step of tens of
// milliseconds, so it checks the context every cancelCheckRows slots.

// finishGrouper is a grouper whose finish pass can be interrupted.
type finishGrouper interface {
	finishContext(ctx context.Context) ([]int64, error)
}

// finishContextOf is gr.finish, interruptible when gr can be.
func finishContextOf(ctx context.Context, gr grouper) ([]int64, error) {
	if fg, ok := gr.(finishGrouper); ok {
		return fg.finishContext(ctx)
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	return gr.finish(), nil
}

// slotsContext calls fn for every chunk of cancelCheckRows slots, checking
// ctx before each.
func (t *slotTable) slotsContext(ctx context.Context, fn func(slots []groupSlot)) error {
	for lo := 0; lo < len(t.slots); lo += cancelCheckRows {
		if err := ctx.Err(); err != nil {
			return err
		}
		fn(t.slots[lo:min(lo+cancelCheckRows, len(t.slots))])
	}
	return nil
}

// rowCountsContext is rowCounts checking ctx every cancelCheckRows slots.
func (t *slotTable) rowCountsContext(ctx context.Context, rows []int64) error {
	err := t.slotsContext(ctx, func(slots []groupSlot) {
		for _, s := range slots {
			if s.gid != 0 {
				rows[s.gid-1] = int64(s.rows)
			}
		}
	})
	if err != nil {
		return err
	}
	for g, c := range t.carry {
		rows[g] += c
	}
	return nil
}

// finishContext is finish checking ctx every cancelCheckRows slots.
func (t *fixedTable) finishContext(ctx context.Context) (words []uint64, nulls []bool, rows []int64, err error) {
	words = make([]uint64, t.n)
	rows = make([]int64, t.n)
	err = t.slotsContext(ctx, func(slots []groupSlot) {
		for _, s := range slots {
			if s.gid != 0 {
				words[s.gid-1] = s.key
			}
		}
	})
	if err != nil {
		return nil, nil, nil, err
	}
	if err := t.rowCountsContext(ctx, rows); err != nil {
		return nil, nil, nil, err
	}
	if t.nullGid >= 0 {
		nulls = make([]bool, t.n)
		nulls[t.nullGid] = true
		rows[t.nullGid] = t.nullRows
	}
	return words, nulls, rows, nil
}

func (g *fixedGrouper) finishContext(ctx context.Context) ([]int64, error) {
	words, nulls, rows, err := g.t.finishContext(ctx)
	if err != nil {
		return nil, err
	}
	g.words, g.nulls = words, nulls
	return rows, nil
}

func (g *bytesGrouper) finishContext(ctx context.Context) ([]int64, error) {
	rows := make([]int64, g.t.n)
	if err := g.t.rowCountsContext(ctx, rows); err != nil {
		return nil, err
	}
	for gid, n := range g.extra {
		rows[gid] += n
	}
	g.release()
	return rows, nil
}
