package stateful

import (
	"context"
	"fmt"
	"time"

	"github.com/apache/arrow/go/v17/arrow"
	"github.com/apache/arrow/go/v17/arrow/array"
	"github.com/apache/arrow/go/v17/arrow/memory"

	"github.com/arrowstream/arrowstream/arrowstream/stream"
	"github.com/arrowstream/arrowstream/checkpoint"
	"github.com/arrowstream/arrowstream/vector"
)

// statefulAggregate is a streaming aggregation (Spark's StateStoreRestore →
// StateStoreSave pair). Each epoch it partially aggregates the epoch's
// input and merges the partial rows into its live state (aggLive: the
// groups decoded, accumulators updated in place, kept between epochs),
// writes the groups the epoch changed to the state store (version
// epoch+1; state partitioned by key hash) and emits per output mode:
//
//   - Complete: every group, every epoch; never evicts, never drops late rows.
//   - Update: the groups changed in this epoch; with a watermarked time key,
//     groups whose time is at or below the eviction watermark are then
//     removed silently, and late input is dropped.
//   - Append: only groups that can no longer change — those whose time key
//     is at or below the eviction watermark — emitted once, then removed.
//
// Eviction pops the due groups from an event-time index and touches
// nothing else. The store is read only to rebuild the live state: on the
// first epoch, after a restart, and after an aborted epoch (the live
// state is then discarded and version N reloaded).
//
// Late rows are dropped after partial aggregation, so
// numRowsDroppedByWatermark counts partial rows (about one per key), as
// Spark's does.
type statefulAggregate struct {
	mem   memory.Allocator
	opID  int
	spec  vector.AggregateSpec // over the operator's input; Mode ignored
	mode  stream.OutputMode
	nKeys int

	// timeKey is the grouping key that carries the watermark (-1: none);
	// for a window struct the time is its end.
	timeKey      int
	timeIsWindow bool

	partialSchema *arrow.Schema
	keyCodec      *rowCodec
	valCodec      *rowCodec
	keyCols       []int
	valCols       []int

	// finalSchema is the schema of the final rows, from the first epoch
	// that finalized any (nil until then): an epoch with no changed
	// group answers an empty scan of it without building a finalizer.
	finalSchema *arrow.Schema
	// emptySchema is the schema of an epoch that finalized nothing before
	// any did (finalizeNothing), nil until one ran.
	emptySchema *arrow.Schema
	// finalPass finalizes by passing the state columns through when the
	// aggregates allow it (finalPassOf; bound at the first finalize).
	finalPass finalPassState

	state statePartitions
	log   changelogState // the changelog write path, when the stores take it
	live  *aggLive       // nil until the first epoch loads it
	spill *aggSpill      // with Pebble: live is a bounded cache (stateful_agg_spill.go)
	// acct reserves the Go-heap bytes of the live state's bookkeeping
	// (time index, epoch marks) and of the spill cache against the
	// query's limit; the groups reserve their own (vector.LiveAggregate).
	acct stateAccount
	// views reserves the live snapshot views handed to the stores.
	views viewAccount
	// keyedSnaps and recordSnaps count the live snapshots offered from
	// the kept store keys and from a record of the groups, for tests.
	keyedSnaps, recordSnaps int
	raw                     liveRawBinding // input rows folded into live directly
	// panes: a sliding window in Append mode, aggregated by panes
	// (stateful_agg_panes.go); nil otherwise.
	panes *paneMode
	// pending is the version the live state holds once this epoch commits.
	pending int64

	lastEvictWm int64
	progress    stream.StateOperatorProgress
}

