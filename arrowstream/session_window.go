package arrowstream

import (
	"context"
	"encoding/binary"
	"fmt"
	"sort"
	"time"

	"github.com/apache/arrow/go/v17/arrow"
	"github.com/apache/arrow/go/v17/arrow/array"
	"github.com/apache/arrow/go/v17/arrow/memory"

	"github.com/arrowstream/arrowstream/checkpoint"
	"github.com/arrowstream/arrowstream/plan"
	"github.com/arrowstream/arrowstream/vector"
)

// sessionAssign appends the initial session window [t, t+gap) of every row
// (plan.SessionWindow); rows with a null time are dropped. The sessions
// are merged by the statefulSessionWindow above it.
type sessionAssign struct {
	mem    memory.Allocator
	input  vector.Operator
	time   vector.Evaluator
	gap    int64 // µs
	schema *arrow.Schema
}

func newSessionAssign(mem memory.Allocator, n *plan.SessionWindow, input vector.Operator, env *plan.Env) (vector.Operator, error) {
	x, err := plan.ToVectorExpr(n.Time, env)
	if err != nil {
		input.Close()
		return nil, err
	}
	in := input.Schema()
	ev, err := x.Bind(in, mem)
	if err != nil {
		input.Close()
		return nil, err
	}
	if ts, ok := ev.DataType().(*arrow.TimestampType); !ok || ts.Unit != arrow.Microsecond {
		input.Close()
		return nil, fmt.Errorf("arrowstream: the time column of session_window(%s) must be a timestamp, not %s", x, vector.TypeName(ev.DataType()))
	}
	ps := n.Schema()
	out := ps.Field(ps.NumFields() - 1)
	out.Type = vector.WindowType
	md := in.Metadata()
	schema := arrow.NewSchema(append(append([]arrow.Field(nil), in.Fields()...), out), &md)
	return &sessionAssign{mem: mem, input: input, time: ev, gap: n.Gap, schema: schema}, nil
}

func (s *sessionAssign) Schema() *arrow.Schema { return s.schema }
func (s *sessionAssign) Close() error          { return s.input.Close() }

func (s *sessionAssign) Next(ctx context.Context) (arrow.Record, error) {
	for {
		rec, err := s.input.Next(ctx)
		if err != nil {
			return nil, err
		}
		out, err := s.assign(ctx, rec)
		rec.Release()
		if err != nil {
			return nil, err
		}
		if out != nil {
			return out, nil
		}
	}
}

func (s *sessionAssign) assign(ctx context.Context, rec arrow.Record) (arrow.Record, error) {
	arr, err := s.time.Eval(ctx, rec)
	if err != nil {
		return nil, err
	}
	defer arr.Release()
	ts, ok := arr.(*array.Timestamp)
	if !ok || ts.Len() != int(rec.NumRows()) {
		return nil, fmt.Errorf("arrowstream: session_window: the time expression returned %d values of %s for %d rows", arr.Len(), vector.TypeName(arr.DataType()), rec.NumRows())
	}
	var sel []int32
	if ts.NullN() > 0 {
		for i := 0; i < ts.Len(); i++ {
			if ts.IsValid(i) {
				sel = append(sel, int32(i))
			}
		}
		if len(sel) == 0 {
			return nil, nil
		}
	}
	sb := array.NewStructBuilder(s.mem, vector.WindowType)
	defer sb.Release()
	starts := sb.FieldBuilder(0).(*array.TimestampBuilder)
	ends := sb.FieldBuilder(1).(*array.TimestampBuilder)
	add := func(i int) {
		t := ts.Value(i)
		sb.Append(true)
		starts.Append(t)
		ends.Append(t + arrow.Timestamp(s.gap))
	}
	base := rec
	if sel != nil {
		for _, i := range sel {
			add(int(i))
		}
		if base, err = vector.TakeRecord(s.mem, rec, sel); err != nil {
			return nil, err
		}
		defer base.Release()
	} else {
		for i := 0; i < ts.Len(); i++ {
			add(i)
		}
	}
	win := sb.NewArray()
	defer win.Release()
	cols := append(append([]arrow.Array(nil), base.Columns()...), win)
	return array.NewRecord(s.schema, cols, int64(win.Len())), nil
}

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
	mode    OutputMode
	nKeys   int
	sk      int // session key among the grouping keys (partial layout)
	sessCol int // session column of the operator's input

	partialSchema *arrow.Schema
	groupCols     []int     // partial columns of the state key
	valCols       []int     // partial columns of a stored session: the session, then the aggregate states
	keyCodec      *rowCodec // groupCols
	valCodec      *rowCodec // valCols

	state statePartitions

	lastEvictWm int64
	hasWm       bool
	progress    StateOperatorProgress
}

