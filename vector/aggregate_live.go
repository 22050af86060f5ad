package vector

import (
	"context"
	"fmt"

	"github.com/apache/arrow/go/v17/arrow"
	"github.com/apache/arrow/go/v17/arrow/array"
	"github.com/apache/arrow/go/v17/arrow/memory"
)

// LiveAggregate is a hash aggregation over partial state (AggMerge) that
// is kept across many inputs instead of being drained once: a streaming
// aggregation's state, decoded, in the form it computes with. Merge folds
// a batch of partial rows into the groups in place and says which group
// each row went to; State returns the partial state of any groups; Delete
// empties groups (evicted ones) so that their ids can be reclaimed by
// Compact. Group ids are dense and stable until Compact renumbers them.
//
// A LiveAggregate is used by one goroutine at a time. Its Go-heap
// structures are reserved through the allocator when it is a
// MemoryReserver (see HeapBytes).
type LiveAggregate struct {
	mem    memory.Allocator
	schema *arrow.Schema // the partial layout, input and output
	spec   AggregateSpec
	b      *boundAggregation
	accs   []liveAccumulator

	rows  []int64  // partial rows merged, by group (min/max validity)
	dead  []bool   // by group: deleted and empty
	nDead int      // groups marked dead
	words []uint64 // fixed-width key: the key word by group
	nulls []bool   // fixed-width key: whether the key is null, by group
	gids  []int32  // scratch
	// Compact's scratch, kept for the next compaction (a windowed
	// aggregation compacts about every epoch): the remap it returns
	// (valid until the next Compact) and the live ids.
	remap, live []int32
	tally       batchTally
	heap        heapAccount
	final       *liveFinal // Final's layout, bound at its first call
}

// NewLiveAggregate returns an empty live aggregation of partial-state rows
// of schema partial (as PartialSchema gives it) whose first nKeys columns
// are the grouping keys, for the aggregate calls aggs (the calls of the
// partial aggregation that made the rows).
func NewLiveAggregate(mem memory.Allocator, partial *arrow.Schema, nKeys int, aggs []AggregateCall) (*LiveAggregate, error) {
	if nKeys < 0 || nKeys > partial.NumFields() {
		return nil, fmt.Errorf("vector: live aggregation of %d key columns over %d columns", nKeys, partial.NumFields())
	}
	keys := make([]NamedExpr, nKeys)
	for i := range keys {
		name := partial.Field(i).Name
		keys[i] = NamedExpr{Name: name, Expr: &ColumnAt{Index: i, Name: name}}
	}
	spec := AggregateSpec{GroupBy: keys, Aggregates: aggs, Mode: AggMerge}
	l := &LiveAggregate{mem: mem, schema: partial, spec: spec, heap: newHeapAccount(mem, "streaming aggregation state")}
	if err := l.bind(); err != nil {
		return nil, err
	}
	if l.b.schema.NumFields() != partial.NumFields() {
		return nil, fmt.Errorf("vector: live aggregation: merged state has %d columns, the partial layout %d", l.b.schema.NumFields(), partial.NumFields())
	}
	for i, f := range l.b.schema.Fields() {
		if !arrow.TypeEqual(f.Type, Unwrap(partial.Field(i).Type)) {
			return nil, fmt.Errorf("vector: live aggregation: merged state column %s is %s, the partial layout's %s", f.Name, TypeName(f.Type), TypeName(partial.Field(i).Type))
		}
	}
	return l, nil
}

func (l *LiveAggregate) bind() error {
	b, err := bindAggregation(l.schema, l.mem, l.spec)
	if err != nil {
		return err
	}
	accs := make([]liveAccumulator, len(b.aggs))
	for i, a := range b.aggs {
		la, ok := a.acc.(liveAccumulator)
		if !ok {
			b.grouper.release()
			return fmt.Errorf("%s is not supported in a streaming aggregation (its state cannot be kept between epochs yet): %w", l.spec.Aggregates[i], ErrType)
		}
		accs[i] = la
	}
	if g, ok := b.grouper.(*wordsGrouper); ok {
		g.noRows = true // l.rows counts them
	}
	l.b, l.accs = b, accs
	l.implyCounts()
	return nil
}

