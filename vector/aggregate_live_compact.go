package vector

import "math/bits"

// Renumbering a LiveAggregate in place. Compact used to rebuild the state
// from scratch (State of every live group into Arrow columns, then Merge
// of those rows into a fresh table): a hash probe, an allocation and a
// copy per live group and column, paid every time the dead groups reach
// half of the ids, which a windowed query does every few epochs. When the
// grouper and every accumulator can drop groups where they are, the
// survivors are moved down instead (live ids ascend, so a forward copy
// never overwrites one not yet moved) and only the grouper's slot array
// is rebuilt, from the stored keys, without comparing any.

// groupKeeper is a grouper that can keep only some of its groups.
type groupKeeper interface {
	// keepGroups keeps the groups live (ascending ids), renumbered
	// 0..len(live)-1 in that order.
	keepGroups(live []int32)
}

// accKeeper is an accumulator that can keep only some of its groups.
type accKeeper interface {
	// keepGroups keeps the groups live (ascending ids, all below the
	// size the accumulator was last resized to), renumbered in order.
	keepGroups(live []int32)
}

// keepIn moves s[live[i]] to s[i] and cuts s to len(live); the elements
// past it are zeroed so that they hold no references and a later grow
// starts from zero. A nil s stays nil.
func keepIn[T any](s []T, live []int32) []T {
	if s == nil {
		return nil
	}
	for i, g := range live {
		s[i] = s[g]
	}
	clear(s[len(live):])
	return s[:len(live)]
}

// compactInPlace renumbers l's live groups in place and reports false,
// having changed nothing, when its grouper or an accumulator cannot.
func (l *LiveAggregate) compactInPlace(live []int32) bool {
	gk, ok := l.b.grouper.(groupKeeper)
	if !ok {
		return false
	}
	keepers := make([]accKeeper, len(l.accs))
	for i, a := range l.accs {
		k, ok := a.(accKeeper)
		if !ok {
			return false
		}
		keepers[i] = k
	}
	groups := l.NumGroups()
	for i, a := range l.accs {
		a.resize(groups)
		keepers[i].keepGroups(live)
	}
	gk.keepGroups(live)
	l.rows = keepIn(growZero(l.rows, groups), live)
	l.dead = keepIn(growZero(l.dead, groups), live)
	clear(l.dead) // the survivors are live
	l.nDead = 0
	return true
}

func (c *nullCounter) keepGroups(live []int32) {
	c.nulls = keepIn(c.nulls, live)
	c.n = len(live)
}

func (c *countAcc) keepGroups(live []int32) {
	c.nullCounter.keepGroups(live)
	if !c.byRows {
		c.counts = keepIn(c.counts, live)
	}
}

func (s *sumAcc) keepGroups(live []int32) {
	s.nullCounter.keepGroups(live)
	s.ints = keepIn(s.ints, live)
	s.floats = keepIn(s.floats, live)
	s.decs = keepIn(s.decs, live)
	if !s.byRows {
		s.counts = keepIn(s.counts, live)
	}
}

func (m *minMaxAcc) keepGroups(live []int32) {
	m.nullCounter.keepGroups(live)
	m.i64 = keepIn(m.i64, live)
	m.i32 = keepIn(m.i32, live)
	m.f64 = keepIn(m.f64, live)
	m.decs = keepIn(m.decs, live)
	m.strs = keepIn(m.strs, live)
	m.strBytes = stringBytes(m.strs)
	m.has = keepIn(m.has, live)
}

// keepGroups moves the kept tuples and row counts down and rebuilds the
// slots.
func (g *wordsGrouper) keepGroups(live []int32) {
	k := g.k
	if !g.noRows {
		g.rows = keepIn(growZero(g.rows, g.numGroups()), live)
	}
	for i, gid := range live {
		copy(g.tuples[i*k:i*k+k], g.tuples[int(gid)*k:int(gid)*k+k])
	}
	g.tuples = g.tuples[:len(live)*k]
	size := 64
	for 2*(len(live)+1) > size {
		size *= 2
	}
	if g.numSlots() <= 4*size {
		// Keep the table's size: the groups dropped are usually replaced
		// by as many new ones (the next windows), which would otherwise
		// grow it back step by step.
		size = g.numSlots()
	}
	g.rehash(size)
}

// keepGroups moves the kept keys down in the arena and rebuilds the slots
// from the hashes they hold: no key is hashed or compared again, and the
// arena, the offsets and (unless it is more than four times what the
// survivors need) the slot array keep their capacity for the groups of the
// next windows, which a rebuild grew again from empty (q8's aggregation
// by id, name and window, every time a window closed). The dictionary
// shortcut's groups are renumbered (a dropped one is looked up again);
// the tuple cache starts afresh.
func (g *bytesGrouper) keepGroups(live []int32) {
	t := g.t
	n := t.n
	newID := make([]int32, n) // old group → new group + 1; 0: dropped
	for i, gid := range live {
		newID[gid] = int32(i) + 1
	}
	// Keys: live ascends, so key i moves to where no key not yet moved
	// lies; offs[i+1] is written after every read of an offset at or
	// below it (a later group's offsets lie above, or are unchanged when
	// no group before it was dropped).
	end := 0
	for i, gid := range live {
		s, e := t.offs[gid], t.offs[gid+1]
		copy(t.arena[end:], t.arena[s:e])
		end += e - s
		t.offs[i+1] = end
	}
	t.arena = t.arena[:end]
	t.offs = t.offs[:len(live)+1]
	// Slots: the survivors' (hash, group, rows), renumbered, put back.
	kept := make([]groupSlot, 0, len(live))
	for _, s := range t.slots {
		if s.gid != 0 && newID[s.gid-1] != 0 {
			s.gid = uint32(newID[s.gid-1])
			kept = append(kept, s)
		}
	}
	size := minTableSlots
	for 2*(len(live)+1) > size {
		size *= 2
	}
	if len(t.slots) <= 4*size {
		size = len(t.slots)
		clear(t.slots)
	} else {
		t.release()
		t.slots = make([]groupSlot, size)
		t.shift = uint(64 - bits.TrailingZeros(uint(size)))
		t.mask = uint64(size - 1)
	}
	for _, s := range kept {
		p := hashPos(s.key, t.shift)
		for t.slots[p&t.mask].gid != 0 {
			p++
		}
		t.slots[p&t.mask] = s
	}
	t.n = len(live)
	if t.carry != nil {
		t.carry = keepIn(growZero(t.carry, n), live)
	}
	if g.extra != nil {
		g.extra = keepIn(growZero(g.extra, n), live)
	}
	for j, gid := range g.dictGids {
		if gid >= 0 {
			g.dictGids[j] = newID[gid] - 1
		}
	}
	g.tuples.release()
}
