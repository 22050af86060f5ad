package vector

import "github.com/apache/arrow/go/v17/arrow"

// Non-null counts implied by the row counts.
//
// A state-mode count or sum (count(*), count(x), sum, avg) keeps each
// group's non-null count. A LiveAggregate fed input rows (LiveRaw,
// LiveRawAt) whose argument has no nulls counts every row, so the count
// of every group equals the group's row count, which the LiveAggregate
// keeps anyway (l.rows). Such counts are left implied and take no array:
// q17's count(*) and the non-null counts of its four sums and its average
// are six of its fourteen per-group int64 arrays, each grown (and, in a
// benchmark run that no collection recycles, faulted in) again and again
// as its groups multiply.
//
// The counts are spelled out — the row counts copied into their own array
// — at the first batch that breaks the equality: an argument with a null,
// or partial states merged (Merge, MergeAt: a partial row adds one row
// and its count). From then on they are kept as before.

// stateCounts is the non-null counts by group of a state-mode count or
// sum.
type stateCounts struct {
	counts []int64
	// byRows: the counts are implied: counts is nil and group g's count
	// is the LiveAggregate's row count rows[g], which every reader of the
	// counts is given.
	byRows bool
}

// countsOr returns the counts by group: rows, the LiveAggregate's row
// counts, when they are implied.
func (c *stateCounts) countsOr(rows []int64) []int64 {
	if c.byRows {
		return rows
	}
	return c.counts
}

// growCounts gives explicit counts room for n groups.
func (c *stateCounts) growCounts(g *grower, n int) {
	if !c.byRows {
		c.counts = growZeroWith(g, c.counts, n)
	}
}

// spell makes implied counts explicit before a batch is folded into them
// whose rows (in groups gids) rows already counts: each group's count is
// its row count before the batch.
func (c *stateCounts) spell(rows []int64, gids []int32) {
	if !c.byRows {
		return
	}
	c.counts = make([]int64, len(rows))
	copy(c.counts, rows)
	for _, g := range gids {
		c.counts[g]--
	}
	c.byRows = false
}

// impliedCounter is a state-mode accumulator whose non-null counts a
// LiveAggregate can leave implied by its row counts.
type impliedCounter interface {
	// imply leaves the counts of a fresh accumulator (no groups yet)
	// implied, when it keeps counts.
	imply()
	// impliedCounts returns the accumulator's counts when they are
	// implied, nil when they are explicit (or it keeps none).
	impliedCounts() *stateCounts
}

// implyIf leaves fresh counts (no groups yet) implied when the
// accumulator keeps counts (keeps: state mode).
func (c *stateCounts) implyIf(keeps bool) {
	if keeps && len(c.counts) == 0 {
		c.counts, c.byRows = nil, true
	}
}

// impliedCounts implements impliedCounter for the accumulators that
// embed stateCounts.
func (c *stateCounts) impliedCounts() *stateCounts {
	if c.byRows {
		return c
	}
	return nil
}

func (c *countAcc) imply() { c.implyIf(c.merge) }

func (s *sumAcc) imply() { s.implyIf(s.merge) }

// implyCounts leaves the counts of l's fresh accumulators implied.
func (l *LiveAggregate) implyCounts() {
	for _, a := range l.accs {
		if ic, ok := a.(impliedCounter); ok {
			ic.imply()
		}
	}
}

// spellCounts makes every implied count explicit before partial rows
// (in groups gids, already in l.rows) are merged.
func (l *LiveAggregate) spellCounts(gids []int32) {
	for _, a := range l.accs {
		if ic, ok := a.(impliedCounter); ok {
			if c := ic.impliedCounts(); c != nil {
				c.spell(l.rows, gids)
			}
		}
	}
}

// spellForRaw makes acc's implied counts explicit before input rows (in
// groups gids, already in l.rows) whose arguments args have a null are
// folded into it: their counts are no longer every row's.
func (l *LiveAggregate) spellForRaw(acc accumulator, gids []int32, args []arrow.Array) {
	ic, ok := acc.(impliedCounter)
	if !ok {
		return
	}
	c := ic.impliedCounts()
	if c == nil {
		return
	}
	for _, a := range args {
		if a.NullN() > 0 {
			c.spell(l.rows, gids)
			return
		}
	}
}
