package stateful

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/apache/arrow/go/v17/arrow"
	"github.com/apache/arrow/go/v17/arrow/array"
	"github.com/apache/arrow/go/v17/arrow/memory"

	"github.com/arrowstream/arrowstream/arrowstream/stream"
	"github.com/arrowstream/arrowstream/plan"
	"github.com/arrowstream/arrowstream/vector"
)

// Eviction kinds of a join side's state (docs/semantics.md §7).
const (
	evictNever = iota
	evictKey   // an event-time (or window) column is a join key: time ≤ W
	evictValue // a range condition bounds this side's time: time ≤ W + offset
)

// joinSide is the static description of one input of the join.
type joinSide struct {
	name     string
	schema   *arrow.Schema // the input's schema
	keys     []vector.Expr // join keys over the input
	codec    *rowCodec     // the whole row, for the state value
	timeCol  int           // event-time column (late filter), -1 without
	evict    int           // evictNever, evictKey, evictValue
	evictCol int           // column whose time drives eviction
	offset   int64         // µs added to W×1000 for evictValue
	// keyCol is the column of the rows that is the only join key, read
	// in place by stored batches (stateful_join_keycol.go); -1: none.
	keyCol int
	outer  bool // unmatched rows are emitted with nulls on eviction
	// derivedLate, when set, drops the rows behind a derived column's
	// watermark bound too (stateful_join_cond.go).
	derivedLate *derivedLate
	// only is the part of the condition over this side alone (nil: none):
	// a new row failing it is never joined nor stored; an outer side
	// emits it with nulls at once.
	only vector.Expr
}

// statefulJoin is the stream-stream symmetric hash join (docs/semantics.md §7).
//
// State: per partition and side, the stored rows as Arrow batches with a
// key index and an event-time index, kept live in memory across epochs
// (stateful_join_live.go) and mirrored in one store per partition as a
// changelog of batches (stateful_join_store.go). Rows are routed by the
// join key hash. Every epoch the join joins the new rows of each side
// against the stored rows of the other with the same key and the other
// side's new rows (new×new once), applies the residual condition, evicts
// by the state watermarks, emitting unmatched outer rows with nulls, and
// stores the new rows. An epoch costs in proportion to its input, its
// matches and its evictions, not to the size of the state.
type statefulJoin struct {
	mem   memory.Allocator
	empty emptyRecords // the sides' empty records, shared by epochs
	// framing is each side's stored batch framing (batchFraming; 0: not
	// measured yet).
	framing [2]int64
	// encProto is each side's template encoder, whose clones the
	// partitions encode with (sideEncoder); encMu guards it.
	encMu    sync.Mutex
	encProto [2]*ipcStreamEncoder
	// keep allocates the rows the state keeps across epochs (split,
	// compacted, merged and restored batches): the allocator under the
	// query's pool (longLived), whose buffers are the size asked for. On
	// the pool, whose power-of-two classes round each buffer up, q20's
	// state held 1.47× the bytes it reported.
	keep memory.Allocator
	// viewHeld is the bytes of the input records the live batches view
	// (stateful_join_view.go), each counted once.
	viewHeld    atomic.Int64
	typ         plan.JoinType
	nullSafe    []bool
	residual    vector.Expr
	out         *arrow.Schema
	joined      *arrow.Schema // left codec fields ++ right codec fields
	sides       [2]*joinSide
	state       statePartitions
	lastEvictWm int64
	progress    stream.StateOperatorProgress
	// fixedKeys: the join key is one fixed-width column (not null-safe),
	// indexed by its 64-bit word instead of its bytes.
	fixedKeys bool

	// parts hold each partition's codecs and live state, as of state
	// version liveVersion (-1: to be rebuilt from the stores, as after a
	// start or an epoch that did not commit); pendingVersion is the
	// version the running epoch commits.
	parts          []*joinPart
	liveVersion    int64
	pendingVersion int64
	// serialRows: an epoch with fewer new rows (both sides) runs its
	// partitions one after another on the caller (joinWorkers); 0: always
	// in parallel.
	serialRows int
	// log: the epoch's stores take changelogs (logsChanges): the batch
	// and meta entries are logged, and the stores keep no decoded copy.
	log bool
	// acct reserves the live state's Go-heap bytes (key index, per-row
	// keys and times) against the query's limit; its Arrow batches
	// count through the allocator.
	acct stateAccount
	// views reserves the live snapshot views handed to the stores'
	// maintenance while it holds them (stateful_join_snapshot.go).
	views viewAccount
	// keyEval are each side's join keys bound for the new rows of every
	// epoch (stateful_join_keys.go).
	keyEval [2]*joinKeyEval
	// rowsHashed counts the rows whose partition hash was computed (a
	// test checks that the max bound's dropped rows are not hashed;
	// the restore path keys partitions in parallel).
	rowsHashed atomic.Int64
	// prune, when set, keeps out of the state the rows of one side that
	// can never match (stateful_join_prune.go).
	prune *joinPrune
	// selfMax, when set, drops the new rows of one side that are below
	// their window's largest value (stateful_join_selfmax.go).
	selfMax *joinSelfMax
	// scratch is the epoch's temporaries kept between epochs (the split's
	// and the pair gather's; stateful_join_scratch.go).
	scratch joinScratch
	// narrow is the deferred residual over only the columns it reads
	// (stateful_join_residual.go); nil: it reads the gathered pairs.
	narrow *narrowResidual
	// inPlace is the deferred residual evaluated on the pairs' records in
	// place (stateful_join_cmp.go); nil: not of that form.
	inPlace *pairCond
	// reduce, when set, keeps of the output pairs only those the max or
	// min aggregation reading the join needs (stateful_join_reduce.go).
	reduce        *joinReduce
	reduceScratch joinReduceScratch
	// maxRowNumbers, when not 0, lowers the sides' key index row-number
	// limit (math.MaxInt32): tests run out of numbers with a few rows.
	maxRowNumbers int32
}

