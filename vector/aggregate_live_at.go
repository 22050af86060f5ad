package vector

import (
	"context"
	"fmt"

	"github.com/apache/arrow/go/v17/arrow"
)

// Merging into groups the caller already knows. Merge finds each row's
// group by hashing its key; a caller that keeps the group of every key it
// holds (a session window's open sessions, each with its group) would
// only look up what it knows. Groups makes the groups of new keys (one
// probe per new key), and MergeAt folds rows into given groups without
// reading their keys. Groups then MergeAt gives exactly what Merge gives
// for the same rows and groups.

// Groups returns the group of every key row of keys (the grouping key
// columns, as Schema's first columns), creating the groups of keys not
// seen yet, with empty state and no rows merged, in a slice valid until
// the next Merge, Groups or Update. A created group counts as merged
// (and a deleted one as live again) only once MergeAt or Merge folds a
// row into it.
func (l *LiveAggregate) Groups(ctx context.Context, keys []arrow.Array) ([]int32, error) {
	b := l.b
	if len(keys) != len(b.keyTypes) {
		return nil, fmt.Errorf("vector: live aggregation of %d keys given %d key columns", len(b.keyTypes), len(keys))
	}
	n := 0
	for i, k := range keys {
		if !TypesEqual(Unwrap(k.DataType()), b.keyTypes[i]) {
			return nil, fmt.Errorf("vector: live aggregation key %d is %s, given %s: %w", i, TypeName(b.keyTypes[i]), TypeName(k.DataType()), ErrType)
		}
		if i == 0 {
			n = k.Len()
		} else if k.Len() != n {
			return nil, fmt.Errorf("vector: live aggregation key columns of %d and %d rows", n, k.Len())
		}
	}
	l.gids = grow(l.gids, n)
	gids := l.gids[:n]
	if n == 0 {
		return gids, nil
	}
	if err := l.assignGroups(ctx, keys, gids); err != nil {
		return nil, err
	}
	groups := b.grouper.numGroups()
	for _, a := range b.aggs {
		if err := resizeContext(ctx, a.acc, groups); err != nil {
			return nil, err
		}
	}
	if err := l.heap.set(l.HeapBytes()); err != nil {
		return nil, err
	}
	return gids, nil
}

// MergeAt folds the partial rows of rec (schema Schema) into the groups
// gids: row i into group gids[i], a group Merge or Groups returned. The
// rows' key columns are not read. A deleted group folded into is live
// again.
func (l *LiveAggregate) MergeAt(ctx context.Context, rec arrow.Record, gids []int32) error {
	if int(rec.NumRows()) != len(gids) {
		return fmt.Errorf("vector: live aggregation: %d rows merged into %d groups", rec.NumRows(), len(gids))
	}
	if len(gids) == 0 {
		return nil
	}
	b := l.b
	groups := b.grouper.numGroups()
	if err := checkGroupIDs(gids, groups, "merge"); err != nil {
		return err
	}
	l.countRows(gids)
	l.spellCounts(gids)
	if err := updateAggs(ctx, b.aggs, groups, gids, rec); err != nil {
		return err
	}
	return l.heap.set(l.HeapBytes())
}

// checkGroupIDs refuses a group id a fold into known groups (MergeAt,
// UpdateAt) cannot take: every id must be one of the groups groups.
func checkGroupIDs(gids []int32, groups int, verb string) error {
	for _, g := range gids {
		if g < 0 || int(g) >= groups {
			return fmt.Errorf("vector: live aggregation: %s into group %d of %d", verb, g, groups)
		}
	}
	return nil
}