// Schema is the partial layout of the rows Merge takes and State returns.
func (l *LiveAggregate) Schema() *arrow.Schema { return l.schema }

// NumGroups is the number of group ids in use, dead ones included.
func (l *LiveAggregate) NumGroups() int { return l.b.grouper.numGroups() }

// NumLive is the number of groups not deleted.
func (l *LiveAggregate) NumLive() int { return l.NumGroups() - l.nDead }

// IsDead reports whether group g was deleted (and not merged into since).
func (l *LiveAggregate) IsDead(g int32) bool { return int(g) < len(l.dead) && l.dead[g] }

// Merge folds the partial rows of rec (schema Schema) into the groups and
// returns the group of every row, in a slice valid until the next call.
// Groups first seen get the next ids; a deleted group whose key comes
// back is live again.
func (l *LiveAggregate) Merge(ctx context.Context, rec arrow.Record) ([]int32, error) {
	n := int(rec.NumRows())
	l.gids = grow(l.gids, n)
	gids := l.gids[:n]
	if n == 0 {
		return gids, nil
	}
	l.tally.ok = false
	b := l.b
	keys, err := evalAll(ctx, b.keyEvs, rec)
	if err != nil {
		return nil, err
	}
	err = l.assignGroups(ctx, keys, gids)
	releaseArrays(keys)
	if err != nil {
		return nil, err
	}
	l.countRows(gids)
	l.spellCounts(gids)
	groups := b.grouper.numGroups()
	if err := updateAggs(ctx, b.aggs, groups, gids, rec); err != nil {
		return nil, err
	}
	if err := l.heap.set(l.HeapBytes()); err != nil {
		return nil, err
	}
	return gids, nil
}

// noteNewKeys remembers the key words of the groups a fixed-width grouper
// created (ids from before), which its table keeps only by slot.
func (l *LiveAggregate) noteNewKeys(keys []arrow.Array, gids []int32, before int) {
	if _, ok := l.b.grouper.(*fixedGrouper); !ok {
		return
	}
	groups := l.b.grouper.numGroups()
	if groups == before {
		return
	}
	l.words = growZero(l.words, groups)
	l.nulls = growZero(l.nulls, groups)
	col := keys[0]
	for i, g := range gids {
		if int(g) < before {
			continue
		}
		if col.IsNull(i) {
			l.nulls[g] = true
			continue
		}
		l.words[g] = fixedWord(col, i)
	}
}

// fixedWord is KeyEncoder's fixed-path word of row i of a (valid).
func fixedWord(a arrow.Array, i int) uint64 {
	switch x := a.(type) {
	case *array.Int64:
		return uint64(x.Value(i))
	case *array.Timestamp:
		return uint64(x.Value(i))
	case *array.Int32:
		return uint64(int64(x.Value(i)))
	case *array.Date32:
		return uint64(int64(x.Value(i)))
	case *array.Int16:
		return uint64(int64(x.Value(i)))
	case *array.Int8:
		return uint64(int64(x.Value(i)))
	case *array.Float64:
		return floatKey(x.Value(i))
	case *array.Boolean:
		if x.Value(i) {
			return 1
		}
	}
	return 0
}

// State returns the partial state of the groups gids, in that order, as a
// record of Schema (owned by the caller).
func (l *LiveAggregate) State(gids []int32) (arrow.Record, error) {
	b := l.b
	cols := make([]arrow.Array, 0, l.schema.NumFields())
	fail := func(err error) (arrow.Record, error) {
		releaseArrays(cols)
		return nil, err
	}
	groups := b.grouper.numGroups()
	for _, g := range gids {
		if g < 0 || int(g) >= groups {
			return nil, fmt.Errorf("vector: live aggregation: group %d of %d", g, groups)
		}
	}
	keys, err := l.keysAt(gids)
	if err != nil {
		return fail(err)
	}
	cols = append(cols, keys...)
	l.rows = growZero(l.rows, groups)
	for _, a := range l.accs {
		a.resize(groups)
		st, err := a.stateAt(l.mem, gids, l.rows)
		if err != nil {
			return fail(err)
		}
		cols = append(cols, st...)
	}
	rec := array.NewRecord(l.schema, cols, int64(len(gids)))
	releaseArrays(cols)
	return rec, nil
}

