package kafka

import "time"

// An idle query polls its sources every 10 ms (the engine's
// pollingDelay), and in cluster mode each poll listed the owned
// partitions' end offsets at the brokers (a Metadata and a ListOffsets
// round trip). Every instance pays that while it waits, whatever its
// share of the input, so with more instances more of the CPU went to
// asking for data that was not there (docs/cluster.md, figures). The
// cluster source therefore backs off while nothing arrives: after a
// listing that found the same ends as the one before, the next listing
// waits idleBackoffMin, doubling up to idleBackoffMax; any change (new
// data, a rebalance) lists at once again. Between listings the source
// reports the ends it last listed, so the engine finds no new data. This
// delays noticing new data by at most idleBackoffMax after an idle
// period; it changes nothing that is read or claimed.

const (
	idleBackoffMin = 20 * time.Millisecond
	idleBackoffMax = 100 * time.Millisecond
)

// idleBackoff is the cluster source's listing schedule (the engine calls
// a source from one goroutine at a time).
type idleBackoff struct {
	last     PartitionOffsets // the ends listed last (nil: none yet)
	assign   uint64           // the member's assignment version of last
	listedAt time.Time
	wait     time.Duration // zero: list at every poll
}

// cached returns the last listing when the source may skip the brokers
// now: it is backing off and the assignment has not changed.
func (b *idleBackoff) cached(now time.Time, assign uint64) (PartitionOffsets, bool) {
	if b.last == nil || b.wait == 0 || assign != b.assign || now.Sub(b.listedAt) >= b.wait {
		return nil, false
	}
	return b.last.clone(), true
}

// listed records a listing: the same ends as before lengthen the wait,
// others reset it.
func (b *idleBackoff) listed(now time.Time, assign uint64, ends PartitionOffsets) {
	switch {
	case b.last != nil && assign == b.assign && sameOffsets(b.last, ends):
		b.wait = min(max(2*b.wait, idleBackoffMin), idleBackoffMax)
	default:
		b.wait = 0
	}
	b.last, b.assign, b.listedAt = ends.clone(), assign, now
}
