package stateful

import "github.com/arrowstream/arrowstream/vector"

// The join epoch's temporaries, kept between epochs. Splitting a side's
// new rows by partition and gathering the epoch's output pairs each
// needed a few slices of the epoch's rows that nothing keeps after the
// step (q4: about 10 K bids an epoch, 4–8 bytes a row each, a fifth of
// the join's Go-heap bytes). Both steps run on the epoch's goroutine, one
// at a time, so one set serves them; a slice grown for a large epoch is
// dropped again when an epoch uses less than a quarter of it.
//
// The split's parts (their selections and fixed keys) are read by the
// partitions' epochs until the output is gathered, so each side has its
// own, reused by the side's next split (the stored batches copy theirs:
// a fresh pair of slices of the epoch's rows per side was a sixth of
// q4's Go-heap bytes, session 22).

// joinScratch holds the reusable temporaries (each valid only inside
// the step that filled it, the split's sel and words until the epoch's
// end).
type joinScratch struct {
	part, start, next []int32 // splitSide
	sel               [2][]int32
	words             [2][]uint64 // splitSide, by side: the parts' rows and keys
	src, rows         []int32     // gatherPairs
	late              []int32     // loadNew: an input record's rows not late
	partnered         []int32     // dropUnpartnered: the rows kept
	// kept: filterPairsInPlace's groups of passing pairs.
	kept []joinOutPairs
	// excluded are each side's new rows' flags (sideRows.excluded): they
	// live for the epoch (released with the side's rows) and nothing
	// keeps them after it (the split and the batches copy them).
	excluded [2][]bool
	// newKeys are each side's new rows' key words, nulls and hashes
	// (encodeNewKeys), alive as excluded.
	newKeys [2]joinKeyScratch
}

// joinKeyScratch holds a side's new rows' encoded keys across epochs
// (sideRows.words, keyNull, hashes). Nothing keeps them past the epoch:
// the split copies the words and hashes into partition order (or hands
// the parts these slices for one partition) and a stored batch copies
// its keys and nulls (buildJoinBatch). Fresh slices of the epoch's rows
// were the largest Go-heap line of Nexmark q4 (session 23), their pages
// faulted in again each epoch.
type joinKeyScratch struct {
	words, hashes []uint64
	keyNull       []bool
}

// bools returns *buf resized to n and cleared, growing it or dropping an
// oversized one.
func bools(buf *[]bool, n int) []bool {
	b := *buf
	if cap(b) < n || (cap(b) > scratchRows && cap(b) > 4*n) {
		b = make([]bool, n, scratchCap(n))
		*buf = b
		return b
	}
	b = b[:n]
	clear(b)
	return b
}

// scratchRows is the smallest scratch capacity dropped for disuse.
const scratchRows = 1 << 16

// scratchCap is the capacity a scratch slice of n is made with: a quarter
// more. Made exactly n, a scratch slice was made again by every epoch a
// little larger than all before it (an epoch's rows and pairs by
// partition vary by some percent), each time memory first touched in the
// epoch: about half of the scratch lines of Nexmark q4's Go-heap profile
// (session 28). The slack stays under the 4× at which disuse drops it.
func scratchCap(n int) int { return n + n/4 + 16 }

// int32s returns *buf resized to n (contents undefined), growing it or
// dropping an oversized one.
func int32s(buf *[]int32, n int) []int32 {
	b := *buf
	if cap(b) < n || (cap(b) > scratchRows && cap(b) > 4*n) {
		b = make([]int32, n, scratchCap(n))
		vector.PrefaultScratch(b)
		*buf = b
	}
	return b[:n]
}

// uint64s is int32s for a []uint64.
func uint64s(buf *[]uint64, n int) []uint64 {
	b := *buf
	if cap(b) < n || (cap(b) > scratchRows && cap(b) > 4*n) {
		b = make([]uint64, n, scratchCap(n))
		vector.PrefaultScratch(b)
		*buf = b
	}
	return b[:n]
}
