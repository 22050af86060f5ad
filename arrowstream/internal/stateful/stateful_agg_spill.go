package stateful

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/apache/arrow/go/v17/arrow"

	"github.com/arrowstream/arrowstream/arrowstream/stream"
	"github.com/arrowstream/arrowstream/checkpoint"
	"github.com/arrowstream/arrowstream/vector"
)

// The bounded working set of a streaming aggregation over the Pebble
// provider. With the memory provider every group stays live between
// epochs (aggLive). With Pebble the store holds every group and the live
// aggregation is a cache of at most stateStore.pebble.liveStateBytes of
// them: an epoch reads back, with one multi-get per partition, the groups
// its partial rows touch that the cache lacks, folds into them in place,
// writes the changed ones back (Put) and, when the cache has outgrown its
// budget, drops it at the end of the epoch (its groups are all in the
// store by then). Eviction by the watermark reads back only the groups it
// evicts: an event-time index of every stored group's key (keys by
// time, a few bytes per group: the group's encoded key) stays in memory
// and is rebuilt from the stores' keys on start, restart or after an
// aborted epoch. Complete mode, which emits every group every epoch,
// reads them from the store.
//
// The groups a cache holds are found by their encoded key (index), so
// that a group is never read back twice: the store's copy is merged
// before the epoch's partial rows, in the order the all-live path merges
// them, and the answers are the same.

// aggSpill is the bookkeeping of the bounded working set.
type aggSpill struct {
	budget int64
	// index maps the encoded key of every group in the cache to its id.
	index      map[string]int32
	indexBytes int64
	// byTime holds the encoded keys of every stored group whose time key
	// is valid, by time (µs); times orders those times.
	byTime    map[int64]*keyRun
	times     timeHeap[struct{}]
	timeBytes int64
	evicting  bool
}

// keyRun is a sequence of encoded keys in one buffer.
type keyRun struct {
	data []byte
	ends []uint32
}

func (r *keyRun) add(k []byte) {
	r.data = append(r.data, k...)
	r.ends = append(r.ends, uint32(len(r.data)))
}

// each calls fn with every key (a view into the run).
func (r *keyRun) each(fn func(k []byte)) {
	start := uint32(0)
	for _, end := range r.ends {
		fn(r.data[start:end])
		start = end
	}
}

// Per-entry Go-heap costs beyond the key bytes, for the budget: a map
// entry with a string header and an id; a key's end offset.
const (
	spillIndexEntryBytes = 48
	spillTimeEntryBytes  = 4
	spillRunBytes        = 96 // a time's map entry, run and heap slot
)

// liveStateBudget returns the working-set budget when the query's state
// store is Pebble (ok false: every group stays live).
func liveStateBudget(conf map[string]string) (budget int64, ok bool, err error) {
	if !strings.EqualFold(strings.TrimSpace(conf[stream.ConfStateStoreProvider]), "pebble") {
		return 0, false, nil
	}
	v := strings.TrimSpace(conf[stream.ConfPebbleLiveStateBytes])
	if v == "" {
		return stream.DefaultPebbleLiveStateBytes, true, nil
	}
	n, err := strconv.ParseInt(v, 10, 64)
	if err != nil || n < 0 {
		return 0, false, fmt.Errorf("arrowstream: option %s = %q: want a byte count", stream.ConfPebbleLiveStateBytes, v)
	}
	return n, true, nil
}

func newAggSpill(budget int64, evicting bool) *aggSpill {
	return &aggSpill{budget: budget, index: map[string]int32{}, byTime: map[int64]*keyRun{}, evicting: evicting}
}

// heapBytes is the bookkeeping's Go-heap estimate.
func (sp *aggSpill) heapBytes() int64 { return sp.indexBytes + sp.timeBytes }

// indexTime adds a stored group's key at time t (µs).
func (sp *aggSpill) indexTime(t int64, key []byte) {
	r := sp.byTime[t]
	if r == nil {
		r = &keyRun{}
		sp.byTime[t] = r
		sp.times.push(t, struct{}{})
		sp.timeBytes += spillRunBytes
	}
	r.add(key)
	sp.timeBytes += int64(len(key)) + spillTimeEntryBytes
}

// startSpilled makes an empty cache over the stores of the epoch and, when
// groups are evicted by time, rebuilds the time index from the stored
// keys (one pass over the keys, in chunks).
func (s *statefulAggregate) startSpilled(budget int64) (*aggSpill, error) {
	sp := newAggSpill(budget, s.evicting())
	if !sp.evicting {
		return sp, nil
	}
	const chunk = 64 << 10
	var keys [][]byte
	flush := func() error {
		if len(keys) == 0 {
			return nil
		}
		cols, err := s.keyCodec.decode(s.mem, keys)
		if err != nil {
			return fmt.Errorf("arrowstream: state of operator %d: decode keys: %w", s.opID, err)
		}
		defer func() {
			for _, c := range cols {
				c.Release()
			}
		}()
		times, valid := s.timesOf(cols[s.timeKey])
		for i, t := range times {
			if valid.IsValid(i) {
				sp.indexTime(int64(t), keys[i])
			}
		}
		keys = keys[:0]
		return nil
	}
	var ferr error
	if err := s.state.rangeAll(func(k, _ []byte) bool {
		keys = append(keys, k)
		if len(keys) == chunk {
			ferr = flush()
		}
		return ferr == nil
	}); err != nil && ferr == nil {
		ferr = err
	}
	if ferr == nil {
		ferr = flush()
	}
	return sp, ferr
}