func newStatefulAggregate(mem memory.Allocator, opID int, input *arrow.Schema, spec vector.AggregateSpec, mode stream.OutputMode, timeKey int) (*statefulAggregate, error) {
	spec.Mode = vector.AggPartial
	partial, err := vector.PartialSchema(input, spec)
	if err != nil {
		return nil, err
	}
	s := &statefulAggregate{
		mem: mem, opID: opID, spec: spec, mode: mode, nKeys: len(spec.GroupBy),
		timeKey: timeKey, partialSchema: partial, lastEvictWm: -1,
		state: statePartitions{opID: opID},
	}
	s.acct = newStateAccount(mem, aggStateName)
	s.views = newViewAccount(mem, aggStateName)
	if timeKey >= 0 {
		switch dt := partial.Field(timeKey).Type.(type) {
		case *arrow.TimestampType:
		case *arrow.StructType:
			if !arrow.TypeEqual(dt, vector.WindowType) {
				return nil, fmt.Errorf("arrowstream: aggregation key %s carries the watermark but is a %s, not a timestamp or window", partial.Field(timeKey).Name, vector.TypeName(dt))
			}
			s.timeIsWindow = true
		default:
			return nil, fmt.Errorf("arrowstream: aggregation key %s carries the watermark but is a %s, not a timestamp or window", partial.Field(timeKey).Name, vector.TypeName(dt))
		}
	}
	keyCols := make([]int, s.nKeys)
	for i := range keyCols {
		keyCols[i] = i
	}
	valCols := make([]int, partial.NumFields()-s.nKeys)
	for i := range valCols {
		valCols[i] = s.nKeys + i
	}
	if s.keyCodec, err = newRowCodec(mem, partial, keyCols); err != nil {
		return nil, err
	}
	if s.valCodec, err = newValueCodec(mem, partial, valCols); err != nil {
		return nil, err
	}
	// The state is kept live (the store gets only the changes): an
	// aggregate whose partial state cannot be is refused now, when the
	// query starts, not at its first epoch.
	probe, err := vector.NewLiveAggregate(mem, partial, s.nKeys, spec.Aggregates)
	if err != nil {
		return nil, fmt.Errorf("arrowstream: %w", err)
	}
	probe.Close()
	s.keyCols, s.valCols = keyCols, valCols
	s.state.schema = describeState("aggregate", s.keyCodec.schema, s.valCodec.schema)
	return s, nil
}

// keyTimes returns, for each row of rec (partial layout), the time of the
// watermark key in microseconds and whether it is null.
func (s *statefulAggregate) keyTimes(rec arrow.Record) ([]arrow.Timestamp, arrow.Array) {
	return s.timesOf(rec.Column(s.timeKey))
}

// timesOf returns the times (µs) of a watermark key column and the array
// whose validity says which are null.
func (s *statefulAggregate) timesOf(col arrow.Array) ([]arrow.Timestamp, arrow.Array) {
	if s.timeIsWindow {
		col = col.(*array.Struct).Field(1)
	}
	return col.(*array.Timestamp).TimestampValues(), col
}

// selectByTime returns the rows of rec whose time key is (at or below,
// when atOrBelow) / (above) the watermark, plus the count of the others.
func (s *statefulAggregate) selectByTime(rec arrow.Record, wmMs int64, atOrBelow bool) ([]int32, int) {
	times, col := s.keyTimes(rec)
	limit := arrow.Timestamp(wmMs * 1000)
	sel := make([]int32, 0, len(times))
	for i, t := range times {
		below := col.IsValid(i) && t <= limit
		if below == atOrBelow {
			sel = append(sel, int32(i))
		}
	}
	return sel, len(times) - len(sel)
}

