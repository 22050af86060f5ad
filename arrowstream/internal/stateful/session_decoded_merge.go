package stateful

import (
	"cmp"
	"context"
	"fmt"
	"slices"

	"github.com/apache/arrow/go/v17/arrow"

	"github.com/arrowstream/arrowstream/vector"
)

// The decoded sessions' merge (session_decoded.go) works on the epoch's
// rows as whole columns, by row number across the epoch's records: one
// pass finds each row's key and writes its number, a counting sort of
// the row numbers by key (each key's run then sorted by start where the
// input was not) gives every key its new rows, and the sweep over a
// key's stored sessions and new rows writes each row's session id and
// group in place. The sort moves 4-byte row numbers, not a copy of each
// row's bounds and place (an earlier version built and sorted a 24-byte
// reference per row, and wrote back through a slice per record); the
// bounds are read from the records' columns.

// sessionBatch is one record of the epoch's rows for the decoded merge:
// input rows folded straight into their groups (raw), or partial rows
// merged into them; keys are the rows' grouping keys in the partial
// layout's order (the session among them at sk). It owns both.
type sessionBatch struct {
	rec  arrow.Record
	keys []arrow.Array
	raw  bool
}

func releaseSessionBatches(bs []sessionBatch) {
	for _, b := range bs {
		b.rec.Release()
		releaseArrays(b.keys)
	}
}

// sessionBatches turns the epoch's input records (consumed) into the
// decoded merge's batches: the input rows themselves with their
// evaluated grouping keys when the aggregates take input rows (no
// partial row per input row), else their partial rows.
func (s *statefulSessionWindow) sessionBatches(ctx context.Context, schema *arrow.Schema, recs []arrow.Record) ([]sessionBatch, error) {
	if raw := s.index.dec.raw; raw != nil {
		out := make([]sessionBatch, 0, len(recs))
		ok := true
		for _, rec := range recs {
			keys, err := raw.Keys(ctx, rec)
			if err != nil {
				releaseSessionBatches(out)
				releaseRecords(recs[len(out):])
				return nil, fmt.Errorf("arrowstream: session keys of operator %d: %w", s.opID, err)
			}
			for i, k := range keys {
				// The keys must come in the layout's types (the key
				// codec's); a column of another encoding goes the
				// partial way, which converts it.
				if !arrow.TypeEqual(k.DataType(), s.partialSchema.Field(i).Type) {
					ok = false
				}
			}
			if !ok {
				releaseArrays(keys)
				break
			}
			out = append(out, sessionBatch{rec: rec, keys: keys, raw: true})
		}
		if ok {
			return out, nil
		}
		for _, b := range out { // the records go the partial way
			releaseArrays(b.keys)
		}
	}
	partials, err := s.partials(ctx, schema, recs)
	if err != nil {
		return nil, err
	}
	out := make([]sessionBatch, len(partials))
	for i, p := range partials {
		keys := slices.Clone(p.Columns()[:s.nKeys])
		for _, k := range keys {
			k.Retain()
		}
		out[i] = sessionBatch{rec: p, keys: keys}
	}
	return out, nil
}

// epochRows is the epoch's rows' session bounds by row number across
// the batches, and where each batch's rows begin.
type epochRows struct {
	starts, ends []arrow.Timestamp
	from         []int // by batch: its first row number; then the total
}

// rowsOf returns the session bounds (key sk) of the batches' rows by row
// number: the single batch's own columns, or, for several, their
// concatenation into the scratch buf.
func rowsOf(batches []sessionBatch, sk int, buf []arrow.Timestamp) (epochRows, []arrow.Timestamp) {
	er := epochRows{from: make([]int, 0, len(batches)+1)}
	total := 0
	for _, b := range batches {
		er.from = append(er.from, total)
		total += int(b.rec.NumRows())
	}
	er.from = append(er.from, total)
	if len(batches) == 1 {
		er.starts, er.ends, _ = windowBounds(batches[0].keys[sk])
		return er, buf
	}
	buf = slices.Grow(buf[:0], 2*total)[:2*total]
	er.starts, er.ends = buf[:total:total], buf[total:]
	for bi, b := range batches {
		st, en, _ := windowBounds(b.keys[sk])
		copy(er.starts[er.from[bi]:], st)
		copy(er.ends[er.from[bi]:], en)
	}
	return er, buf
}

