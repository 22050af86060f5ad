package stateful

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"runtime"
	"slices"
	"time"
	"unsafe"

	"github.com/apache/arrow/go/v17/arrow"
	"github.com/apache/arrow/go/v17/arrow/array"
	"github.com/apache/arrow/go/v17/arrow/memory"

	"github.com/arrowstream/arrowstream/arrowstream/stream"
	"github.com/arrowstream/arrowstream/vector"
)

// statefulSessionWindow is the streaming session-window aggregation
// (Spark's SessionWindowStateStoreRestore/Save pair, SEMANTICS §4.2). State
// is one row per grouping key (the keys other than the session): the key's
// open sessions sorted by start, each with its partial aggregate state.
// Each epoch the input's sessions [t, t+gap) are partially aggregated,
// merged with the stored sessions of the same keys when they overlap
// inclusively (touching sessions merge), saved, and emitted per mode:
// Append emits and removes the sessions whose end ≤ W_evict (input rows
// whose own session ends at or before W_late are dropped as late);
// Complete emits every session every epoch and never evicts.
type statefulSessionWindow struct {
	mem     memory.Allocator
	opID    int
	spec    vector.AggregateSpec // over the operator's input; Mode ignored
	mode    stream.OutputMode
	nKeys   int
	sk      int // session key among the grouping keys (partial layout)
	sessCol int // session column of the operator's input
	// timed: the session's time column carries the watermark; only then
	// are late rows dropped and sessions evicted (Append).
	timed bool
	// premergeable: the aggregates merge the same in any order, so the
	// epoch's rows are merged among themselves first (premerge).
	premergeable bool
	// noDecoded keeps the sessions encoded between epochs (decoded and
	// merged again each epoch): the path of the aggregates a live
	// aggregation cannot hold, forced by tests to compare both.
	noDecoded bool
	// noWordKeys numbers a single integral key as any fixed-width one
	// (key index, key codec), forced by tests to compare both.
	noWordKeys bool

	input         *arrow.Schema // the operator's input
	partialSchema *arrow.Schema
	groupCols     []int     // partial columns of the state key
	valCols       []int     // partial columns of a stored session: the session, then the aggregate states
	keyCodec      *rowCodec // groupCols
	valCodec      *rowCodec // valCols
	// partCodecs are each partition's own codecs (encoders keep scratch
	// buffers), for the partitions processed in parallel.
	partCodecs []codecPair
	// scratch is the premerge's buffers, groupScratch each merge group's
	// (kept between epochs).
	scratch      sessionScratch
	groupScratch []*sessionScratch

	state statePartitions
	log   changelogState // the changelog write path, when the stores take it

	lastEvictWm int64
	hasWm       bool
	// index holds the stored sessions live, counts them and indexes them
	// by end (nil until the first epoch loads it); pending is the
	// version it mirrors once this epoch commits.
	index    *sessionIndex
	pending  int64
	progress stream.StateOperatorProgress
	// acct reserves the index's Go-heap bytes (the live sessions
	// included) against the query's limit.
	acct stateAccount
	// views reserves the live snapshot views handed to the stores.
	views viewAccount
	// snapSpare keeps a released live snapshot's buffers for the next.
	snapSpare *sessionSnapSpare
	// finalSchema is the output layout, bound once (finalLayout);
	// noLiveFinal: evicted decoded sessions are finalized from partial
	// rows (an aggregate the live aggregate cannot finalize by group).
	finalSchema *arrow.Schema
	noLiveFinal bool
	// keep is the late-row filter's selection, kept between records.
	keep []int32
}