func newStatefulSessionWindow(mem memory.Allocator, opID int, input *arrow.Schema, spec vector.AggregateSpec, sk, sessCol int, mode OutputMode, writer *checkpoint.Writer) (*statefulSessionWindow, error) {
	spec.Mode = vector.AggPartial
	partial, err := vector.PartialSchema(input, spec)
	if err != nil {
		return nil, err
	}
	if !arrow.TypeEqual(vector.Unwrap(partial.Field(sk).Type), vector.WindowType) {
		return nil, fmt.Errorf("arrowstream: session key %s is a %s, not a session window", partial.Field(sk).Name, vector.TypeName(partial.Field(sk).Type))
	}
	s := &statefulSessionWindow{
		mem: mem, opID: opID, spec: spec, mode: mode, nKeys: len(spec.GroupBy), sk: sk, sessCol: sessCol,
		partialSchema: partial, lastEvictWm: -1,
		state: statePartitions{opID: opID, writer: writer, opts: checkpoint.StoreOptions{Allocator: mem}},
	}
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
	if s.valCodec, err = newRowCodec(mem, partial, s.valCols); err != nil {
		return nil, err
	}
	s.state.schema = describeState("sessionWindow", s.keyCodec.schema, s.valCodec.schema)
	return s, nil
}

func (s *statefulSessionWindow) report() StateOperatorProgress { return s.progress }

// sessionBounds returns the start and end (µs) of the session column of
// rec at column col.
func sessionBounds(rec arrow.Record, col int) (starts, ends []arrow.Timestamp) {
	st := rec.Column(col).(*array.Struct)
	return st.Field(0).(*array.Timestamp).TimestampValues(), st.Field(1).(*array.Timestamp).TimestampValues()
}

func (s *statefulSessionWindow) execute(ctx context.Context, ep EpochInfo, input vector.Operator) (vector.Operator, error) {
	start := time.Now()
	s.progress = StateOperatorProgress{OperatorName: "sessionWindowStateStoreSaveExec"}
	if err := s.state.open(ep); err != nil {
		input.Close()
		return nil, err
	}
	recs, err := vector.Drain(ctx, input)
	schema := input.Schema()
	input.Close()
	if err != nil {
		return nil, err
	}
	if s.mode == Append && ep.HasWatermark {
		limit := arrow.Timestamp(ep.LateWatermarkMs * 1000)
		for i, rec := range recs {
			_, ends := sessionBounds(rec, s.sessCol)
			keep := make([]int32, 0, len(ends))
			for r, e := range ends {
				if e > limit {
					keep = append(keep, int32(r))
				}
			}
			if len(keep) == len(ends) {
				continue
			}
			s.progress.NumRowsDroppedByWatermark += int64(len(ends) - len(keep))
			kept, err := vector.TakeRecord(s.mem, rec, keep)
			if err != nil {
				releaseRecords(recs)
				return nil, err
			}
			rec.Release()
			recs[i] = kept
		}
	}
	scan, err := vector.NewScan(schema, recs...)
	releaseRecords(recs)
	if err != nil {
		return nil, err
	}
	partialOp, err := vector.NewHashAggregate(s.mem, scan, s.spec)
	if err != nil {
		scan.Close()
		return nil, err
	}
	partials, err := vector.Drain(ctx, partialOp)
	partialOp.Close()
	if err != nil {
		return nil, err
	}
	err = s.mergeAndSave(ctx, partials)
	releaseRecords(partials)
	if err != nil {
		return nil, err
	}
	s.progress.AllUpdatesTimeMs = time.Since(start).Milliseconds()

	var out []arrow.Record
	switch s.mode {
	case Append:
		if ep.HasWatermark {
			out, err = s.evict(ep.WatermarkMs)
		}
	default:
		out, err = s.allState()
	}
	if err != nil {
		releaseRecords(out)
		return nil, err
	}
	s.lastEvictWm, s.hasWm = ep.WatermarkMs, ep.HasWatermark
	return s.finalize(out)
}

