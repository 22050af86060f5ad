package stateful

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"sort"
	"time"

	"github.com/apache/arrow/go/v17/arrow"
	"github.com/apache/arrow/go/v17/arrow/array"
	"github.com/apache/arrow/go/v17/arrow/memory"

	"github.com/arrowstream/arrowstream/arrowstream/stream"
	"github.com/arrowstream/arrowstream/checkpoint"
	"github.com/arrowstream/arrowstream/plan"
	"github.com/arrowstream/arrowstream/vector"
)

// statefulGroupState is flatMapGroupsWithState / mapGroupsWithState
// (docs/semantics.md §8): per epoch the input is grouped by key, and in each
// state partition (partitions in parallel) the function is called once per
// key with rows (keys in encoded order), then once per timed-out key.
//
// State: key (the encoded key) → value: 1 flag byte (1 = the user's state
// exists), the timeout timestamp in ms (int64 LE, -1 for none), then the
// user's state bytes.
type statefulGroupState struct {
	mem      memory.Allocator
	node     *plan.FlatMapGroupsWithState
	fn       stream.GroupFunc
	keyExpr  vector.Evaluator
	keyCodec *rowCodec // over a one-column record of the key
	// partCodecs are the partitions' own key codecs (see codecFor).
	partCodecs []*rowCodec
	keySchema  *arrow.Schema
	timeCol    int // the input's event-time column (late filter with plan.EventTimeTimeout), -1 if none

	state       statePartitions
	lastEvictWm int64
	progress    stream.StateOperatorProgress

	// live is the state kept between epochs (nil until the first epoch
	// loads it); pending is the version it holds once this epoch commits.
	live    *groupLive
	pending int64
	// acct reserves the live state's Go-heap bytes (keys, user state
	// values, timeouts) against the query's limit.
	acct stateAccount
	// log: the epoch's stores take changelogs (logsChanges).
	log bool
}

func newStatefulGroupState(mem memory.Allocator, opID int, n *plan.FlatMapGroupsWithState) (*statefulGroupState, error) {
	fn, ok := n.Func.(stream.GroupFunc)
	if !ok {
		if f, ok2 := n.Func.(func(arrow.Array, arrow.Record, *stream.GroupState) (arrow.Record, error)); ok2 {
			fn, ok = stream.GroupFunc(f), true
		}
	}
	if !ok {
		return nil, fmt.Errorf("arrowstream: flatMapGroupsWithState %s: the function is a %T, not an arrowstream.GroupFunc", n.FuncName, n.Func)
	}
	if len(n.Keys) != 1 {
		return nil, fmt.Errorf("arrowstream: flatMapGroupsWithState %s: %d keys, want one", n.FuncName, len(n.Keys))
	}
	in := n.Input.Schema()
	ve, err := plan.ToVectorExpr(n.Keys[0].Expr, &plan.Env{})
	if err != nil {
		return nil, err
	}
	ev, err := ve.Bind(in, mem)
	if err != nil {
		return nil, err
	}
	keySchema := arrow.NewSchema([]arrow.Field{{Name: n.Keys[0].Name, Type: n.Keys[0].Expr.DataType(), Nullable: true}}, nil)
	codec, err := newRowCodec(mem, keySchema, []int{0})
	if err != nil {
		return nil, fmt.Errorf("arrowstream: flatMapGroupsWithState key: %w", err)
	}
	g := &statefulGroupState{
		mem: mem, node: n, fn: fn, keyExpr: ev, keyCodec: codec, keySchema: keySchema, timeCol: -1, lastEvictWm: -1,
		state: statePartitions{opID: opID},
	}
	g.acct = newStateAccount(mem, "flatMapGroupsWithState state")
	if cols := plan.EventTimeColumns(in); len(cols) > 0 {
		g.timeCol = cols[0]
	}
	g.state.schema = describeState("flatMapGroupsWithState", codec.schema,
		arrow.NewSchema([]arrow.Field{{Name: "exists", Type: arrow.PrimitiveTypes.Uint8}, {Name: "timeoutMs", Type: arrow.PrimitiveTypes.Int64}, {Name: "state", Type: arrow.BinaryTypes.Binary}}, nil))
	return g, nil
}

