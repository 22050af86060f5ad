package kafka

import "time"

// clusterMetadataMinAge is how old the topic metadata behind a cluster
// source's listings may be. kadm asks for metadata before every
// ListOffsets, and with the 10 ms a single-instance source allows, each
// listing was a Metadata round trip and a ListOffsets round trip: about
// half of what an idle instance spent on listing (a perf profile of an
// idle `serve` with a count through the hop: the input's and the hop's
// listings, up to 10 per second each, were 17% of its CPU, the Metadata
// requests 9.5%), paid by every instance per wall-second whatever its
// share. In cluster mode the partitions a source reads are its group's
// assignment, which follows the group consumer's own metadata (refreshed
// every few minutes, as a Kafka consumer's), so newer topic metadata in
// the listing changes nothing that is read; a moved leader is still
// found at once (franz-go drops the cached topic when a ListOffsets
// answers NOT_LEADER and retries). A topic created after the listing
// looked (the hop's, at start) is seen up to this much later.
const clusterMetadataMinAge = time.Second

// listingMetadataMinAge is the metadata age the source's listing client
// allows: fresh outside cluster mode (subscribePattern finds new topics
// at the next trigger), clusterMetadataMinAge in it.
func listingMetadataMinAge(opts SourceOptions) time.Duration {
	if opts.Cluster != nil {
		return clusterMetadataMinAge
	}
	return 10 * time.Millisecond
}

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
// period; it changes nothing that is read or claimed. The engine sleeps
// until the next listing is due (IdlePollDelay) rather than asking for
// the cached answer every 10 ms: those polls were most of an idle
// instance's CPU (a wake-up, a planning and an idle progress record
// each, per stage).

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
	// held: the source is holding its epoch back for
	// minOffsetsPerTrigger (trigger_delay.go); listings that find more
	// data keep the hold's wait instead of listing at every poll.
	held bool
}

// holding records that the source holds its epoch back until deadline
// at the latest: the next listing waits idleBackoffMax after the last
// one, but not past the deadline. So a held instance lists a few times
// per hold instead of at every 10 ms poll, and notices that the minimum
// is reached up to idleBackoffMax late.
func (b *idleBackoff) holding(deadline time.Time) {
	b.held = true
	b.wait = max(0, min(idleBackoffMax, deadline.Sub(b.listedAt)))
}

// released ends a hold: the next listing is taken at the next poll.
func (b *idleBackoff) released() {
	if b.held {
		b.held, b.wait = false, 0
	}
}

// relist makes the next poll list the ends (new data is known to be
// there: the local upstream of a hop committed).
func (b *idleBackoff) relist() {
	if !b.held {
		b.wait = 0
	}
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
	case b.held && assign == b.assign:
		// New data while held: the hold decides (holding, released).
	default:
		b.wait = 0
	}
	b.last, b.assign, b.listedAt = ends.clone(), assign, now
}

// untilNextListing is how long the source will report its last listing
// (0: it lists at the next poll).
func (b *idleBackoff) untilNextListing(now time.Time) time.Duration {
	if b.last == nil || b.wait == 0 {
		return 0
	}
	return max(0, b.listedAt.Add(b.wait).Sub(now))
}

// IdlePollDelay implements stream.IdlePollSource: in cluster mode, while
// the end-offset listing backs off (nothing arrives, or an epoch is held
// for minOffsetsPerTrigger), the source has nothing new to report before
// its next listing, so the idle query need not ask every 10 ms. An
// assignment change is then noticed at the next listing (at most
// idleBackoffMax later).
func (s *Source) IdlePollDelay() time.Duration {
	if s.cluster == nil {
		return 0
	}
	now := s.now()
	if s.watch != nil && s.member != nil {
		// A quiet watcher wakes the query when data arrives: the source
		// lists again watchRelist after its last listing at the latest.
		if ver := s.member.assignVer.Load(); s.idle.assign == ver && !s.idle.held && s.watch.quiet(ver) {
			return max(0, s.idle.listedAt.Add(watchRelist).Sub(now))
		}
	}
	return s.idle.untilNextListing(now)
}