func newStatefulJoin(mem memory.Allocator, opID int, j *plan.Join) (*statefulJoin, error) {
	switch j.Type {
	case plan.InnerJoin, plan.LeftOuterJoin, plan.RightOuterJoin, plan.FullOuterJoin, plan.LeftSemiJoin:
	default:
		return nil, fmt.Errorf("arrowstream: %s stream-stream joins are not supported (join of %s)", j.Type, j.String())
	}
	spec, err := plan.JoinSpecFor(j, &plan.Env{})
	if err != nil {
		return nil, err
	}
	if len(spec.LeftKeys) == 0 {
		return nil, fmt.Errorf("arrowstream: stream-stream join without an equality condition is not supported (join of %s)", j.String())
	}
	lk, rk, _, residual := plan.EquiJoinKeys(j)
	for i := range lk {
		// Keys are matched by their encoded bytes, so both sides need one
		// type; JoinSpecFor leaves integers of different widths alone.
		lt, rt := vector.Unwrap(lk[i].DataType()), vector.Unwrap(rk[i].DataType())
		if !arrow.TypeEqual(lt, rt) && vector.IsIntegral(lt) && vector.IsIntegral(rt) {
			spec.LeftKeys[i] = vector.Cast(spec.LeftKeys[i], vector.Int64)
			spec.RightKeys[i] = vector.Cast(spec.RightKeys[i], vector.Int64)
		}
	}
	// State rows come back decoded (dictionaries as plain values), so the
	// output has the join's schema with dictionaries unwrapped.
	outFields := append([]arrow.Field(nil), j.Schema().Fields()...)
	for i := range outFields {
		outFields[i].Type = vector.Unwrap(outFields[i].Type)
	}
	md := j.Schema().Metadata()
	s := &statefulJoin{mem: mem, keep: longLived(mem), typ: j.Type, nullSafe: spec.NullSafe, residual: spec.Residual, out: arrow.NewSchema(outFields, &md), lastEvictWm: -1, liveVersion: -1, serialRows: joinSerialRows}
	s.acct = newStateAccount(mem, "stream-stream join state")
	s.views = newViewAccount(mem, "stream-stream join state")
	s.state = statePartitions{opID: opID}
	var fields []arrow.Field
	for i, in := range []*arrow.Schema{j.Left.Schema(), j.Right.Schema()} {
		all := make([]int, in.NumFields())
		for c := range all {
			all[c] = c
		}
		codec, err := newValueCodec(mem, in, all)
		if err != nil {
			return nil, fmt.Errorf("arrowstream: stream-stream join: %w", err)
		}
		side := &joinSide{name: [2]string{"left", "right"}[i], schema: in, codec: codec, timeCol: -1, evictCol: -1}
		if i == 0 {
			side.keys = spec.LeftKeys
		} else {
			side.keys = spec.RightKeys
		}
		if cols := plan.EventTimeColumns(in); len(cols) > 0 {
			side.timeCol = cols[0]
		}
		fields = append(fields, codec.schema.Fields()...)
		s.sides[i] = side
	}
	s.sides[0].outer = j.Type == plan.LeftOuterJoin || j.Type == plan.FullOuterJoin
	s.sides[1].outer = j.Type == plan.RightOuterJoin || j.Type == plan.FullOuterJoin
	s.joined = arrow.NewSchema(fields, nil)
	s.state.schema = describeState("symmetricHashJoin", s.sides[0].codec.schema, s.sides[1].codec.schema)
	s.findEviction(lk, rk, residual, j.Left.Schema().NumFields())
	if err := s.sideOnlyConditions(residual, j.Left.Schema().NumFields()); err != nil {
		return nil, err
	}
	if s.narrow, err = newNarrowResidual(residual, s.joined); err != nil {
		return nil, err
	}
	s.inPlace = newPairCond(residual, s.joined, s.sides[0].codec.schema.NumFields())
	if len(spec.LeftKeys) == 1 && !spec.NullSafe[0] {
		enc, err := vector.NewKeyEncoder(mem, []arrow.DataType{vector.Unwrap(lk[0].DataType())})
		if err != nil {
			return nil, fmt.Errorf("arrowstream: stream-stream join key %s: %w", spec.LeftKeys[0], err)
		}
		s.fixedKeys = enc.IsFixed()
	}
	for _, side := range s.sides {
		side.keyCol = keyColumnOf(side, s.fixedKeys)
	}
	return s, nil
}