// numberKeys writes the number of every row's key (by row number) to
// d.rowKey and returns the touched keys by number. The epoch's keys are
// numbered as whole columns by d.keyIdx (a key index emptied every epoch,
// whose small table stays in cache; numbers in order of first
// appearance), and only each key's first row looks up its sessions in
// the decoded state's map (by its word when fixed-width), making the
// entry of a key without open sessions. Keys the index cannot take go
// row by row through the map (numberRows).
func (s *statefulSessionWindow) numberKeys(ctx context.Context, d *sessionDecoded, batches []sessionBatch, er epochRows) ([]*keySessions, error) {
	rows := er.from[len(batches)]
	d.rowKey = slices.Grow(d.rowKey[:0], rows)[:rows]
	d.owners = d.owners[:0]
	c := s.keyCodec
	if d.byWords {
		for bi, b := range batches {
			keyOf := d.rowKey[er.from[bi]:er.from[bi+1]]
			if err := s.numberWords(d, b.keys[s.groupCols[0]], keyOf); err != nil {
				return nil, err
			}
		}
		return d.owners, nil
	}
	if len(c.cols) > 0 && d.keyIdx == nil && !d.noKeyIdx {
		types := make([]arrow.DataType, len(s.groupCols))
		for i, col := range s.groupCols {
			types[i] = s.partialSchema.Field(col).Type
		}
		x, err := vector.NewKeyIndex(s.mem, types)
		if err != nil {
			d.noKeyIdx = true
		} else {
			d.keyIdx = x
		}
	}
	if d.keyIdx != nil {
		if err := d.keyIdx.Reset(); err != nil {
			d.keyIdx = nil // released by the failed Reset
			return nil, fmt.Errorf("arrowstream: key numbering of operator %d: %w", s.opID, err)
		}
	}
	cols := make([]arrow.Array, len(s.groupCols))
	for bi, b := range batches {
		for i, col := range s.groupCols {
			cols[i] = b.keys[col]
		}
		keyOf := d.rowKey[er.from[bi]:er.from[bi+1]]
		if d.keyIdx == nil {
			if err := c.encodeCols(cols); err != nil {
				return nil, err
			}
			s.numberRows(d, keyOf)
			continue
		}
		if err := d.keyIdx.Index(ctx, cols, keyOf); err != nil {
			return nil, fmt.Errorf("arrowstream: key numbering of operator %d: %w", s.opID, err)
		}
		if err := s.enterFirstRows(d, cols, keyOf); err != nil {
			return nil, err
		}
	}
	return d.owners, nil
}

// enterFirstRows finds the entries of the keys the batch's rows (key
// columns cols, numbered keyOf) bring into the epoch: the first row of
// each key number not met before. Only those rows are encoded by the key
// codec (and hashed for a new key's partition), gathered when they are
// not all of the batch's: in q11 about 970 of 9,200 rows.
func (s *statefulSessionWindow) enterFirstRows(d *sessionDecoded, cols []arrow.Array, keyOf []int32) error {
	firsts := d.firsts[:0]
	for i, k := range keyOf {
		switch next := int32(len(d.owners) + len(firsts)); {
		case k < next:
			continue // a key met before in the epoch
		case k > next:
			// The index numbers keys in order of first appearance.
			return fmt.Errorf("arrowstream: key numbering of operator %d: key %d of row %d, want at most %d", s.opID, k, i, next)
		}
		firsts = append(firsts, int32(i))
	}
	d.firsts = firsts
	if len(firsts) == 0 {
		return nil
	}
	enc := cols
	if len(firsts) < len(keyOf) {
		enc = make([]arrow.Array, len(cols))
		defer func() { releaseArrays(enc) }()
		for i, col := range cols {
			g, err := vector.Gather(s.mem, col, firsts)
			if err != nil {
				return fmt.Errorf("arrowstream: key numbering of operator %d: %w", s.opID, err)
			}
			enc[i] = g
		}
	}
	c := s.keyCodec
	if err := c.encodeCols(enc); err != nil {
		return err
	}
	defer c.encodeCols(nil) // the codec keeps no gathered column
	for j, i := range firsts {
		ks := s.keyEntry(d, j)
		if ks.stamp == d.stamp {
			// The index and the codec must agree on key equality.
			return fmt.Errorf("arrowstream: key numbering of operator %d: key %d of row %d disagrees with the stored keys", s.opID, keyOf[i], i)
		}
		ks.stamp, ks.num = d.stamp, keyOf[i]
		d.owners = append(d.owners, ks)
		d.touched = append(d.touched, ks)
	}
	return nil
}

