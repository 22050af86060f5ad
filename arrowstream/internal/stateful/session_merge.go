package stateful

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"unsafe"

	"github.com/apache/arrow/go/v17/arrow"
	"github.com/apache/arrow/go/v17/arrow/array"

	"github.com/arrowstream/arrowstream/vector"
)

// mergeGroup merges a group of partitions' partial session aggregates
// with the stored sessions of the keys they touch, in four phases: load
// the stored sessions, re-sessionize stored and new rows together, merge
// the aggregate states of each merged session, save each touched key's
// sessions. It returns the number of sessions saved, and notes the
// sessions replaced and saved in deltas (by partition; the group's
// partitions are its own).
func (s *statefulSessionWindow) mergeGroup(ctx context.Context, grp sessionMergeGroup, c codecPair, sc *sessionScratch, deltas []sessionDelta) (int64, error) {
	keys := sc.sessionKeys()
	var touched sessionTouched
	old, oldIDs, ids, err := s.loadTouched(grp, c, deltas, keys, &touched)
	if err != nil {
		return 0, err
	}
	inputs := make([]arrow.Record, 0, len(grp.recs)+1)
	if old != nil {
		defer old.Release()
		inputs = append(inputs, old)
		ids = append([][]int32{oldIDs}, ids...)
	}
	inputs = append(inputs, grp.recs...)
	resessioned := s.resessionize(inputs, ids, int(keys.n), sc)
	defer releaseRecords(resessioned)
	merged, err := s.mergeSessions(ctx, resessioned)
	defer releaseRecords(merged)
	if err != nil {
		return 0, err
	}
	return s.saveSessions(merged, c, deltas, keys, &touched)
}

// sessionTouched is what the load notes of each key a merge touches, by
// the key's number: its encoded bytes and its partition, which the save
// reuses (it numbers the merged rows' keys with the same numbers).
type sessionTouched struct {
	names []string
	parts []int32
}

// loadTouched numbers the keys of the group's records (ids: by record,
// each row's key number; touched: each key's bytes and partition) and
// decodes the stored sessions of the keys they touch (from the live
// sessions of their partitions) into one record (nil when none is
// stored), with their keys' numbers (oldIDs). They come before the new
// rows, so that first/last see input order.
func (s *statefulSessionWindow) loadTouched(grp sessionMergeGroup, c codecPair, deltas []sessionDelta, keys *sessionKeys, touched *sessionTouched) (old arrow.Record, oldIDs []int32, ids [][]int32, err error) {
	var oldKeys, oldVals [][]byte
	ids = make([][]int32, len(grp.recs))
	for ri, rec := range grp.recs {
		p := int(grp.parts[ri])
		if err := c.key.encode(rec); err != nil {
			return nil, nil, nil, err
		}
		ids[ri] = keys.number(c.key, int(rec.NumRows()), make([]int32, 0, rec.NumRows()), func(i int) {
			if err != nil {
				return
			}
			k := c.key.at(i)
			name := string(k)
			touched.names = append(touched.names, name)
			touched.parts = append(touched.parts, int32(p))
			v, e := s.readState(p, k)
			if e != nil || v == nil {
				err = e
				return
			}
			// Live values are never changed in place, and a store's
			// are not written before the decode: the entries may
			// alias v until then.
			entries, e := splitSessions(v)
			if e != nil {
				err = fmt.Errorf("arrowstream: state of operator %d partition %d: %w", s.opID, p, e)
				return
			}
			kc := unsafe.Slice(unsafe.StringData(name), len(name))
			id := keys.n - 1
			deltas[p].removed += int64(len(entries))
			for _, en := range entries {
				oldKeys = append(oldKeys, kc)
				oldVals = append(oldVals, en.val)
				oldIDs = append(oldIDs, id)
			}
		})
		if err != nil {
			return nil, nil, nil, err
		}
	}
	if len(oldKeys) == 0 {
		return nil, nil, ids, nil
	}
	old, err = s.decodeState(c, oldKeys, oldVals)
	return old, oldIDs, ids, err
}

