package vector

// The Go-heap sizes of hash aggregation's structures, which HashAggregate
// reserves against the query's memory limit (see heapAccount). They count
// backing arrays (cap, not len: that is what the heap holds), and the
// bytes of the string values min/max, first/last, collect_list/set and
// max_by/min_by keep (min/max and first/last keep a running count, so
// that HeapBytes, called per merged batch of a streaming aggregation,
// does not scan the groups).

// HeapBytes is the Go-heap memory of the encoder's buffers (the keys it
// encoded last, their hashes and offsets), for callers that keep an
// encoder's output and account for it.
func (e *KeyEncoder) HeapBytes() int64 { return e.heapBytes() }

func (e *KeyEncoder) heapBytes() int64 {
	return sliceBytes(e.hashes) + sliceBytes(e.words) + sliceBytes(e.nulls) + sliceBytes(e.widths) +
		sliceBytes(e.offs) + sliceBytes(e.buf) + sliceBytes(e.pos)
}

func (t *slotTable) heapBytes() int64 { return sliceBytes(t.slots) + sliceBytes(t.carry) }

func (t *bytesTable) heapBytes() int64 {
	return t.slotTable.heapBytes() + sliceBytes(t.arena) + sliceBytes(t.offs)
}

func (c *tupleCache) heapBytes() int64 {
	n := sliceBytes(c.tuples) + sliceBytes(c.tgid) + sliceBytes(c.slots) + sliceBytes(c.idOf) +
		sliceBytes(c.hashes) + sliceBytes(c.newRows)
	for _, w := range c.cols {
		n += sliceBytes(w)
	}
	return n
}

func (g *globalGrouper) heapBytes() int64 { return 0 }

func (g *fixedGrouper) heapBytes() int64 {
	return g.t.heapBytes() + g.enc.heapBytes() + sliceBytes(g.words) + sliceBytes(g.nulls) + sliceBytes(g.mask)
}

func (g *bytesGrouper) heapBytes() int64 {
	return g.t.heapBytes() + g.enc.heapBytes() + g.tuples.heapBytes() + sliceBytes(g.dictGids) +
		sliceBytes(g.extra) + sliceBytes(g.pending) + sliceBytes(g.newGids)
}

func (c *nullCounter) heapBytes() int64 { return sliceBytes(c.nulls) }

func (c *countAcc) heapBytes() int64 {
	return c.nullCounter.heapBytes() + sliceBytes(c.counts) + sliceBytes(c.any)
}

func (s *sumAcc) heapBytes() int64 {
	return s.nullCounter.heapBytes() + sliceBytes(s.ints) + sliceBytes(s.floats) + sliceBytes(s.decs) + sliceBytes(s.counts) + s.fin.heapBytes()
}

func (m *minMaxAcc) heapBytes() int64 {
	return m.nullCounter.heapBytes() + sliceBytes(m.i64) + sliceBytes(m.i32) + sliceBytes(m.f64) +
		sliceBytes(m.decs) + sliceBytes(m.strs) + m.strBytes + sliceBytes(m.has) + sliceBytes(m.bools) + m.fin.heapBytes()
}

func (f *fixedValues[T]) heapBytes() int64 { return sliceBytes(f.vals) }
func (b *boolValues) heapBytes() int64     { return sliceBytes(b.vals) }
func (b *bytesValues) heapBytes() int64    { return sliceBytes(b.vals) + b.bytes }

func (f *firstLastAcc) heapBytes() int64 {
	return sliceBytes(f.set) + sliceBytes(f.null) + f.vals.heapBytes() + sliceBytes(f.rows) + sliceBytes(f.groups)
}

func (h *hllAcc) heapBytes() int64 {
	n := sliceBytes(h.regs)
	if h.enc != nil {
		n += h.enc.heapBytes()
	}
	return n
}

func (d *distinctAcc) heapBytes() int64 {
	return d.inner.heapBytes() + d.enc.heapBytes() + d.set.heapBytes() + sliceBytes(d.fed) +
		sliceBytes(d.key) + sliceBytes(d.sel) + sliceBytes(d.gsel)
}

// aggregationHeapBytes is what the bound aggregation holds on the heap.
func (b *boundAggregation) heapBytes(gids []int32) int64 {
	n := b.grouper.heapBytes() + sliceBytes(gids)
	for _, a := range b.aggs {
		n += a.acc.heapBytes()
	}
	return n
}
