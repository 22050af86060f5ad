package stateful

import (
	"context"
	"fmt"
	"slices"
	"unsafe"

	"github.com/apache/arrow/go/v17/arrow"
	"github.com/apache/arrow/go/v17/arrow/array"
)

// The decoded sessions' way to and from the stores (session_decoded.go):
// the load decodes what the stores hold at the index's version, and an
// epoch logs the sessions of the keys it changed, encoded once from the
// decoded state in the stores' framing (joinSessions), with no encoded
// copy kept in the operator.

// sessionLoad gathers the stored sessions of a rebuild (the stores' bytes
// are only valid during their scan): each session's encoded row copied
// into one buffer, and the key that owns it.
type sessionLoad struct {
	buf    []byte
	ends   []int // by session: where its row ends in buf
	owners []*keySessions
}

// add notes key's stored sessions (partition p) and makes its entry in d.
func (ld *sessionLoad) add(d *sessionDecoded, key string, p int, entries []sessionEntry) {
	ks := &keySessions{key: key, part: int32(p), list: make([]liveSession, 0, len(entries)), stored: true}
	d.addKey(ks)
	for _, en := range entries {
		ld.buf = append(ld.buf, en.val...)
		ld.ends = append(ld.ends, len(ld.buf))
		ld.owners = append(ld.owners, ks)
	}
}

// loadDecoded decodes the sessions ld gathered (one decode of every
// stored session) and merges their states into d's fresh aggregate.
func (s *statefulSessionWindow) loadDecoded(ctx context.Context, d *sessionDecoded, ld *sessionLoad) error {
	if len(ld.owners) > 0 {
		vals := make([][]byte, len(ld.ends))
		from := 0
		for i, e := range ld.ends {
			vals[i] = ld.buf[from:e:e]
			from = e
		}
		cols, err := s.valCodec.decode(s.mem, vals)
		if err != nil {
			return fmt.Errorf("arrowstream: state of operator %d: decode sessions: %w", s.opID, err)
		}
		defer releaseArrays(cols)
		win := cols[0].(*array.Struct)
		starts := win.Field(0).(*array.Timestamp).TimestampValues()
		ends := win.Field(1).(*array.Timestamp).TimestampValues()
		sids := make([]int64, len(vals))
		for i := range sids {
			sids[i] = d.nextSid
			d.nextSid++
		}
		rec := d.sidRecord(s.mem, sids, cols[1:])
		gids, err := d.agg.Merge(ctx, rec)
		rec.Release()
		if err != nil {
			return fmt.Errorf("arrowstream: state of operator %d: load sessions: %w", s.opID, err)
		}
		for i, ks := range ld.owners {
			ks.list = append(ks.list, liveSession{start: int64(starts[i]), end: int64(ends[i]), sid: sids[i], gid: gids[i]})
		}
	}
	if s.indexed() {
		// The load indexed every session's end: the first one's entry
		// arms the key.
		d.each(func(ks *keySessions) {
			if len(ks.list) > 0 {
				ks.armed, ks.armedOK = ks.list[0].end, true
			}
		})
	}
	return nil
}