func encodeGroupState(exists bool, timeoutMs int64, value []byte) []byte {
	b := make([]byte, 9, 9+len(value))
	if exists {
		b[0] = 1
	}
	binary.LittleEndian.PutUint64(b[1:], uint64(timeoutMs))
	return append(b, value...)
}

func decodeGroupState(b []byte) (exists bool, timeoutMs int64, value []byte, err error) {
	if len(b) < 9 {
		return false, 0, nil, fmt.Errorf("arrowstream: flatMapGroupsWithState state value of %d bytes", len(b))
	}
	return b[0] == 1, int64(binary.LittleEndian.Uint64(b[1:9])), b[9:], nil
}

// group is one key's rows of the epoch.
type group struct {
	key  []byte
	hash uint64
	rows []int32
}

func (g *statefulGroupState) Execute(ctx context.Context, ep Epoch, input vector.Operator) (vector.Operator, error) {
	defer input.Close()
	start := time.Now()
	g.progress = stream.StateOperatorProgress{OperatorName: "flatMapGroupsWithState", CustomMetrics: map[string]int64{"numTimedOutKeys": 0}}
	if err := g.state.bind(ep); err != nil {
		return nil, err
	}
	if err := g.loadLive(ep.ID); err != nil {
		return nil, err
	}
	if err := g.acct.set(g.live.liveBytes()); err != nil {
		return nil, err
	}
	g.log = logsChanges(g.state.stores)
	// From here the live state is this epoch's until it commits.
	g.live.version, g.pending = -1, ep.ID+1
	recs, err := vector.Drain(ctx, input)
	if err != nil {
		return nil, err
	}
	all, err := concatRecords(g.mem, input.Schema(), recs)
	releaseRecords(recs)
	if err != nil {
		return nil, err
	}
	defer all.Release()
	rows := g.onTimeRows(ep, all, input.Schema())
	keyRec, groups, err := g.groupByKey(ctx, all, rows)
	if err != nil {
		return nil, err
	}
	defer keyRec.Release()
	out, err := g.runGroups(ep, all, keyRec, groups)
	if err != nil {
		return nil, err
	}
	if err := g.acct.set(g.live.liveBytes()); err != nil {
		releaseRecords(out)
		return nil, err
	}
	if g.log {
		// Every partition declares its key count, changed or not, so that
		// the stores keep no decoded copy of the live keys.
		for p, st := range g.state.stores {
			st.(checkpoint.ChangelogWriter).SetLiveRows(int64(len(g.live.parts[p].keys)))
		}
	}
	g.lastEvictWm = ep.WatermarkMs
	g.progress.AllUpdatesTimeMs = time.Since(start).Milliseconds()
	return vector.NewOwnedScan(g.node.OutputSchema, out), nil
}

// onTimeRows returns the rows of all that reach the function: with
// EventTimeTimeout and a watermark, rows at or below the late watermark
// are dropped (and counted); otherwise nil, meaning every row.
func (g *statefulGroupState) onTimeRows(ep Epoch, all arrow.Record, schema *arrow.Schema) []int32 {
	if g.node.Timeout != plan.EventTimeTimeout || !ep.HasWatermark || g.timeCol < 0 {
		return nil
	}
	col := all.Column(g.timeCol)
	ts := col.(*array.Timestamp).TimestampValues()
	limit := lateLimit(schema.Field(g.timeCol).Type, ep.LateWatermarkMs)
	keep := []int32{}
	for i := 0; i < int(all.NumRows()); i++ {
		if col.IsValid(i) && int64(ts[i]) <= limit {
			g.progress.NumRowsDroppedByWatermark++
			continue
		}
		keep = append(keep, int32(i))
	}
	return keep
}

// groupByKey evaluates the key expression over all and groups the rows
// (rows, or every row when rows is nil) by key, in order of first
// appearance. The key record is owned by the caller.
func (g *statefulGroupState) groupByKey(ctx context.Context, all arrow.Record, rows []int32) (arrow.Record, []*group, error) {
	keys, err := g.keyExpr.Eval(ctx, all)
	if err != nil {
		return nil, nil, err
	}
	keyRec := array.NewRecord(g.keySchema, []arrow.Array{keys}, all.NumRows())
	keys.Release()
	if err := g.keyCodec.encode(keyRec); err != nil {
		keyRec.Release()
		return nil, nil, err
	}
	byKey := map[string]*group{}
	var groups []*group
	add := func(i int32) {
		k := g.keyCodec.at(int(i))
		gr, ok := byKey[string(k)]
		if !ok {
			gr = &group{key: append([]byte(nil), k...), hash: g.state.scheme.hash(g.keyCodec, int(i))}
			byKey[string(k)] = gr
			groups = append(groups, gr)
		}
		gr.rows = append(gr.rows, i)
	}
	if rows != nil {
		for _, i := range rows {
			add(i)
		}
	} else {
		for i := int32(0); i < int32(all.NumRows()); i++ {
			add(i)
		}
	}
	return keyRec, groups, nil
}