// sessionRef is one session row (stored or new) of one grouping key.
type sessionRef struct {
	key        string
	start, end arrow.Timestamp
	rec, row   int
}

// mergeAndSave merges the epoch's partial rows with the stored sessions
// of the same grouping keys and stores every touched key's new session list.
func (s *statefulSessionWindow) mergeAndSave(ctx context.Context, partials []arrow.Record) error {
	// Stored sessions of the touched keys come first (input order for
	// first/last).
	touched := map[string]bool{}
	var oldKeys, oldVals [][]byte
	for _, rec := range partials {
		if err := s.keyCodec.encode(rec); err != nil {
			return err
		}
		for i := 0; i < int(rec.NumRows()); i++ {
			k := s.keyCodec.at(i)
			if touched[string(k)] {
				continue
			}
			touched[string(k)] = true
			if v, ok := s.state.store(s.keyCodec.hash(i)).Get(k); ok {
				entries, err := splitSessions(v)
				if err != nil {
					return fmt.Errorf("arrowstream: state of operator %d: %w", s.opID, err)
				}
				for _, e := range entries {
					oldKeys = append(oldKeys, []byte(string(k)))
					oldVals = append(oldVals, e)
				}
			}
		}
	}
	inputs := make([]arrow.Record, 0, len(partials)+1)
	if len(oldKeys) > 0 {
		old, err := s.decodeState(oldKeys, oldVals)
		if err != nil {
			return err
		}
		defer old.Release()
		inputs = append(inputs, old)
	}
	inputs = append(inputs, partials...)
	if len(inputs) == 0 {
		return nil
	}

	// Sessionize: sort every session by (key, start), sweep, and give each
	// row its merged session [min start, max end).
	var refs []sessionRef
	for ri, rec := range inputs {
		if err := s.keyCodec.encode(rec); err != nil {
			return err
		}
		starts, ends := sessionBounds(rec, s.sk)
		for i := 0; i < int(rec.NumRows()); i++ {
			refs = append(refs, sessionRef{key: string(s.keyCodec.at(i)), start: starts[i], end: ends[i], rec: ri, row: i})
		}
	}
	sort.SliceStable(refs, func(a, b int) bool {
		if refs[a].key != refs[b].key {
			return refs[a].key < refs[b].key
		}
		return refs[a].start < refs[b].start
	})
	mStart := make([][]arrow.Timestamp, len(inputs))
	mEnd := make([][]arrow.Timestamp, len(inputs))
	for ri, rec := range inputs {
		mStart[ri] = make([]arrow.Timestamp, rec.NumRows())
		mEnd[ri] = make([]arrow.Timestamp, rec.NumRows())
	}
	for lo := 0; lo < len(refs); {
		hi, end := lo+1, refs[lo].end
		for hi < len(refs) && refs[hi].key == refs[lo].key && refs[hi].start <= end {
			end = max(end, refs[hi].end)
			hi++
		}
		for _, r := range refs[lo:hi] {
			mStart[r.rec][r.row], mEnd[r.rec][r.row] = refs[lo].start, end
		}
		lo = hi
	}
	resessioned := make([]arrow.Record, len(inputs))
	defer func() { releaseRecords(resessioned) }()
	for ri, rec := range inputs {
		win := windowArray(s.mem, mStart[ri], mEnd[ri])
		cols := append([]arrow.Array(nil), rec.Columns()...)
		cols[s.sk] = win
		resessioned[ri] = array.NewRecord(s.partialSchema, cols, rec.NumRows())
		win.Release()
	}
	scan, err := vector.NewScan(s.partialSchema, resessioned...)
	if err != nil {
		return err
	}
	op, err := vector.NewHashAggregate(s.mem, scan, s.stateSpec(vector.AggMerge))
	if err != nil {
		scan.Close()
		return err
	}
	merged, err := vector.Drain(ctx, op)
	op.Close()
	if err != nil {
		return err
	}
	defer releaseRecords(merged)

	// Save: each touched key's sessions, sorted by start.
	type entry struct {
		start arrow.Timestamp
		val   []byte
	}
	lists := map[string][]entry{}
	hashes := map[string]uint64{}
	for _, rec := range merged {
		if err := s.keyCodec.encode(rec); err != nil {
			return err
		}
		if err := s.valCodec.encode(rec); err != nil {
			return err
		}
		starts, _ := sessionBounds(rec, s.sk)
		for i := 0; i < int(rec.NumRows()); i++ {
			k := string(s.keyCodec.at(i))
			hashes[k] = s.keyCodec.hash(i)
			lists[k] = append(lists[k], entry{starts[i], append([]byte(nil), s.valCodec.at(i)...)})
		}
		s.progress.NumRowsUpdated += rec.NumRows()
	}
	for k, l := range lists {
		sort.Slice(l, func(a, b int) bool { return l[a].start < l[b].start })
		vals := make([][]byte, len(l))
		for i, e := range l {
			vals[i] = e.val
		}
		s.state.store(hashes[k]).Put([]byte(k), joinSessions(vals))
	}
	return nil
}

