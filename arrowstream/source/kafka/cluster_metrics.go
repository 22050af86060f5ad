package kafka

import (
	"encoding/json"
	"sort"
	"strconv"
)

// Per-partition progress in cluster mode: the partitions an instance
// reads change with rebalances, so its progress reports (and
// system.query_progress's progress_json) name them, each with the offset
// the last epoch read up to and how far that is behind the newest offset
// the source listed.
const (
	metricPartitionOffsets = "partitionOffsets"
	metricPartitionLag     = "partitionOffsetsBehindLatest"
)

// noteReadUpTo records the ends of an epoch's ranges.
func (s *Source) noteReadUpTo(end PartitionOffsets) {
	if s.readUpTo == nil {
		s.readUpTo = PartitionOffsets{}
	}
	for t, ps := range end {
		for p, off := range ps {
			s.readUpTo.set(t, p, off)
		}
	}
}

// addPartitionMetrics adds the per-partition metrics, as JSON objects
// keyed "<topic>-<partition>", to out: for each partition the instance
// owns (the last listing) and has read, the offset it read up to and how
// far that is behind the listed end.
func (s *Source) addPartitionMetrics(out map[string]string) {
	offs, lag := map[string]int64{}, map[string]int64{}
	for t, ps := range s.available {
		for p, end := range ps {
			off, ok := s.readUpTo.get(t, p)
			if !ok {
				continue
			}
			name := t + "-" + strconv.Itoa(int(p))
			offs[name] = off
			lag[name] = max(end-off, 0)
		}
	}
	if len(offs) == 0 {
		return
	}
	out[metricPartitionOffsets] = sortedJSON(offs)
	out[metricPartitionLag] = sortedJSON(lag)
}

// sortedJSON encodes m as a JSON object with its keys sorted.
func sortedJSON(m map[string]int64) string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	b := []byte{'{'}
	for i, k := range keys {
		if i > 0 {
			b = append(b, ',')
		}
		kb, _ := json.Marshal(k)
		b = append(b, kb...)
		b = append(b, ':')
		b = strconv.AppendInt(b, m[k], 10)
	}
	return string(append(b, '}'))
}