func newStatefulSessionWindow(mem memory.Allocator, opID int, input *arrow.Schema, spec vector.AggregateSpec, sk, sessCol int, timed bool, mode stream.OutputMode) (*statefulSessionWindow, error) {
	spec.Mode = vector.AggPartial
	partial, err := vector.PartialSchema(input, spec)
	if err != nil {
		return nil, err
	}
	if !arrow.TypeEqual(vector.Unwrap(partial.Field(sk).Type), vector.WindowType) {
		return nil, fmt.Errorf("arrowstream: session key %s is a %s, not a session window", partial.Field(sk).Name, vector.TypeName(partial.Field(sk).Type))
	}
	s := &statefulSessionWindow{
		mem: mem, opID: opID, spec: spec, mode: mode, nKeys: len(spec.GroupBy), sk: sk, sessCol: sessCol, timed: timed,
		input: input, partialSchema: partial, lastEvictWm: -1, premergeable: premergeable(spec),
		state: statePartitions{opID: opID},
	}
	s.acct = newStateAccount(mem, "session window state")
	s.views = newViewAccount(mem, "session window state")
	s.snapSpare = &sessionSnapSpare{}
	s.valCols = []int{sk}
	for i := 0; i < partial.NumFields(); i++ {
		switch {
		case i == sk:
		case i < s.nKeys:
			s.groupCols = append(s.groupCols, i)
		default:
			s.valCols = append(s.valCols, i)
		}
	}
	if s.keyCodec, err = newRowCodec(mem, partial, s.groupCols); err != nil {
		return nil, err
	}
	if s.valCodec, err = newValueCodec(mem, partial, s.valCols); err != nil {
		return nil, err
	}
	s.state.schema = describeState("sessionWindow", s.keyCodec.schema, s.valCodec.schema)
	return s, nil
}

func (s *statefulSessionWindow) Report() stream.StateOperatorProgress { return s.progress }

// sessionBounds returns the start and end (µs) of the session column of
// rec at column col.
func sessionBounds(rec arrow.Record, col int) (starts, ends []arrow.Timestamp) {
	st := rec.Column(col).(*array.Struct)
	return st.Field(0).(*array.Timestamp).TimestampValues(), st.Field(1).(*array.Timestamp).TimestampValues()
}

func (s *statefulSessionWindow) Execute(ctx context.Context, ep Epoch, input vector.Operator) (vector.Operator, error) {
	start := time.Now()
	s.progress = stream.StateOperatorProgress{OperatorName: "sessionWindowStateStoreSaveExec"}
	if err := s.state.bind(ep); err != nil {
		input.Close()
		return nil, err
	}
	s.log.bind(&s.state)
	if s.index != nil && s.index.logged != s.log.on() {
		s.dropIndex() // the stores changed write path: rebuild
	}
	if err := s.loadIndex(ctx, ep.ID); err != nil {
		input.Close()
		return nil, err
	}
	if s.log.on() && len(s.log.rows) != len(s.state.stores) {
		s.log.rows = s.index.keyCounts(len(s.state.stores))
	}
	s.index.version, s.pending = -1, ep.ID+1
	recs, err := vector.Drain(ctx, input)
	schema := input.Schema()
	input.Close()
	if err != nil {
		return nil, err
	}
	if s.mode == stream.Append && s.timed && ep.HasWatermark {
		dropped, err := s.dropLateSessions(recs, arrow.Timestamp(ep.LateWatermarkMs*1000))
		s.progress.NumRowsDroppedByWatermark += dropped
		if err != nil {
			releaseRecords(recs)
			return nil, err
		}
	}
	if d := s.index.dec; d != nil {
		d.begin(s.snapSpare.idle())
		batches, err := s.sessionBatches(ctx, schema, recs)
		if err != nil {
			return nil, err
		}
		err = s.mergeDecoded(ctx, batches)
		releaseSessionBatches(batches)
		if err != nil {
			return nil, err
		}
	} else {
		partials, err := s.partials(ctx, schema, recs)
		if err != nil {
			return nil, err
		}
		if partials, err = s.premerge(ctx, partials); err != nil {
			return nil, err
		}
		err = s.mergeAndSave(ctx, partials)
		releaseRecords(partials)
		if err != nil {
			return nil, err
		}
	}
	s.progress.AllUpdatesTimeMs = time.Since(start).Milliseconds()

	var out []arrow.Record
	final := false // out holds final rows (evicted decoded sessions)
	switch s.mode {
	case stream.Append:
		if s.timed && ep.HasWatermark {
			if s.index.dec != nil {
				out, final, err = s.evictDecoded(ctx, ep.WatermarkMs)
			} else {
				out, err = s.evictIndexed(ctx, ep.WatermarkMs)
			}
		}
	default:
		out, err = s.allState()
	}
	if err == nil && s.index.dec != nil {
		err = s.saveDecoded(s.index.dec)
	}
	if err == nil && s.log.on() {
		if err = s.log.finish(s.opID); err == nil {
			err = s.offerLive()
		}
	}
	if err != nil {
		releaseRecords(out)
		return nil, err
	}
	if err := s.acct.set(s.index.bytes()); err != nil {
		releaseRecords(out)
		return nil, err
	}
	s.lastEvictWm, s.hasWm = ep.WatermarkMs, ep.HasWatermark
	return s.output(out, final)
}