func (s *statefulAggregate) Execute(ctx context.Context, ep Epoch, input vector.Operator) (vector.Operator, error) {
	start := time.Now()
	s.progress = stream.StateOperatorProgress{OperatorName: "stateStoreSave"}
	if err := s.state.bind(ep); err != nil {
		input.Close()
		return nil, err
	}
	if err := s.keyCodec.hashOnlyFrom(ep.Conf); err != nil {
		input.Close()
		return nil, err
	}
	s.log.bind(&s.state)
	if err := s.loadLiveFor(ctx, ep); err != nil {
		input.Close()
		return nil, err
	}
	s.bindSpilled()
	// Kept partitions hold for the partitioning they were noted under.
	s.live.partitionsFor(s.partitionKey())
	// From here the live state is this epoch's until it commits.
	s.live.version, s.pending = -1, ep.ID+1
	live := s.live
	live.beginEpoch()
	evicting := s.evicting()
	if err := s.fold(ctx, ep, input); err != nil {
		return nil, err
	}
	// Update mode emits the changed groups' final rows: read straight
	// from the live accumulators when they can (direct), so that neither
	// their partial state nor a finalizing aggregation is built.
	var direct arrow.Record
	defer func() {
		if direct != nil { // not handed on: an error
			direct.Release()
		}
	}()
	if s.mode == stream.Update && len(live.dirty) > 0 {
		var err error
		if direct, err = s.finalChanged(); err != nil {
			return nil, err
		}
	}
	var changed arrow.Record
	if (s.mode != stream.Update || direct != nil) && s.log.on() {
		// Only the log reads the changed groups, and it keeps their keys:
		// their values alone are gathered, in id order (sortDirty).
		live.sortDirty()
		if err := s.logChangedValues(); err != nil {
			return nil, err
		}
		s.progress.NumRowsUpdated = int64(len(live.dirty))
	} else {
		var err error
		if changed, err = live.changedState(); err != nil {
			return nil, err
		}
		defer changed.Release()
		if err := s.save(changed); err != nil {
			return nil, err
		}
		s.progress.NumRowsUpdated = changed.NumRows()
	}
	s.progress.AllUpdatesTimeMs = time.Since(start).Milliseconds()

	var out []arrow.Record
	var err error
	switch s.mode {
	case stream.Complete:
		var all arrow.Record
		if s.spill != nil {
			out, err = s.allSpilled()
		} else if all, err = live.agg.State(live.all()); err == nil {
			out = []arrow.Record{all}
		}
	case stream.Update:
		if direct == nil {
			changed.Retain()
			out = []arrow.Record{changed}
		}
		if evicting && ep.HasWatermark {
			_, err = s.evict(ctx, ep.WatermarkMs, false)
		}
	case stream.Append:
		if evicting && ep.HasWatermark {
			var evicted arrow.Record
			if s.panes != nil && s.spill == nil {
				evicted, err = s.evictPanes(ctx, ep.LateWatermarkMs, ep.WatermarkMs)
			} else {
				evicted, err = s.evict(ctx, ep.WatermarkMs, true)
			}
			if evicted != nil {
				out = []arrow.Record{evicted}
			}
		}
	}
	if err == nil && s.log.on() {
		err = s.log.finish(s.opID)
	}
	if err == nil && s.log.on() && s.spill == nil {
		err = s.offerLive()
	}
	if err == nil && s.spill != nil {
		err = s.trimSpilled()
	} else if err == nil {
		err = live.compact(ctx)
	}
	if err == nil {
		err = s.acct.set(s.extraHeap())
	}
	if err != nil {
		releaseRecords(out)
		return nil, err
	}
	s.lastEvictWm = ep.WatermarkMs
	if direct != nil {
		rec := direct
		direct = nil
		return vector.NewOwnedScan(rec.Schema(), []arrow.Record{rec}), nil
	}
	return s.finalize(ctx, out)
}

// finalChanged returns the final rows of the groups the epoch changed,
// read from the live state (vector.LiveAggregate.Final), or nil when an
// aggregate cannot be finalized so (finalize then finalizes their partial
// state).
func (s *statefulAggregate) finalChanged() (arrow.Record, error) {
	rec, ok, err := s.live.agg.Final(s.live.dirty)
	if err != nil {
		return nil, fmt.Errorf("arrowstream: final rows of operator %d: %w", s.opID, err)
	}
	if !ok {
		return nil, nil
	}
	s.finalSchema = rec.Schema()
	return rec, nil
}

