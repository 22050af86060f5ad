package vector

import (
	"math"

	"github.com/apache/arrow/go/v17/arrow"
)

// The distinct groups of a batch folded into a LiveAggregate. A streaming
// aggregation's batch holds several rows of most of the groups it touches
// (the windowed workload about six: 64K rows over some 10K keys and two
// windows), and most of its per-row work beyond the probe is bookkeeping
// by group — the rows merged, the revival of deleted groups, count(*),
// the caller's note of changed groups — each a random access into a
// per-group array. Tallying the batch once (one such access per row)
// lets all of them run once per distinct group instead of once per row.

// batchTally holds the distinct groups of the last batch LiveRaw.Update
// folded, in order of first appearance, each with its row count and its
// first row.
type batchTally struct {
	cnt   []int32 // by group: rows in the batch being tallied; zero between batches
	ids   []int32 // the batch's groups, in order of first appearance
	first []int32 // by position in ids: the group's first row
	n     []int32 // by position in ids: the group's rows
	ok    bool    // ids, first and n describe the last batch
}

// count tallies gids (every id below groups). A batch too long for int32
// counts is not tallied (ok false): the callers then work row by row.
func (t *batchTally) count(gids []int32, groups int) {
	t.ok = false
	if len(gids) > math.MaxInt32 {
		return
	}
	t.cnt = growZero(t.cnt, groups)
	cnt := t.cnt
	ids, first := t.ids[:0], t.first[:0]
	for i, g := range gids {
		c := cnt[g]
		if c == 0 {
			ids = append(ids, g)
			first = append(first, int32(i))
		}
		cnt[g] = c + 1
	}
	t.n = grow(t.n, len(ids))[:len(ids)]
	n := t.n
	for j, g := range ids {
		n[j] = cnt[g]
		cnt[g] = 0 // zero again for the next batch
	}
	t.ids, t.first, t.ok = ids, first, true
}

func (t *batchTally) heapBytes() int64 {
	return sliceBytes(t.cnt) + sliceBytes(t.ids) + sliceBytes(t.first) + sliceBytes(t.n)
}

// countTallied adds the tallied rows to their groups and revives dead
// ones, as countRows does row by row.
func (l *LiveAggregate) countTallied() {
	groups := l.b.grouper.numGroups()
	l.rows = growZero(l.rows, groups)
	l.dead = growZero(l.dead, groups)
	rows, dead, n := l.rows, l.dead, l.tally.n
	for j, g := range l.tally.ids {
		if rows[g] == 0 && dead[g] {
			dead[g] = false
			l.nDead--
		}
		rows[g] += int64(n[j])
	}
}

// talliedMerger is a rawMerger that can fold a batch from its tally
// alone when no argument has a null (count(*), count of a column without
// nulls): false when it cannot, and the rows are then folded one by one.
type talliedMerger interface {
	updateTallied(ids, n []int32, args []arrow.Array) bool
}

func (c *countAcc) updateTallied(ids, n []int32, args []arrow.Array) bool {
	for _, a := range args {
		if a.NullN() > 0 {
			return false
		}
	}
	if c.byRows {
		return true // the row counts are the counts
	}
	counts := c.counts
	for j, g := range ids {
		counts[g] += int64(n[j])
	}
	return true
}

// Groups returns the distinct groups of the batch the last Update folded,
// in order of first appearance, and the first row of each, in slices
// valid until the next Update, Merge or Compact; ok is false when the
// batch was not tallied (the caller then reads the groups of the rows).
// A caller noting the groups a batch changed does so once per group.
func (r *LiveRaw) Groups() (ids, first []int32, ok bool) {
	t := &r.l.tally
	if !t.ok {
		return nil, nil, false
	}
	return t.ids, t.first, true
}
