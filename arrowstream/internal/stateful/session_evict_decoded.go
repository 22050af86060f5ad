package stateful

import (
	"context"
	"fmt"
	"time"

	"github.com/apache/arrow/go/v17/arrow"
	"github.com/apache/arrow/go/v17/arrow/array"
)

// evictDecoded is evictIndexed for sessions kept decoded: the due keys
// are found in the decoded state, and what a key evicts is read there.
// The end index holds one arming entry per key (sessionIndex.arm), not
// one per session end: a popped arming entry whose key still has
// sessions arms it again at its first session's end.
// A key's sessions are disjoint and sorted by start, so their ends are
// increasing and the due ones are a prefix of the list: a key whose
// first session ends after the watermark has nothing due (a stale index
// entry, or a key already evicted by an earlier entry of this call), so
// no set of keys seen is needed. The evicted sessions' states come from
// the decoded aggregate (one State of their groups); a key that keeps
// sessions is noted as touched, so that the epoch's save logs its kept
// sessions once (with its merge's changes, if any), and a stored key left
// without any is logged as deleted. The evicted sessions come as final
// rows (final set: decodedFinal) or, when their aggregates cannot be
// finalized from the live state, as partial rows.
func (s *statefulSessionWindow) evictDecoded(ctx context.Context, wmMs int64) ([]arrow.Record, bool, error) {
	start := time.Now()
	limit := wmMs * 1000
	idx, d := s.index, s.index.dec
	keys, gids := d.evKeys[:0], d.evGids[:0]
	starts, ends := d.evStarts[:0], d.evEnds[:0]
	defer func() {
		clear(keys) // no key kept alive by the scratch
		d.evKeys, d.evGids, d.evStarts, d.evEnds = keys[:0], gids[:0], starts[:0], ends[:0]
	}()
	for idx.ends.due(limit) {
		e := idx.pop()
		ks := d.lookup(e.key)
		if ks == nil || len(ks.list) == 0 {
			continue // the key's sessions were all evicted
		}
		if ks.list[0].end > limit {
			// Nothing due: the key's first session grew past the
			// watermark. Its arming entry arms it at the new end.
			if ks.armedOK && ks.armed == e.end {
				ks.armedOK = false
				idx.arm(ks)
			}
			continue
		}
		n := 0
		for n < len(ks.list) && ks.list[n].end <= limit {
			ls := ks.list[n]
			gids = append(gids, ls.gid)
			starts = append(starts, arrow.Timestamp(ls.start))
			ends = append(ends, arrow.Timestamp(ls.end))
			keys = append(keys, stringBytes(ks.key))
			n++
		}
		idx.count -= int64(n)
		if n == len(ks.list) {
			// The key is gone; the stores drop it if they hold it.
			d.dropKey(ks.key)
			ks.list = ks.list[:0]
			if ks.stored {
				d.deleted = append(d.deleted, ks)
			}
			d.release(ks)
			continue
		}
		ks.list = append(ks.list[:0], ks.list[n:]...)
		if ks.armedOK && ks.armed == e.end {
			ks.armedOK = false
			idx.arm(ks)
		}
		// The kept sessions are logged by the epoch's save.
		d.touch(ks)
	}
	s.progress.AllRemovalsTimeMs += time.Since(start).Milliseconds()
	if len(gids) == 0 {
		return nil, false, nil
	}
	rec, final, err := s.decodedFinal(keys, gids, starts, ends)
	if err == nil && !final {
		rec, err = s.decodedRows(keys, gids, starts, ends)
	}
	if err == nil {
		err = d.deleteGroups(ctx, gids)
	}
	if err != nil {
		if rec != nil {
			rec.Release()
		}
		return nil, false, fmt.Errorf("arrowstream: evict sessions of operator %d: %w", s.opID, err)
	}
	s.progress.NumRowsRemoved += int64(len(gids))
	return []arrow.Record{rec}, final, nil
}

// decodedRows builds decoded sessions as rows of the partial layout: the
// grouping keys decoded from their state keys, the session from its
// bounds and the aggregate states from the decoded aggregate's groups.
func (s *statefulSessionWindow) decodedRows(keys [][]byte, gids []int32, starts, ends []arrow.Timestamp) (arrow.Record, error) {
	k, err := s.keyCodec.decode(s.mem, keys)
	if err != nil {
		return nil, fmt.Errorf("decode keys: %w", err)
	}
	defer releaseArrays(k)
	states, err := s.index.dec.agg.Values(gids) // no session id column
	if err != nil {
		return nil, err
	}
	defer releaseArrays(states)
	win := windowArray(s.mem, starts, ends)
	defer win.Release()
	cols := make([]arrow.Array, s.partialSchema.NumFields())
	for i, col := range s.groupCols {
		cols[col] = k[i]
	}
	cols[s.sk] = win
	for i, col := range s.valCols[1:] {
		cols[col] = states[i]
	}
	for i, c := range cols {
		if !arrow.TypeEqual(c.DataType(), s.partialSchema.Field(i).Type) {
			return nil, fmt.Errorf("session column %s is a %s, the layout's a %s", s.partialSchema.Field(i).Name, c.DataType(), s.partialSchema.Field(i).Type)
		}
	}
	return array.NewRecord(s.partialSchema, cols, int64(len(gids))), nil
}
