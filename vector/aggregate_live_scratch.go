package vector

// Scratch of the live accumulators' finalAt and stateAt, kept between
// calls. An Update-mode streaming aggregation finalizes the groups it
// changed every epoch; a sum made a validity and a count slice per call,
// and a min or max a validity slice, each a fresh piece of memory per
// epoch (q17: about 30 KB of the epoch's Go heap, every byte of it a page
// first touched, as no collection runs within a benchmark's run). The
// slices only feed the output arrays' buffers, which copy them (the
// validity into a bitmap, the counts into the means), so none outlives
// the call and the next call may take them again.

// liveScratch is an accumulator's reused finalAt/stateAt scratch. Not safe
// for concurrent use (nor is the accumulator: a LiveAggregate is used by
// one goroutine at a time).
type liveScratch struct {
	valid  []bool
	counts []int64
}

// validOf returns n validity flags, all false: the previous call's are
// cleared, so that a caller setting only some of them sees no leftovers.
func (s *liveScratch) validOf(n int) []bool {
	s.valid = grow(s.valid, n)[:n]
	clear(s.valid)
	return s.valid
}

// countsOf returns n counts, all zero (cleared as validOf's flags).
func (s *liveScratch) countsOf(n int) []int64 {
	s.counts = grow(s.counts, n)[:n]
	clear(s.counts)
	return s.counts
}

// heapBytes is the scratch's Go-heap memory.
func (s *liveScratch) heapBytes() int64 { return sliceBytes(s.valid) + sliceBytes(s.counts) }
