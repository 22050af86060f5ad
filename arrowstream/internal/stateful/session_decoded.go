package stateful

import (
	"context"
	"slices"
	"unsafe"

	"github.com/apache/arrow/go/v17/arrow"
	"github.com/apache/arrow/go/v17/arrow/array"
	"github.com/apache/arrow/go/v17/arrow/memory"

	"github.com/arrowstream/arrowstream/vector"
)

// sessionDecoded is the session window's open sessions kept decoded
// between epochs, in the form the merge computes with: per grouping key
// its sessions sorted by start (start, end and a session id), and the
// sessions' aggregate states in a vector.LiveAggregate keyed by the
// session id, updated in place. An epoch then neither decodes the stored
// sessions of the keys it touches nor merges them again through a hash
// aggregation: a new row finds its key's sessions in a map, is placed
// among them by a sweep over the few sessions of the key, and is folded
// into its session's accumulators by one Merge of the epoch's rows.
// Stored sessions that a new row bridges are merged into the earliest of
// them (its state first, the others in start order, then the new rows in
// input order: the order the stored-then-new merge gave, so first and
// last answer as before).
//
// The stores' format does not change, and no encoded copy is kept beside
// the decoded sessions: at the end of the epoch the sessions of the keys
// it changed (merged or partly evicted) are encoded once, straight into
// the changelog, in the framing the stores hold (joinSessions); snapshots
// and eviction's output are built from the decoded sessions. The decoded
// state is rebuilt from the stores (newest snapshot plus changelogs)
// after a restart or an aborted epoch, so it always mirrors the index's
// version.
type sessionDecoded struct {
	agg *vector.LiveAggregate
	// raw folds the epoch's input rows straight into their sessions'
	// groups (nil when an aggregate's state cannot take input rows:
	// first, last, approx_count_distinct; those merge partial rows).
	raw    *vector.LiveRawAt
	schema *arrow.Schema // the aggregate's input: the session id, then the aggregate states
	// The keys' sessions by key: in keys, or, when the key codec's
	// encoding is fixed-width, in fixed by the key's word and nullKey for
	// the null key instead (keys then stays empty: no string hashed per
	// row, nor a second map kept per key).
	keys    map[string]*keySessions
	fixed   *sessionWords
	nullKey *keySessions
	// byWords: the single key is integral (wordKeyType), so the epoch's
	// rows are numbered by their values in fixed (numberWords), with no
	// key index or key encode per row; wordBuf is its scratch.
	byWords bool
	wordBuf []uint64
	// keyIdx numbers each epoch's keys as whole columns (emptied every
	// epoch); noKeyIdx: the keys' types have no index (row by row).
	keyIdx   *vector.KeyIndex
	noKeyIdx bool
	stamp    uint32 // the current epoch's stamp (keySessions.stamp)
	nextSid  int64
	// keyBytes is the keys' bytes in keys (with perKeyBytes each), kept
	// as keys come and go so that the account need not range over them.
	keyBytes int64
	// Scratch kept between epochs (for capacity only; trim drops what
	// a burst grew).
	rowKey   []int32           // the key number of each new row, by row number across records
	firsts   []int32           // a batch's rows that bring a key into the epoch
	order    []int32           // the row numbers by key, each key's by start
	bounds   []arrow.Timestamp // several records' session bounds, concatenated
	owners   []*keySessions    // the touched keys by number (cleared after the merge)
	at, next []int32
	merged   []liveSession
	touched  []*keySessions
	sids     []int64 // the session id of each new row, by row number
	rowGids  []int32 // the group of each new row, by row number (-1: a new session's, until made)
	// saveGids and saveBounds also hold a live snapshot's groups and
	// starts (offerDecoded, after the save), read into arrays before it
	// returns: a buffer of their own was a second copy of the state's
	// size, fresh at each snapshot the state had outgrown.
	saveGids   []int32
	saveBounds []arrow.Timestamp // starts, then ends
	saveFirst  []int32           // by touched key: its first encoded row
	// The sessions an eviction takes (their keys' bytes, groups and
	// bounds), kept between epochs; evKeys is cleared after each pass.
	evKeys           [][]byte
	evGids           []int32
	evStarts, evEnds []arrow.Timestamp
	// deleted are the stored keys whose sessions were all evicted this
	// epoch (their deletes are logged with the epoch's upserts).
	deleted []*keySessions
	logb    logBatches
	dels    sessionDeletes // logDeleted's entries for the log
	// The entries of keys whose sessions were all evicted, for keys new
	// to the state (newKey): an entry a bidder leaves is the next new
	// bidder's, instead of fresh memory per new key each epoch. A dropped
	// entry first waits in limbo: its key's string (a fixed-width key's
	// aliases the entry's own bytes) may still be read by a live
	// snapshot the maintenance encodes in the background, so it is
	// reused only once every snapshot handed out before is released
	// (recycle). Stale end index entries may read a reused entry's new
	// key: eviction only takes a key's due sessions, which any entry of
	// the key would take in the same pass, so that is harmless (see
	// sessionIndex.arm).
	free, limbo []*keySessions
}