// runGroups calls the function for every group and every timed-out key
// and returns the output records (owned).
//
// The groups are split by their key's partition and the partitions run
// in parallel, as Spark runs one task per partition: within a partition
// the keys with rows come first, in key order, then the timed-out keys in
// key order; partitions follow each other in order. A key belongs to one
// partition, so the function is never called concurrently for the same
// key.
func (g *statefulGroupState) runGroups(ep Epoch, all, keyRec arrow.Record, groups []*group) ([]arrow.Record, error) {
	// Timed-out keys: a timeout T strictly below the threshold.
	threshold, timeouts := int64(0), false
	switch g.node.Timeout {
	case plan.ProcessingTimeTimeout:
		threshold, timeouts = ep.BatchTimestampMs, true
	case plan.EventTimeTimeout:
		threshold, timeouts = ep.WatermarkMs, ep.HasWatermark
	}
	n := len(g.state.stores)
	parts := make([][]*group, n)
	for _, gr := range groups {
		p := g.state.scheme.partition(gr.hash, n)
		parts[p] = append(parts[p], gr)
	}
	codecs := make([]*rowCodec, n)
	for p := range codecs {
		var err error
		if codecs[p], err = g.codecFor(p); err != nil {
			return nil, err
		}
	}
	results := make([][]arrow.Record, n)
	counts := make([]groupCounts, n)
	errs := runEachPartition(g.state.opID, n, func(p int) bool { return len(parts[p]) > 0 || timeouts }, func(p int) error {
		var err error
		results[p], err = g.runPartition(ep, p, codecs[p], all, keyRec, parts[p], threshold, timeouts, &counts[p])
		return err
	})
	var out []arrow.Record
	for p := range results {
		out = append(out, results[p]...)
		g.progress.NumRowsUpdated += counts[p].updated
		g.progress.NumRowsRemoved += counts[p].removed
		g.progress.CustomMetrics["numTimedOutKeys"] += counts[p].timedOut
	}
	if err := errors.Join(errs...); err != nil {
		releaseRecords(out)
		return nil, err
	}
	return out, nil
}

// groupCounts are one partition's counters of an epoch.
type groupCounts struct{ updated, removed, timedOut int64 }

// codecFor returns partition p's own key codec (decoding uses the codec's
// encoder, which partitions running in parallel cannot share).
func (g *statefulGroupState) codecFor(p int) (*rowCodec, error) {
	for len(g.partCodecs) <= p {
		c, err := newRowCodec(g.mem, g.keySchema, []int{0})
		if err != nil {
			return nil, err
		}
		g.partCodecs = append(g.partCodecs, c)
	}
	return g.partCodecs[p], nil
}

// runPartition calls the function for partition p's keys with rows (in
// key order), then for its timed-out keys; it returns the function's rows
// (owned by the caller).
func (g *statefulGroupState) runPartition(ep Epoch, p int, codec *rowCodec, all, keyRec arrow.Record, groups []*group, threshold int64, timeouts bool, c *groupCounts) ([]arrow.Record, error) {
	st := g.state.stores[p]
	live := &g.live.parts[p]
	sort.Slice(groups, func(a, b int) bool { return bytes.Compare(groups[a].key, groups[b].key) < 0 })
	var out []arrow.Record
	fail := func(err error) ([]arrow.Record, error) {
		releaseRecords(out)
		return nil, err
	}
	meter := newGrowthMeter(&g.acct, live.bytes, len(g.state.stores))
	for _, gr := range groups {
		if err := meter.note(live.bytes); err != nil {
			return fail(err)
		}
		rows, err := vector.TakeRecord(g.mem, all, gr.rows)
		if err != nil {
			return fail(err)
		}
		key, err := vector.Take(g.mem, keyRec.Column(0), gr.rows[:1])
		if err != nil {
			rows.Release()
			return fail(err)
		}
		rec, err := g.call(ep, st, live, gr.key, key, rows, false, c)
		key.Release()
		rows.Release()
		if err != nil {
			return fail(err)
		}
		if rec != nil {
			out = append(out, rec)
		}
	}
	if !timeouts {
		return out, nil
	}
	// The keys due, from the timeout heap (the calls above have reset
	// the timeouts of the keys with rows).
	due := live.expired(threshold)
	if len(due) == 0 {
		return out, nil
	}
	expired := make([][]byte, len(due))
	for i, k := range due {
		expired[i] = []byte(k)
	}
	sort.Slice(expired, func(a, b int) bool { return bytes.Compare(expired[a], expired[b]) < 0 })
	recs, err := g.timedOut(ep, st, live, codec, all, expired, c)
	out = append(out, recs...)
	if err != nil {
		return fail(err)
	}
	return out, nil
}