// resessionize gives every row of inputs its merged session: it sorts
// every session by (key number, start), sweeps, and sets each row's
// session to [min start, max end) of the overlapping ones. (rec, row)
// breaks ties, so the order is total and deterministic. ids are by input
// each row's key number (nKeys of them). The returned records (one per
// input, owned) share the inputs' other columns.
func (s *statefulSessionWindow) resessionize(inputs []arrow.Record, ids [][]int32, nKeys int, sc *sessionScratch) []arrow.Record {
	rows := 0
	for _, rec := range inputs {
		rows += int(rec.NumRows())
	}
	refs := sc.refs[:0]
	for ri, rec := range inputs {
		starts, ends := sessionBounds(rec, s.sk)
		for i, id := range ids[ri] {
			refs = append(refs, sessionRef{key: id, start: starts[i], end: ends[i], rec: int32(ri), row: int32(i)})
		}
	}
	sc.refs = refs
	refs = sc.sortRefs(refs, nKeys)
	// The merged bounds of every row, each input's rows a slice of them
	// (windowArray copies them out).
	sc.bounds = slices.Grow(sc.bounds[:0], 2*rows)[:2*rows]
	mStart := make([][]arrow.Timestamp, len(inputs))
	mEnd := make([][]arrow.Timestamp, len(inputs))
	at := 0
	for ri, rec := range inputs {
		n := int(rec.NumRows())
		mStart[ri], mEnd[ri] = sc.bounds[at:at+n], sc.bounds[rows+at:rows+at+n]
		at += n
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
	sc.trim()
	return out
}

// sessionScratch is the buffers of a re-sessionization, kept between
// epochs by whoever runs it (the premerge, each merge group) so that an
// epoch does not allocate and clear them again.
type sessionScratch struct {
	refs, sorted []sessionRef
	at, next     []int32
	bounds       []arrow.Timestamp
	keys         sessionKeys
}

// sessionKeys returns the scratch's key numbering, emptied (valid until
// the next call).
func (sc *sessionScratch) sessionKeys() *sessionKeys {
	sc.keys.reset()
	return &sc.keys
}

// maxKeptSessionRefs bounds the refs a scratch keeps between epochs
// (about 1.5 MiB with the bounds): a larger epoch's buffers are dropped
// after it, so that one large epoch does not hold its buffers for good.
const maxKeptSessionRefs = 1 << 15

// trim drops buffers grown past maxKeptSessionRefs.
func (sc *sessionScratch) trim() {
	if cap(sc.refs) > maxKeptSessionRefs || cap(sc.sorted) > maxKeptSessionRefs || cap(sc.bounds) > 2*maxKeptSessionRefs {
		sc.refs, sc.sorted, sc.bounds = nil, nil, nil
	}
	if cap(sc.at) > maxKeptSessionRefs {
		sc.at, sc.next = nil, nil
	}
}

// sortRefs is sortSessionRefs into the scratch's buffers (the result is
// valid until the next call).
func (sc *sessionScratch) sortRefs(refs []sessionRef, nKeys int) []sessionRef {
	sc.at = slices.Grow(sc.at[:0], nKeys+1)[:nKeys+1]
	clear(sc.at)
	sc.next = slices.Grow(sc.next[:0], nKeys)[:nKeys]
	sc.sorted = slices.Grow(sc.sorted[:0], len(refs))[:len(refs)]
	return placeSessionRefs(refs, nKeys, sc.at, sc.next, sc.sorted)
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

// saveSessions writes each touched key's merged sessions, sorted by
// start, and returns how many it wrote. The merged rows' keys are
// numbered by keys, which numbered them at the load (touched: their bytes
// and partitions); a key it did not number is an error.
func (s *statefulSessionWindow) saveSessions(merged []arrow.Record, c codecPair, deltas []sessionDelta, keys *sessionKeys, touched *sessionTouched) (int64, error) {
	type entry struct {
		start arrow.Timestamp
		sessionEntry
	}
	lists := make([][]entry, keys.n)
	var ids []int32
	var n int64
	unknown := false
	// Each partition's growth is reserved as the sessions are copied and
	// saved (session_growth.go).
	growth := map[int32]*sessionGrowth{}
	var last *sessionGrowth
	growthOf := func(p int32) *sessionGrowth {
		if last != nil && int32(last.p) == p {
			return last
		}
		g, ok := growth[p]
		if !ok {
			g = s.newSessionGrowth(int(p))
			growth[p] = g
		}
		last = g
		return g
	}
	for _, rec := range merged {
		if err := c.key.encode(rec); err != nil {
			return n, err
		}
		if err := c.val.encode(rec); err != nil {
			return n, err
		}
		ids = keys.number(c.key, int(rec.NumRows()), ids[:0], func(int) { unknown = true })
		if unknown || int(keys.n) > len(lists) {
			return n, fmt.Errorf("arrowstream: session merge of operator %d: a merged session's key was not among the merged rows' keys", s.opID)
		}
		starts, ends := sessionBounds(rec, s.sk)
		for i, id := range ids {
			v := c.val.at(i)
			lists[id] = append(lists[id], entry{starts[i], sessionEntry{int64(ends[i]), append([]byte(nil), v...)}})
			if err := growthOf(touched.parts[id]).copied(len(v)); err != nil {
				return n, err
			}
		}
		n += rec.NumRows()
	}
	var es []sessionEntry
	for id, l := range lists {
		if len(l) == 0 {
			continue
		}
		if len(l) > 1 {
			slices.SortFunc(l, func(a, b entry) int { return cmp.Compare(a.start, b.start) })
		}
		k, p := touched.names[id], touched.parts[id]
		es = es[:0]
		for _, e := range l {
			es = append(es, e.sessionEntry)
			deltas[p].added = append(deltas[p].added, sessionEnd{end: e.end, part: p, key: k})
		}
		if err := s.writeState(int(p), k, joinSessions(es)); err != nil {
			return n, fmt.Errorf("arrowstream: write state of operator %d: %w", s.opID, err)
		}
		if err := growthOf(p).saved(len(k), len(es)); err != nil {
			return n, err
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
	return placeSessionRefs(refs, nKeys, make([]int32, nKeys+1), make([]int32, nKeys), make([]sessionRef, len(refs)))
}

// placeSessionRefs is sortSessionRefs with its buffers: at (nKeys+1,
// zeroed), next (nKeys) and out (len(refs)), which it returns.
func placeSessionRefs(refs []sessionRef, nKeys int, at, next []int32, out []sessionRef) []sessionRef {
	for _, r := range refs {
		at[r.key+1]++
	}
	for k := 1; k <= nKeys; k++ {
		at[k] += at[k-1]
	}
	copy(next, at[:nKeys])
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
