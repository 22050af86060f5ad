package stateful

import (
	"container/heap"
	"context"
	"encoding/binary"
	"fmt"
	"time"

	"github.com/apache/arrow/go/v17/arrow"
	"github.com/apache/arrow/go/v17/arrow/array"
	"github.com/apache/arrow/go/v17/arrow/memory"

	"github.com/arrowstream/arrowstream/arrowstream/stream"
	"github.com/arrowstream/arrowstream/checkpoint"
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
	outer    bool          // unmatched rows are emitted with nulls on eviction
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
// State: one store per partition holding both sides; key = side byte ++
// encoded join key ++ epoch (8 bytes) ++ row index (4 bytes), value =
// matched flag ++ the encoded row. Rows are routed by the join key hash.
// Every epoch the join joins the new rows of each side against the stored
// rows of the other with the same key and the other side's new rows
// (new×new once), applies the residual condition, stores the new rows and
// evicts by the state watermarks, emitting unmatched outer rows with
// nulls. The stored rows are kept decoded in memory between epochs
// (sideCache), so an epoch costs in proportion to its input, its matches
// and its evictions, not to the size of the state.
type statefulJoin struct {
	mem         memory.Allocator
	typ         plan.JoinType
	nullSafe    []bool
	residual    vector.Expr
	out         *arrow.Schema
	joined      *arrow.Schema // left codec fields ++ right codec fields
	sides       [2]*joinSide
	state       statePartitions
	lastEvictWm int64
	progress    stream.StateOperatorProgress

	// parts hold each partition's codecs and each side's stored rows
	// decoded, as of state version cacheVersion (-1: to be rebuilt from
	// the stores, as after a start or an epoch that did not commit);
	// pendingVersion is the version the running epoch commits.
	parts          []*joinPart
	cacheVersion   int64
	pendingVersion int64
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
	s := &statefulJoin{mem: mem, typ: j.Type, nullSafe: spec.NullSafe, residual: spec.Residual, out: arrow.NewSchema(outFields, &md), lastEvictWm: -1, cacheVersion: -1}
	s.state = statePartitions{opID: opID}
	var fields []arrow.Field
	for i, in := range []*arrow.Schema{j.Left.Schema(), j.Right.Schema()} {
		all := make([]int, in.NumFields())
		for c := range all {
			all[c] = c
		}
		codec, err := newRowCodec(mem, in, all)
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
	return s, nil
}

func (s *statefulJoin) Execute(context.Context, Epoch, vector.Operator) (vector.Operator, error) {
	return nil, fmt.Errorf("arrowstream: the stream-stream join needs both inputs")
}

func (s *statefulJoin) Report() stream.StateOperatorProgress { return s.progress }

func (s *statefulJoin) State() StateDecl { return s.state.decl() }

func (s *statefulJoin) Committed(c StateCommit) {
	s.state.committed(&s.progress, c)
	s.cacheVersion = s.pendingVersion
	// The decoded rows kept between epochs are state memory too.
	for _, jp := range s.parts {
		for _, c := range jp.caches {
			s.progress.MemoryUsedBytes += c.bytes
		}
	}
}

func (s *statefulJoin) Abort() {
	s.cacheVersion = -1
	s.state.release()
}

func (s *statefulJoin) ShouldRunAnotherBatch(newWm int64) bool {
	return (s.sides[0].evict != evictNever || s.sides[1].evict != evictNever) && newWm > s.lastEvictWm
}

// sideRows are one side's rows of an epoch: the state rows, then the new
// rows that survived the late filter.
type sideRows struct {
	rec       arrow.Record // codec schema
	nState    int
	entries   []*joinEntry // state rows' cache entries
	storeKeys [][]byte     // state rows' store keys
	matched   []bool
	wasMatch  []bool
	keys      []string // encoded join keys
	keyNull   []bool
	hashes    []uint64
	enc       [][]byte // encoded rows
	arrival   []bool   // new rows matched against the other side's state
	excluded  []bool   // new rows failing the side's own condition
}

func (r *sideRows) release() {
	if r.rec != nil {
		r.rec.Release()
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
	if s.cacheVersion != ep.ID {
		if err := s.rebuildCache(ctx); err != nil {
			return nil, err
		}
	}
	// The caches change with the epoch: valid again only once it commits.
	s.cacheVersion, s.pendingVersion = -1, ep.ID+1
	var fresh [2]*sideRows
	defer func() {
		for _, r := range fresh {
			if r != nil {
				r.release()
			}
		}
	}()
	for i, in := range []vector.Operator{left, right} {
		r, err := s.loadNew(ctx, ep, s.sides[i], in)
		if err != nil {
			return nil, err
		}
		fresh[i] = r
	}
	s.progress.AllUpdatesTimeMs = time.Since(start).Milliseconds()
	out, err := s.joinPartitions(ctx, ep, fresh)
	if err != nil {
		return nil, err
	}
	defer releaseRecords(out)
	s.lastEvictWm = ep.WatermarkMs
	return vector.NewScan(s.out, out...)
}

// loadNew reads a side's new input rows (late rows dropped) into one
// record, with their join keys.
func (s *statefulJoin) loadNew(ctx context.Context, ep Epoch, side *joinSide, in vector.Operator) (*sideRows, error) {
	r := &sideRows{}
	var enc [][]byte
	late := ep.LateWatermarkMs * 1000
	for {
		rec, err := in.Next(ctx)
		if err != nil {
			if isEOF(err) {
				break
			}
			return nil, err
		}
		if err := side.codec.encode(rec); err != nil {
			rec.Release()
			return nil, err
		}
		var tcol, dcol arrow.Array
		if side.timeCol >= 0 && ep.HasWatermark {
			tcol = rec.Column(side.timeCol)
		}
		if side.derivedLate != nil && ep.HasWatermark {
			dcol = rec.Column(side.derivedLate.col)
		}
		// The rows' bytes share one buffer per input record (one
		// allocation instead of one per row); the cache keeps them.
		size := 0
		for i := 0; i < int(rec.NumRows()); i++ {
			size += len(side.codec.at(i))
		}
		buf := make([]byte, 0, size)
		for i := 0; i < int(rec.NumRows()); i++ {
			if tcol != nil {
				if t, ok := timeAt(tcol, i); ok && t <= late {
					s.progress.NumRowsDroppedByWatermark++
					continue
				}
			}
			if dcol != nil {
				if t, ok := timeAt(dcol, i); ok && t <= late+side.derivedLate.shiftUs {
					s.progress.NumRowsDroppedByWatermark++
					continue
				}
			}
			n := len(buf)
			buf = append(buf, side.codec.at(i)...)
			enc = append(enc, buf[n:len(buf):len(buf)])
		}
		rec.Release()
	}
	r.enc = enc
	if err := s.decodeSide(side.codec, r, enc); err != nil {
		return nil, err
	}
	r.excluded = make([]bool, len(enc))
	if side.only != nil && len(enc) > 0 {
		if err := s.sideOnly(ctx, side, r); err != nil {
			r.release()
			return nil, err
		}
	}
	if err := s.encodeKeys(ctx, side, r); err != nil {
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
	for i := r.nState; i < b.Len(); i++ {
		r.excluded[i] = !b.IsValid(i) || !b.Value(i)
	}
	return nil
}

// encodeKeys evaluates the side's join keys over its rows.
func (s *statefulJoin) encodeKeys(ctx context.Context, side *joinSide, r *sideRows) error {
	n := int(r.rec.NumRows())
	keyCols := make([]arrow.Array, len(side.keys))
	defer func() {
		for _, c := range keyCols {
			if c != nil {
				c.Release()
			}
		}
	}()
	fields := make([]arrow.Field, len(side.keys))
	idx := make([]int, len(side.keys))
	for k, e := range side.keys {
		ev, err := e.Bind(side.codec.schema, s.mem)
		if err != nil {
			return err
		}
		ev = vector.Plain(ev, s.mem)
		a, err := ev.Eval(ctx, r.rec)
		if err != nil {
			return err
		}
		keyCols[k] = a
		fields[k] = arrow.Field{Name: fmt.Sprintf("k%d", k), Type: a.DataType(), Nullable: true}
		idx[k] = k
	}
	keyRec := array.NewRecord(arrow.NewSchema(fields, nil), keyCols, int64(n))
	defer keyRec.Release()
	codec, err := newRowCodec(s.mem, keyRec.Schema(), idx)
	if err != nil {
		return err
	}
	r.keys = make([]string, n)
	r.keyNull = make([]bool, n)
	r.hashes = make([]uint64, n)
	if n == 0 {
		return nil
	}
	if err := codec.encode(keyRec); err != nil {
		return err
	}
	for i := 0; i < n; i++ {
		r.keys[i] = string(codec.at(i))
		r.hashes[i] = s.state.scheme.hash(codec, i)
		for k, c := range keyCols {
			if c.IsNull(i) && !s.nullSafe[k] {
				r.keyNull[i] = true
			}
		}
	}
	return nil
}

// applyResidual keeps the candidate pairs that satisfy the residual
// condition.
func (s *statefulJoin) applyResidual(ctx context.Context, l, r arrow.Record, li, ri []int32) ([]int32, []int32, error) {
	if s.residual == nil || len(li) == 0 {
		return li, ri, nil
	}
	pairs, err := s.pairs(l, r, li, ri, s.joined)
	if err != nil {
		return nil, nil, err
	}
	defer pairs.Release()
	ev, err := s.residual.Bind(s.joined, s.mem)
	if err != nil {
		return nil, nil, err
	}
	res, err := ev.Eval(ctx, pairs)
	if err != nil {
		return nil, nil, err
	}
	defer res.Release()
	b, ok := res.(*array.Boolean)
	if !ok {
		return nil, nil, fmt.Errorf("arrowstream: join condition %s is %s, not boolean", s.residual, vector.TypeName(res.DataType()))
	}
	var ol, or []int32
	for k := range li {
		if b.IsValid(k) && b.Value(k) {
			ol, or = append(ol, li[k]), append(or, ri[k])
		}
	}
	return ol, or, nil
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

// output builds the join's output rows.
func (s *statefulJoin) output(l, r arrow.Record, li, ri []int32) (arrow.Record, error) {
	if s.typ == plan.LeftSemiJoin {
		ri = nil
	}
	return s.pairs(l, r, li, ri, s.out)
}

// store writes the side's new rows and updated matched flags to
// partition p's state and evicts the rows below the side's state
// watermark; it returns the evicted unmatched rows of an outer side and
// the numbers of rows updated and removed.
func (s *statefulJoin) store(ep Epoch, p int, tag byte, side *joinSide, r *sideRows) (nulls []int32, updated, removed int64, err error) {
	wrap := func(op string, err error) error {
		return fmt.Errorf("arrowstream: %s state of operator %d partition %d: %w", op, s.state.opID, p, err)
	}
	thr, evict := s.evictThreshold(ep, side)
	cache := s.parts[p].caches[tag]
	st := s.state.stores[p]
	var val []byte
	size := 0
	for i := r.nState; i < len(r.keys); i++ {
		size += 1 + len(r.keys[i]) + 12
	}
	keyBuf := make([]byte, 0, size)
	var tcol arrow.Array
	if evict {
		tcol = r.rec.Column(side.evictCol)
	}
	semiLeft := s.typ == plan.LeftSemiJoin && tag == 0
	for i := 0; i < int(r.rec.NumRows()); i++ {
		isState := i < r.nState
		gone := semiLeft && !isState && r.arrival[i]
		if r.excluded[i] {
			gone = true
			if side.outer {
				nulls = append(nulls, int32(i))
			}
		}
		if !gone && evict {
			if t, ok := timeAt(tcol, i); ok && t <= thr {
				gone = true
				if side.outer && !r.matched[i] {
					nulls = append(nulls, int32(i))
				}
			}
		}
		switch {
		case gone && isState:
			if err := st.Delete(r.storeKeys[i]); err != nil {
				return nil, 0, 0, wrap("delete", err)
			}
			cache.remove(r.entries[i])
			removed++
		case gone:
		case isState:
			e := r.entries[i]
			if e.hasTime && e.heapIdx < 0 {
				heap.Push(&cache.byTime, e) // taken as evictable, yet kept
			}
			if r.matched[i] != r.wasMatch[i] {
				e.matched = true
				v, ok, err := st.Get(r.storeKeys[i])
				if err != nil {
					return nil, 0, 0, wrap("read", err)
				}
				if !ok || len(v) == 0 {
					return nil, 0, 0, wrap("read", fmt.Errorf("row %x of the cache is not in the store: %w", r.storeKeys[i], checkpoint.ErrCorrupt))
				}
				val = append(val[:0], v...)
				val[0] = 1
				if err := st.Put(r.storeKeys[i], val); err != nil {
					return nil, 0, 0, wrap("write", err)
				}
			}
		default:
			enc := r.enc[i]
			// Store keys share one buffer (the cache keeps them); the
			// value is copied by Put, so one scratch buffer serves.
			n := len(keyBuf)
			keyBuf = append(keyBuf, tag)
			keyBuf = append(keyBuf, r.keys[i]...)
			keyBuf = binary.BigEndian.AppendUint64(keyBuf, uint64(ep.ID))
			keyBuf = binary.BigEndian.AppendUint32(keyBuf, uint32(i-r.nState))
			key := keyBuf[n:len(keyBuf):len(keyBuf)]
			val = append(val[:0], 0)
			if r.matched[i] {
				val[0] = 1
			}
			val = append(val, enc...)
			if err := st.Put(key, val); err != nil {
				return nil, 0, 0, wrap("write", err)
			}
			updated++
			e := &joinEntry{storeKey: key, key: r.keys[i],
				keyNull: r.keyNull[i], enc: enc, matched: r.matched[i]}
			e.time, e.hasTime = side.evictTime(r.rec, i)
			cache.add(e)
		}
	}
	return nulls, updated, removed, nil
}
