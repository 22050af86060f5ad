package stateful

import (
	"context"

	"github.com/apache/arrow/go/v17/arrow"

	"github.com/arrowstream/arrowstream/vector"
)

// mergeOnlyMatched is mergeWithState's shortcut: the epoch's partial rows
// come from one hash aggregate, so each group appears once among them, and
// a group with no stored state is already its own merged row. Only the
// nMatched rows whose group has state (matched, per record) go through
// the merge aggregate with their old rows; the others pass through as
// they are. In a windowed aggregation most of an epoch's groups are new
// windows, and re-aggregating them was most of the merge's cost.
//
// ok is false when the shortcut does not apply and the caller merges
// everything: the partial rows' schema differs from the merge's output
// (so they could not stand for merged rows), or every row matched.
func (s *statefulAggregate) mergeOnlyMatched(ctx context.Context, partials []arrow.Record, matched [][]int32, nMatched int, c codecPair, oldKeys, oldVals [][]byte) (out []arrow.Record, ok bool, err error) {
	total := 0
	for _, rec := range partials {
		total += int(rec.NumRows())
	}
	if total == 0 || nMatched == total || !s.partialsAreMerged(partials) {
		return nil, false, nil
	}
	var passed, toMerge []arrow.Record
	defer func() {
		releaseRecords(toMerge)
		if err != nil {
			releaseRecords(passed)
		}
	}()
	for r, rec := range partials {
		m := matched[r]
		switch {
		case len(m) == 0:
			rec.Retain()
			passed = append(passed, rec)
			continue
		case len(m) == int(rec.NumRows()):
			rec.Retain()
			toMerge = append(toMerge, rec)
			continue
		}
		rest := make([]int32, 0, int(rec.NumRows())-len(m))
		j := 0
		for i := int32(0); i < int32(rec.NumRows()); i++ {
			if j < len(m) && m[j] == i {
				j++
				continue
			}
			rest = append(rest, i)
		}
		var part arrow.Record
		if part, err = vector.TakeRecord(s.mem, rec, m); err != nil {
			return nil, true, err
		}
		toMerge = append(toMerge, part)
		if part, err = vector.TakeRecord(s.mem, rec, rest); err != nil {
			return nil, true, err
		}
		passed = append(passed, part)
	}
	if nMatched == 0 {
		return passed, true, nil
	}
	old, err := s.decodeStateWith(c, oldKeys, oldVals)
	if err != nil {
		return nil, true, err
	}
	defer old.Release()
	scan, err := vector.NewScan(s.partialSchema, append([]arrow.Record{old}, toMerge...)...)
	if err != nil {
		return nil, true, err
	}
	op, err := vector.NewHashAggregate(s.mem, scan, s.stateSpec(vector.AggMerge))
	if err != nil {
		scan.Close()
		return nil, true, err
	}
	defer op.Close()
	merged, err := vector.Drain(ctx, op)
	if err != nil {
		return nil, true, err
	}
	return append(merged, passed...), true, nil
}

// partialsAreMerged says whether the partial rows have exactly the schema
// of the merge aggregate's output, so that a row can stand for its own
// merged row.
func (s *statefulAggregate) partialsAreMerged(partials []arrow.Record) bool {
	scan, err := vector.NewScan(s.partialSchema)
	if err != nil {
		return false
	}
	op, err := vector.NewHashAggregate(s.mem, scan, s.stateSpec(vector.AggMerge))
	if err != nil {
		scan.Close()
		return false
	}
	defer op.Close()
	want := op.Schema()
	for _, rec := range partials {
		if !rec.Schema().Equal(want) {
			return false
		}
	}
	return true
}