// loadLive makes the live state hold version: it keeps it when it does
// and otherwise rebuilds it from the stores the epoch opened (first
// epoch, restart, replayed or aborted epoch).
func (s *statefulAggregate) loadLive(ctx context.Context, version int64) error {
	if s.live != nil && s.live.version == version {
		return nil
	}
	if s.live != nil {
		s.live.close()
		s.live = nil
	}
	agg, err := vector.NewLiveAggregate(vector.ForOperator(s.mem, aggStateName), s.partialSchema, s.nKeys, s.spec.Aggregates)
	if err != nil {
		return fmt.Errorf("arrowstream: state of operator %d: %w", s.opID, err)
	}
	live := newAggLive(agg)
	evicting := s.timeKey >= 0 && s.mode != stream.Complete
	const chunk = 64 << 10
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
		defer rec.Release()
		var times []arrow.Timestamp
		var valid arrow.Array
		if evicting {
			times, valid = s.keyTimes(rec)
		}
		return live.merge(ctx, rec, times, valid)
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
		live.close()
		return fmt.Errorf("arrowstream: rebuild the state of operator %d from version %d: %w", s.opID, version, ferr)
	}
	live.version = version
	s.live = live
	if s.log.on() {
		s.log.recount(&s.state)
	}
	return nil
}

// stateSpec is the aggregation over partial-state input.
func (s *statefulAggregate) stateSpec(mode vector.AggMode) vector.AggregateSpec {
	return partialStateSpec(s.partialSchema, s.nKeys, s.spec.Aggregates, mode)
}

func (s *statefulAggregate) decodeState(keys, vals [][]byte) (arrow.Record, error) {
	k, err := s.keyCodec.decode(s.mem, keys)
	if err != nil {
		return nil, fmt.Errorf("arrowstream: state of operator %d: decode keys: %w", s.opID, err)
	}
	v, err := s.valCodec.decode(s.mem, vals)
	if err != nil {
		for _, a := range k {
			a.Release()
		}
		return nil, fmt.Errorf("arrowstream: state of operator %d: decode values: %w", s.opID, err)
	}
	return assemble(s.partialSchema, k, v, len(keys)), nil
}

// save writes the changed groups (partial layout, in the order of the
// live state's dirty groups) to their partitions' stores. When the epoch
// logs changes, a group's store key and partition are kept with it at its
// first change (stateful_agg_keys.go): only the keys of the groups new to
// that are encoded, from the live groups' keys, and the values.
func (s *statefulAggregate) save(changed arrow.Record) error {
	if changed.NumRows() == 0 {
		return nil
	}
	if s.log.on() {
		return s.logChanged(changed.Columns()[s.nKeys:], nil)
	}
	if err := s.keyCodec.encode(changed); err != nil {
		return err
	}
	if err := s.valCodec.encode(changed); err != nil {
		return err
	}
	for i := 0; i < int(changed.NumRows()); i++ {
		if err := s.state.storeOf(s.keyCodec, i).Put(s.keyCodec.at(i), s.valCodec.at(i)); err != nil {
			return fmt.Errorf("arrowstream: write state of operator %d: %w", s.opID, err)
		}
	}
	return nil
}

// logChangedValues logs the epoch's changed groups from their values,
// without the record of their whole state: their value rows written
// straight from the accumulators (LiveAggregate.EncodeValues) when it
// can, else their state columns (Values) encoded by valCodec.
func (s *statefulAggregate) logChangedValues() error {
	l := s.live
	if len(l.dirty) == 0 {
		return nil
	}
	ok, err := l.agg.EncodeValues(s.valCodec.enc, l.dirty, &l.logged.vals)
	if err != nil {
		return fmt.Errorf("arrowstream: state of operator %d: %w", s.opID, err)
	}
	if ok {
		return s.logChanged(nil, &l.logged.vals)
	}
	vals, err := l.agg.Values(l.dirty)
	if err != nil {
		return err
	}
	defer func() {
		for _, a := range vals {
			a.Release()
		}
	}()
	return s.logChanged(vals, nil)
}