func (s *statefulJoin) Execute(context.Context, Epoch, vector.Operator) (vector.Operator, error) {
	return nil, fmt.Errorf("arrowstream: the stream-stream join needs both inputs")
}

func (s *statefulJoin) Report() stream.StateOperatorProgress { return s.progress }

func (s *statefulJoin) State() StateDecl { return s.state.decl() }

// Committed: the live state now mirrors the committed version. The
// store holds batches, not rows: the rows and memory reported are the
// live state's.
func (s *statefulJoin) Committed(c StateCommit) {
	s.state.committed(&s.progress, c)
	s.liveVersion = s.pendingVersion
	if s.prune != nil {
		s.prune.commit()
	}
	rows, bytes := s.liveSize()
	s.progress.NumRowsTotal = rows
	s.progress.MemoryUsedBytes += bytes
	s.acct.report(&s.progress.CustomMetrics)
}

// Abort: the epoch's store updates were discarded, and the live state
// goes with them: the next epoch rebuilds it from the version it reads.
func (s *statefulJoin) Abort() {
	s.state.release()
	s.dropLive()
	if s.prune != nil {
		s.prune.abort()
	}
}

// Close frees the live state (the query stopped).
func (s *statefulJoin) Close() error {
	for i := range s.keyEval {
		s.keyEval[i].release()
		s.keyEval[i] = nil
	}
	s.dropLive()
	s.empty.release()
	return nil
}

func (s *statefulJoin) ShouldRunAnotherBatch(newWm int64) bool {
	return (s.sides[0].evict != evictNever || s.sides[1].evict != evictNever) && newWm > s.lastEvictWm
}

// sideRows are one side's new rows of an epoch (those that survived the
// late filter), with their join keys.
type sideRows struct {
	rec      arrow.Record // codec schema
	keys     []string     // encoded join keys (without fixedKeys)
	words    []uint64     // the keys' words (with fixedKeys)
	keyNull  []bool
	hashes   []uint64
	excluded []bool // rows failing the side's own condition
	// unstored marks rows that are joined but not stored: they can match
	// no later row of the other side (joinPrune); nil: none.
	unstored []bool
	// sel, in: the rows are a view of an epoch's input record in, rows
	// sel of rec (nil: every row; stateful_join_split.go).
	sel []int32
	in  *joinInput
}