// mergeSpilled folds partial rows into the cache: the groups it lacks are
// read back from their partitions first (one multi-get each) and merged
// as stored, then the rows; groups new to the store enter the time index.
func (s *statefulAggregate) mergeSpilled(ctx context.Context, rec arrow.Record) error {
	sp, live := s.spill, s.live
	n := int(rec.NumRows())
	if n == 0 {
		return nil
	}
	if err := s.keyCodec.encode(rec); err != nil {
		return err
	}
	// The keys are copied into one buffer (the codec's views last until
	// its next encode).
	keys := make([][]byte, n)
	parts := make([]int, n)
	var arena []byte
	ends := make([]int, n)
	for i := 0; i < n; i++ {
		arena = append(arena, s.keyCodec.at(i)...)
		ends[i] = len(arena)
		parts[i] = s.state.scheme.of(s.keyCodec, i, len(s.state.stores))
	}
	var missing []int
	for i, start := 0, 0; i < n; i++ {
		keys[i], start = arena[start:ends[i]:ends[i]], ends[i]
		if _, ok := sp.index[string(keys[i])]; !ok {
			missing = append(missing, i)
		}
	}
	stored, err := s.readBack(keys, parts, missing)
	if err != nil {
		return err
	}
	if len(stored.keys) > 0 {
		rec, err := s.decodeState(stored.keys, stored.vals)
		if err != nil {
			return err
		}
		gids, err := live.agg.Merge(ctx, rec)
		rec.Release()
		if err != nil {
			return err
		}
		for j, g := range gids {
			sp.setIndex(stored.keys[j], g)
		}
	}
	gids, err := live.agg.Merge(ctx, rec)
	if err != nil {
		return err
	}
	live.note(gids, nil, nil)
	var times []arrow.Timestamp
	var valid arrow.Array
	if sp.evicting {
		times, valid = s.keyTimes(rec)
	}
	for _, i := range missing {
		if stored.found[i] {
			continue
		}
		sp.setIndex(keys[i], gids[i])
		if times != nil && valid.IsValid(i) {
			sp.indexTime(int64(times[i]), keys[i])
		}
	}
	return nil
}

func (sp *aggSpill) setIndex(key []byte, g int32) {
	if _, ok := sp.index[string(key)]; !ok {
		sp.indexBytes += int64(len(key)) + spillIndexEntryBytes
	}
	sp.index[string(key)] = g
}

// readBackSet is what readBack found: by row, whether the store had the
// key, and the stored keys and values (copies).
type readBackSet struct {
	found      []bool
	keys, vals [][]byte
	arena      []byte // the values' bytes
}

// readBack reads the keys of rows (by partition, one multi-get each).
func (s *statefulAggregate) readBack(keys [][]byte, parts []int, rows []int) (readBackSet, error) {
	out := readBackSet{found: make([]bool, len(keys))}
	if len(rows) == 0 {
		return out, nil
	}
	byPart := make([][]int, len(s.state.stores))
	for _, i := range rows {
		byPart[parts[i]] = append(byPart[parts[i]], i)
	}
	var batch [][]byte
	for p, idx := range byPart {
		if len(idx) == 0 {
			continue
		}
		batch = batch[:0]
		for _, i := range idx {
			batch = append(batch, keys[i])
		}
		err := checkpoint.GetMany(s.state.stores[p], batch, func(j int, v []byte) {
			i := idx[j]
			out.found[i] = true
			out.keys = append(out.keys, keys[i])
			start := len(out.arena)
			out.arena = append(out.arena, v...)
			out.vals = append(out.vals, out.arena[start:len(out.arena):len(out.arena)])
		})
		if err != nil {
			return out, fmt.Errorf("arrowstream: read back state of operator %d partition %d: %w", s.opID, p, err)
		}
	}
	return out, nil
}

