package stateful

import "github.com/arrowstream/arrowstream/checkpoint"

// logBatches lays an epoch's changes of many keys out by partition, so
// that each partition's are logged in one call
// (checkpoint.ChangelogBatcher): a windowed aggregation changes and evicts
// tens of thousands of groups an epoch, and logging them one by one cost
// an interface call through the lazy handle, a reservation and five
// appends per key (a third of the aggregation's changelog time). The
// caller sets each entry's partition (part), sorts (byPartition), then
// for each partition resets the scratch, adds the partition's entries in
// order and logs them. The buffers are kept between epochs for their
// capacity.
type logBatches struct {
	part  []int32 // by entry: its partition
	start []int32 // by partition p: its entries are order[start[p]:start[p+1]]
	order []int32 // the entries, by partition, in entry order within one
	next  []int32

	keys, vals []byte
	kend, vend []uint32
}

// setParts sizes part for n entries (values to be set by the caller).
func (b *logBatches) setParts(n int) []int32 {
	b.part = growTo(b.part[:0], n)
	return b.part
}

// byPartition sorts the entries by their partition (counting sort,
// stable) among n partitions.
func (b *logBatches) byPartition(n int) {
	b.start = growTo(b.start[:0], n+1)
	clear(b.start)
	for _, p := range b.part {
		b.start[p+1]++
	}
	for p := 1; p <= n; p++ {
		b.start[p] += b.start[p-1]
	}
	b.order = growTo(b.order[:0], len(b.part))
	// next[p]: where partition p's next entry goes.
	b.next = growTo(b.next[:0], n)
	copy(b.next, b.start[:n])
	for i, p := range b.part {
		b.order[b.next[p]] = int32(i)
		b.next[p]++
	}
}

// entries returns partition p's entries.
func (b *logBatches) entries(p int) []int32 { return b.order[b.start[p]:b.start[p+1]] }

// reset empties the scratch of one partition's entries.
func (b *logBatches) reset() {
	b.keys, b.vals = b.keys[:0], b.vals[:0]
	b.kend, b.vend = b.kend[:0], b.vend[:0]
}

// add appends an upsert's key and value.
func (b *logBatches) add(key, value []byte) {
	b.keys = appendDoubling(b.keys, key...)
	b.kend = appendDoubling(b.kend, uint32(len(b.keys)))
	b.vals = appendDoubling(b.vals, value...)
	b.vend = appendDoubling(b.vend, uint32(len(b.vals)))
}

// appendDoubling is append whose growth at least doubles the capacity.
// append grows a large slice by about a quarter at a time, and the
// scratch here grows from nothing at each query start to tens or hundreds
// of kilobytes: a dozen copies, each into fresh memory (its pages faulted
// in), where doubling makes a handful.
func appendDoubling[T any](s []T, v ...T) []T {
	if need := len(s) + len(v); need > cap(s) {
		t := make([]T, len(s), max(need, 2*cap(s), 256))
		copy(t, s)
		s = t
	}
	return append(s, v...)
}

// bytes is the Go-heap memory of the scratch.
func (b *logBatches) bytes() int64 {
	return int64(cap(b.part)+cap(b.start)+cap(b.order)+cap(b.next)+cap(b.kend)+cap(b.vend))*4 + int64(cap(b.keys)+cap(b.vals))
}

// upserts logs the scratch's entries (add) as upserts in partition p, of
// which added are keys new to it.
func (c *changelogState) upserts(p int, b *logBatches, added int) {
	if c.batchers != nil {
		c.batchers[p].LogUpserts(b.keys, b.kend, b.vals, b.vend)
	} else {
		var k, v uint32
		for i, ke := range b.kend {
			c.writers[p].LogUpsert(b.keys[k:ke], b.vals[v:b.vend[i]])
			k, v = ke, b.vend[i]
		}
	}
	c.rows[p] += int64(added)
	c.noteUpserts(p, len(b.kend), len(b.keys)+len(b.vals))
}

// upsertsOf logs n upserts in partition p, entries.Entry(i) the i-th's
// key and value, of which added are keys new to it. The views go straight into
// the log (checkpoint.ChangelogBatcher.LogUpsertsOf), each byte copied
// once: gathered into the scratch first (add, upserts), every changed
// group's key and value were copied twice, and the scratch's growth was
// fresh memory on the first epochs and at each larger epoch.
func (c *changelogState) upsertsOf(p, n, added int, entries checkpoint.ChangelogEntries) {
	bytes := 0
	if c.batchers != nil {
		bytes = c.batchers[p].LogUpsertsOf(n, entries)
	} else {
		for i := range n {
			k, v := entries.Entry(i)
			c.writers[p].LogUpsert(k, v)
			bytes += len(k) + len(v)
		}
	}
	c.rows[p] += int64(added)
	c.noteUpserts(p, n, bytes)
}

// removesOf logs n deletes in partition p, the keys entries.Entry gives,
// as upsertsOf: a window's close deletes all its groups in one epoch, and
// their keys went through the scratch (addKey) on their way to the log.
func (c *changelogState) removesOf(p, n int, entries checkpoint.ChangelogEntries) {
	if c.batchers != nil {
		c.batchers[p].LogDeletesOf(n, entries)
	} else {
		for i := range n {
			k, _ := entries.Entry(i)
			c.writers[p].LogDelete(k)
		}
	}
	c.rows[p] -= int64(n)
}

// bindBatchers takes the writers as ChangelogBatchers when every one is.
func (c *changelogState) bindBatchers() {
	c.batchers = c.batchers[:0]
	for _, w := range c.writers {
		b, ok := w.(checkpoint.ChangelogBatcher)
		if !ok {
			c.batchers = nil
			return
		}
		c.batchers = append(c.batchers, b)
	}
	if len(c.batchers) == 0 {
		c.batchers = nil
	}
}