// count is how many rows r has.
func (r *sideRows) count() int {
	if r.sel != nil {
		return len(r.sel)
	}
	return int(r.rec.NumRows())
}

func (r *sideRows) release() {
	if r.rec != nil {
		r.rec.Release()
		r.rec = nil
	}
}

func (s *statefulJoin) ExecuteTwo(ctx context.Context, ep Epoch, left, right vector.Operator) (vector.Operator, error) {
	defer left.Close()
	defer right.Close()
	start := time.Now()
	s.progress = stream.StateOperatorProgress{OperatorName: "symmetricHashJoin", CustomMetrics: map[string]int64{}}
	if err := s.state.bind(ep); err != nil {
		return nil, err
	}
	s.log = logsChanges(s.state.stores)
	if s.liveVersion != ep.ID || len(s.parts) != len(s.state.stores) {
		if err := s.rebuildLive(ctx, ep); err != nil {
			return nil, err
		}
		if s.prune != nil {
			s.seedPrune()
		}
		if err := s.acct.set(s.liveHeap()); err != nil {
			return nil, err
		}
	}
	// The live state changes with the epoch: valid again once it commits.
	s.liveVersion, s.pendingVersion = -1, ep.ID+1
	var fresh [2]*sideRows
	defer func() {
		for _, r := range fresh {
			if r != nil {
				r.release()
			}
		}
	}()
	for i, in := range []vector.Operator{left, right} {
		// The max bound's side encodes its keys after the bound marked
		// its rows (dropUnpartnered).
		r, err := s.loadNew(ctx, ep, s.sides[i], in, s.prune == nil || i != s.prune.b.Side)
		if err != nil {
			return nil, err
		}
		fresh[i] = r
	}
	if s.prune != nil {
		i := s.prune.b.Side
		s.prune.mark(fresh[i], ep)
		before := fresh[i].rec.NumRows()
		if err := s.dropUnpartnered(ctx, i, fresh[i], fresh[1-i]); err != nil {
			return nil, err
		}
		s.progress.CustomMetrics["numRowsDroppedUnmatchable"] = before - fresh[i].rec.NumRows()
		s.progress.CustomMetrics["numRowsNotStoredByMaxBound"] = s.prune.skipped
	}
	s.progress.AllUpdatesTimeMs = time.Since(start).Milliseconds()
	out, err := s.joinPartitions(ctx, ep, fresh)
	if err == nil {
		err = s.acct.set(s.liveHeap())
		if err != nil {
			releaseRecords(out)
		}
	}
	if err != nil {
		return nil, err
	}
	s.logLiveRows()
	s.offerLive()
	defer releaseRecords(out)
	s.lastEvictWm = ep.WatermarkMs
	return vector.NewScan(s.out, out...)
}

