package stateful

import (
	"context"

	"github.com/apache/arrow/go/v17/arrow"

	"github.com/arrowstream/arrowstream/arrowstream/stream"
	"github.com/arrowstream/arrowstream/vector"
)

// How an epoch's input reaches the live aggregation state. When every
// aggregate's state can take input rows (count, sum, avg, min, max) and
// no input row is late, the rows are folded straight into the live groups
// (vector.LiveRaw): one hash probe per row into the table kept between
// epochs. Otherwise the input is aggregated partially first, late partial
// rows are dropped (so that numRowsDroppedByWatermark counts partial
// rows, as Spark's does) and the partial rows are merged. Both give the
// same groups, in the same order, with the same state.

// liveRawBinding is the raw-input binding of the live aggregation, kept
// while the live state and the input schema stay the same.
type liveRawBinding struct {
	agg    *vector.LiveAggregate // the aggregation it is bound to
	schema *arrow.Schema
	raw    *vector.LiveRaw // nil: the calls need partial aggregation
}

// rawFor returns the binding of the current live state to input rows of
// schema, or nil when the partial path must be taken.
func (s *statefulAggregate) rawFor(schema *arrow.Schema) (*vector.LiveRaw, error) {
	b := &s.raw
	if b.agg == s.live.agg && b.schema != nil && b.schema.Equal(schema) {
		return b.raw, nil
	}
	raw, ok, err := s.live.agg.Raw(schema, s.spec.GroupBy)
	if err != nil {
		return nil, err
	}
	if !ok {
		raw = nil
	}
	*b = liveRawBinding{agg: s.live.agg, schema: schema, raw: raw}
	return raw, nil
}

// fold folds the epoch's input (which it closes) into the live state and
// notes the changed groups.
func (s *statefulAggregate) fold(ctx context.Context, ep Epoch, input vector.Operator) error {
	if s.spill != nil {
		return s.foldPartial(ctx, ep, input)
	}
	raw, err := s.rawFor(input.Schema())
	if err != nil {
		input.Close()
		return err
	}
	if raw == nil {
		return s.foldPartial(ctx, ep, input)
	}
	schema := input.Schema()
	recs, err := vector.Drain(ctx, input)
	input.Close()
	if err != nil {
		return err
	}
	defer releaseRecords(recs)
	keys := make([][]arrow.Array, len(recs))
	defer func() {
		for _, k := range keys {
			for _, a := range k {
				a.Release()
			}
		}
	}()
	evicting := s.evicting()
	late := false
	for i, rec := range recs {
		if keys[i], err = raw.Keys(ctx, rec); err != nil {
			return err
		}
		if evicting && ep.HasWatermark && !late {
			late = s.anyLate(keys[i][s.timeKey], ep.LateWatermarkMs)
		}
	}
	if late {
		return s.foldPartial(ctx, ep, vector.NewOwnedScan(schema, retainAll(recs)))
	}
	for i, rec := range recs {
		gids, err := raw.Update(ctx, rec, keys[i])
		if err != nil {
			return err
		}
		var times []arrow.Timestamp
		var valid arrow.Array
		if evicting {
			times, valid = s.timesOf(keys[i][s.timeKey])
		}
		// Once per group of the batch when it was tallied, unless a
		// null window struct may group rows of different times (a null
		// timestamp key groups rows that are all null).
		if ids, first, ok := raw.Groups(); ok && (!evicting || !s.timeIsWindow || keys[i][s.timeKey].NullN() == 0) {
			s.live.noteGroups(ids, first, times, valid)
		} else {
			s.live.note(gids, times, valid)
		}
	}
	return nil
}

// foldPartial aggregates the input (which it closes) partially, drops the
// late partial rows and merges the others.
func (s *statefulAggregate) foldPartial(ctx context.Context, ep Epoch, input vector.Operator) error {
	partials, err := partialAggregate(ctx, s.mem, input, s.spec)
	if err != nil {
		return err
	}
	defer releaseRecords(partials)
	evicting := s.evicting()
	if evicting && ep.HasWatermark {
		dropped, err := dropLate(s.mem, partials, func(rec arrow.Record) []int32 {
			return s.notLate(rec, ep.LateWatermarkMs)
		})
		s.progress.NumRowsDroppedByWatermark += dropped
		if err != nil {
			return err
		}
	}
	for _, rec := range partials {
		var times []arrow.Timestamp
		var valid arrow.Array
		if evicting {
			times, valid = s.keyTimes(rec)
		}
		if s.spill != nil {
			if err := s.mergeSpilled(ctx, rec); err != nil {
				return err
			}
		} else if err := s.live.merge(ctx, rec, times, valid); err != nil {
			return err
		}
	}
	return nil
}

// evicting reports whether groups leave the state by their time key.
func (s *statefulAggregate) evicting() bool {
	return s.timeKey >= 0 && s.mode != stream.Complete
}

// anyAtOrBelow reports whether a valid time of the watermark key column
// col is at or below wmMs.
func (s *statefulAggregate) anyAtOrBelow(col arrow.Array, wmMs int64) bool {
	times, valid := s.timesOf(col)
	limit := arrow.Timestamp(wmMs * 1000)
	for i, t := range times {
		if t <= limit && valid.IsValid(i) {
			return true
		}
	}
	return false
}
