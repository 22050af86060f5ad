package stateful

import (
	"context"
	"fmt"
	"time"

	"github.com/apache/arrow/go/v17/arrow"
	"github.com/apache/arrow/go/v17/arrow/array"
	"github.com/apache/arrow/go/v17/arrow/memory"

	"github.com/arrowstream/arrowstream/arrowstream/stream"
	"github.com/arrowstream/arrowstream/vector"
)

// statefulAggregate is a streaming aggregation (Spark's StateStoreRestore →
// StateStoreSave pair). Each epoch it partially aggregates the epoch's input,
// merges the partial state with what the state store holds for the same
// keys (state partitioned by key hash), saves the merged state (version
// epoch+1) and emits per output mode:
//
//   - Complete: every group, every epoch; never evicts, never drops late rows.
//   - Update: the groups changed in this epoch; with a watermarked time key,
//     groups whose time is at or below the eviction watermark are then
//     removed silently, and late input is dropped.
//   - Append: only groups that can no longer change — those whose time key
//     is at or below the eviction watermark — emitted once, then removed.
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
	// partCodecs are each partition's own codecs (encoders keep scratch
	// buffers), for the partitions processed in parallel.
	partCodecs []codecPair

	state statePartitions

	lastEvictWm int64
	// cleanEpoch and cleanWm say that the state epoch cleanEpoch reads
	// holds no group at or below watermark cleanWm (0: not known), so
	// that an epoch whose watermark has not moved need not scan the whole
	// state for groups to evict (see evictDue).
	cleanEpoch, cleanWm int64
	progress            stream.StateOperatorProgress
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
	if s.valCodec, err = newRowCodec(mem, partial, valCols); err != nil {
		return nil, err
	}
	s.keyCols, s.valCols = keyCols, valCols
	s.state.schema = describeState("aggregate", s.keyCodec.schema, s.valCodec.schema)
	return s, nil
}

// keyTimes returns, for each row of rec (partial layout), the time of the
// watermark key in microseconds and whether it is null.
func (s *statefulAggregate) keyTimes(rec arrow.Record) ([]arrow.Timestamp, arrow.Array) {
	col := rec.Column(s.timeKey)
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
	partials, err := partialAggregate(ctx, s.mem, input, s.spec)
	if err != nil {
		return nil, err
	}
	defer releaseRecords(partials)
	if s.timeKey >= 0 && s.mode != stream.Complete && ep.HasWatermark {
		dropped, err := dropLate(s.mem, partials, func(rec arrow.Record) []int32 {
			keep, _ := s.selectByTime(rec, ep.LateWatermarkMs, false)
			return keep
		})
		s.progress.NumRowsDroppedByWatermark += dropped
		if err != nil {
			return nil, err
		}
	}
	merged, err := s.mergeAndSave(ctx, partials)
	if err != nil {
		return nil, err
	}
	defer releaseRecords(merged)
	s.progress.AllUpdatesTimeMs = time.Since(start).Milliseconds()

	var out []arrow.Record
	switch s.mode {
	case stream.Complete:
		out, err = s.allState()
	case stream.Update:
		out = retainAll(merged)
		if s.timeKey >= 0 && ep.HasWatermark && s.evictDue(ep, merged) {
			var evicted []arrow.Record
			evicted, err = s.evict(ep.WatermarkMs)
			releaseRecords(evicted)
		}
	case stream.Append:
		if s.timeKey >= 0 && ep.HasWatermark && s.evictDue(ep, merged) {
			out, err = s.evict(ep.WatermarkMs)
		}
	}
	if err == nil && s.timeKey >= 0 && ep.HasWatermark && s.mode != stream.Complete {
		// Whether evicted now or proved clean: once this epoch commits,
		// the state the next epoch reads holds nothing at or below the
		// watermark.
		s.cleanEpoch, s.cleanWm = ep.ID+1, ep.WatermarkMs
	}
	if err != nil {
		releaseRecords(out)
		return nil, err
	}
	s.lastEvictWm = ep.WatermarkMs
	return s.finalize(out)
}

// mergeWithState merges this epoch's partial rows with the stored state of
// the same keys (old state first, so first/last keep input order).
func (s *statefulAggregate) mergeWithState(ctx context.Context, partials []arrow.Record, c codecPair) ([]arrow.Record, error) {
	var oldKeys, oldVals [][]byte
	matched := make([][]int32, len(partials)) // rows with stored state, per record
	for r, rec := range partials {
		if err := c.key.encode(rec); err != nil {
			return nil, err
		}
		for i := 0; i < int(rec.NumRows()); i++ {
			key := c.key.at(i)
			v, ok, err := s.state.storeOf(c.key, i).Get(key)
			if err != nil {
				return nil, fmt.Errorf("arrowstream: read state of operator %d: %w", s.opID, err)
			}
			if ok {
				oldKeys = append(oldKeys, append([]byte(nil), key...))
				oldVals = append(oldVals, v)
				matched[r] = append(matched[r], int32(i))
			}
		}
	}
	if out, ok, err := s.mergeOnlyMatched(ctx, partials, matched, len(oldKeys), c, oldKeys, oldVals); ok || err != nil {
		return out, err
	}
	inputs := make([]arrow.Record, 0, len(partials)+1)
	if len(oldKeys) > 0 {
		old, err := s.decodeStateWith(c, oldKeys, oldVals)
		if err != nil {
			return nil, err
		}
		defer old.Release()
		inputs = append(inputs, old)
	}
	inputs = append(inputs, partials...)
	scan, err := vector.NewScan(s.partialSchema, inputs...)
	if err != nil {
		return nil, err
	}
	mergeSpec := s.stateSpec(vector.AggMerge)
	op, err := vector.NewHashAggregate(s.mem, scan, mergeSpec)
	if err != nil {
		scan.Close()
		return nil, err
	}
	defer op.Close()
	return vector.Drain(ctx, op)
}

