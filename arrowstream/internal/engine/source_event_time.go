package engine

import (
	"github.com/arrowstream/arrowstream/arrowstream/internal/stateful"
	"github.com/arrowstream/arrowstream/arrowstream/stream"
)

// sourceEventTime replaces the largest event time the watermark nodes saw
// with what the query's event-time sources report (stream.EventTimeSource:
// the downstream stage of a repartition hop, whose watermark is the
// minimum over the upstream writers, not the maximum over the rows of
// this instance's partitions). With several such sources the smallest
// counts. Without one, stats are returned as they are.
func sourceEventTime(sources []stream.Source, stats []stateful.EventTimeStats) []stateful.EventTimeStats {
	var (
		ms    int64
		found bool
	)
	for _, src := range sources {
		es, ok := src.(stream.EventTimeSource)
		if !ok {
			continue
		}
		v, ok := es.EventTimeMaxMs()
		if !ok {
			continue
		}
		if !found || v < ms {
			ms, found = v, true
		}
	}
	if !found {
		return stats
	}
	for i := range stats {
		if stats[i].NodeName == "" {
			continue
		}
		stats[i].MaxMs = ms
		stats[i].Count = max(stats[i].Count, 1)
	}
	return stats
}