// begin starts an epoch: a new stamp, nothing touched or deleted yet;
// idle reports that no live snapshot handed out is still unreleased
// (the dropped entries in limbo can then be reused).
func (d *sessionDecoded) begin(idle bool) {
	if idle && len(d.limbo) > 0 {
		d.free = append(d.free, d.limbo...)
		clear(d.limbo)
		d.limbo = d.limbo[:0]
	}
	d.stamp++
	if d.stamp == 0 { // wrapped: an old stamp could look current
		d.each(func(ks *keySessions) { ks.stamp = 0 })
		d.stamp = 1
	}
	d.touched = d.touched[:0]
	clear(d.deleted)
	d.deleted = d.deleted[:0]
}

// touch notes that ks's sessions changed this epoch (once per epoch: its
// stamp is the epoch's afterwards), so that the save logs them.
func (d *sessionDecoded) touch(ks *keySessions) {
	if ks.stamp != d.stamp {
		ks.stamp = d.stamp
		d.touched = append(d.touched, ks)
	}
}

// trim drops the scratch grown past maxKeptSessionRefs rows or keys.
func (d *sessionDecoded) trim() {
	if cap(d.rowKey) > maxKeptSessionRefs || cap(d.order) > maxKeptSessionRefs || cap(d.sids) > maxKeptSessionRefs || cap(d.bounds) > 2*maxKeptSessionRefs {
		d.rowKey, d.order, d.sids, d.rowGids, d.bounds, d.firsts = nil, nil, nil, nil, nil, nil
	}
	if cap(d.at) > maxKeptSessionRefs || cap(d.touched) > maxKeptSessionRefs || cap(d.merged) > maxKeptSessionRefs || cap(d.owners) > maxKeptSessionRefs {
		d.at, d.next, d.merged, d.touched, d.owners = nil, nil, nil, nil, nil
	}
	if cap(d.saveGids) > maxKeptSessionRefs || cap(d.saveFirst) > maxKeptSessionRefs {
		d.saveGids, d.saveBounds, d.saveFirst = nil, nil, nil
	}
	if cap(d.evKeys) > maxKeptSessionRefs {
		d.evKeys, d.evGids, d.evStarts, d.evEnds = nil, nil, nil, nil
	}
	if cap(d.deleted) > maxKeptSessionRefs {
		d.deleted = nil
	}
	if len(d.free) > maxKeptSessionRefs {
		clear(d.free[maxKeptSessionRefs:])
		d.free = d.free[:maxKeptSessionRefs]
	}
	if len(d.limbo) > maxKeptSessionRefs {
		// Snapshots outstanding for long: let the garbage collector
		// take what waits.
		clear(d.limbo)
		d.limbo = d.limbo[:0]
	}
	if d.logb.bytes() > 64*maxKeptSessionRefs {
		d.logb = logBatches{}
	}
}

// keySessions is one grouping key's open sessions, sorted by start and
// disjoint (overlapping or touching sessions are merged).
//
// The fields are ordered by size (104 bytes, the 112-byte size class
// instead of 128): the state holds one per key.
type keySessions struct {
	key  string
	list []liveSession
	// armed is the time of the key's arming entry in the end index
	// (armedOK: it has one): an entry at or before the end of the key's
	// first session, still in the index. The key has no entry per
	// session end; eviction pops the arming entry, takes the due
	// sessions and arms the key again at its new first end (see arm).
	armed int64
	// one is list's storage while the key has at most one session (most
	// keys: a bidder's bids extend its one open session), and word is a
	// fixed-width key's bytes, key's storage: a new key is one
	// allocation, not three (the entry, the key string, the list). A
	// string of key outliving ks (a stale end index entry, a snapshot's
	// copy) may read another key once ks is reused (sessionDecoded.free
	// says when that is safe).
	one  [1]liveSession
	part int32
	// stamp and num: the key's number in the epoch of that stamp (the
	// merge's), and the key is in the epoch's touched list.
	stamp uint32
	num   int32
	// stored: the stores hold the key (it was loaded or logged); a key
	// new this epoch is not, until the save logs it.
	stored  bool
	armedOK bool
	word    [fixedKeyLen]byte
}

