package vector

// Emptying a LiveAggregate for reuse. A caller that fills a scratch
// aggregation, reads it and throws it away every epoch (a sliding
// window's panes combined into windows) would otherwise bind fresh
// structures each time and grow its hash table from the smallest size
// again, rehashing every group at each doubling; Reset keeps the table
// and the accumulators' slices at the size the last fill reached, so a
// steady stream fills them without growing.

// groupResetter is a grouper that can drop every group in place.
type groupResetter interface {
	// resetGroups drops every group, keeping the table's capacity (or
	// shrinking it when it is far larger than the last fill needed).
	resetGroups()
}

// Reset empties the aggregation: no groups, as NewLiveAggregate returns
// it. The grouper's table and the accumulators keep their capacity when
// they can be emptied in place; otherwise fresh structures are bound (the
// same result, without the reuse). An error leaves l closed.
func (l *LiveAggregate) Reset() error {
	if l.b == nil {
		return l.rebind()
	}
	gr, ok := l.b.grouper.(groupResetter)
	keepers := make([]accKeeper, 0, len(l.accs))
	for _, a := range l.accs {
		k, isKeeper := a.(accKeeper)
		if !isKeeper {
			ok = false
			break
		}
		keepers = append(keepers, k)
	}
	if !ok {
		return l.rebind()
	}
	groups := l.NumGroups()
	for i, a := range l.accs {
		a.resize(groups)
		keepers[i].keepGroups(nil)
	}
	gr.resetGroups()
	clear(l.rows)
	clear(l.dead)
	l.rows, l.dead, l.nDead = l.rows[:0], l.dead[:0], 0
	l.words, l.nulls = l.words[:0], l.nulls[:0]
	return l.heap.set(l.HeapBytes())
}

// rebind replaces l's structures with freshly bound empty ones; the
// memory account carries over.
func (l *LiveAggregate) rebind() error {
	if l.b != nil {
		l.b.grouper.release()
	}
	fresh := &LiveAggregate{mem: l.mem, schema: l.schema, spec: l.spec, heap: l.heap}
	if err := fresh.bind(); err != nil {
		*l = LiveAggregate{mem: l.mem, schema: l.schema, spec: l.spec, heap: l.heap}
		l.heap.release()
		return err
	}
	*l = *fresh
	return l.heap.set(l.HeapBytes())
}

// resetGroups drops the tuples and row counts and empties the slots. The
// table keeps its size unless it is more than four times what the groups
// just dropped needed (one large epoch does not keep a large table for
// every later one to clear).
func (g *wordsGrouper) resetGroups() {
	size := 64
	for 2*(g.numGroups()+1) > size {
		size *= 2
	}
	g.tuples = g.tuples[:0]
	g.rows = g.rows[:0]
	if g.numSlots() <= 4*size {
		size = g.numSlots()
	}
	g.rehash(size)
}