// loadNew reads a side's new input rows (late rows dropped) into one
// record of plain columns, with their join keys if keys.
func (s *statefulJoin) loadNew(ctx context.Context, ep Epoch, side *joinSide, in vector.Operator, keys bool) (*sideRows, error) {
	late := ep.LateWatermarkMs * 1000
	var recs []arrow.Record
	defer func() { releaseRecords(recs) }()
	for {
		rec, err := in.Next(ctx)
		if err != nil {
			if isEOF(err) {
				break
			}
			return nil, err
		}
		plain, err := plainRecord(s.mem, side.codec, rec)
		rec.Release()
		if err != nil {
			return nil, fmt.Errorf("arrowstream: %s input of the stream-stream join: %w", side.name, err)
		}
		var tcol, dcol arrow.Array
		if side.timeCol >= 0 && ep.HasWatermark {
			tcol = plain.Column(side.timeCol)
		}
		if side.derivedLate != nil && ep.HasWatermark {
			dcol = plain.Column(side.derivedLate.col)
		}
		var keep []int32
		if dcol == nil && tcol != nil && noneLate(tcol, late) {
			// No row is late (a stream in time order, past the
			// watermark): one pass over the times, no row list.
			tcol = nil
		}
		if tcol != nil || dcol != nil {
			// The join's scratch: TakeRecord copies the rows kept.
			n := int(plain.NumRows())
			keep = int32s(&s.scratch.late, n)[:0]
			tt, dt := timesOf(tcol), timesOf(dcol)
			for i := 0; i < n; i++ {
				if tcol != nil {
					if t, ok := tt.at(i); ok && t <= late {
						s.progress.NumRowsDroppedByWatermark++
						continue
					}
				}
				if dcol != nil {
					if t, ok := dt.at(i); ok && t <= late+side.derivedLate.shiftUs {
						s.progress.NumRowsDroppedByWatermark++
						continue
					}
				}
				keep = append(keep, int32(i))
			}
		}
		if keep != nil && len(keep) < int(plain.NumRows()) {
			t, err := vector.TakeRecord(s.mem, plain, keep)
			plain.Release()
			if err != nil {
				return nil, err
			}
			plain = t
		}
		recs = append(recs, plain)
	}
	r := &sideRows{}
	if len(recs) == 0 {
		if err := s.decodeSide(side.codec, r, nil); err != nil {
			return nil, err
		}
	} else {
		rec, err := concatRecords(s.mem, side.codec.schema, recs)
		if err != nil {
			return nil, err
		}
		r.rec = rec
	}
	si := 0
	if side == s.sides[1] {
		si = 1
	}
	if s.selfMax != nil && si == s.selfMax.b.Side && r.rec.NumRows() > 0 {
		rec, err := s.selfMax.filter(s.mem, r.rec)
		r.rec.Release()
		if err != nil {
			r.rec = nil
			return nil, fmt.Errorf("arrowstream: %s input of the stream-stream join: %w", side.name, err)
		}
		r.rec = rec
		s.progress.CustomMetrics["numRowsDroppedBelowWindowMax"] = s.selfMax.dropped
	}
	r.excluded = bools(&s.scratch.excluded[si], int(r.rec.NumRows()))
	if side.only != nil && r.rec.NumRows() > 0 {
		if err := s.sideOnly(ctx, side, r); err != nil {
			r.release()
			return nil, err
		}
	}
	if !keys {
		return r, nil
	}
	if err := s.encodeNewKeys(ctx, side, r); err != nil {
		r.release()
		return nil, err
	}
	return r, nil
}

// sideOnly marks the new rows that fail the side's own condition.
func (s *statefulJoin) sideOnly(ctx context.Context, side *joinSide, r *sideRows) error {
	ev, err := side.only.Bind(side.codec.schema, s.mem)
	if err != nil {
		return err
	}
	res, err := ev.Eval(ctx, r.rec)
	if err != nil {
		return err
	}
	defer res.Release()
	b, ok := res.(*array.Boolean)
	if !ok {
		return fmt.Errorf("arrowstream: join condition %s is %s, not boolean", side.only, vector.TypeName(res.DataType()))
	}
	for i := 0; i < b.Len(); i++ {
		r.excluded[i] = !b.IsValid(i) || !b.Value(i)
	}
	return nil
}

// pairs gathers left rows li and right rows ri side by side (index −1:
// nulls) into a record of schema.
func (s *statefulJoin) pairs(l, r arrow.Record, li, ri []int32, schema *arrow.Schema) (arrow.Record, error) {
	lt, err := vector.TakeRecord(s.mem, l, li)
	if err != nil {
		return nil, err
	}
	defer lt.Release()
	cols := append([]arrow.Array(nil), lt.Columns()...)
	if ri != nil {
		rt, err := vector.TakeRecord(s.mem, r, ri)
		if err != nil {
			return nil, err
		}
		defer rt.Release()
		cols = append(cols, rt.Columns()...)
	}
	return array.NewRecord(schema, cols, int64(len(li))), nil
}

// OutputWatermarkShiftUs implements OutputWatermarkShifter: Spark's join
// outputs min(left state watermark, right state watermark, input
// watermark); a key-evicted side's state watermark is the input's, a
// value-evicted side's is the input's plus its offset, and a side that
// never evicts has none.
func (s *statefulJoin) OutputWatermarkShiftUs() int64 {
	var shift int64
	for _, side := range s.sides {
		if side.evict == evictValue && -side.offset > shift {
			shift = -side.offset
		}
	}
	return shift
}