// dropLateSessions drops the rows of recs whose session ends at or
// before limit (late), replacing the records that have any and returning
// how many were dropped. Most epochs have none: one read of the ends
// finds that, with no selection built; the selection of a record that
// has some reuses s.keep.
func (s *statefulSessionWindow) dropLateSessions(recs []arrow.Record, limit arrow.Timestamp) (int64, error) {
	late := false
	for _, rec := range recs {
		_, ends := sessionBounds(rec, s.sessCol)
		if firstLate(ends, limit) < len(ends) {
			late = true
			break
		}
	}
	if !late {
		return 0, nil
	}
	return dropLate(s.mem, recs, func(rec arrow.Record) []int32 {
		_, ends := sessionBounds(rec, s.sessCol)
		first := firstLate(ends, limit)
		keep := slices.Grow(s.keep[:0], len(ends))
		for r := range first {
			keep = append(keep, int32(r))
		}
		for r := first; r < len(ends); r++ {
			if ends[r] > limit {
				keep = append(keep, int32(r))
			}
		}
		s.keep = keep
		if cap(s.keep) > maxKeptSessionRefs {
			s.keep = nil // a burst: not kept
		}
		return keep
	})
}

// firstLate returns the first row of ends at or before limit (len(ends):
// none).
func firstLate(ends []arrow.Timestamp, limit arrow.Timestamp) int {
	for r, e := range ends {
		if e <= limit {
			return r
		}
	}
	return len(ends)
}

// sessionRef is one session row (stored or new) of one grouping key.
type sessionRef struct {
	start, end arrow.Timestamp
	key        int32 // the key's number in this epoch
	rec, row   int32
}

// sessionEntry is one stored session: its end (µs, kept beside the
// encoded row so that eviction and counting need not decode) and the
// encoded row of valCols (the session, then the aggregate states).
type sessionEntry struct {
	end int64
	val []byte
}

// joinSessions frames a key's sessions into one state value: per session
// uvarint(len(val)), the end as 8 bytes little-endian, val.
func joinSessions(es []sessionEntry) []byte {
	n := 0
	for _, e := range es {
		n += len(e.val) + binary.MaxVarintLen32 + 8
	}
	out := make([]byte, 0, n)
	for _, e := range es {
		out = appendSession(out, e.end, e.val)
	}
	return out
}

// appendSession appends one session's frame (joinSessions) to out.
func appendSession(out []byte, end int64, val []byte) []byte {
	out = binary.AppendUvarint(out, uint64(len(val)))
	out = binary.LittleEndian.AppendUint64(out, uint64(end))
	return append(out, val...)
}

// splitSessions parses a state value; the entries' bytes alias v.
func splitSessions(v []byte) ([]sessionEntry, error) {
	var out []sessionEntry
	for len(v) > 0 {
		n, w := binary.Uvarint(v)
		if w <= 0 || uint64(len(v)-w) < n+8 {
			return nil, fmt.Errorf("corrupt session list")
		}
		end := int64(binary.LittleEndian.Uint64(v[w:]))
		out = append(out, sessionEntry{end: end, val: v[w+8 : w+8+int(n)]})
		v = v[w+8+int(n):]
	}
	return out, nil
}

