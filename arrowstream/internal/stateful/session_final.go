package stateful

import (
	"fmt"

	"github.com/apache/arrow/go/v17/arrow"
	"github.com/apache/arrow/go/v17/arrow/array"

	"github.com/arrowstream/arrowstream/vector"
)

// The session window's output rows. Finalizing the epoch's partial rows
// (finalize) builds a hash aggregation every epoch: binding it (its
// accumulators, key layout and schema) cost more than the rows it
// finalized in q11 (about 40 evicted sessions per epoch), and it was
// built even when nothing was evicted. The output layout is now bound
// once (finalLayout), an epoch without output answers an empty scan of
// it, and evicted decoded sessions are finalized straight from the
// decoded aggregate's accumulators (vector.LiveAggregate.Final), with
// their keys and bounds beside them: no partial row is built for them.

// finalLayout returns the operator's output schema: the finalizing
// aggregation's over the partial layout, bound once.
func (s *statefulSessionWindow) finalLayout() (*arrow.Schema, error) {
	if s.finalSchema != nil {
		return s.finalSchema, nil
	}
	op, err := finalizePartial(s.mem, s.partialSchema, s.stateSpec(vector.AggFinal), nil)
	if err != nil {
		return nil, err
	}
	s.finalSchema = op.Schema()
	op.Close()
	return s.finalSchema, nil
}

// output turns the epoch's rows into the operator's output: out holds
// final rows when final is set, else partial rows to finalize (owned
// records are consumed).
func (s *statefulSessionWindow) output(out []arrow.Record, final bool) (vector.Operator, error) {
	if !final && len(out) > 0 {
		return s.finalize(out)
	}
	schema, err := s.finalLayout()
	if err != nil {
		releaseRecords(out)
		return nil, fmt.Errorf("arrowstream: output of operator %d: %w", s.opID, err)
	}
	return vector.NewOwnedScan(schema, out), nil
}

// decodedFinal builds the final rows of decoded sessions (keys, groups
// and bounds by row) before their groups are deleted: the grouping keys
// decoded from their state keys, the session from its bounds, and the
// aggregates' final values from the decoded aggregate's groups. It
// returns false, and no record, when an aggregate cannot be finalized so
// or a column would not come in the output's type (then never again:
// the caller finalizes partial rows).
func (s *statefulSessionWindow) decodedFinal(keys [][]byte, gids []int32, starts, ends []arrow.Timestamp) (arrow.Record, bool, error) {
	if s.noLiveFinal {
		return nil, false, nil
	}
	schema, err := s.finalLayout()
	if err != nil {
		return nil, false, err
	}
	fin, ok, err := s.index.dec.agg.Final(gids)
	if err != nil {
		return nil, false, err
	}
	if !ok {
		s.noLiveFinal = true
		return nil, false, nil
	}
	defer fin.Release()
	aggs := fin.Columns()[1:] // after the session id
	if s.nKeys+len(aggs) != schema.NumFields() {
		s.noLiveFinal = true
		return nil, false, nil
	}
	k, err := s.keyCodec.decode(s.mem, keys)
	if err != nil {
		return nil, false, fmt.Errorf("decode keys: %w", err)
	}
	defer releaseArrays(k)
	win := windowArray(s.mem, starts, ends)
	defer win.Release()
	cols := make([]arrow.Array, schema.NumFields())
	for i, col := range s.groupCols {
		cols[col] = k[i]
	}
	cols[s.sk] = win
	copy(cols[s.nKeys:], aggs)
	for i, c := range cols {
		if !arrow.TypeEqual(c.DataType(), schema.Field(i).Type) {
			s.noLiveFinal = true
			return nil, false, nil
		}
	}
	return array.NewRecord(schema, cols, int64(len(gids))), true, nil
}