// logChanged logs the changed groups (save) as upserts, in the order of
// the live state's dirty groups; their values are rows when not nil
// (encoded already), else vals, their state columns (the partial
// layout's after the keys), which valCodec encodes.
func (s *statefulAggregate) logChanged(vals []arrow.Array, rows *vector.GroupValues) error {
	l := s.live
	groups := l.agg.NumGroups()
	l.partOf = growTo(l.partOf, groups)
	// The groups whose store key or partition is not kept yet: their
	// keys are encoded (once, from the live groups) and kept.
	sc := &l.logged
	missing := sc.missing[:0] // by position in dirty
	for i, g := range l.dirty {
		if _, _, ok := l.storedKey(g); !ok {
			missing = append(missing, int32(i))
		}
	}
	sc.missing = missing
	// pos: by dirty position, its row in the encode (-1: kept).
	var pos []int32
	fromWords := false // the new keys are in sc.words, not keyCodec's
	if len(missing) > 0 {
		gids := sc.gids[:0]
		for _, i := range missing {
			gids = append(gids, l.dirty[i])
		}
		sc.gids = gids
		words, keys, err := s.encodeNewKeys(gids)
		if err != nil {
			return err
		}
		fromWords = words
		defer func() {
			for _, a := range keys {
				a.Release()
			}
		}()
		n := len(s.state.stores)
		pos = growTo(sc.pos[:0], len(l.dirty))
		sc.pos = pos
		for i := range pos {
			pos[i] = -1
		}
		if fromWords {
			l.keys.reserve(groups, sc.words.EncodedBytes())
			for j, i := range missing {
				g := l.dirty[i]
				l.partOf[g] = int32(s.state.scheme.ofGroup(s.keyCodec, &sc.words, j, n)) + 1
				l.keys.keep(g, sc.words.Key(j))
				pos[i] = int32(j)
			}
		} else {
			l.keys.reserve(groups, s.keyCodec.encodedBytes())
			for j, i := range missing {
				g := l.dirty[i]
				l.partOf[g] = int32(s.state.scheme.of(s.keyCodec, j, n)) + 1
				l.keys.keep(g, s.keyCodec.at(j))
				pos[i] = int32(j)
			}
		}
	}
	if rows == nil {
		if err := s.valCodec.encodeCols(vals); err != nil {
			return err
		}
	}
	// Every changed group's partition is noted now: log them partition
	// by partition, each partition's in one call (changelog_batch.go).
	b := &sc.batch
	parts := b.setParts(len(l.dirty))
	for i, g := range l.dirty {
		parts[i] = l.partOf[g] - 1
	}
	up := &sc.ups
	*up = aggUpserts{s: s, rows: rows, fromWords: fromWords, pos: pos}
	defer func() { *up = aggUpserts{} }() // holds no views past the epoch
	b.byPartition(len(s.state.stores))
	for p := range s.state.stores {
		ents := b.entries(p)
		if len(ents) == 0 {
			continue
		}
		added := 0
		for _, i := range ents {
			if l.added[i] {
				added++
			}
		}
		up.ents = ents
		s.log.upsertsOf(p, len(ents), added, up)
	}
	return nil
}

// offerLive hands the partitions whose commit makes a snapshot due a
// view of their groups as the epoch leaves them (live_snapshot.go): the
// groups' kept store keys and their values when every group has its key
// and partition kept, else their keys and accumulators copied into one
// record; either is encoded in the background.
func (s *statefulAggregate) offerLive() error {
	want := wantsLive(s.state.stores)
	if want == nil {
		return nil
	}
	// The groups of the partitions that asked (and those whose
	// partition is not known yet: routing drops the others).
	gids := s.live.liveIn(want)
	if s.live.allStored(gids) {
		s.keyedSnaps++
		return s.offerKeyed(s.state.stores, want, gids)
	}
	s.recordSnaps++
	return s.offerRecord(s.state.stores, want, gids)
}

