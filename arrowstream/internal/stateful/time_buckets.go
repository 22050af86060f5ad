package stateful

import (
	"cmp"
	"slices"
	"unsafe"
)

// timeBuckets is an event-time index of group ids that groups them by
// time: a min-heap of buckets, each the ids pushed at one time. A
// windowed aggregation's groups share few times (every group of a
// window has the window's time), so pushing is an append to the bucket
// of the last time used, or of a recent one (a small cache of the buckets
// opened last, by time), and popping what is due costs one heap pop per
// bucket instead of one per group: the per-group heap was a tenth of the
// windowed workload's eviction.
//
// There is no map from every open time to its bucket: a time missed by
// the cache gets a bucket of its own, so one time may have several, and
// the buckets of one time pop in the order they were opened (seq), which
// keeps that time's ids in push order. A query whose groups each have
// their own time (Nexmark q4: the auction's expires) paid a map
// insertion and deletion for every group, about half of the index's CPU
// (session 35); it now pays the heap entry it paid anyway. The cost
// moves to the other extreme: rows that fall in more than
// timeBucketCache open times in turn (a sliding window of many slides
// per row aggregated without panes, or rows far out of order) open a
// bucket per push, one heap entry per group as a per-group heap.
type timeBuckets struct {
	heap    timeHeap[timeBucket] // buckets by time
	buckets [][]int32            // ids by bucket
	free    []int32              // emptied buckets, for reuse
	n       int                  // ids indexed
	seq     uint64               // buckets opened so far
	// recent caches the buckets opened last, with their times (a slot
	// is cleared when its bucket pops).
	recent [timeBucketCache]recentBucket
	// run is popDue's scratch: the buckets of one time popped together.
	run []timed[timeBucket]
}

// timeBucket is a heap entry: bucket k, opened as the seq-th.
type timeBucket struct {
	seq uint64
	k   int32
}

// recentBucket is a slot of timeBuckets.recent.
type recentBucket struct {
	at int64
	k  int32
	ok bool
}

// timeBucketCache is the slots of timeBuckets.recent: more than the
// windows a row of a sliding window falls in (a 10-second window sliding
// by 2 puts a row in 5), so that their groups, pushed in turn, share
// buckets.
const timeBucketCache = 8

// push indexes id at time at.
func (b *timeBuckets) push(at int64, id int32) {
	// The bucket opened last first: most pushes are at its time.
	j := int(b.seq % timeBucketCache)
	if c := &b.recent[j]; !c.ok || c.at != at {
		j = -1
		for i := range b.recent {
			if c := &b.recent[i]; c.ok && c.at == at {
				j = i
				break
			}
		}
	}
	if j < 0 {
		var k int32
		if n := len(b.free); n > 0 {
			k, b.free = b.free[n-1], b.free[:n-1]
		} else {
			k = int32(len(b.buckets))
			b.buckets = append(b.buckets, nil)
		}
		b.seq++
		b.heap.push(at, timeBucket{seq: b.seq, k: k})
		// The slots are replaced in turn: the oldest goes.
		j = int(b.seq % timeBucketCache)
		b.recent[j] = recentBucket{at: at, k: k, ok: true}
	}
	k := b.recent[j].k
	b.buckets[k] = append(b.buckets[k], id)
	b.n++
}

// popDue appends to out the ids whose time is at or below limit, earliest
// time first (ids of one time in push order), and removes them.
func (b *timeBuckets) popDue(limit int64, out []int32) []int32 {
	for b.heap.due(limit) {
		// The heap does not order the buckets of one time: they are
		// popped together and taken in the order they were opened.
		run := append(b.run[:0], b.heap.pop())
		at := run[0].at
		for len(b.heap) > 0 && b.heap[0].at == at {
			run = append(run, b.heap.pop())
		}
		if len(run) > 1 {
			slices.SortFunc(run, func(x, y timed[timeBucket]) int { return cmp.Compare(x.v.seq, y.v.seq) })
		}
		for _, e := range run {
			k := e.v.k
			ids := b.buckets[k]
			out = append(out, ids...)
			b.n -= len(ids)
			b.buckets[k] = ids[:0]
			b.free = append(b.free, k)
			for i := range b.recent {
				if c := &b.recent[i]; c.ok && c.k == k {
					c.ok = false
				}
			}
		}
		b.run = run
	}
	return out
}

// remap renumbers every indexed id through remap (old id → new id) and
// returns an indexed id that remap deletes (< 0), if any.
func (b *timeBuckets) remap(remap []int32) (gone int32, ok bool) {
	for _, e := range b.heap {
		ids := b.buckets[e.v.k]
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
	n := int64(cap(b.heap))*int64(unsafe.Sizeof(timed[timeBucket]{})) + int64(cap(b.run))*int64(unsafe.Sizeof(timed[timeBucket]{})) +
		int64(cap(b.buckets))*int64(unsafe.Sizeof([]int32(nil))) + int64(cap(b.free))*4
	for _, ids := range b.buckets {
		n += int64(cap(ids)) * 4
	}
	return n
}
