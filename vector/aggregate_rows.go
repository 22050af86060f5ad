package vector

import (
	"context"
	"fmt"

	"github.com/apache/arrow/go/v17/arrow"
	"github.com/apache/arrow/go/v17/arrow/array"
	"github.com/apache/arrow/go/v17/arrow/memory"
)

// PartialRows turns every input row of rec into its own partial-state row
// of spec (AggPartial's layout, PartialSchema): the row's keys and the
// state of its aggregates over that one row, in input order. It is the
// partial aggregation of rec without the grouping, for a consumer that
// merges the partial rows by a key of its own anyway (session windows
// merge rows into sessions): merging PartialRows' rows gives the state
// that merging the partial aggregation's rows gives (up to the order in
// which floating-point sums are added). It returns false, and no record,
// when a key's values do not come in the layout's type (a dictionary) or
// a call is approx_count_distinct (a sketch per row costs more than the
// grouping saves).
func PartialRows(ctx context.Context, mem memory.Allocator, rec arrow.Record, spec AggregateSpec) (arrow.Record, bool, error) {
	spec.Mode = AggPartial
	return rowsAsGroups(ctx, mem, rec, spec)
}

// FinalRows finalizes partial-state rows rec (the layout PartialSchema
// gives; spec's calls are those of the partial aggregation, its keys the
// first columns of rec, as for AggFinal) whose keys are all distinct, as
// a live aggregation's state rows are: the AggFinal aggregation of rec,
// rows in the same order, without a hash table. Rows with equal keys are
// not merged (callers guarantee there are none). It returns false, and no
// record, when a key's values do not come in the layout's type.
func FinalRows(ctx context.Context, mem memory.Allocator, rec arrow.Record, spec AggregateSpec) (arrow.Record, bool, error) {
	spec.Mode = AggFinal
	return rowsAsGroups(ctx, mem, rec, spec)
}

// rowsAsGroups runs spec over rec with every row its own group.
func rowsAsGroups(ctx context.Context, mem memory.Allocator, rec arrow.Record, spec AggregateSpec) (arrow.Record, bool, error) {
	b, err := bindAggregation(rec.Schema(), mem, spec)
	if err != nil {
		return nil, false, err
	}
	b.grouper.release() // every row is its own group
	if spec.Mode == AggPartial {
		for _, a := range b.aggs {
			if _, ok := a.acc.(*hllAcc); ok { // registers by row: not worth it
				return nil, false, nil
			}
		}
	}
	n := int(rec.NumRows())
	cols := make([]arrow.Array, 0, b.schema.NumFields())
	fail := func(err error) (arrow.Record, bool, error) {
		releaseArrays(cols)
		return nil, false, err
	}
	keys, err := evalAll(ctx, b.keyEvs, rec)
	if err != nil {
		return fail(err)
	}
	cols = append(cols, keys...)
	for i, k := range keys {
		if !TypesEqual(k.DataType(), b.keyTypes[i]) {
			releaseArrays(cols)
			return nil, false, nil
		}
		if k.Len() != n {
			return fail(fmt.Errorf("vector: key %d has %d rows, the input %d: %w", i, k.Len(), n, ErrType))
		}
	}
	gids := make([]int32, n)
	rows := make([]int64, n)
	for i := range gids {
		gids[i], rows[i] = int32(i), 1
	}
	for _, a := range b.aggs {
		a.acc.resize(n)
		args, err := evalAll(ctx, a.args, rec)
		if err != nil {
			return fail(err)
		}
		err = a.acc.update(gids, args)
		releaseArrays(args)
		if err != nil {
			return fail(err)
		}
		if spec.Mode.producesState() {
			st, err := a.acc.state(mem, 0, n, rows)
			if err != nil {
				return fail(err)
			}
			cols = append(cols, st...)
			continue
		}
		r, err := a.acc.final(mem, 0, n, rows)
		if err != nil {
			return fail(err)
		}
		cols = append(cols, r)
	}
	out := array.NewRecord(b.schema, cols, int64(n))
	releaseArrays(cols)
	return out, true, nil
}
