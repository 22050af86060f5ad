package vector

import (
	"context"
	"fmt"

	"github.com/apache/arrow/go/v17/arrow"
)

// Folding input rows straight into a LiveAggregate, without the partial
// aggregation that would first turn them into partial-state rows: one hash
// probe per row into the table that is kept anyway, instead of a probe
// into a table built for the batch and another one for its partial rows.
// The groups, their ids and their state are exactly what partial
// aggregation followed by Merge gives.

// rawMerger is a state-mode accumulator that can also take input rows.
type rawMerger interface {
	// updateRaw folds input rows (the raw arguments) into the state:
	// row i belongs to group gids[i].
	updateRaw(gids []int32, args []arrow.Array) error
}

// LiveRaw binds a LiveAggregate to the input rows of the partial
// aggregation that makes its state rows (the same grouping keys and
// calls, over the input schema). Use it from the LiveAggregate's
// goroutine.
type LiveRaw struct {
	l      *LiveAggregate
	keyEvs []Evaluator
	argEvs [][]Evaluator
	masked []*maskedSum // by call: the sum's CASE as a masked add, or nil
	all    []uint64     // every row's bit set: the first condition's rows
	lanes  []maskedLane // foldMaskedRun's scratch, empty between calls
}

// Raw returns the raw-input binding of l for rows of input grouped by
// groupBy, or false when some call's state cannot take input rows
// directly (first, last, approx_count_distinct, DISTINCT): the caller
// then aggregates partially and merges.
func (l *LiveAggregate) Raw(input *arrow.Schema, groupBy []NamedExpr) (*LiveRaw, bool, error) {
	if len(groupBy) != len(l.spec.GroupBy) {
		return nil, false, fmt.Errorf("vector: live aggregation of %d keys bound to input by %d", len(l.spec.GroupBy), len(groupBy))
	}
	raw, ok, err := l.bindRaw(input, groupBy)
	if !ok || err != nil {
		return nil, false, err
	}
	for i, t := range raw.keyTypes {
		if !TypesEqual(t, l.b.keyTypes[i]) {
			return nil, false, fmt.Errorf("vector: live aggregation key %d is %s, the input's %s: %w", i, TypeName(l.b.keyTypes[i]), TypeName(t), ErrType)
		}
	}
	r := &LiveRaw{l: l, keyEvs: raw.keyEvs, argEvs: make([][]Evaluator, len(raw.aggs)), masked: make([]*maskedSum, len(raw.aggs))}
	for i, a := range raw.aggs {
		// The raw binding's evaluators, with its widening (min/max of
		// tinyint, the sum's plain argument), feed the state's
		// accumulators, which store the same types.
		r.argEvs[i] = a.args
		r.masked[i] = maskedSumOf(a.args)
	}
	return r, true, nil
}

// bindRaw binds l's calls to rows of input grouped by groupBy, for
// their evaluators only (the binding's grouper is released), or false
// when some call's state cannot take input rows directly.
func (l *LiveAggregate) bindRaw(input *arrow.Schema, groupBy []NamedExpr) (*boundAggregation, bool, error) {
	for i, a := range l.b.aggs {
		if _, ok := a.acc.(rawMerger); !ok || l.spec.Aggregates[i].Distinct {
			return nil, false, nil
		}
	}
	raw, err := bindAggregation(input, l.mem, AggregateSpec{GroupBy: groupBy, Aggregates: l.spec.Aggregates, Mode: AggPartial})
	if err != nil {
		return nil, false, err
	}
	raw.grouper.release() // only the evaluators are used
	return raw, true, nil
}

// Keys evaluates the grouping keys of input rows rec (owned by the
// caller), for Update and for the caller's look at them (event times).
func (r *LiveRaw) Keys(ctx context.Context, rec arrow.Record) ([]arrow.Array, error) {
	return evalAll(ctx, r.keyEvs, rec)
}