// codecsFor returns partition p's own codecs, creating them on first use.
func (s *statefulSessionWindow) codecsFor(p int) (codecPair, error) {
	for len(s.partCodecs) <= p {
		k, err := newRowCodec(s.mem, s.partialSchema, s.groupCols)
		if err != nil {
			return codecPair{}, err
		}
		v, err := newValueCodec(s.mem, s.partialSchema, s.valCols)
		if err != nil {
			return codecPair{}, err
		}
		s.partCodecs = append(s.partCodecs, codecPair{k, v})
	}
	return s.partCodecs[p], nil
}

// mergeAndSave splits the epoch's partial rows by their key's partition
// and merges them with the stored sessions of the keys they touch. The
// partitions are merged in groups of consecutive partitions (at most
// GOMAXPROCS groups, balanced by rows, run in parallel), each group with
// its own codecs: one merge per group instead of one per partition, so
// that an epoch of a few rows per partition (200 shuffle partitions) pays
// the merge's fixed costs (key numbering, decode, the merge's hash
// aggregation, goroutines) a few times, not 200 times. A key belongs to
// one partition, so a group's merge gives each partition what its own
// merge gave.
func (s *statefulSessionWindow) mergeAndSave(ctx context.Context, partials []arrow.Record) error {
	n := len(s.state.stores)
	var byPart [][]arrow.Record
	if n == 1 {
		byPart = [][]arrow.Record{retainAll(partials)}
	} else {
		var err error
		if byPart, err = splitByPartition(s.mem, s.state.scheme, s.keyCodec, partials, n); err != nil {
			return err
		}
	}
	defer func() {
		for _, recs := range byPart {
			releaseRecords(recs)
		}
	}()
	groups := sessionMergeGroups(byPart, runtime.GOMAXPROCS(0))
	codecs := make([]codecPair, len(groups))
	for g := range codecs {
		var err error
		if codecs[g], err = s.codecsFor(g); err != nil {
			return err
		}
	}
	for len(s.groupScratch) < len(groups) {
		s.groupScratch = append(s.groupScratch, &sessionScratch{})
	}
	rows := make([]int64, len(groups))
	deltas := make([]sessionDelta, n)
	errs := runEachPartition(s.opID, len(groups), func(int) bool { return true }, func(g int) error {
		var err error
		rows[g], err = s.mergeGroup(ctx, groups[g], codecs[g], s.groupScratch[g], deltas)
		return err
	})
	for g := range rows {
		s.progress.NumRowsUpdated += rows[g]
	}
	if err := errors.Join(errs...); err != nil {
		return err
	}
	s.index.apply(deltas, s.indexed())
	return nil
}

// windowArray builds a window struct column (no nulls) from its bounds,
// each field one bulk copy.
func windowArray(mem memory.Allocator, starts, ends []arrow.Timestamp) arrow.Array {
	fields := make([]arrow.ArrayData, 2)
	for i, vals := range [][]arrow.Timestamp{starts, ends} {
		b := array.NewTimestampBuilder(mem, vector.WindowType.Field(i).Type.(*arrow.TimestampType))
		b.AppendValues(vals, nil)
		a := b.NewArray()
		b.Release()
		fields[i] = a.Data()
		defer a.Release()
	}
	d := array.NewData(vector.WindowType, len(starts), []*memory.Buffer{nil}, fields, 0, 0)
	defer d.Release()
	return array.MakeFromData(d)
}

// stateSpec is the aggregation over partial-state input.
func (s *statefulSessionWindow) stateSpec(mode vector.AggMode) vector.AggregateSpec {
	return partialStateSpec(s.partialSchema, s.nKeys, s.spec.Aggregates, mode)
}

// decodeState turns stored sessions (state key and encoded row per
// session) into one record of the partial layout.
func (s *statefulSessionWindow) decodeState(c codecPair, keys, vals [][]byte) (arrow.Record, error) {
	k, err := c.key.decode(s.mem, keys)
	if err != nil {
		return nil, fmt.Errorf("arrowstream: state of operator %d: decode keys: %w", s.opID, err)
	}
	v, err := c.val.decode(s.mem, vals)
	if err != nil {
		for _, a := range k {
			a.Release()
		}
		return nil, fmt.Errorf("arrowstream: state of operator %d: decode sessions: %w", s.opID, err)
	}
	cols := make([]arrow.Array, s.partialSchema.NumFields())
	for i, col := range s.groupCols {
		cols[col] = k[i]
	}
	for i, col := range s.valCols {
		cols[col] = v[i]
	}
	rec := array.NewRecord(s.partialSchema, cols, int64(len(keys)))
	for _, a := range cols {
		a.Release()
	}
	return rec, nil
}

