package stateful

import (
	"cmp"
	"context"
	"fmt"
	"slices"

	"github.com/apache/arrow/go/v17/arrow"
	"github.com/apache/arrow/go/v17/arrow/array"

	"github.com/arrowstream/arrowstream/checkpoint"
	"github.com/arrowstream/arrowstream/vector"
)

// mergePartition merges one partition's partial session aggregates with
// the stored sessions of the keys they touch, in four phases: load the
// stored sessions, re-sessionize stored and new rows together, merge the
// aggregate states of each merged session, save each touched key's
// sessions. It returns the number of sessions saved, and notes the
// sessions replaced and saved in d (p is the partition).
func (s *statefulSessionWindow) mergePartition(ctx context.Context, st checkpoint.StateStore, partials []arrow.Record, c codecPair, p int, d *sessionDelta) (int64, error) {
	inputs := make([]arrow.Record, 0, len(partials)+1)
	old, err := s.loadTouched(st, partials, c, d)
	if err != nil {
		return 0, err
	}
	if old != nil {
		defer old.Release()
		inputs = append(inputs, old)
	}
	inputs = append(inputs, partials...)
	resessioned, err := s.resessionize(inputs, c)
	defer func() { releaseRecords(resessioned) }()
	if err != nil {
		return 0, err
	}
	merged, err := s.mergeSessions(ctx, resessioned)
	defer releaseRecords(merged)
	if err != nil {
		return 0, err
	}
	return s.saveSessions(st, merged, c, p, d)
}

// loadTouched decodes the stored sessions of the keys partials touch into
// one record (nil when none is stored). They come before the new rows, so
// that first/last see input order.
func (s *statefulSessionWindow) loadTouched(st checkpoint.StateStore, partials []arrow.Record, c codecPair, d *sessionDelta) (arrow.Record, error) {
	touched := map[string]bool{}
	var oldKeys, oldVals [][]byte
	for _, rec := range partials {
		if err := c.key.encode(rec); err != nil {
			return nil, err
		}
		for i := 0; i < int(rec.NumRows()); i++ {
			k := c.key.at(i)
			if touched[string(k)] {
				continue
			}
			touched[string(k)] = true
			v, ok, err := st.Get(k)
			if err != nil {
				return nil, fmt.Errorf("arrowstream: read state of operator %d: %w", s.opID, err)
			}
			if ok {
				entries, err := splitSessions(v)
				if err != nil {
					return nil, fmt.Errorf("arrowstream: state of operator %d: %w", s.opID, err)
				}
				kc := []byte(string(k))
				d.removed += int64(len(entries))
				for _, e := range entries {
					oldKeys = append(oldKeys, kc)
					oldVals = append(oldVals, e.val)
				}
			}
		}
	}
	if len(oldKeys) == 0 {
		return nil, nil
	}
	return s.decodeState(c, oldKeys, oldVals)
}

// resessionize gives every row of inputs its merged session: it numbers
// the keys, sorts every session by (key, start), sweeps, and sets each
// row's session to [min start, max end) of the overlapping ones. (rec,
// row) breaks ties, so the order is total and deterministic. The returned
// records (one per input, owned) share the inputs' other columns.
func (s *statefulSessionWindow) resessionize(inputs []arrow.Record, c codecPair) ([]arrow.Record, error) {
	rows := 0
	for _, rec := range inputs {
		rows += int(rec.NumRows())
	}
	ids := make(map[string]int32, rows)
	refs := make([]sessionRef, 0, rows)
	for ri, rec := range inputs {
		if err := c.key.encode(rec); err != nil {
			return nil, err
		}
		starts, ends := sessionBounds(rec, s.sk)
		for i := 0; i < int(rec.NumRows()); i++ {
			id, ok := ids[string(c.key.at(i))]
			if !ok {
				id = int32(len(ids))
				ids[string(c.key.at(i))] = id
			}
			refs = append(refs, sessionRef{key: id, start: starts[i], end: ends[i], rec: int32(ri), row: int32(i)})
		}
	}
	refs = sortSessionRefs(refs, len(ids))
	mStart := make([][]arrow.Timestamp, len(inputs))
	mEnd := make([][]arrow.Timestamp, len(inputs))
	for ri, rec := range inputs {
		mStart[ri] = make([]arrow.Timestamp, rec.NumRows())
		mEnd[ri] = make([]arrow.Timestamp, rec.NumRows())
	}
	for lo := 0; lo < len(refs); {
		hi, end := lo+1, refs[lo].end
		for hi < len(refs) && refs[hi].key == refs[lo].key && refs[hi].start <= end {
			end = max(end, refs[hi].end)
			hi++
		}
		for _, r := range refs[lo:hi] {
			mStart[r.rec][r.row], mEnd[r.rec][r.row] = refs[lo].start, end
		}
		lo = hi
	}
	out := make([]arrow.Record, len(inputs))
	for ri, rec := range inputs {
		win := windowArray(s.mem, mStart[ri], mEnd[ri])
		cols := append([]arrow.Array(nil), rec.Columns()...)
		cols[s.sk] = win
		out[ri] = array.NewRecord(s.partialSchema, cols, rec.NumRows())
		win.Release()
	}
	return out, nil
}

