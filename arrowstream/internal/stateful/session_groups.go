package stateful

import "github.com/apache/arrow/go/v17/arrow"

// sessionMergeGroup is the partial rows of consecutive partitions merged
// together: recs in partition order, parts[i] the partition of recs[i].
type sessionMergeGroup struct {
	recs  []arrow.Record // borrowed from the split
	parts []int32
}

// sessionMergeGroups cuts the partitions with rows (byPart, by partition)
// into at most limit groups of consecutive partitions with about as many
// rows each; every partition with rows is in exactly one group, in
// partition order.
func sessionMergeGroups(byPart [][]arrow.Record, limit int) []sessionMergeGroup {
	var total int64
	active := 0
	for _, recs := range byPart {
		if len(recs) > 0 {
			active++
		}
		for _, r := range recs {
			total += r.NumRows()
		}
	}
	if active == 0 {
		return nil
	}
	n := int64(min(max(limit, 1), active))
	groups := make([]sessionMergeGroup, 0, n)
	var cur sessionMergeGroup
	var done int64
	for p, recs := range byPart {
		if len(recs) == 0 {
			continue
		}
		for _, r := range recs {
			cur.recs = append(cur.recs, r)
			cur.parts = append(cur.parts, int32(p))
			done += r.NumRows()
		}
		// Close the group once it holds its share of the rows (the
		// last group takes what is left).
		if int64(len(groups)) < n-1 && done*n >= total*int64(len(groups)+1) {
			groups = append(groups, cur)
			cur = sessionMergeGroup{}
		}
	}
	if len(cur.recs) > 0 {
		groups = append(groups, cur)
	}
	return groups
}
