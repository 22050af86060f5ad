package stateful

import (
	"fmt"

	"github.com/apache/arrow/go/v17/arrow"

	"github.com/arrowstream/arrowstream/vector"
)

// The retracting top-N (plan.StreamingTopN.UpsertKey set): over an
// Update-mode aggregation each epoch's row for a grouping key replaces
// the key's previous row, whose value may have dropped and let a row from
// beyond rank N in. So the operator keeps every row of a partition (in
// rank order, in the same state value as the append-only top-N), not only
// the first N: the state holds one row per group of the aggregation below
// (numKeptRows in the progress report's custom metrics), and a partition
// with a time key is evicted with the watermark as in the append-only
// form. Each epoch a touched partition is re-ranked whole: its kept rows
// minus those the epoch replaces, followed by the epoch's rows (the last
// one per key), so that a replaced row ranks after the rows it ties with,
// as a new row does. The PARTITION BY columns are grouping keys
// (plan.topNUpsertKey), so a row never leaves its partition and a filled
// rank stays filled: the output is upserts by (partition, rank) and never
// needs a deletion.

// retractCandidates returns the candidate rows of the touched partitions
// (owned by the caller): the kept rows whose key recs does not replace,
// then recs' rows, the last one per key.
func (t *statefulTopN) retractCandidates(kept [][]byte, recs []arrow.Record) ([]arrow.Record, error) {
	type at struct{ rec, row int32 }
	last := map[string]at{}
	for r, rec := range recs {
		if err := t.keyCodec.encode(rec); err != nil {
			return nil, err
		}
		for i := 0; i < int(rec.NumRows()); i++ {
			last[string(t.keyCodec.at(i))] = at{int32(r), int32(i)}
		}
	}
	var out []arrow.Record
	fail := func(err error) ([]arrow.Record, error) {
		releaseRecords(out)
		return nil, err
	}
	if len(kept) > 0 {
		cols, err := t.rowCodec.decode(t.mem, kept)
		if err != nil {
			return nil, fmt.Errorf("arrowstream: state of operator %d: decode kept rows: %w", t.state.opID, err)
		}
		rec := assemble(t.input, cols, nil, len(kept))
		if err := t.keyCodec.encode(rec); err != nil {
			rec.Release()
			return nil, err
		}
		sel := make([]int32, 0, len(kept))
		for i := range kept {
			if _, replaced := last[string(t.keyCodec.at(i))]; !replaced {
				sel = append(sel, int32(i))
			}
		}
		if len(sel) == len(kept) {
			out = append(out, rec)
		} else {
			taken, err := vector.TakeRecord(t.mem, rec, sel)
			rec.Release()
			if err != nil {
				return fail(err)
			}
			out = append(out, taken)
		}
	}
	for r, rec := range recs {
		if err := t.keyCodec.encode(rec); err != nil {
			return fail(err)
		}
		sel := make([]int32, 0, rec.NumRows())
		for i := 0; i < int(rec.NumRows()); i++ {
			if last[string(t.keyCodec.at(i))] == (at{int32(r), int32(i)}) {
				sel = append(sel, int32(i))
			}
		}
		if len(sel) == int(rec.NumRows()) {
			rec.Retain()
			out = append(out, rec)
			continue
		}
		taken, err := vector.TakeRecord(t.mem, rec, sel)
		if err != nil {
			return fail(err)
		}
		out = append(out, taken)
	}
	return out, nil
}

// countKept returns the rows the live state keeps, every partition's.
func (l *topNLive) countKept() int64 {
	n := int64(0)
	for _, p := range l.parts {
		for _, e := range p.rows {
			n += int64(len(e.rows))
		}
	}
	return n
}
