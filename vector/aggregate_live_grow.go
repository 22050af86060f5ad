package vector

import "context"

// growGroups makes the live aggregation's per-group bookkeeping (row
// counts, dead flags and, for a single fixed-width key, the key words and
// null flags) as long as the groups, interruptibly: an epoch that brings
// millions of new groups doubles them in steps that check ctx, so a
// StopQuery during it does not wait for the copy. On cancellation the
// aggregation must not be used (its query has failed).
func (l *LiveAggregate) growGroups(ctx context.Context) error {
	groups := l.b.grouper.numGroups()
	g := &grower{ctx: ctx}
	l.rows = growZeroWith(g, l.rows, groups)
	l.dead = growZeroWith(g, l.dead, groups)
	if _, ok := l.b.grouper.(*fixedGrouper); ok {
		l.words = growZeroWith(g, l.words, groups)
		l.nulls = growZeroWith(g, l.nulls, groups)
	}
	return g.err
}
