package stateful

import (
	"context"

	"github.com/apache/arrow/go/v17/arrow"
	"github.com/apache/arrow/go/v17/arrow/memory"

	"github.com/arrowstream/arrowstream/vector"
)

// The two phases that streaming aggregation and session windows share:
// dropping the rows a watermark made late, and the epoch's partial
// aggregation before the merge with the state.

// Names of the batch operators a streaming epoch runs inside stateful
// operators, in memory-limit errors.
const (
	partialAggName   = "HashAggregate (the epoch's partial aggregation)"
	finalizeAggName  = "HashAggregate (finalizing the epoch's groups)"
	sessionMergeName = "HashAggregate (merging session windows)"
)

// partialAggregate consumes input (it closes it) and returns the epoch's
// partial aggregate records under spec, owned by the caller.
func partialAggregate(ctx context.Context, mem memory.Allocator, input vector.Operator, spec vector.AggregateSpec) ([]arrow.Record, error) {
	// Labelled, so that a limit error in an epoch names it rather than
	// "an unnamed operator".
	op, err := vector.NewHashAggregate(vector.ForOperator(mem, partialAggName), input, spec)
	if err != nil {
		input.Close()
		return nil, err
	}
	recs, err := vector.Drain(ctx, op)
	op.Close()
	return recs, err
}

// dropLate keeps in each record of recs (owned by the caller) only the
// rows keep selects, replacing the records in place, and returns how many
// rows were dropped. A record whose rows are all kept is left as is. On
// error recs still holds one owned record per slot.
func dropLate(mem memory.Allocator, recs []arrow.Record, keep func(rec arrow.Record) []int32) (int64, error) {
	var dropped int64
	for i, rec := range recs {
		sel := keep(rec)
		if len(sel) == int(rec.NumRows()) {
			continue
		}
		kept, err := vector.TakeRecord(mem, rec, sel)
		if err != nil {
			return dropped, err
		}
		dropped += rec.NumRows() - int64(len(sel))
		rec.Release()
		recs[i] = kept
	}
	return dropped, nil
}