func windowArray(mem memory.Allocator, starts, ends []arrow.Timestamp) arrow.Array {
	sb := array.NewStructBuilder(mem, vector.WindowType)
	defer sb.Release()
	sb.Reserve(len(starts))
	sbS := sb.FieldBuilder(0).(*array.TimestampBuilder)
	sbE := sb.FieldBuilder(1).(*array.TimestampBuilder)
	for i := range starts {
		sb.Append(true)
		sbS.Append(starts[i])
		sbE.Append(ends[i])
	}
	return sb.NewArray()
}

// joinSessions frames a key's encoded sessions into one state value:
// uvarint length + bytes, per session.
func joinSessions(vals [][]byte) []byte {
	n := 0
	for _, v := range vals {
		n += len(v) + binary.MaxVarintLen32
	}
	out := make([]byte, 0, n)
	for _, v := range vals {
		out = binary.AppendUvarint(out, uint64(len(v)))
		out = append(out, v...)
	}
	return out
}

func splitSessions(v []byte) ([][]byte, error) {
	var out [][]byte
	for len(v) > 0 {
		n, w := binary.Uvarint(v)
		if w <= 0 || uint64(len(v)-w) < n {
			return nil, fmt.Errorf("corrupt session list")
		}
		out = append(out, v[w:w+int(n)])
		v = v[w+int(n):]
	}
	return out, nil
}

// stateSpec is the aggregation over partial-state input.
func (s *statefulSessionWindow) stateSpec(mode vector.AggMode) vector.AggregateSpec {
	keys := make([]vector.NamedExpr, s.nKeys)
	for i := range keys {
		name := s.partialSchema.Field(i).Name
		keys[i] = vector.NamedExpr{Name: name, Expr: &vector.ColumnAt{Index: i, Name: name}}
	}
	return vector.AggregateSpec{GroupBy: keys, Aggregates: s.spec.Aggregates, Mode: mode}
}

// decodeState turns stored sessions (state key and framed entry per
// session) into one record of the partial layout.
func (s *statefulSessionWindow) decodeState(keys, vals [][]byte) (arrow.Record, error) {
	k, err := s.keyCodec.decode(s.mem, keys)
	if err != nil {
		return nil, fmt.Errorf("arrowstream: state of operator %d: decode keys: %w", s.opID, err)
	}
	v, err := s.valCodec.decode(s.mem, vals)
	if err != nil {
		for _, a := range k {
			a.Release()
		}
		return nil, fmt.Errorf("arrowstream: state of operator %d: decode sessions: %w", s.opID, err)
	}
	cols := make([]arrow.Array, s.partialSchema.NumFields())
	for i, c := range s.groupCols {
		cols[c] = k[i]
	}
	for i, c := range s.valCols {
		cols[c] = v[i]
	}
	rec := array.NewRecord(s.partialSchema, cols, int64(len(keys)))
	for _, c := range cols {
		c.Release()
	}
	return rec, nil
}