// Values returns the state columns of the groups gids (the columns of
// Schema after the keys), in that order, without their keys: a caller
// that keeps the groups' keys encoded already (a streaming aggregation
// logging its changed groups) does not rebuild them. The arrays are
// owned by the caller.
func (l *LiveAggregate) Values(gids []int32) ([]arrow.Array, error) {
	groups := l.b.grouper.numGroups()
	for _, g := range gids {
		if g < 0 || int(g) >= groups {
			return nil, fmt.Errorf("vector: live aggregation: group %d of %d", g, groups)
		}
	}
	var cols []arrow.Array
	l.rows = growZero(l.rows, groups)
	for _, a := range l.accs {
		a.resize(groups)
		st, err := a.stateAt(l.mem, gids, l.rows)
		if err != nil {
			releaseArrays(cols)
			return nil, err
		}
		cols = append(cols, st...)
	}
	return cols, nil
}

// Keys returns the key columns of the groups gids (dead ones included),
// in that order, without their accumulators: a caller that needs only
// the keys of some groups (a streaming aggregation encoding the store keys
// of the groups new in an epoch) does not gather their state. The arrays
// are owned by the caller.
func (l *LiveAggregate) Keys(gids []int32) ([]arrow.Array, error) {
	groups := l.b.grouper.numGroups()
	for _, g := range gids {
		if g < 0 || int(g) >= groups {
			return nil, fmt.Errorf("vector: live aggregation: group %d of %d", g, groups)
		}
	}
	return l.keysAt(gids)
}

// keysAt returns the key columns of the groups gids.
func (l *LiveAggregate) keysAt(gids []int32) ([]arrow.Array, error) {
	switch g := l.b.grouper.(type) {
	case *globalGrouper:
		return nil, nil
	case *fixedGrouper:
		var nulls []bool
		if g.t.nullGid >= 0 {
			nulls = gatherOf(l.nulls, gids)
		}
		a, err := g.enc.DecodeFixed(l.mem, gatherOf(l.words, gids), nulls)
		if err != nil {
			return nil, err
		}
		return []arrow.Array{a}, nil
	case *wordsGrouper:
		return g.keysOf(l.mem, gids)
	case *bytesGrouper:
		views := g.keyViews(gids)
		cols, err := g.enc.DecodeKeys(l.mem, views)
		clear(views) // the arena may move: hold none of it
		return cols, err
	}
	return nil, fmt.Errorf("vector: live aggregation over a %T", l.b.grouper)
}

// Delete empties the groups gids and marks them dead: State still serves
// them (as empty) until Compact, and a later Merge of their key takes the
// same id again.
func (l *LiveAggregate) Delete(gids []int32) {
	groups := l.b.grouper.numGroups()
	l.rows = growZero(l.rows, groups)
	l.dead = growZero(l.dead, groups)
	for _, a := range l.accs {
		a.resize(groups)
		a.reset(gids)
	}
	for _, g := range gids {
		l.rows[g] = 0
		if !l.dead[g] {
			l.dead[g] = true
			l.nDead++
		}
	}
}

// ShouldCompact reports whether dead groups hold at least half of the ids
// (and enough of them that renumbering pays).
func (l *LiveAggregate) ShouldCompact() bool {
	return l.nDead >= 1024 && 2*l.nDead >= l.NumGroups()
}