// keyEntry returns the entry of row i's key of the key codec's last
// encode, made when the key has no open session.
func (s *statefulSessionWindow) keyEntry(d *sessionDecoded, i int) *keySessions {
	c := s.keyCodec
	var ks *keySessions
	switch {
	case d.fixed == nil:
		ks = d.keys[string(c.at(i))]
	case c.enc.HasNull(i):
		ks = d.nullKey
	default:
		ks = d.fixed.get(c.enc.Fixed()[i])
	}
	if ks == nil {
		ks = d.newKeySessions(c.at(i), int32(s.state.scheme.of(c, i, len(s.state.stores))))
		d.addKey(ks)
	}
	return ks
}

// numberRows numbers the rows of the key codec's last encode row by row:
// one map lookup per row (keys the key index cannot take).
func (s *statefulSessionWindow) numberRows(d *sessionDecoded, keyOf []int32) {
	for i := range keyOf {
		ks := s.keyEntry(d, i)
		if ks.stamp != d.stamp {
			ks.num = int32(len(d.owners))
			d.owners = append(d.owners, ks)
			d.touch(ks)
		}
		keyOf[i] = ks.num
	}
}

// orderByKey sorts the row numbers by key (a counting sort: d.at[k] to
// d.at[k+1] are key k's rows in d.order), each key's rows by start, ties
// in row order (the order first and last see).
func (d *sessionDecoded) orderByKey(nKeys int, starts []arrow.Timestamp) []int32 {
	rows := len(d.rowKey)
	d.at = slices.Grow(d.at[:0], nKeys+1)[:nKeys+1]
	clear(d.at)
	at := d.at
	for _, k := range d.rowKey {
		at[k+1]++
	}
	for k := 1; k <= nKeys; k++ {
		at[k] += at[k-1]
	}
	d.next = slices.Grow(d.next[:0], nKeys)[:nKeys]
	next := d.next
	copy(next, at[:nKeys])
	d.order = slices.Grow(d.order[:0], rows)[:rows]
	order := d.order
	for r, k := range d.rowKey {
		order[next[k]] = int32(r)
		next[k]++
	}
	byStart := func(a, b int32) int { return cmp.Compare(starts[a], starts[b]) }
	for k := 0; k < nKeys; k++ {
		run := order[at[k]:at[k+1]]
		if len(run) > 1 && !rowsSortedByStart(run, starts) {
			slices.SortStableFunc(run, byStart)
		}
	}
	return order
}

// rowsSortedByStart reports whether the rows run are in start order.
func rowsSortedByStart(run []int32, starts []arrow.Timestamp) bool {
	prev := starts[run[0]]
	for _, r := range run[1:] {
		if starts[r] < prev {
			return false
		}
		prev = starts[r]
	}
	return true
}