// mergeSessions merges the aggregate states of the rows that share a key
// and a merged session (the records are borrowed; the result is owned).
func (s *statefulSessionWindow) mergeSessions(ctx context.Context, resessioned []arrow.Record) ([]arrow.Record, error) {
	scan, err := vector.NewScan(s.partialSchema, resessioned...)
	if err != nil {
		return nil, err
	}
	op, err := vector.NewHashAggregate(vector.ForOperator(s.mem, sessionMergeName), scan, s.stateSpec(vector.AggMerge))
	if err != nil {
		scan.Close()
		return nil, err
	}
	merged, err := vector.Drain(ctx, op)
	op.Close()
	return merged, err
}

// saveSessions writes each touched key's merged sessions, sorted by start,
// and returns how many it wrote.
func (s *statefulSessionWindow) saveSessions(st checkpoint.StateStore, merged []arrow.Record, c codecPair, p int, d *sessionDelta) (int64, error) {
	type entry struct {
		start arrow.Timestamp
		sessionEntry
	}
	lists := map[string][]entry{}
	var n int64
	for _, rec := range merged {
		if err := c.key.encode(rec); err != nil {
			return n, err
		}
		if err := c.val.encode(rec); err != nil {
			return n, err
		}
		starts, ends := sessionBounds(rec, s.sk)
		for i := 0; i < int(rec.NumRows()); i++ {
			k := string(c.key.at(i))
			lists[k] = append(lists[k], entry{starts[i], sessionEntry{int64(ends[i]), append([]byte(nil), c.val.at(i)...)}})
		}
		n += rec.NumRows()
	}
	for k, l := range lists {
		slices.SortFunc(l, func(a, b entry) int { return cmp.Compare(a.start, b.start) })
		es := make([]sessionEntry, len(l))
		for i, e := range l {
			es[i] = e.sessionEntry
			d.added = append(d.added, sessionEnd{end: e.end, part: int32(p), key: k})
		}
		if err := st.Put([]byte(k), joinSessions(es)); err != nil {
			return n, fmt.Errorf("arrowstream: write state of operator %d: %w", s.opID, err)
		}
	}
	return n, nil
}

// sortSessionRefs orders refs by (key, start, rec, row). refs come in
// (rec, row) order, so a stable placement by key (a counting sort: keys
// are numbered 0..nKeys-1) followed by a stable sort of each key's few
// sessions by start gives that order without comparing keys: the
// general sort was most of the merge's time with many keys of one or two
// sessions each.
func sortSessionRefs(refs []sessionRef, nKeys int) []sessionRef {
	at := make([]int32, nKeys+1)
	for _, r := range refs {
		at[r.key+1]++
	}
	for k := 1; k <= nKeys; k++ {
		at[k] += at[k-1]
	}
	out := make([]sessionRef, len(refs))
	next := slices.Clone(at[:nKeys])
	for _, r := range refs {
		out[next[r.key]] = r
		next[r.key]++
	}
	for k := 0; k < nKeys; k++ {
		run := out[at[k]:at[k+1]]
		if len(run) > 1 && !slices.IsSortedFunc(run, byStart) {
			slices.SortStableFunc(run, byStart)
		}
	}
	return out
}

func byStart(a, b sessionRef) int { return cmp.Compare(a.start, b.start) }