// allState returns every stored session (partial layout): Complete
// mode's every-epoch read, from the live sessions (in no particular
// order, as the stores' was not either).
func (s *statefulSessionWindow) allState() ([]arrow.Record, error) {
	if s.index.dec != nil {
		return s.allDecoded()
	}
	if !s.index.live.on() {
		return s.storedState()
	}
	var keys, vals [][]byte
	for p, m := range s.index.live.parts {
		for k, v := range m {
			entries, err := splitSessions(v)
			if err != nil {
				return nil, fmt.Errorf("arrowstream: state of operator %d partition %d: %w", s.opID, p, err)
			}
			kb := unsafe.Slice(unsafe.StringData(k), len(k))
			for _, en := range entries {
				keys = append(keys, kb)
				vals = append(vals, en.val)
			}
		}
	}
	if len(keys) == 0 {
		return nil, nil
	}
	rec, err := s.decodeState(codecPair{s.keyCodec, s.valCodec}, keys, vals)
	if err != nil {
		return nil, err
	}
	return []arrow.Record{rec}, nil
}

// storedState is allState read from the stores (sessions not live).
func (s *statefulSessionWindow) storedState() ([]arrow.Record, error) {
	var keys, vals [][]byte
	var err error
	for p, st := range s.state.stores {
		rangeErr := st.Range(func(k, v []byte) bool {
			entries, e := splitSessions(v)
			if e != nil {
				err = fmt.Errorf("arrowstream: state of operator %d partition %d: %w", s.opID, p, e)
				return false
			}
			for _, en := range entries {
				keys = append(keys, k)
				vals = append(vals, en.val)
			}
			return true
		})
		if rangeErr != nil {
			return nil, fmt.Errorf("arrowstream: read state of operator %d partition %d: %w", s.opID, p, rangeErr)
		}
		if err != nil {
			return nil, err
		}
	}
	if len(keys) == 0 {
		return nil, nil
	}
	rec, err := s.decodeState(codecPair{s.keyCodec, s.valCodec}, keys, vals)
	if err != nil {
		return nil, err
	}
	return []arrow.Record{rec}, nil
}

// finalize turns partial-state records into final rows (owned records are
// consumed).
func (s *statefulSessionWindow) finalize(recs []arrow.Record) (vector.Operator, error) {
	return finalizePartial(s.mem, s.partialSchema, s.stateSpec(vector.AggFinal), recs)
}

func (s *statefulSessionWindow) State() StateDecl { return s.state.decl() }

// Committed fills the progress; numRowsTotal counts stored sessions (as
// Spark's, one state row per session), not grouping keys.
func (s *statefulSessionWindow) Committed(c StateCommit) {
	s.state.committed(&s.progress, c)
	if s.index != nil {
		s.progress.NumRowsTotal = s.index.count
		s.progress.MemoryUsedBytes += s.index.bytes()
		if s.index.dec != nil {
			s.progress.MemoryUsedBytes += s.index.dec.agg.HeapBytes()
		}
		s.index.version = s.pending
	}
	s.acct.report(&s.progress.CustomMetrics)
}

// Abort: the epoch's updates were discarded; the index is rebuilt from
// the version the next epoch reads.
func (s *statefulSessionWindow) Abort() {
	s.state.release()
	s.dropIndex()
	s.acct.release()
}

// Close lets go of the index and its reservation (the query stopped).
func (s *statefulSessionWindow) Close() error {
	s.dropIndex()
	s.acct.release()
	s.snapSpare.close()
	return nil
}

func (s *statefulSessionWindow) ShouldRunAnotherBatch(newWm int64) bool {
	return s.mode == stream.Append && s.timed && s.hasWm && newWm > s.lastEvictWm
}