// ShouldCompactFor is ShouldCompact, or true when adding more new groups
// would grow the grouper's table and dropping the dead groups first would
// not (at least 1024 of them), for a state that adds at most a quarter
// of its live groups at a time. A state whose dead groups stay under half
// (a sliding window's panes: each epoch adds a few hundred of several
// thousand and drops as many a few epochs later) otherwise doubled its
// table once the dead ones filled it — fresh memory faulted in for ids
// that were about to go — where a compaction rehashes into the table it
// has. A state renewed in large shares (a tumbling window: half its
// groups each epoch) reaches ShouldCompact by itself at its next
// eviction; compacting it early as well would only add a pass.
func (l *LiveAggregate) ShouldCompactFor(adding int) bool {
	if l.ShouldCompact() {
		return true
	}
	r, ok := l.b.grouper.(interface{ room() int })
	if !ok || l.nDead < 1024 || adding <= 0 || 4*adding > l.NumLive() {
		return false
	}
	room := r.room()
	return room < adding && room+l.nDead >= adding
}

// Compact drops the dead groups: the live ones are renumbered densely in
// their old order, and remap gives the new id of every old one (-1 for a
// dead group). It moves the live groups down in place when the grouper and
// accumulators can (see compactInPlace), and otherwise costs one State and
// one Merge of the live groups. remap is l's: it stays valid until the
// next Compact, which reuses its memory.
func (l *LiveAggregate) Compact(ctx context.Context) (remap []int32, err error) {
	l.tally.ok = false // its ids are renumbered
	groups := l.NumGroups()
	// Every entry of remap is written below, and live is refilled from
	// empty: nothing of the last compaction is read.
	l.remap = grow(l.remap, groups)
	remap = l.remap
	l.live = grow(l.live, groups-l.nDead)[:0]
	live := l.live
	for g := 0; g < groups; g++ {
		if l.IsDead(int32(g)) {
			remap[g] = -1
			continue
		}
		remap[g] = int32(len(live))
		live = append(live, int32(g))
	}
	l.live = live
	if !l.compactInPlace(live) {
		if err := l.rebuild(ctx, live); err != nil {
			return nil, err
		}
	}
	if err := l.heap.set(l.HeapBytes()); err != nil {
		return nil, err
	}
	return remap, nil
}

// rebuild replaces the groups with the groups live (ascending ids),
// renumbered in order, by merging their state into fresh structures.
func (l *LiveAggregate) rebuild(ctx context.Context, live []int32) error {
	rec, err := l.State(live)
	if err != nil {
		return err
	}
	defer rec.Release()
	fresh := &LiveAggregate{mem: l.mem, schema: l.schema, spec: l.spec, heap: l.heap}
	if err := fresh.bind(); err != nil {
		return err
	}
	if _, err := fresh.Merge(ctx, rec); err != nil {
		fresh.b.grouper.release()
		return err
	}
	// The old structures go; the accounting carries over to the new ones.
	l.b.grouper.release()
	*l = *fresh
	return nil
}

// HeapBytes is the Go-heap memory of the groups: tables, keys,
// accumulators and bookkeeping (string values by their headers).
func (l *LiveAggregate) HeapBytes() int64 {
	return l.b.heapBytes(l.gids) + sliceBytes(l.rows) + sliceBytes(l.dead) + sliceBytes(l.words) + sliceBytes(l.nulls) + l.tally.heapBytes() +
		sliceBytes(l.remap) + sliceBytes(l.live)
}

// Close lets go of the state and its memory reservation.
func (l *LiveAggregate) Close() {
	if l.b == nil {
		return
	}
	l.b.grouper.release()
	l.b, l.accs, l.final = nil, nil, nil
	l.rows, l.dead, l.words, l.nulls, l.gids = nil, nil, nil, nil, nil
	l.remap, l.live = nil, nil
	l.tally = batchTally{}
	l.heap.release()
}

// assignGroups puts each row of keys into its group (gids[i]): groups
// first seen get the next ids and their state room, and their keys are
// noted.
func (l *LiveAggregate) assignGroups(ctx context.Context, keys []arrow.Array, gids []int32) error {
	b := l.b
	before := b.grouper.numGroups()
	if err := groupContextOf(ctx, b.grouper, keys, gids); err != nil {
		return err
	}
	if err := l.growGroups(ctx); err != nil {
		return err
	}
	l.noteNewKeys(keys, gids, before)
	return nil
}
