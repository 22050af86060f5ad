package kafka

import (
	"strconv"
	"strings"
)

// Metrics implements arrowstream.MetricsSource with Spark's Kafka source
// metrics: how far the offsets the last batch read up to are behind the
// newest offsets the source listed (minOffsetsBehindLatest,
// maxOffsetsBehindLatest and avgOffsetsBehindLatest over the partitions the
// batch read). Both sides are the ones the engine already asked for, so the
// metrics cost no round trip to Kafka; with maxOffsetsPerTrigger they show
// the backlog the rate limit left. Before the first batch, or when no
// partition is known on both sides, the map is empty (as Spark's).
func (s *Source) Metrics() map[string]string {
	var n, sum, lo, hi int64
	for t, ps := range s.consumed {
		for p, off := range ps {
			end, ok := s.available.get(t, p)
			if !ok {
				continue
			}
			behind := max(end-off, 0)
			if n == 0 || behind < lo {
				lo = behind
			}
			if n == 0 || behind > hi {
				hi = behind
			}
			sum += behind
			n++
		}
	}
	if n == 0 {
		return map[string]string{}
	}
	out := map[string]string{
		"minOffsetsBehindLatest": strconv.FormatInt(lo, 10),
		"maxOffsetsBehindLatest": strconv.FormatInt(hi, 10),
		"avgOffsetsBehindLatest": formatDouble(float64(sum) / float64(n)),
	}
	if s.cluster != nil {
		s.addPartitionMetrics(out) // cluster_metrics.go
	}
	return out
}

// formatDouble prints a float as Spark prints a Double ("2.0", "1.5").
func formatDouble(f float64) string {
	s := strconv.FormatFloat(f, 'f', -1, 64)
	if !strings.ContainsAny(s, ".eEIN") {
		s += ".0"
	}
	return s
}