// stateSpec is the aggregation over partial-state input.
func (s *statefulAggregate) stateSpec(mode vector.AggMode) vector.AggregateSpec {
	return partialStateSpec(s.partialSchema, s.nKeys, s.spec.Aggregates, mode)
}

func (s *statefulAggregate) decodeState(keys, vals [][]byte) (arrow.Record, error) {
	return s.decodeStateWith(codecPair{s.keyCodec, s.valCodec}, keys, vals)
}

func (s *statefulAggregate) decodeStateWith(c codecPair, keys, vals [][]byte) (arrow.Record, error) {
	k, err := c.key.decode(s.mem, keys)
	if err != nil {
		return nil, fmt.Errorf("arrowstream: state of operator %d: decode keys: %w", s.opID, err)
	}
	v, err := c.val.decode(s.mem, vals)
	if err != nil {
		for _, a := range k {
			a.Release()
		}
		return nil, fmt.Errorf("arrowstream: state of operator %d: decode values: %w", s.opID, err)
	}
	return assemble(s.partialSchema, k, v, len(keys)), nil
}

// save writes merged rows to their partitions' stores and returns how many
// it wrote.
func (s *statefulAggregate) save(merged []arrow.Record, c codecPair) (int64, error) {
	var n int64
	for _, rec := range merged {
		if err := c.key.encode(rec); err != nil {
			return n, err
		}
		if err := c.val.encode(rec); err != nil {
			return n, err
		}
		for i := 0; i < int(rec.NumRows()); i++ {
			if err := s.state.storeOf(c.key, i).Put(c.key.at(i), c.val.at(i)); err != nil {
				return n, fmt.Errorf("arrowstream: write state of operator %d: %w", s.opID, err)
			}
		}
		n += rec.NumRows()
	}
	return n, nil
}

// allState returns every stored group (partial layout).
func (s *statefulAggregate) allState() ([]arrow.Record, error) {
	var keys, vals [][]byte
	if err := s.state.rangeAll(func(k, v []byte) bool {
		keys = append(keys, k)
		vals = append(vals, v)
		return true
	}); err != nil {
		return nil, err
	}
	if len(keys) == 0 {
		return nil, nil
	}
	rec, err := s.decodeState(keys, vals)
	if err != nil {
		return nil, err
	}
	return []arrow.Record{rec}, nil
}

// evictDue says whether evict(ep.WatermarkMs) could find anything: it
// could not when the state this epoch read was left clean at or above this
// watermark by the epoch before (cleanEpoch; a re-run or a restarted query
// does not match it) and none of this epoch's merged groups is at or below
// it. In a steady stream that is every data batch: the no-data batch
// before it already evicted at the same watermark, and evict scans and
// decodes the whole state. (When the watermark has not moved, the late
// watermark equals it and late rows are dropped before merging, so the
// merged-groups check cannot fire today; it keeps the skip correct should
// late rows ever be kept, and costs one pass over the merged groups.)
func (s *statefulAggregate) evictDue(ep Epoch, merged []arrow.Record) bool {
	if s.cleanEpoch == 0 || s.cleanEpoch != ep.ID || ep.WatermarkMs > s.cleanWm {
		return true
	}
	for _, rec := range merged {
		if sel, _ := s.selectByTime(rec, ep.WatermarkMs, true); len(sel) > 0 {
			return true
		}
	}
	return false
}

// evict removes the groups whose time key is at or below the watermark and
// returns them (partial layout).
func (s *statefulAggregate) evict(wmMs int64) ([]arrow.Record, error) {
	start := time.Now()
	all, err := s.allState()
	if err != nil || len(all) == 0 {
		return nil, err
	}
	defer releaseRecords(all)
	sel, _ := s.selectByTime(all[0], wmMs, true)
	if len(sel) == 0 {
		return nil, nil
	}
	gone, err := vector.TakeRecord(s.mem, all[0], sel)
	if err != nil {
		return nil, err
	}
	if err := s.keyCodec.encode(gone); err != nil {
		gone.Release()
		return nil, err
	}
	for i := 0; i < int(gone.NumRows()); i++ {
		if err := s.state.storeOf(s.keyCodec, i).Delete(s.keyCodec.at(i)); err != nil {
			gone.Release()
			return nil, fmt.Errorf("arrowstream: delete state of operator %d: %w", s.opID, err)
		}
	}
	s.progress.NumRowsRemoved += gone.NumRows()
	s.progress.AllRemovalsTimeMs += time.Since(start).Milliseconds()
	return []arrow.Record{gone}, nil
}

// finalize turns partial-state records into final rows (owned records are
// consumed).
func (s *statefulAggregate) finalize(recs []arrow.Record) (vector.Operator, error) {
	return finalizePartial(s.mem, s.partialSchema, s.stateSpec(vector.AggFinal), recs)
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

func (s *statefulAggregate) Committed(c StateCommit) { s.state.committed(&s.progress, c) }

func (s *statefulAggregate) Abort() { s.state.release() }

func (s *statefulAggregate) ShouldRunAnotherBatch(newWm int64) bool {
	return s.mode != stream.Complete && s.timeKey >= 0 && newWm > s.lastEvictWm
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
