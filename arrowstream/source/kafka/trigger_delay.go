package kafka

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/arrowstream/arrowstream/arrowstream/stream"
)

// minOffsetsPerTrigger and maxTriggerDelay (Spark's Kafka source
// options). Every epoch costs the same fixed work whatever it carries:
// the offset log and its sync, the sink's epoch file, the claim in
// cluster mode, the hop's transactions. A source fed slowly, or an
// instance of a cluster that owns a third of the partitions, runs many
// small epochs back to back and pays that work per few rows. With a
// minimum the source reports no new data until at least that many
// offsets are waiting after the epoch's start, or until maxTriggerDelay
// has passed since the last epoch it let through; so the fixed cost is
// shared by at least the minimum's rows, at the price of up to
// maxTriggerDelay more latency.
//
// As Spark's (KafkaMicroBatchStream.delayBatch): the first call lets the
// epoch through, and an expired delay lets the next call through whether
// or not there is data (the delay is then measured from it). The source
// asks at every planning, also one that finds nothing waiting, as Spark
// asks at every trigger: so after an idle spell the delay has restarted
// and the first records wait for the minimum, instead of going through
// at once in a small epoch (TestTriggerDelayScriptedAsSpark).

// DefaultMaxTriggerDelay is maxTriggerDelay's default (Spark's 15m).
const DefaultMaxTriggerDelay = 15 * time.Minute

// triggerDelay decides whether an epoch waits for more offsets.
type triggerDelay struct {
	min      int64
	maxDelay time.Duration
	last     time.Time // when the last epoch was let through; zero: never
}

// hold reports whether the epoch [from, until) waits: it has fewer than
// min offsets and the delay since the last let-through has not passed.
// A false answer restarts the delay.
func (d *triggerDelay) hold(now time.Time, from, until PartitionOffsets) bool {
	if d.min <= 0 {
		return false
	}
	if !d.last.IsZero() && now.Sub(d.last) < d.maxDelay && backlog(from, until) < d.min {
		return true
	}
	d.last = now
	return false
}

// deadline is when a held epoch is let through whatever it holds.
func (d *triggerDelay) deadline() time.Time { return d.last.Add(d.maxDelay) }

// backlog is the number of offsets in [from, until) over the partitions
// of until (a partition missing from from counts from 0, as Spark's).
func backlog(from, until PartitionOffsets) int64 {
	var n int64
	for t, ps := range until {
		for p, end := range ps {
			begin, _ := from.get(t, p)
			if end > begin {
				n += end - begin
			}
		}
	}
	return n
}

// parseTriggerDelay reads maxTriggerDelay: a duration ("15m", "30s",
// "500 ms", "1 minute") or a number of milliseconds (Spark's
// timeStringAsMs).
func parseTriggerDelay(v string) (time.Duration, error) {
	v = strings.TrimSpace(v)
	if n, err := strconv.ParseInt(v, 10, 64); err == nil {
		if n <= 0 {
			return 0, fmt.Errorf("must be positive")
		}
		return time.Duration(n) * time.Millisecond, nil
	}
	d, err := stream.ParseDuration(v)
	if err != nil {
		return 0, fmt.Errorf("want a duration such as '15m', '30s' or '500ms': %w", err)
	}
	if d <= 0 {
		return 0, fmt.Errorf("must be positive")
	}
	return d, nil
}
