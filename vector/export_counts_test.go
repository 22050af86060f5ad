package vector

// ImpliedCounts is the number of l's accumulators whose non-null counts
// are implied by its row counts (aggregate_live_counts.go), for the tests
// of package vector_test.
func ImpliedCounts(l *LiveAggregate) int {
	n := 0
	for _, a := range l.accs {
		if ic, ok := a.(impliedCounter); ok && ic.impliedCounts() != nil {
			n++
		}
	}
	return n
}