// evictSpilled removes the groups whose time key is at or below the
// watermark: it pops their keys from the time index, reads back those the
// cache lacks, and deletes them from the cache and the stores. It returns
// them (partial layout; nil when none is due).
func (s *statefulAggregate) evictSpilled(ctx context.Context, wmMs int64) (arrow.Record, error) {
	start := time.Now()
	sp, live := s.spill, s.live
	limit := wmMs * 1000
	var keys [][]byte
	for sp.times.due(limit) {
		t := sp.times.pop().at
		r := sp.byTime[t]
		delete(sp.byTime, t)
		sp.timeBytes -= spillRunBytes + int64(len(r.data)) + int64(len(r.ends))*spillTimeEntryBytes
		r.each(func(k []byte) { keys = append(keys, k) })
	}
	if len(keys) == 0 {
		return nil, nil
	}
	// The keys' partitions come from an encode of their decoded columns
	// (Spark's partitioning hash is over the key columns).
	cols, err := s.keyCodec.decode(s.mem, keys)
	if err != nil {
		return nil, fmt.Errorf("arrowstream: state of operator %d: decode keys: %w", s.opID, err)
	}
	keyRec := assemble(s.keyCodec.schema, cols, nil, len(keys))
	defer keyRec.Release()
	if err := s.keyCodec.encode(keyRec); err != nil {
		return nil, err
	}
	parts := make([]int, len(keys))
	var missing []int
	gids := make([]int32, 0, len(keys))
	for i, k := range keys {
		parts[i] = s.state.scheme.of(s.keyCodec, i, len(s.state.stores))
		if g, ok := sp.index[string(k)]; ok {
			gids = append(gids, g)
			delete(sp.index, string(k))
			sp.indexBytes -= int64(len(k)) + spillIndexEntryBytes
		} else {
			missing = append(missing, i)
		}
	}
	stored, err := s.readBack(keys, parts, missing)
	if err != nil {
		return nil, err
	}
	if len(stored.keys) > 0 {
		rec, err := s.decodeState(stored.keys, stored.vals)
		if err != nil {
			return nil, err
		}
		more, err := live.agg.Merge(ctx, rec)
		rec.Release()
		if err != nil {
			return nil, err
		}
		gids = append(gids, more...)
	}
	for i, k := range keys {
		if err := s.state.stores[parts[i]].Delete(k); err != nil {
			return nil, fmt.Errorf("arrowstream: delete state of operator %d: %w", s.opID, err)
		}
	}
	gone, err := live.agg.State(gids)
	if err != nil {
		return nil, err
	}
	live.remove(gids)
	s.progress.NumRowsRemoved += gone.NumRows()
	s.progress.AllRemovalsTimeMs += time.Since(start).Milliseconds()
	return gone, nil
}

// allSpilled returns every stored group (Complete mode) after the epoch's
// writes, in chunks read from the stores.
func (s *statefulAggregate) allSpilled() ([]arrow.Record, error) {
	const chunk = 64 << 10
	var out []arrow.Record
	var keys, vals [][]byte
	flush := func() error {
		if len(keys) == 0 {
			return nil
		}
		rec, err := s.decodeState(keys, vals)
		keys, vals = keys[:0], vals[:0]
		if err != nil {
			return err
		}
		out = append(out, rec)
		return nil
	}
	var ferr error
	if err := s.state.rangeAll(func(k, v []byte) bool {
		keys, vals = append(keys, k), append(vals, v)
		if len(keys) == chunk {
			ferr = flush()
		}
		return ferr == nil
	}); err != nil && ferr == nil {
		ferr = err
	}
	if ferr == nil {
		ferr = flush()
	}
	if ferr != nil {
		releaseRecords(out)
		return nil, ferr
	}
	return out, nil
}

// trimSpilled drops the cache when it has outgrown its budget (or its
// dead groups hold most ids): its groups are all in the stores, so an
// empty cache is as valid for the next version as a full one.
func (s *statefulAggregate) trimSpilled() error {
	sp, live := s.spill, s.live
	if live.heapBytes()+sp.indexBytes <= sp.budget && !live.agg.ShouldCompact() {
		return nil
	}
	agg, err := vector.NewLiveAggregate(vector.ForOperator(s.mem, aggStateName), s.partialSchema, s.nKeys, s.spec.Aggregates)
	if err != nil {
		return err
	}
	version := live.version
	live.close()
	s.live = newAggLive(agg)
	s.live.version = version
	clear(sp.index)
	sp.indexBytes = 0
	return nil
}

// loadLiveFor makes the live state hold the epoch's version: all of it
// (loadLive) with the memory provider, an empty bounded cache over the
// stores with Pebble.
func (s *statefulAggregate) loadLiveFor(ctx context.Context, ep Epoch) error {
	if s.live != nil && s.live.version == ep.ID {
		return nil
	}
	budget, bounded, err := liveStateBudget(ep.Conf)
	if err != nil {
		return err
	}
	s.dropLive()
	if !bounded {
		return s.loadLive(ctx, ep.ID)
	}
	agg, err := vector.NewLiveAggregate(vector.ForOperator(s.mem, aggStateName), s.partialSchema, s.nKeys, s.spec.Aggregates)
	if err != nil {
		return fmt.Errorf("arrowstream: state of operator %d: %w", s.opID, err)
	}
	sp, err := s.startSpilled(budget)
	if err != nil {
		agg.Close()
		return fmt.Errorf("arrowstream: rebuild the time index of operator %d from version %d: %w", s.opID, ep.ID, err)
	}
	s.live, s.spill = newAggLive(agg), sp
	s.live.version = ep.ID
	return nil
}

// bindSpilled puts the epoch on the Put/Delete path when the working set
// is bounded: the stores hold every group, and whether a key is new to
// them is known only where it was read back.
func (s *statefulAggregate) bindSpilled() {
	if s.spill != nil {
		s.log.writers = nil
	}
}