// mergeDecoded folds the epoch's rows (borrowed) into the decoded
// sessions; the save logs the touched keys' sessions.
func (s *statefulSessionWindow) mergeDecoded(ctx context.Context, batches []sessionBatch) error {
	d := s.index.dec
	var er epochRows
	er, d.bounds = rowsOf(batches, s.sk, d.bounds)
	rows := er.from[len(batches)]
	if rows == 0 {
		return nil // an empty epoch: not even the numbering's maps are cleared
	}
	owners, err := s.numberKeys(ctx, d, batches, er)
	if err != nil {
		return err
	}
	defer clear(d.owners) // no key kept alive by the scratch
	nKeys := len(owners)
	order := d.orderByKey(nKeys, er.starts)
	starts, ends := er.starts, er.ends

	// Place every new row in its key's sessions: per key, a sweep over
	// its stored sessions and its new rows, both by start. Each row gets
	// its session's id and group (-1: a new session's, made below).
	d.sids = slices.Grow(d.sids[:0], rows)[:rows]
	d.rowGids = slices.Grow(d.rowGids[:0], rows)[:rows]
	sids, rowGids := d.sids, d.rowGids
	var absorbed []int32 // groups of stored sessions merged into another
	var into []int64     // the session id each is merged into
	var intoGids []int32 // and its group
	firstNew := d.nextSid
	for k := 0; k < nKeys; k++ {
		ks := owners[k]
		newRows := order[d.at[k]:d.at[k+1]]
		old := ks.list
		merged := d.merged[:0]
		i, j := 0, 0
		for i < len(old) || j < len(newRows) {
			// The cluster starts at the earlier of the next stored
			// session and the next new row.
			var cur liveSession
			stored := i < len(old) && (j >= len(newRows) || old[i].start <= int64(starts[newRows[j]]))
			if stored {
				cur = old[i]
				i++
			} else {
				r := newRows[j]
				cur = liveSession{start: int64(starts[r]), end: int64(ends[r]), sid: -1, gid: -1}
			}
			firstRow := j
			if !stored {
				j++
			}
			for {
				if i < len(old) && old[i].start <= cur.end && (j >= len(newRows) || old[i].start <= int64(starts[newRows[j]])) {
					if cur.sid < 0 {
						// The first stored session of the cluster
						// takes the new rows before it.
						cur.sid, cur.gid = old[i].sid, old[i].gid
					} else {
						absorbed = append(absorbed, old[i].gid)
						into = append(into, cur.sid)
						intoGids = append(intoGids, cur.gid)
					}
					cur.end = max(cur.end, old[i].end)
					i++
					continue
				}
				if j < len(newRows) && int64(starts[newRows[j]]) <= cur.end {
					cur.end = max(cur.end, int64(ends[newRows[j]]))
					j++
					continue
				}
				break
			}
			if cur.sid < 0 {
				cur.sid = d.nextSid
				d.nextSid++
			}
			for _, r := range newRows[firstRow:j] {
				sids[r] = cur.sid
				rowGids[r] = cur.gid // -1 for a new session
			}
			merged = append(merged, cur)
		}
		s.index.count += int64(len(merged) - len(old))
		ks.list = append(ks.list[:0], merged...)
		d.merged = merged
	}

	// Stored sessions bridged by a new row go into the earliest one
	// first, then the new rows, record by record in input order. The
	// sweep knows every stored session's group: only the new sessions'
	// groups are made (one probe each), and the rows are folded into
	// their groups without a lookup of their session id.
	if len(absorbed) > 0 {
		states, err := d.agg.Values(absorbed)
		if err != nil {
			return fmt.Errorf("arrowstream: state of operator %d: %w", s.opID, err)
		}
		rec := d.sidRecord(s.mem, into, states)
		releaseArrays(states)
		err = d.agg.MergeAt(ctx, rec, intoGids)
		rec.Release()
		if err != nil {
			return fmt.Errorf("arrowstream: merge sessions of operator %d: %w", s.opID, err)
		}
		d.agg.Delete(absorbed)
	}
	newGids, err := d.newGroups(ctx, s, firstNew)
	if err != nil {
		return fmt.Errorf("arrowstream: merge sessions of operator %d: %w", s.opID, err)
	}
	for r, g := range rowGids {
		if g < 0 {
			rowGids[r] = newGids[sids[r]-firstNew]
		}
	}
	for bi, b := range batches {
		lo, hi := er.from[bi], er.from[bi+1]
		if lo == hi {
			continue
		}
		if b.raw {
			err = d.raw.UpdateAt(ctx, b.rec, rowGids[lo:hi])
		} else {
			in := d.sidRecord(s.mem, sids[lo:hi], b.rec.Columns()[s.nKeys:])
			err = d.agg.MergeAt(ctx, in, rowGids[lo:hi])
			in.Release()
		}
		if err != nil {
			return fmt.Errorf("arrowstream: merge sessions of operator %d: %w", s.opID, err)
		}
	}
	for _, ks := range owners {
		for i := range ks.list {
			if sid := ks.list[i].sid; sid >= firstNew {
				ks.list[i].gid = newGids[sid-firstNew]
			}
		}
		if s.indexed() {
			s.index.arm(ks)
		}
		s.progress.NumRowsUpdated += int64(len(ks.list))
	}
	return nil
}