// fixedKeyLen is the length of a fixed-width key's stored bytes
// (rowCodec.at: 1 then the word; fixedKeyWord).
const fixedKeyLen = 9

// newKeySessions returns the entry of a key new to the decoded state
// (key's bytes are copied).
func (d *sessionDecoded) newKeySessions(key []byte, part int32) *keySessions {
	ks := d.newKey()
	ks.part = part
	ks.setKey(key)
	return ks
}

// newKey returns an empty entry for a key new to the decoded state: a
// reused one (free) or a new one, its list in its own storage unless a
// reused entry's list had grown past it (that capacity is kept).
func (d *sessionDecoded) newKey() *keySessions {
	n := len(d.free)
	if n == 0 {
		ks := &keySessions{}
		ks.list = ks.one[:0]
		return ks
	}
	ks := d.free[n-1]
	d.free[n-1] = nil
	d.free = d.free[:n-1]
	list := ks.list[:0]
	*ks = keySessions{}
	if cap(list) > len(ks.one) {
		clear(list[:cap(list)])
		ks.list = list
	} else {
		ks.list = ks.one[:0]
	}
	return ks
}

// release puts the entry of a key dropped from the state (dropKey) in
// limbo, for reuse by a later epoch's new keys (newKey): not this
// epoch's, as the epoch's save still reads it (deleted, touched).
func (d *sessionDecoded) release(ks *keySessions) {
	d.limbo = append(d.limbo, ks)
}

// arm gives ks an end index entry at its first session's end unless its
// arming entry is already at or before it (a key's sessions' ends only
// grow, but a new session can come before the first). Other entries of
// the key (the load's one per session, entries left from before a key
// was dropped and came back) are harmless: eviction takes what is due
// from any of them and re-arms only from the arming one.
func (idx *sessionIndex) arm(ks *keySessions) {
	if len(ks.list) == 0 {
		return
	}
	first := ks.list[0].end
	if ks.armedOK && ks.armed <= first {
		return
	}
	idx.push(sessionEnd{end: first, part: ks.part, key: ks.key})
	ks.armed, ks.armedOK = first, true
}

// liveSession is one open session: its bounds (µs), its id (the
// aggregate's key) and its group in the aggregate.
type liveSession struct {
	start, end int64
	sid        int64
	gid        int32
}

// sessionSidName names the session id column of the decoded aggregate.
const sessionSidName = "__session_id"

// newSessionDecoded returns an empty decoded state for s, or nil when an
// aggregate's partial state cannot be kept live (extension aggregates):
// those keep the encoded merge.
func (s *statefulSessionWindow) newSessionDecoded() *sessionDecoded {
	if s.noDecoded {
		return nil
	}
	fields := []arrow.Field{{Name: sessionSidName, Type: arrow.PrimitiveTypes.Int64}}
	fields = append(fields, s.partialSchema.Fields()[s.nKeys:]...)
	schema := arrow.NewSchema(fields, nil)
	agg, err := vector.NewLiveAggregate(vector.ForOperator(s.mem, sessionMergeName), schema, 1, s.spec.Aggregates)
	if err != nil {
		return nil
	}
	d := &sessionDecoded{agg: agg, schema: schema, keys: map[string]*keySessions{}}
	if raw, ok, err := agg.RawAt(s.input, s.spec.GroupBy); err == nil && ok {
		d.raw = raw
	}
	if len(s.keyCodec.cols) > 0 && s.keyCodec.enc.IsFixed() {
		d.fixed = newSessionWords()
		d.byWords = !s.noWordKeys && len(s.groupCols) == 1 && wordKeyType(s.partialSchema.Field(s.groupCols[0]).Type)
	}
	return d
}

// close lets go of the aggregate and its reservation.
func (d *sessionDecoded) close() {
	if d != nil && d.agg != nil {
		d.agg.Close()
		d.agg = nil
	}
	if d != nil && d.keyIdx != nil {
		d.keyIdx.Release()
		d.keyIdx = nil
	}
}

// heapBytes approximates the decoded state's Go-heap bytes besides the
// aggregate's (which reserves its own): the key map and session lists.
// (sessions is their number).
func (d *sessionDecoded) heapBytes(sessions int64) int64 {
	spare := int64(len(d.free)+len(d.limbo)) * int64(unsafe.Sizeof(keySessions{}))
	return d.keyBytes + sessions*int64(unsafe.Sizeof(liveSession{})) + spare
}

