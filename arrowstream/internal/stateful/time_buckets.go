package stateful

import "unsafe"

// timeBuckets is an event-time index of group ids that groups them by
// time: a min-heap over the distinct times, each with the ids pushed at
// it. A windowed aggregation's groups share few times (every group of a
// window has the window's time), so pushing is an append to the bucket
// of the last time used (a map lookup otherwise) and popping what is due
// costs one heap pop per time instead of one per group: the per-group
// heap was a tenth of the windowed workload's eviction.
type timeBuckets struct {
	heap    timeHeap[int32] // distinct times → bucket
	byTime  map[int64]int32 // the open buckets
	buckets [][]int32       // ids by bucket
	free    []int32         // emptied buckets, for reuse
	n       int             // ids indexed
	// last is the bucket of the time pushed last (lastAt), the likely
	// next one.
	lastAt int64
	last   int32
}

// push indexes id at time at.
func (b *timeBuckets) push(at int64, id int32) {
	if b.byTime == nil {
		b.byTime = map[int64]int32{}
		b.last = -1
	}
	k := b.last
	if k < 0 || b.lastAt != at {
		var ok bool
		if k, ok = b.byTime[at]; !ok {
			if n := len(b.free); n > 0 {
				k, b.free = b.free[n-1], b.free[:n-1]
			} else {
				k = int32(len(b.buckets))
				b.buckets = append(b.buckets, nil)
			}
			b.byTime[at] = k
			b.heap.push(at, k)
		}
		b.last, b.lastAt = k, at
	}
	b.buckets[k] = append(b.buckets[k], id)
	b.n++
}

// popDue appends to out the ids whose time is at or below limit, earliest
// time first (ids of one time in push order), and removes them.
func (b *timeBuckets) popDue(limit int64, out []int32) []int32 {
	for b.heap.due(limit) {
		e := b.heap.pop()
		ids := b.buckets[e.v]
		out = append(out, ids...)
		b.n -= len(ids)
		b.buckets[e.v] = ids[:0]
		b.free = append(b.free, e.v)
		delete(b.byTime, e.at)
		if b.last == e.v {
			b.last = -1
		}
	}
	return out
}

// remap renumbers every indexed id through remap (old id → new id) and
// returns an indexed id that remap deletes (< 0), if any.
func (b *timeBuckets) remap(remap []int32) (gone int32, ok bool) {
	for _, k := range b.byTime {
		ids := b.buckets[k]
		for i, g := range ids {
			if ids[i] = remap[g]; ids[i] < 0 {
				return g, false
			}
		}
	}
	return 0, true
}

// bytes approximates the index's Go-heap memory.
func (b *timeBuckets) bytes() int64 {
	n := int64(cap(b.heap))*int64(unsafe.Sizeof(timed[int32]{})) + int64(len(b.byTime))*24 +
		int64(cap(b.buckets))*int64(unsafe.Sizeof([]int32(nil))) + int64(cap(b.free))*4
	for _, ids := range b.buckets {
		n += int64(cap(ids)) * 4
	}
	return n
}