// offerKeyed offers the groups gids, whose store keys and partitions are
// all kept, from those and their values alone (offerKeyedSnapshot).
func (s *statefulAggregate) offerKeyed(stores []checkpoint.StateStore, want []bool, gids []int32) error {
	vals, err := s.live.agg.Values(gids)
	if err != nil {
		return fmt.Errorf("arrowstream: state of operator %d: live snapshot: %w", s.opID, err)
	}
	val, err := newValueCodec(s.mem, s.partialSchema, s.valCodec.cols)
	if err != nil {
		releaseArrays(vals)
		return fmt.Errorf("arrowstream: state of operator %d: live snapshot: %w", s.opID, err)
	}
	if err := offerKeyedSnapshot(stores, want, s.live, gids, vals, val, s.views); err != nil {
		return fmt.Errorf("arrowstream: state of operator %d: live snapshot: %w", s.opID, err)
	}
	return nil
}

// offerRecord offers the groups gids as a record of their whole state
// (offerRecordSnapshot), keys encoded and routed in the background.
func (s *statefulAggregate) offerRecord(stores []checkpoint.StateStore, want []bool, gids []int32) error {
	rec, err := s.live.agg.State(gids)
	if err != nil {
		return fmt.Errorf("arrowstream: state of operator %d: live snapshot: %w", s.opID, err)
	}
	key, val, err := snapshotCodecs(s.mem, s.partialSchema, s.keyCodec, s.valCodec)
	if err != nil {
		rec.Release()
		return fmt.Errorf("arrowstream: state of operator %d: live snapshot: %w", s.opID, err)
	}
	offerRecordSnapshot(stores, want, rec, key, val, s.state.scheme, s.views)
	return nil
}

// evict removes the groups whose time key is at or below the watermark,
// from the live state and the stores, and returns them (partial layout;
// nil when none is due, or when rows is false: the caller does not use
// them, and when the stores' keys of the groups are known their state is
// not gathered at all).
func (s *statefulAggregate) evict(ctx context.Context, wmMs int64, rows bool) (arrow.Record, error) {
	if s.spill != nil {
		gone, err := s.evictSpilled(ctx, wmMs)
		if !rows && gone != nil {
			gone.Release()
			gone = nil
		}
		return gone, err
	}
	start := time.Now()
	due := s.live.due(wmMs * 1000)
	if len(due) == 0 {
		return nil, nil
	}
	var gone arrow.Record
	if rows || !s.log.on() || !s.live.allStored(due) {
		var err error
		if gone, err = s.live.agg.State(due); err != nil {
			return nil, err
		}
	}
	if err := s.dropStored(due, gone); err != nil {
		if gone != nil {
			gone.Release()
		}
		return nil, err
	}
	s.live.remove(due)
	s.progress.NumRowsRemoved += int64(len(due))
	s.progress.AllRemovalsTimeMs += time.Since(start).Milliseconds()
	if !rows && gone != nil {
		gone.Release()
		gone = nil
	}
	return gone, nil
}

// dropStored deletes the groups gids from the stores. gone is their state
// (partial layout, in the order of gids); it may be nil when every group's
// store key and partition are known (aggLive.allStored) and the epoch
// logs changes, as its keys are then not encoded again.
func (s *statefulAggregate) dropStored(gids []int32, gone arrow.Record) error {
	l := s.live
	if s.log.on() && l.allStored(gids) {
		b := &l.logged.batch
		parts := b.setParts(len(gids))
		for i, g := range gids {
			parts[i] = l.partOf[g] - 1
		}
		b.byPartition(len(s.state.stores))
		del := &l.logged.dels
		*del = aggDeletes{keys: &l.keys, gids: gids}
		defer func() { *del = aggDeletes{} }() // holds no views past the call
		for p := range s.state.stores {
			ents := b.entries(p)
			if len(ents) == 0 {
				continue
			}
			del.ents = ents
			s.log.removesOf(p, len(ents), del)
		}
		return nil
	}
	if gone == nil {
		return fmt.Errorf("arrowstream: delete state of operator %d: the keys of %d groups are not known", s.opID, len(gids))
	}
	if err := s.keyCodec.encode(gone); err != nil {
		return err
	}
	for i := 0; s.log.on() && i < int(gone.NumRows()); i++ {
		s.log.remove(s.state.scheme.of(s.keyCodec, i, len(s.state.stores)), s.keyCodec.at(i))
	}
	for i := 0; !s.log.on() && i < int(gone.NumRows()); i++ {
		if err := s.state.storeOf(s.keyCodec, i).Delete(s.keyCodec.at(i)); err != nil {
			return fmt.Errorf("arrowstream: delete state of operator %d: %w", s.opID, err)
		}
	}
	return nil
}