// saveDecoded logs the epoch's changes: every session of the keys it
// touched that still have sessions (one State of their groups, one
// encode), each key's value framed as the stores hold it, and the deletes
// of the stored keys whose sessions were all evicted; each partition's in
// one batch.
func (s *statefulSessionWindow) saveDecoded(d *sessionDecoded) error {
	defer d.trim()
	n := len(s.state.stores)
	s.logDeleted(d, n)
	rows := 0
	for _, ks := range d.touched {
		rows += len(ks.list)
	}
	if rows == 0 {
		return nil
	}
	gids := slices.Grow(d.saveGids[:0], rows)[:0]
	bounds := slices.Grow(d.saveBounds[:0], 2*rows)[:2*rows]
	first := slices.Grow(d.saveFirst[:0], len(d.touched))[:len(d.touched)]
	starts, ends := bounds[:rows:rows], bounds[rows:]
	for i, ks := range d.touched {
		first[i] = int32(len(gids))
		for _, ls := range ks.list {
			starts[len(gids)] = arrow.Timestamp(ls.start)
			ends[len(gids)] = arrow.Timestamp(ls.end)
			gids = append(gids, ls.gid)
		}
	}
	d.saveGids, d.saveBounds, d.saveFirst = gids, bounds, first
	// The groups' states without their session ids (Values, not State):
	// the ids are not stored, and building their column was a tenth of
	// what the save allocated.
	states, err := d.agg.Values(gids)
	if err != nil {
		return fmt.Errorf("arrowstream: state of operator %d: %w", s.opID, err)
	}
	defer releaseArrays(states)
	win := windowArray(s.mem, starts, ends)
	defer win.Release()
	cols := append([]arrow.Array{win}, states...)
	if err := s.valCodec.encodeCols(cols); err != nil {
		return err
	}
	b := &d.logb
	parts := b.setParts(len(d.touched))
	for i, ks := range d.touched {
		parts[i] = ks.part
	}
	b.byPartition(n)
	for p := range n {
		keys := b.entries(p)
		if len(keys) == 0 {
			continue
		}
		g := s.newSessionGrowth(p)
		b.reset()
		added := 0
		for _, i := range keys {
			ks := d.touched[i]
			if len(ks.list) == 0 {
				continue // every session evicted (logDeleted)
			}
			b.keys = append(b.keys, ks.key...)
			b.kend = append(b.kend, uint32(len(b.keys)))
			for j, ls := range ks.list {
				v := s.valCodec.at(int(first[i]) + j)
				b.vals = appendSession(b.vals, ls.end, v)
				if err := g.copied(len(v)); err != nil {
					return err
				}
			}
			b.vend = append(b.vend, uint32(len(b.vals)))
			if !ks.stored {
				ks.stored = true
				added++
			}
			if err := g.saved(len(ks.key), len(ks.list)); err != nil {
				return err
			}
		}
		if len(b.kend) > 0 {
			s.log.upserts(p, b, added)
		}
	}
	return nil
}

// logDeleted logs the deletes of the epoch's fully evicted stored keys,
// each partition's in one batch.
func (s *statefulSessionWindow) logDeleted(d *sessionDecoded, n int) {
	if len(d.deleted) == 0 {
		return
	}
	b := &d.logb
	parts := b.setParts(len(d.deleted))
	for i, ks := range d.deleted {
		parts[i] = ks.part
	}
	b.byPartition(n)
	for p := range n {
		keys := b.entries(p)
		if len(keys) == 0 {
			continue
		}
		d.dels = sessionDeletes{d.deleted, keys}
		s.log.removesOf(p, len(keys), &d.dels)
		d.dels = sessionDeletes{} // holds no views past the call
	}
}

// stringBytes is a view of k's bytes, only read (never changed).
func stringBytes(k string) []byte { return unsafe.Slice(unsafe.StringData(k), len(k)) }

// allDecoded returns every open session (partial layout): Complete and
// Update mode's every-epoch read, from the decoded sessions.
func (s *statefulSessionWindow) allDecoded() ([]arrow.Record, error) {
	d := s.index.dec
	var keys [][]byte
	var gids []int32
	var starts, ends []arrow.Timestamp
	d.each(func(ks *keySessions) {
		for _, ls := range ks.list {
			keys = append(keys, stringBytes(ks.key))
			gids = append(gids, ls.gid)
			starts = append(starts, arrow.Timestamp(ls.start))
			ends = append(ends, arrow.Timestamp(ls.end))
		}
	})
	if len(gids) == 0 {
		return nil, nil
	}
	rec, err := s.decodedRows(keys, gids, starts, ends)
	if err != nil {
		return nil, fmt.Errorf("arrowstream: sessions of operator %d: %w", s.opID, err)
	}
	return []arrow.Record{rec}, nil
}

// sessionDeletes gives logDeleted's fully evicted keys of one partition
// (ents, by position in deleted) to the log as views.
type sessionDeletes struct {
	deleted []*keySessions
	ents    []int32
}

// Entry implements checkpoint.ChangelogEntries.
func (d *sessionDeletes) Entry(j int) ([]byte, []byte) {
	return stringBytes(d.deleted[d.ents[j]].key), nil
}