// Update folds the input rows of rec, whose keys Keys returned, into the
// groups and returns the group of every row in a slice valid until the
// next Merge or Update. Groups first seen get the next ids; a deleted
// group whose key comes back is live again.
func (r *LiveRaw) Update(ctx context.Context, rec arrow.Record, keys []arrow.Array) ([]int32, error) {
	l := r.l
	l.tally.ok = false
	n := int(rec.NumRows())
	l.gids = grow(l.gids, n)
	gids := l.gids[:n]
	if n == 0 {
		return gids, nil
	}
	b := l.b
	if err := l.assignGroups(ctx, keys, gids); err != nil {
		return nil, err
	}
	groups := b.grouper.numGroups()
	l.tally.count(gids, groups)
	tallied := l.tally.ok
	if tallied {
		l.countTallied()
	} else {
		l.countRows(gids)
	}
	for i := 0; i < len(b.aggs); i++ {
		// Asserted per batch: Compact replaces the accumulators.
		if end := r.maskedRunEnd(i); end > i {
			if err := r.foldMaskedRun(ctx, rec, gids, groups, i, end); err != nil {
				return nil, err
			}
			i = end - 1
			continue
		}
		a := b.aggs[i]
		if err := resizeContext(ctx, a.acc, groups); err != nil {
			return nil, err
		}
		// Asserted per batch: Compact replaces the accumulators.
		if s, ok := a.acc.(*sumAcc); ok && r.masked[i] != nil {
			done, err := r.masked[i].update(ctx, s, rec, gids, r.allRows(n), l.mem)
			if err != nil {
				return nil, err
			}
			if done {
				continue
			}
		}
		args, err := evalAll(ctx, r.argEvs[i], rec)
		if err != nil {
			return nil, err
		}
		l.spellForRaw(a.acc, gids, args)
		// Asserted per batch: Compact replaces the accumulators.
		if tm, ok := a.acc.(talliedMerger); !tallied || !ok || !tm.updateTallied(l.tally.ids, l.tally.n, args) {
			err = a.acc.(rawMerger).updateRaw(gids, args)
		}
		releaseArrays(args)
		if err != nil {
			return nil, err
		}
	}
	if err := l.heap.set(l.HeapBytes()); err != nil {
		return nil, err
	}
	return gids, nil
}

// allRows returns n rows' bits, all set, kept across batches.
func (r *LiveRaw) allRows(n int) []uint64 {
	nw := words64(n)
	if len(r.all) < nw {
		r.all = make([]uint64, nw)
		fillWords(r.all, true)
	}
	return r.all[:nw]
}

// countRows adds a row to every group of gids and revives dead ones.
func (l *LiveAggregate) countRows(gids []int32) {
	groups := l.b.grouper.numGroups()
	l.rows = growZero(l.rows, groups)
	l.dead = growZero(l.dead, groups)
	rows, dead := l.rows, l.dead
	for _, g := range gids {
		// A dead group has no rows (Delete empties it), so only a
		// group without rows can be one: the dead flag is read for new
		// and deleted groups, not for every row.
		if rows[g] == 0 && dead[g] {
			dead[g] = false
			l.nDead--
		}
		rows[g]++
	}
}

// updateRaw: a state-mode count adds one for every row whose arguments
// are all non-null (count(*) and count of constants: every row). Counts
// implied by the row counts stay so (the caller spelled them out if an
// argument has a null: spellForRaw).
func (c *countAcc) updateRaw(gids []int32, args []arrow.Array) error {
	if c.byRows {
		return nil
	}
	var bms [][]byte
	var offs []int
	for _, a := range args {
		if a.NullN() > 0 {
			bm, off := validity(a)
			bms, offs = append(bms, bm), append(offs, off)
		}
	}
	if len(bms) == 0 {
		for _, g := range gids {
			c.counts[g]++
		}
		return nil
	}
	for i, g := range gids {
		ok := true
		for j, bm := range bms {
			if !bitSet(bm, offs[j]+i) {
				ok = false
				break
			}
		}
		if ok {
			c.counts[g]++
		}
	}
	return nil
}

// updateRaw: a state-mode sum or average adds the non-null values and
// counts them (counts implied by the row counts stay so: spellForRaw).
func (s *sumAcc) updateRaw(gids []int32, args []arrow.Array) error {
	arg := args[0]
	bm, off := validity(arg)
	if s.byRows {
		if bm != nil {
			panic("vector: implied counts given a null argument") // spellForRaw's job
		}
	} else if bm == nil {
		for _, g := range gids {
			s.counts[g]++
		}
	} else {
		for i, g := range gids {
			if bitSet(bm, off+i) {
				s.counts[g]++
			}
		}
	}
	return s.addValues(gids, arg, bm, off)
}

// updateRaw: min and max fold input values and partial states alike.
func (m *minMaxAcc) updateRaw(gids []int32, args []arrow.Array) error {
	return m.update(gids, args)
}