// finalize turns partial-state records into final rows (owned records are
// consumed). The records are live groups' state, each group once, so
// every row is finalized on its own (vector.FinalRows), without a hash
// table; when FinalRows declines, a final aggregation does it.
func (s *statefulAggregate) finalize(ctx context.Context, recs []arrow.Record) (vector.Operator, error) {
	if s.finalSchema != nil && allEmpty(recs) {
		releaseRecords(recs)
		return vector.NewOwnedScan(s.finalSchema, nil), nil
	}
	if len(recs) == 0 && s.emptySchema != nil {
		return vector.NewOwnedScan(s.emptySchema, nil), nil
	}
	spec := s.stateSpec(vector.AggFinal)
	pass := s.finalPassOf(spec)
	out := make([]arrow.Record, 0, len(recs))
	for _, rec := range recs {
		if pass != nil {
			if f, ok := pass.Rows(rec); ok {
				out = append(out, f)
				continue
			}
		}
		f, ok, err := vector.FinalRows(ctx, s.mem, rec, spec)
		if err != nil {
			releaseRecords(out)
			releaseRecords(recs)
			return nil, err
		}
		if !ok {
			releaseRecords(out)
			return finalizePartial(s.mem, s.partialSchema, spec, recs)
		}
		out = append(out, f)
	}
	releaseRecords(recs)
	if len(out) == 0 {
		return s.finalizeNothing(ctx, spec)
	}
	s.finalSchema = out[0].Schema()
	return vector.NewOwnedScan(out[0].Schema(), out), nil
}

// finalizeNothing finalizes an epoch that changed no group before any
// epoch finalized rows: the finalizer (a hash aggregation) is built once
// and drained, and when it answers no rows its schema is kept, so that
// the next such epochs answer an empty scan without building another
// (a query whose input stays empty paid for one every epoch).
func (s *statefulAggregate) finalizeNothing(ctx context.Context, spec vector.AggregateSpec) (vector.Operator, error) {
	op, err := finalizePartial(s.mem, s.partialSchema, spec, nil)
	if err != nil {
		return nil, err
	}
	schema := op.Schema()
	recs, err := vector.Drain(ctx, op)
	op.Close()
	if err != nil {
		return nil, err
	}
	if len(recs) == 0 {
		s.emptySchema = schema
	}
	return vector.NewOwnedScan(schema, recs), nil
}

// allEmpty reports whether every record of recs has no rows.
func allEmpty(recs []arrow.Record) bool {
	for _, r := range recs {
		if r.NumRows() > 0 {
			return false
		}
	}
	return true
}

// outputSchema is the schema of the final rows.
func (s *statefulAggregate) outputSchema() (*arrow.Schema, error) {
	scan, err := vector.NewScan(s.partialSchema)
	if err != nil {
		return nil, err
	}
	op, err := vector.NewHashAggregate(s.mem, scan, s.stateSpec(vector.AggFinal))
	if err != nil {
		scan.Close()
		return nil, err
	}
	defer op.Close()
	return op.Schema(), nil
}

func (s *statefulAggregate) State() StateDecl { return s.state.decl() }