// perKeyBytes approximates a key's map entry and keySessions besides the
// key's bytes.
const perKeyBytes = int64(unsafe.Sizeof(keySessions{})) + liveEntryBytes

// addKey makes ks the entry of its key.
func (d *sessionDecoded) addKey(ks *keySessions) {
	d.keyBytes += int64(len(ks.key)) + perKeyBytes
	if d.fixed == nil {
		d.keys[ks.key] = ks
	} else if w, ok := fixedKeyWord(ks.key); ok {
		d.fixed.put(w, ks)
	} else {
		d.nullKey = ks
	}
}

// dropKey removes key's entry.
func (d *sessionDecoded) dropKey(key string) {
	d.keyBytes -= int64(len(key)) + perKeyBytes
	if d.fixed == nil {
		delete(d.keys, key)
	} else if w, ok := fixedKeyWord(key); ok {
		d.fixed.del(w)
	} else {
		d.nullKey = nil
	}
}

// lookup returns key's entry (nil: the key has no open session).
func (d *sessionDecoded) lookup(key string) *keySessions {
	if d.fixed == nil {
		return d.keys[key]
	}
	if w, ok := fixedKeyWord(key); ok {
		return d.fixed.get(w)
	}
	return d.nullKey
}

// numKeys is the number of keys with open sessions.
func (d *sessionDecoded) numKeys() int {
	n := len(d.keys)
	if d.fixed != nil {
		n += d.fixed.n
	}
	if d.nullKey != nil {
		n++
	}
	return n
}

// each calls f with every key's entry, in no particular order.
func (d *sessionDecoded) each(f func(*keySessions)) {
	for _, ks := range d.keys {
		f(ks)
	}
	if d.fixed != nil {
		d.fixed.each(f)
	}
	if d.nullKey != nil {
		f(d.nullKey)
	}
}

// fixedKeyWord reads a fixed-width key's word from its stored bytes
// (rowCodec.at: 1 then the word little-endian, or 0 alone for null).
func fixedKeyWord(key string) (uint64, bool) {
	if len(key) != fixedKeyLen {
		return 0, false
	}
	var w uint64
	for j := 0; j < 8; j++ {
		w |= uint64(key[1+j]) << (8 * j)
	}
	return w, true
}

// sidRecord builds the aggregate's input from a session id column and
// the partial rows' aggregate states (columns from nKeys on; borrowed).
func (d *sessionDecoded) sidRecord(mem memory.Allocator, sids []int64, states []arrow.Array) arrow.Record {
	b := array.NewInt64Builder(mem)
	b.AppendValues(sids, nil)
	sid := b.NewArray()
	b.Release()
	cols := append([]arrow.Array{sid}, states...)
	rec := array.NewRecord(d.schema, cols, int64(len(sids)))
	sid.Release()
	return rec
}

func releaseArrays(cols []arrow.Array) {
	for _, c := range cols {
		if c != nil {
			c.Release()
		}
	}
}

// newGroups makes the groups of the sessions the epoch opened (ids from
// firstNew to nextSid) and returns them by id - firstNew.
func (d *sessionDecoded) newGroups(ctx context.Context, s *statefulSessionWindow, firstNew int64) ([]int32, error) {
	n := int(d.nextSid - firstNew)
	if n == 0 {
		return nil, nil
	}
	b := array.NewInt64Builder(s.mem)
	b.Reserve(n)
	for sid := firstNew; sid < d.nextSid; sid++ {
		b.UnsafeAppend(sid)
	}
	sids := b.NewArray()
	b.Release()
	defer sids.Release()
	gids, err := d.agg.Groups(ctx, []arrow.Array{sids})
	if err != nil {
		return nil, err
	}
	return slices.Clone(gids), nil
}

// deleteGroups empties evicted groups and compacts the aggregate when
// dead groups hold half of it (renumbering the sessions' groups).
func (d *sessionDecoded) deleteGroups(ctx context.Context, gids []int32) error {
	if len(gids) == 0 {
		return nil
	}
	d.agg.Delete(gids)
	if !d.agg.ShouldCompact() {
		return nil
	}
	remap, err := d.agg.Compact(ctx)
	if err != nil {
		return err
	}
	d.each(func(ks *keySessions) {
		for i := range ks.list {
			ks.list[i].gid = remap[ks.list[i].gid]
		}
	})
	return nil
}
