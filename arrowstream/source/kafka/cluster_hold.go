package kafka

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/arrowstream/arrowstream/arrowstream/stream"
)

// A cluster input source batches like a single instance (issue 23,
// docs/cluster.md "Batching at k instances"). An instance that owns 1/k
// of its input's partitions and keeps up with the input runs an epoch
// whenever its share of new rows arrives: about as many epochs as the
// single instance, each over a k-th of the rows, so k instances run k
// times the epochs and pay each epoch's fixed work (the offset log and
// its sync, the sink's epoch file, the claim, the hop's transactions;
// 1.6-3.4 CPU-ms each here) k times over. Without minOffsetsPerTrigger
// the source therefore holds a planned epoch while new offsets keep
// arriving, for at most (k - 1) x the duration of its own last epoch
// after that epoch ended: the time a single instance would have spent on
// the other instances' rows. So each instance's epochs start about as
// often as the single instance's and carry its share of what the single
// instance's would.
//
// The hold is capped by maxHold (the source option clusterBatchHold, the
// session setting arrowstream.cluster.batchHold, DefaultClusterBatchHold;
// 0 turns it off), which bounds the latency it adds. It is off at one
// instance (k = 1), with minOffsetsPerTrigger set (the operator chose
// the batching), and whenever the last listing found no new offsets
// since the one before: the input stopped arriving, so the rows waiting
// are let through at once (the last rows of an input are processed
// within one listing interval, at most the cap, after they arrive).
// It changes only when an epoch is planned: what it plans, claims and
// reads are the same ranges as before, so exactly-once is untouched.

// DefaultClusterBatchHold caps the cluster batch hold when neither the
// source option nor the session sets it: the latency a cluster instance
// may add to batch like a single instance (of the order of Kafka
// Streams' exactly-once commit.interval.ms, 100 ms; docs/cluster.md
// gives the figures it was picked from).
const DefaultClusterBatchHold = 250 * time.Millisecond

// ConfClusterBatchHold is the session setting that caps the cluster batch
// hold of a query's Kafka inputs when their clusterBatchHold option is
// not set (a duration; 0: off).
const ConfClusterBatchHold = "arrowstream.cluster.batchHold"

// clusterHold decides whether a cluster input's planned epoch waits (the
// engine plans a source from one goroutine at a time).
type clusterHold struct {
	// owned and total: the partitions of the input's topics this
	// instance owns and all of them, at the last listing.
	owned, total int
	// arriving: the last listing found offsets beyond the one before it
	// (same assignment).
	arriving bool
	// readAt is when the last epoch's Read began (zero: it has ended).
	readAt time.Time
	// lastDur is the last epoch's duration, from its Read to the next
	// planning, and ended that planning's time (zero: none yet).
	lastDur time.Duration
	ended   time.Time
}

// listed records a listing: the share and whether offsets arrived since
// the listing before (prev, nil: none), over the same assignment.
func (h *clusterHold) listed(owned, total int, prev, ends PartitionOffsets, sameAssign bool) {
	h.owned, h.total = owned, total
	h.arriving = sameAssign && prev != nil && grew(prev, ends)
}

// grew reports whether some partition of ends is past its offset in prev.
func grew(prev, ends PartitionOffsets) bool {
	for t, ps := range ends {
		for p, end := range ps {
			if before, ok := prev.get(t, p); ok && end > before {
				return true
			}
		}
	}
	return false
}

// readStarted records the start of an epoch's Read.
func (h *clusterHold) readStarted(now time.Time) { h.readAt = now }

// planning records a planning at now: the first after an epoch's Read
// ends that epoch.
func (h *clusterHold) planning(now time.Time) {
	if !h.readAt.IsZero() {
		h.lastDur, h.ended, h.readAt = max(0, now.Sub(h.readAt)), now, time.Time{}
	}
}

// window is how long after the last epoch ended the next may be held:
// (k - 1) x that epoch's duration, k = total/owned, at most maxHold. An
// epoch then starts at most k durations after the one before, as the
// single instance's would when it reads k times the rows.
func (h *clusterHold) window(maxHold time.Duration) time.Duration {
	if maxHold <= 0 || h.owned <= 0 || h.total <= h.owned {
		return 0
	}
	w := time.Duration(float64(h.lastDur) * float64(h.total-h.owned) / float64(h.owned))
	return min(w, maxHold)
}

// hold reports whether an epoch planned now waits, and until when at the
// latest: while offsets keep arriving, up to the window after the last
// epoch ended.
func (h *clusterHold) hold(now time.Time, maxHold time.Duration) (bool, time.Time) {
	h.planning(now)
	if w := h.window(maxHold); w > 0 && h.arriving && !h.ended.IsZero() {
		if until := h.ended.Add(w); now.Before(until) {
			return true, until
		}
	}
	return false, time.Time{}
}

// idle records a planning that found nothing waiting. The window still
// counts from the end of the last epoch, so that rows arriving right
// after an instance caught up wait for the rest of it, and rows arriving
// after a longer quiet spell go through at once.
func (h *clusterHold) idle(now time.Time) { h.planning(now) }

// parseClusterBatchHold reads clusterBatchHold or arrowstream.cluster.
// batchHold: a duration ("250ms", "1s") or a number of milliseconds; 0
// turns the hold off, returned as a negative duration (the zero value of
// SourceOptions.ClusterBatchHold means unset).
func parseClusterBatchHold(v string) (time.Duration, error) {
	v = strings.TrimSpace(v)
	var d time.Duration
	if n, err := strconv.ParseInt(v, 10, 64); err == nil {
		d = time.Duration(n) * time.Millisecond
	} else if d, err = stream.ParseDuration(v); err != nil {
		return 0, fmt.Errorf("want a duration such as '250ms' or '1s', or 0 to turn the hold off: %w", err)
	}
	switch {
	case d < 0:
		return 0, fmt.Errorf("must not be negative (0 turns the hold off)")
	case d == 0:
		return -1, nil
	}
	return d, nil
}

// SetClusterConf implements the session's hook for cluster sources: a
// query's settings (arrowstream.cluster.batchHold) apply to its Kafka
// inputs whose options do not set them.
func (s *Source) SetClusterConf(conf map[string]string) error {
	if s.cluster == nil {
		return nil
	}
	for k, v := range conf {
		if !strings.EqualFold(k, ConfClusterBatchHold) {
			continue
		}
		d, err := parseClusterBatchHold(v)
		if err != nil {
			return fmt.Errorf("kafka: setting %s = %q: %w", ConfClusterBatchHold, v, err)
		}
		s.confHold = d
	}
	return nil
}

// maxHold is the cap in force: the source option, else the session's
// setting, else the default; 0 when the hold is off.
func (s *Source) maxHold() time.Duration {
	d := s.opts.ClusterBatchHold
	if d == 0 {
		d = s.confHold
	}
	if d == 0 {
		d = DefaultClusterBatchHold
	}
	if d < 0 || s.opts.MinOffsetsPerTrigger > 0 || s.hop {
		return 0
	}
	return d
}