// timedOut calls the function for the expired keys of store st, with no
// rows and HasTimedOut.
func (g *statefulGroupState) timedOut(ep Epoch, st checkpoint.StateStore, live *groupLivePart, codec *rowCodec, all arrow.Record, expired [][]byte, c *groupCounts) ([]arrow.Record, error) {
	cols, err := codec.decode(g.mem, expired)
	if err != nil {
		return nil, err
	}
	keyCol := cols[0]
	defer keyCol.Release()
	empty, err := vector.TakeRecord(g.mem, all, []int32{})
	if err != nil {
		return nil, err
	}
	defer empty.Release()
	var out []arrow.Record
	for i, k := range expired {
		key := array.NewSlice(keyCol, int64(i), int64(i+1))
		rec, err := g.call(ep, st, live, k, key, empty, true, c)
		key.Release()
		if err != nil {
			return out, err
		}
		c.timedOut++
		if rec != nil {
			out = append(out, rec)
		}
	}
	return out, nil
}

// call runs the function for one key and writes its state back, to the
// live state and the store.
func (g *statefulGroupState) call(ep Epoch, st checkpoint.StateStore, live *groupLivePart, k []byte, key arrow.Array, rows arrow.Record, timedOut bool, c *groupCounts) (arrow.Record, error) {
	// The watermark is present for the function only when this operator's
	// input has an event-time column, as Spark's watermarkPresent reads
	// the child's output: not when a projection dropped the column, nor
	// behind another flatMapGroupsWithState, whose rows carry none (and
	// whose input watermark here is 0, not a watermark to report).
	init := stream.GroupStateInit{Timeout: stream.GroupStateTimeout(g.node.Timeout), TimedOut: timedOut,
		BatchTimestampMs: ep.BatchTimestampMs, WatermarkMs: ep.WatermarkMs, HasWatermark: ep.HasWatermark && g.timeCol >= 0}
	oldTimeout := stream.NoTimeoutSet
	e, ok := live.keys[string(k)]
	if ok {
		init.Exists, init.Value, oldTimeout = e.exists, e.value, e.timeoutMs
	}
	gs := stream.NewGroupState(init)
	rec, err := g.fn(key, rows, gs)
	if err != nil {
		if rec != nil {
			rec.Release()
		}
		return nil, fmt.Errorf("arrowstream: flatMapGroupsWithState %s: %w", g.node.FuncName, err)
	}
	if rec != nil {
		if !rec.Schema().Equal(g.node.OutputSchema) {
			s := rec.Schema()
			rec.Release()
			return nil, fmt.Errorf("arrowstream: flatMapGroupsWithState %s returned rows of schema %s, want %s", g.node.FuncName, s, g.node.OutputSchema)
		}
		if g.node.MapGroups && rec.NumRows() != 1 {
			n := rec.NumRows()
			rec.Release()
			return nil, fmt.Errorf("arrowstream: mapGroupsWithState %s returned %d rows, want exactly one", g.node.FuncName, n)
		}
		if rec.NumRows() == 0 {
			rec.Release()
			rec = nil
		}
	} else if g.node.MapGroups {
		return nil, fmt.Errorf("arrowstream: mapGroupsWithState %s returned no row, want exactly one", g.node.FuncName)
	}
	// Write-back (§8): the timeout is not carried over. Only an explicit
	// Remove without a timeout deletes the key, as Spark's
	// onIteratorCompletion: a key that had only a timeout (no state) and
	// whose call set none again is written back with neither, and stays
	// in the store and in numRowsTotal; Spark counts a removal even for a
	// key it never stored.
	out := gs.Outcome()
	switch {
	case out.Removed && out.TimeoutMs == stream.NoTimeoutSet:
		if ok {
			if err := deleteState(st, g.log, k); err != nil {
				return releaseOnError(rec, fmt.Errorf("arrowstream: delete state of operator %d: %w", g.state.opID, err))
			}
			live.remove(string(k))
		}
		c.removed++
	case out.Updated || out.Removed || out.TimeoutMs != oldTimeout:
		if err := putState(st, g.log, k, encodeGroupState(out.Exists, out.TimeoutMs, out.Value)); err != nil {
			return releaseOnError(rec, fmt.Errorf("arrowstream: write state of operator %d: %w", g.state.opID, err))
		}
		live.set(string(k), out.Exists, out.TimeoutMs, out.Value)
		c.updated++
	case ok && out.TimeoutMs != stream.NoTimeoutSet && e.heapAt == stream.NoTimeoutSet:
		// Unchanged, but its timeout was popped (a timed-out call that
		// kept it): index it again.
		live.set(string(k), e.exists, e.timeoutMs, e.value)
	}
	return rec, nil
}

