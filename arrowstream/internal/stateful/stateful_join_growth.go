package stateful

import "unsafe"

// The stream-stream join's live state reserved as it grows within an
// epoch (stateAccount, growthMeter): each partition's epoch notes its
// Go-heap estimate before the rows it stores are built (their keys,
// times and flags, whose size is known from the rows kept), before the
// pending batches' references enter the key index, and after each
// change, so that one epoch that would take the state far past the limit
// is refused near it instead of after all its rows were stored and
// indexed (the reservation after the epoch, set, then makes it the
// estimate again).

// heap is the partition's live Go-heap estimate (its batches' per-row
// slices and its key indexes, without the batches' Arrow buffers, which
// count through the allocator).
func (lp *joinLivePart[K]) heap() int64 {
	var n int64
	for _, s := range lp.sides {
		if s != nil {
			n += s.bytes - s.arrow
		}
	}
	return n
}

// pendingRefBytes is what indexing the partition's pending batches adds
// at least: a reference per live row (a key new to the index adds its
// entry too, noted once it is indexed).
func (lp *joinLivePart[K]) pendingRefBytes() int64 {
	var n int64
	for _, s := range lp.sides {
		if s != nil && len(s.pending) > 0 {
			n += s.pendingLive() * joinRowBytes
		}
	}
	return n
}

// newBatchHeap is the Go-heap size of a batch of the rows keep of a
// side's new rows, whose keys are keys (by row): what joinBatch.size
// counts besides the Arrow buffers, known before the batch is built.
func newBatchHeap[K joinKey](keys []K, keep []int32, times, matched bool) int64 {
	var zero K
	perRow := int64(unsafe.Sizeof(zero)) + 1 // key, keyNull
	if times {
		perRow += 8
	}
	if matched {
		perRow++
	}
	n := int64(len(keep)) * perRow
	if _, ok := any(zero).(string); ok {
		for _, j := range keep {
			n += keyBytes(keys[j])
		}
	}
	return n
}