// stored lists every stored session (its state key, its entry, the index
// of its key in stateKeys) and the state keys.
func (s *statefulSessionWindow) stored() (keys, vals [][]byte, owner []int, stateKeys [][]byte, err error) {
	s.state.rangeAll(func(k, v []byte) bool {
		entries, e := splitSessions(v)
		if e != nil {
			err = fmt.Errorf("arrowstream: state of operator %d: %w", s.opID, e)
			return false
		}
		kc := append([]byte(nil), k...)
		for _, en := range entries {
			keys = append(keys, kc)
			vals = append(vals, append([]byte(nil), en...))
			owner = append(owner, len(stateKeys))
		}
		stateKeys = append(stateKeys, kc)
		return true
	})
	return
}

// allState returns every stored session (partial layout).
func (s *statefulSessionWindow) allState() ([]arrow.Record, error) {
	keys, vals, _, _, err := s.stored()
	if err != nil || len(keys) == 0 {
		return nil, err
	}
	rec, err := s.decodeState(keys, vals)
	if err != nil {
		return nil, err
	}
	return []arrow.Record{rec}, nil
}

// evict removes the sessions whose end is at or below the watermark and
// returns them (partial layout).
func (s *statefulSessionWindow) evict(wmMs int64) ([]arrow.Record, error) {
	start := time.Now()
	keys, vals, owner, stateKeys, err := s.stored()
	if err != nil || len(keys) == 0 {
		return nil, err
	}
	all, err := s.decodeState(keys, vals)
	if err != nil {
		return nil, err
	}
	defer all.Release()
	_, ends := sessionBounds(all, s.sk)
	limit := arrow.Timestamp(wmMs * 1000)
	var sel []int32
	keep := make([][][]byte, len(stateKeys))
	changed := make([]bool, len(stateKeys))
	for i, e := range ends {
		if e <= limit {
			sel = append(sel, int32(i))
			changed[owner[i]] = true
		} else {
			keep[owner[i]] = append(keep[owner[i]], vals[i])
		}
	}
	if len(sel) == 0 {
		return nil, nil
	}
	gone, err := vector.TakeRecord(s.mem, all, sel)
	if err != nil {
		return nil, err
	}
	if err := s.keyCodec.encode(gone); err != nil {
		gone.Release()
		return nil, err
	}
	hashOf := map[string]uint64{}
	for i := 0; i < int(gone.NumRows()); i++ {
		hashOf[string(s.keyCodec.at(i))] = s.keyCodec.hash(i)
	}
	for ki, k := range stateKeys {
		if !changed[ki] {
			continue
		}
		st := s.state.store(hashOf[string(k)])
		if len(keep[ki]) == 0 {
			st.Delete(k)
		} else {
			st.Put(k, joinSessions(keep[ki]))
		}
	}
	s.progress.NumRowsRemoved += gone.NumRows()
	s.progress.AllRemovalsTimeMs += time.Since(start).Milliseconds()
	return []arrow.Record{gone}, nil
}

// finalize turns partial-state records into final rows (owned records are
// consumed).
func (s *statefulSessionWindow) finalize(recs []arrow.Record) (vector.Operator, error) {
	scan, err := vector.NewScan(s.partialSchema, recs...)
	releaseRecords(recs)
	if err != nil {
		return nil, err
	}
	op, err := vector.NewHashAggregate(s.mem, scan, s.stateSpec(vector.AggFinal))
	if err != nil {
		scan.Close()
		return nil, err
	}
	return op, nil
}

func (s *statefulSessionWindow) commit(ctx context.Context) error {
	return s.state.commit(ctx, &s.progress)
}

func (s *statefulSessionWindow) abort() { s.state.abort() }

func (s *statefulSessionWindow) shouldRunAnotherBatch(newWm int64) bool {
	return s.mode == Append && s.hasWm && newWm > s.lastEvictWm
}