// lateLimit converts a late watermark in ms to the unit of a timestamp type.
func lateLimit(t arrow.DataType, wmMs int64) int64 {
	if ts, ok := t.(*arrow.TimestampType); ok {
		switch ts.Unit {
		case arrow.Second:
			return wmMs / 1000
		case arrow.Millisecond:
			return wmMs
		case arrow.Nanosecond:
			return wmMs * 1_000_000
		}
	}
	return wmMs * 1000
}

// concatRecords concatenates records of schema into one (owned).
func concatRecords(mem memory.Allocator, schema *arrow.Schema, recs []arrow.Record) (arrow.Record, error) {
	if len(recs) == 1 {
		recs[0].Retain()
		return recs[0], nil
	}
	cols := make([]arrow.Array, schema.NumFields())
	var n int64
	for _, r := range recs {
		n += r.NumRows()
	}
	for c := range cols {
		parts := make([]arrow.Array, len(recs))
		for i, r := range recs {
			parts[i] = r.Column(c)
		}
		var err error
		if len(parts) == 0 {
			cols[c] = array.MakeArrayOfNull(mem, schema.Field(c).Type, 0)
			continue
		}
		cols[c], err = vector.Concatenate(parts, mem)
		if err != nil {
			for _, a := range cols[:c] {
				a.Release()
			}
			return nil, err
		}
	}
	rec := array.NewRecord(schema, cols, n)
	for _, a := range cols {
		a.Release()
	}
	return rec, nil
}

func (g *statefulGroupState) State() StateDecl { return g.state.decl() }

// Committed: the live state now mirrors the committed version; its bytes
// count in the operator's memory.
func (g *statefulGroupState) Committed(c StateCommit) {
	g.state.committed(&g.progress, c)
	if g.live != nil {
		g.live.version = g.pending
		g.progress.MemoryUsedBytes += g.live.liveBytes()
	}
	g.acct.report(&g.progress.CustomMetrics)
}

// Abort: the engine discarded the epoch's store updates, and the live
// state goes with them: the next epoch rebuilds it from the store.
func (g *statefulGroupState) Abort() {
	g.state.release()
	g.live = nil
	g.acct.release()
}

// Close lets go of the live state and its reservation (the query
// stopped).
func (g *statefulGroupState) Close() error {
	g.live = nil
	g.acct.release()
	return nil
}

// releaseOnError releases the function's rows of a key whose state could
// not be written back.
func releaseOnError(rec arrow.Record, err error) (arrow.Record, error) {
	if rec != nil {
		rec.Release()
	}
	return nil, err
}

func (g *statefulGroupState) ShouldRunAnotherBatch(newWm int64) bool {
	switch g.node.Timeout {
	case plan.ProcessingTimeTimeout:
		return true
	case plan.EventTimeTimeout:
		return newWm > g.lastEvictWm
	}
	return false
}

func (g *statefulGroupState) Report() stream.StateOperatorProgress { return g.progress }