// Committed: the live state now mirrors the committed version; its bytes
// count in the operator's memory.
func (s *statefulAggregate) Committed(c StateCommit) {
	s.state.committed(&s.progress, c)
	if s.live != nil {
		s.live.version = s.pending
		s.progress.MemoryUsedBytes += s.live.heapBytes()
		if s.spill != nil {
			s.progress.MemoryUsedBytes += s.spill.heapBytes()
		}
		// What counts against the limit: the groups' own reservation
		// and the account's.
		s.acct.report(&s.progress.CustomMetrics)
		s.progress.CustomMetrics[heapMetric] += s.live.agg.HeapBytes()
	}
}

// aggStateName names the streaming aggregation's state in memory limit
// errors.
const aggStateName = "streaming aggregation state"

// extraHeap is the Go-heap bytes of the live state besides its groups'
// (which vector.LiveAggregate reserves itself).
func (s *statefulAggregate) extraHeap() int64 {
	var n int64
	if s.live != nil {
		n = s.live.heapBytes() - s.live.agg.HeapBytes()
	}
	if s.spill != nil {
		n += s.spill.heapBytes()
	}
	return n
}

// Abort: the engine discarded the epoch's store updates, and the live
// state goes with them: the next epoch reloads the version it reads.
func (s *statefulAggregate) Abort() {
	s.state.release()
	s.dropLive()
}

// Close frees the live state (the query stopped): its groups hold
// retained Arrow arrays (a dictionary-encoded key's dictionary) besides
// Go memory and a memory reservation.
func (s *statefulAggregate) Close() error {
	s.dropLive()
	return nil
}

func (s *statefulAggregate) dropLive() {
	if s.live != nil {
		s.live.close()
		s.live = nil
	}
	s.spill = nil
	s.acct.release()
}

// ShouldRunAnotherBatch asks for a no-data epoch whenever the watermark
// the operator sees rose, in Append and Update, whether or not a key is
// event time: Spark's StateStoreSaveExec always has an eviction watermark
// (IncrementalExecution gives it the batch's), so a watermark on a column
// that is not a grouping key still runs the empty epoch, and a query's
// last batch and batch ids follow (SEMANTICS.md §3.5).
func (s *statefulAggregate) ShouldRunAnotherBatch(newWm int64) bool {
	return s.mode != stream.Complete && newWm > s.lastEvictWm
}

func releaseRecords(recs []arrow.Record) {
	for _, r := range recs {
		if r != nil {
			r.Release()
		}
	}
}

func retainAll(recs []arrow.Record) []arrow.Record {
	out := make([]arrow.Record, len(recs))
	for i, r := range recs {
		r.Retain()
		out[i] = r
	}
	return out
}

// Report implements Op.
func (s *statefulAggregate) Report() stream.StateOperatorProgress { return s.progress }

// aggUpserts gives logChanged's changed groups of one partition (ents,
// by position in dirty) to the log as views: each group's kept store
// key, or its key from the epoch's encode (pos) when not kept, and its
// value row (rows, else valCodec's). Kept in the live state's scratch,
// so that handing it allocates nothing.
type aggUpserts struct {
	s         *statefulAggregate
	rows      *vector.GroupValues
	fromWords bool
	pos, ents []int32
}

// Entry implements checkpoint.ChangelogEntries.
func (u *aggUpserts) Entry(j int) ([]byte, []byte) {
	s, l, i := u.s, u.s.live, u.ents[j]
	key := l.keys.of(l.dirty[i])
	if key == nil { // not kept (the arena is full): from the encode
		if u.fromWords {
			key = l.logged.words.Key(int(u.pos[i]))
		} else {
			key = s.keyCodec.at(int(u.pos[i]))
		}
	}
	if u.rows != nil {
		return key, u.rows.Row(int(i))
	}
	return key, s.valCodec.at(int(i))
}

// aggDeletes gives dropStored's evicted groups of one partition (ents,
// by position in gids) to the log as their kept store keys.
type aggDeletes struct {
	keys       *storeKeys
	gids, ents []int32
}

// Entry implements checkpoint.ChangelogEntries.
func (d *aggDeletes) Entry(j int) ([]byte, []byte) { return d.keys.of(d.gids[d.ents[j]]), nil }
