package vector

import (
	"context"
	"fmt"

	"github.com/apache/arrow/go/v17/arrow"
)

// Folding input rows into groups the caller already knows: MergeAt for
// raw rows. A caller that keeps the group of every key it holds, under
// keys of its own (a session window keys its open sessions' groups by a
// session id, not by the input's grouping keys), reads the input's
// grouping keys to place each row, then folds the rows straight into
// their groups: no partial aggregation of the input first (a hash table
// or a state row per input row, and a second pass to merge them).

// LiveRawAt binds a LiveAggregate's calls to input rows grouped by keys
// the caller evaluates and places itself (Keys), for UpdateAt. Use it
// from the LiveAggregate's goroutine.
type LiveRawAt struct {
	l        *LiveAggregate
	keyEvs   []Evaluator
	keyTypes []arrow.DataType
	argEvs   [][]Evaluator
}

// RawAt returns the binding of l's calls to rows of input whose grouping
// keys are groupBy (any number of them: they are the caller's, not l's),
// or false when some call's state cannot take input rows directly
// (first, last, approx_count_distinct, DISTINCT): the caller then
// aggregates partially and uses MergeAt.
func (l *LiveAggregate) RawAt(input *arrow.Schema, groupBy []NamedExpr) (*LiveRawAt, bool, error) {
	raw, ok, err := l.bindRaw(input, groupBy)
	if !ok || err != nil {
		return nil, false, err
	}
	r := &LiveRawAt{l: l, keyEvs: raw.keyEvs, keyTypes: raw.keyTypes, argEvs: make([][]Evaluator, len(raw.aggs))}
	for i, a := range raw.aggs {
		// The raw binding's evaluators (with its widening) feed the
		// state's accumulators, as LiveRaw's do.
		r.argEvs[i] = a.args
	}
	return r, true, nil
}

// KeyTypes are the types of the grouping keys, as the partial
// aggregation of groupBy declares them (Keys may return others, such as
// dictionary-encoded columns, which the caller may not accept).
func (r *LiveRawAt) KeyTypes() []arrow.DataType { return r.keyTypes }

// Keys evaluates the grouping keys of input rows rec; the caller owns
// the arrays.
func (r *LiveRawAt) Keys(ctx context.Context, rec arrow.Record) ([]arrow.Array, error) {
	return evalAll(ctx, r.keyEvs, rec)
}

// UpdateAt folds the input rows of rec into the groups gids: row i into
// group gids[i], a group Merge or Groups returned. The state is what
// MergeAt of the rows' partial aggregation (one partial row per input
// row, in order) into the same groups gives. A deleted group folded
// into is live again.
func (r *LiveRawAt) UpdateAt(ctx context.Context, rec arrow.Record, gids []int32) error {
	l := r.l
	if int(rec.NumRows()) != len(gids) {
		return fmt.Errorf("vector: live aggregation: %d input rows folded into %d groups", rec.NumRows(), len(gids))
	}
	if len(gids) == 0 {
		return nil
	}
	b := l.b
	groups := b.grouper.numGroups()
	if err := checkGroupIDs(gids, groups, "fold"); err != nil {
		return err
	}
	l.tally.ok = false
	l.countRows(gids)
	for i, a := range b.aggs {
		if err := resizeContext(ctx, a.acc, groups); err != nil {
			return err
		}
		args, err := evalAll(ctx, r.argEvs[i], rec)
		if err != nil {
			return err
		}
		l.spellForRaw(a.acc, gids, args)
		// Asserted per batch: Compact replaces the accumulators.
		err = a.acc.(rawMerger).updateRaw(gids, args)
		releaseArrays(args)
		if err != nil {
			return err
		}
	}
	return l.heap.set(l.HeapBytes())
}
