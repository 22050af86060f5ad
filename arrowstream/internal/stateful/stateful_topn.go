package stateful

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"time"
	"unsafe"

	"github.com/apache/arrow/go/v17/arrow"
	"github.com/apache/arrow/go/v17/arrow/array"
	"github.com/apache/arrow/go/v17/arrow/memory"

	"github.com/arrowstream/arrowstream/arrowstream/stream"
	"github.com/arrowstream/arrowstream/checkpoint"
	"github.com/arrowstream/arrowstream/plan"
	"github.com/arrowstream/arrowstream/vector"
)

// statefulTopN runs a plan.StreamingTopN: the first N rows per partition
// of an append-only stream in row_number() order, an extension beyond
// Spark (docs/semantics.md §5.5, output contract on plan.StreamingTopN).
//
// Each epoch the partitions the input touches are re-ranked over their
// candidates only: the kept rows (first, so that a new row tied with a
// kept one ranks after it) followed by the epoch's rows, through the
// batch Window and Filter operators the plan describes (so ordering, NULL
// order and ties are the batch query's). The new ranking is compared rank
// by rank with the kept one: Update mode emits the ranks whose row
// changed; changed partitions are written to the state.
//
// State: key = the encoded partition key → a flag byte (1: the partition
// has a time key, then its time in µs, 8 bytes) and the kept rows in rank
// order (each a uvarint length and the encoded row). The live copy
// (topNPart) mirrors the stores between epochs and is rebuilt from them
// after a restart or an aborted epoch.
type statefulTopN struct {
	mem       memory.Allocator
	node      *plan.StreamingTopN
	mode      stream.OutputMode
	input     *arrow.Schema
	out       *arrow.Schema
	partCodec *rowCodec // partition columns
	rowCodec  *rowCodec // every input column
	keyCodec  *rowCodec // the upsert key (retracting top-N only)
	timeCol   int
	window    bool
	shift     int64 // µs the time column runs ahead of event time

	state   statePartitions
	live    *topNLive
	pending int64
	// acct reserves the kept rows' Go-heap bytes (topNLive.bytes)
	// against the query's limit.
	acct stateAccount

	lastEvictWm int64
	progress    stream.StateOperatorProgress
}

// topNLive is the kept rows of every partition, by store partition.
type topNLive struct {
	version int64
	parts   []topNPart
	// bytes approximates the Go-heap memory of every partition's kept
	// rows, maintained as entries are set and removed (topNEntry.heap).
	bytes int64
}

type topNPart struct {
	rows map[string]*topNEntry
	due  timeHeap[string]
}

type topNEntry struct {
	rows  [][]byte // encoded rows in rank order
	at    int64    // time key (µs) when timed
	timed bool
	heap  int64 // approximate memory with its key (topNEntryHeap)
}

// topNEntryHeap approximates the memory of a kept entry whose encoded
// state value is valueLen bytes: the rows' bytes (about the value's)
// with a slice header each, the key, the entry and its map slot.
func topNEntryHeap(key string, valueLen, rows int) int64 {
	return int64(len(key)+valueLen) + int64(rows)*24 + 112
}

func newStatefulTopN(mem memory.Allocator, opID int, n *plan.StreamingTopN, mode stream.OutputMode) (*statefulTopN, error) {
	in := n.Input.Schema()
	for _, f := range in.Fields() {
		if f.Type.ID() == arrow.DICTIONARY {
			return nil, fmt.Errorf("arrowstream: streaming top-N: column %s is dictionary-encoded, which it does not keep: cast it to its value type", f.Name)
		}
	}
	all := make([]int, in.NumFields())
	for i := range all {
		all[i] = i
	}
	partCodec, err := newRowCodec(mem, in, n.PartCols)
	if err != nil {
		return nil, fmt.Errorf("arrowstream: streaming top-N: %w", err)
	}
	rowCodec, err := newValueCodec(mem, in, all)
	if err != nil {
		return nil, fmt.Errorf("arrowstream: streaming top-N: %w", err)
	}
	t := &statefulTopN{
		mem: mem, node: n, mode: mode, input: in, out: n.Schema(), partCodec: partCodec, rowCodec: rowCodec,
		timeCol: n.TimeCol, shift: n.TimeShift, lastEvictWm: -1, state: statePartitions{opID: opID},
		acct: newStateAccount(mem, "streaming top-N state"),
	}
	if n.TimeCol >= 0 {
		t.window = in.Field(n.TimeCol).Type.ID() == arrow.STRUCT
	}
	t.state.schema = fmt.Sprintf("topN(%d)", n.N) + describeState("", partCodec.schema, rowCodec.schema)
	if n.UpsertKey != nil {
		if t.keyCodec, err = newRowCodec(mem, in, n.UpsertKey); err != nil {
			return nil, fmt.Errorf("arrowstream: streaming top-N: %w", err)
		}
		// Every row of a partition is kept, not N: another state kind.
		t.state.schema = fmt.Sprintf("topNRetract(%d)", n.N) + describeState("", partCodec.schema, rowCodec.schema)
	}
	return t, nil
}

// times returns the time key of rec's rows (µs) and the array that says
// which are valid, or nils without a time key.
func (t *statefulTopN) times(rec arrow.Record) ([]arrow.Timestamp, arrow.Array) {
	if t.timeCol < 0 {
		return nil, nil
	}
	col := rec.Column(t.timeCol)
	if t.window {
		col = col.(*array.Struct).Field(1)
	}
	return col.(*array.Timestamp).TimestampValues(), col
}

func (t *statefulTopN) Execute(ctx context.Context, ep Epoch, input vector.Operator) (vector.Operator, error) {
	defer input.Close()
	start := time.Now()
	t.progress = stream.StateOperatorProgress{OperatorName: "topN"}
	if err := t.state.bind(ep); err != nil {
		return nil, err
	}
	if err := t.loadLive(ep.ID); err != nil {
		return nil, err
	}
	if err := t.acct.set(t.live.bytes); err != nil {
		return nil, err
	}
	t.live.version, t.pending = -1, ep.ID+1
	recs, err := vector.Drain(ctx, input)
	if err != nil {
		return nil, err
	}
	if t.timeCol >= 0 && ep.HasWatermark {
		dropped, err := dropLate(t.mem, recs, func(rec arrow.Record) []int32 {
			times, valid := t.times(rec)
			limit := arrow.Timestamp(ep.LateWatermarkMs*1000 + t.shift)
			keep := make([]int32, 0, len(times))
			for i, ts := range times {
				if !valid.IsValid(i) || ts > limit {
					keep = append(keep, int32(i))
				}
			}
			return keep
		})
		t.progress.NumRowsDroppedByWatermark += dropped
		if err != nil {
			releaseRecords(recs)
			return nil, err
		}
	}
	out, err := t.rank(ctx, ep, recs)
	releaseRecords(recs)
	if err != nil {
		return nil, err
	}
	t.progress.AllUpdatesTimeMs = time.Since(start).Milliseconds()
	if t.timeCol >= 0 && ep.HasWatermark {
		final, err := t.evict(ep.WatermarkMs)
		if err != nil {
			releaseRecords(out)
			return nil, err
		}
		if t.mode == stream.Append && final != nil {
			out = append(out, final)
		} else if final != nil {
			final.Release()
		}
	}
	if err := t.acct.set(t.live.bytes); err != nil {
		releaseRecords(out)
		return nil, err
	}
	for p, st := range t.state.stores {
		if cw, ok := st.(checkpoint.ChangelogWriter); ok {
			cw.SetLiveRows(int64(len(t.live.parts[p].rows)))
		}
	}
	if t.keyCodec != nil {
		t.progress.CustomMetrics = map[string]int64{"numKeptRows": t.live.countKept()}
	}
	t.lastEvictWm = ep.WatermarkMs
	scan, err := vector.NewScan(t.out, out...)
	releaseRecords(out)
	return scan, err
}

// rank re-ranks the partitions recs touch and returns, in Update mode,
// the rows at the ranks that changed.
func (t *statefulTopN) rank(ctx context.Context, ep Epoch, recs []arrow.Record) ([]arrow.Record, error) {
	// The touched partitions, in first-seen order, and their kept rows.
	type touched struct {
		key string
		p   int
	}
	var parts []touched
	seen := map[string]bool{}
	var kept [][]byte
	for _, rec := range recs {
		if err := t.partCodec.encode(rec); err != nil {
			return nil, err
		}
		for i := 0; i < int(rec.NumRows()); i++ {
			k := t.partCodec.at(i)
			if seen[string(k)] {
				continue
			}
			key := string(k)
			seen[key] = true
			p := t.state.scheme.of(t.partCodec, i, len(t.state.stores))
			parts = append(parts, touched{key, p})
			if e := t.live.parts[p].rows[key]; e != nil {
				kept = append(kept, e.rows...)
			}
		}
	}
	if len(parts) == 0 {
		return nil, nil
	}
	cands := make([]arrow.Record, 0, len(recs)+1)
	if t.keyCodec != nil {
		var err error
		if cands, err = t.retractCandidates(kept, recs); err != nil {
			return nil, err
		}
	} else {
		if len(kept) > 0 {
			cols, err := t.rowCodec.decode(t.mem, kept)
			if err != nil {
				return nil, fmt.Errorf("arrowstream: state of operator %d: decode kept rows: %w", t.state.opID, err)
			}
			cands = append(cands, assemble(t.input, cols, nil, len(kept)))
		}
		cands = append(cands, retainAll(recs)...)
	}
	rankFn := t.rankRows
	if t.keyCodec != nil {
		rankFn = t.rankAll
	}
	ranked, err := rankFn(ctx, ep, cands)
	releaseRecords(cands)
	if err != nil {
		return nil, err
	}
	defer releaseRecords(ranked)

	// The new ranking of each touched partition: (record, row) by rank.
	type at struct{ rec, row int32 }
	lists := make(map[string][]at, len(parts))
	for r, rec := range ranked {
		if err := t.partCodec.encode(rec); err != nil {
			return nil, err
		}
		rn := rec.Column(int(rec.NumCols()) - 1).(*array.Int32).Int32Values()
		for i := 0; i < int(rec.NumRows()); i++ {
			k := string(t.partCodec.at(i))
			l := lists[k]
			pos := int(rn[i]) - 1
			for len(l) <= pos {
				l = append(l, at{-1, -1})
			}
			l[pos] = at{int32(r), int32(i)}
			lists[k] = l
		}
	}
	// Encoded rows of the ranked records, for comparison and storage.
	encoded := make([][][]byte, len(ranked))
	times := make([][]arrow.Timestamp, len(ranked))
	valids := make([]arrow.Array, len(ranked))
	// The candidates' encoded rows are reserved before they are copied
	// (topNCandidateBytes); the partitions' entries then take them over,
	// counted in the estimate without reserving them again (grown).
	meter := newGrowthMeter(&t.acct, t.live.bytes, 1)
	var candBytes int64
	for r, rec := range ranked {
		if err := t.rowCodec.encode(rec); err != nil {
			return nil, err
		}
		candBytes += topNCandidateBytes(t.rowCodec, int(rec.NumRows()))
		if err := meter.note(t.live.bytes + candBytes); err != nil {
			return nil, err
		}
		encoded[r] = make([][]byte, rec.NumRows())
		for i := range encoded[r] {
			encoded[r][i] = append([]byte(nil), t.rowCodec.at(i)...)
		}
		times[r], valids[r] = t.times(rec)
	}
	sel := make([][]int32, len(ranked))
	var value []byte
	for _, tp := range parts {
		l := lists[tp.key]
		part := &t.live.parts[tp.p]
		old := part.rows[tp.key]
		var oldRows [][]byte
		if old != nil {
			oldRows = old.rows
		}
		changed := len(l) != len(oldRows)
		if len(l) < min(len(oldRows), int(t.node.N)) {
			// A filled rank emptied: it cannot happen (rows are only added
			// or replaced within their partition), and would need a deletion.
			return nil, fmt.Errorf("arrowstream: streaming top-N of operator %d: a partition lost ranks (%d rows, %d before)", t.state.opID, len(l), len(oldRows))
		}
		rows := make([][]byte, len(l))
		for pos, a := range l {
			if a.rec < 0 {
				return nil, fmt.Errorf("arrowstream: streaming top-N of operator %d: rank %d missing in a partition", t.state.opID, pos+1)
			}
			rows[pos] = encoded[a.rec][a.row]
			if pos >= len(oldRows) || string(oldRows[pos]) != string(rows[pos]) {
				changed = true
				if pos < int(t.node.N) {
					sel[a.rec] = append(sel[a.rec], a.row)
				}
			}
		}
		if !changed {
			continue
		}
		e := &topNEntry{rows: rows}
		if len(l) > 0 && times[l[0].rec] != nil && valids[l[0].rec].IsValid(int(l[0].row)) {
			e.timed, e.at = true, int64(times[l[0].rec][l[0].row])
		}
		if old == nil && e.timed {
			part.due.push(e.at, tp.key)
		}
		part.rows[tp.key] = e
		value = e.encode(value[:0])
		e.heap = topNEntryHeap(tp.key, len(value), len(rows))
		t.live.bytes += e.heap
		if old != nil {
			t.live.bytes -= old.heap
		}
		if err := meter.grown(t.live.bytes); err != nil {
			return nil, err
		}
		st := t.state.stores[tp.p]
		if cw, ok := st.(checkpoint.ChangelogWriter); ok {
			cw.LogUpsert([]byte(tp.key), value)
		} else if err := st.Put([]byte(tp.key), value); err != nil {
			return nil, fmt.Errorf("arrowstream: write state of operator %d: %w", t.state.opID, err)
		}
		t.progress.NumRowsUpdated++
	}
	if t.mode != stream.Update {
		return nil, nil
	}
	var out []arrow.Record
	for r, s := range sel {
		if len(s) == 0 {
			continue
		}
		rec, err := vector.TakeRecord(t.mem, ranked[r], s)
		if err != nil {
			releaseRecords(out)
			return nil, err
		}
		out = append(out, rec)
	}
	return out, nil
}

// rankRows runs the plan's Window and Filter over cands (owned by the
// caller) and returns the ranked rows.
func (t *statefulTopN) rankRows(ctx context.Context, ep Epoch, cands []arrow.Record) ([]arrow.Record, error) {
	scan, err := vector.NewScan(t.input, cands...)
	if err != nil {
		return nil, err
	}
	env := &plan.Env{BatchTimestamp: time.UnixMilli(ep.BatchTimestampMs)}
	win, err := plan.BuildOperator(ctx, t.mem, t.node.Window, []vector.Operator{scan}, env)
	if err != nil {
		scan.Close()
		return nil, fmt.Errorf("arrowstream: streaming top-N: %w", err)
	}
	filter, err := plan.BuildOperator(ctx, t.mem, t.node.Filter, []vector.Operator{win}, env)
	if err != nil {
		win.Close()
		return nil, fmt.Errorf("arrowstream: streaming top-N: %w", err)
	}
	defer filter.Close()
	return vector.Drain(ctx, filter)
}

// rankAll runs the plan's Window over cands (owned by the caller) and
// returns every row ranked: the retracting top-N keeps them all.
func (t *statefulTopN) rankAll(ctx context.Context, ep Epoch, cands []arrow.Record) ([]arrow.Record, error) {
	scan, err := vector.NewScan(t.input, cands...)
	if err != nil {
		return nil, err
	}
	env := &plan.Env{BatchTimestamp: time.UnixMilli(ep.BatchTimestampMs)}
	win, err := plan.BuildOperator(ctx, t.mem, t.node.Window, []vector.Operator{scan}, env)
	if err != nil {
		scan.Close()
		return nil, fmt.Errorf("arrowstream: streaming top-N: %w", err)
	}
	defer win.Close()
	return vector.Drain(ctx, win)
}

// evict removes the partitions whose time key is at or below the
// watermark and returns their final rankings (nil when none is due).
func (t *statefulTopN) evict(wmMs int64) (arrow.Record, error) {
	start := time.Now()
	limit := wmMs*1000 + t.shift
	var rows [][]byte
	var ranks []int32
	for p, st := range t.state.stores {
		part := &t.live.parts[p]
		cw, logged := st.(checkpoint.ChangelogWriter)
		for part.due.due(limit) {
			e := part.due.pop()
			entry := part.rows[e.v]
			if entry == nil {
				continue
			}
			delete(part.rows, e.v)
			t.live.bytes -= entry.heap
			for i, r := range entry.rows {
				rows = append(rows, r)
				ranks = append(ranks, int32(i+1))
			}
			if logged {
				cw.LogDelete([]byte(e.v))
			} else if err := st.Delete([]byte(e.v)); err != nil {
				return nil, fmt.Errorf("arrowstream: delete state of operator %d partition %d: %w", t.state.opID, p, err)
			}
			t.progress.NumRowsRemoved++
		}
	}
	t.progress.AllRemovalsTimeMs = time.Since(start).Milliseconds()
	if len(rows) == 0 {
		return nil, nil
	}
	cols, err := t.rowCodec.decode(t.mem, rows)
	if err != nil {
		return nil, fmt.Errorf("arrowstream: state of operator %d: decode kept rows: %w", t.state.opID, err)
	}
	b := array.NewInt32Builder(t.mem)
	b.AppendValues(ranks, nil)
	rn := b.NewArray()
	b.Release()
	return assemble(t.out, cols, []arrow.Array{rn}, len(rows)), nil
}

func (e *topNEntry) encode(dst []byte) []byte {
	if e.timed {
		dst = append(dst, 1)
		dst = binary.LittleEndian.AppendUint64(dst, uint64(e.at))
	} else {
		dst = append(dst, 0)
	}
	for _, r := range e.rows {
		dst = binary.AppendUvarint(dst, uint64(len(r)))
		dst = append(dst, r...)
	}
	return dst
}

var errBadTopN = errors.New("malformed top-N state value")

func decodeTopNEntry(v []byte) (*topNEntry, error) {
	if len(v) == 0 {
		return nil, errBadTopN
	}
	e := &topNEntry{}
	if v[0] == 1 {
		if len(v) < 9 {
			return nil, errBadTopN
		}
		e.timed, e.at = true, int64(binary.LittleEndian.Uint64(v[1:9]))
		v = v[9:]
	} else {
		v = v[1:]
	}
	for len(v) > 0 {
		n, k := binary.Uvarint(v)
		if k <= 0 || uint64(len(v)-k) < n {
			return nil, errBadTopN
		}
		e.rows = append(e.rows, append([]byte(nil), v[k:k+int(n)]...))
		v = v[k+int(n):]
	}
	return e, nil
}

// loadLive makes the live rankings mirror version, rebuilding them from
// the open stores when they do not.
func (t *statefulTopN) loadLive(version int64) error {
	if t.live != nil && t.live.version == version && len(t.live.parts) == len(t.state.stores) {
		return nil
	}
	t.live = nil
	live := &topNLive{version: version, parts: make([]topNPart, len(t.state.stores))}
	for p, st := range t.state.stores {
		part := &live.parts[p]
		part.rows = make(map[string]*topNEntry, st.Len())
		var bad error
		err := st.Scan(func(k, v []byte) bool {
			e, err := decodeTopNEntry(v)
			if err != nil {
				bad = fmt.Errorf("key %x: %w", k, err)
				return false
			}
			key := string(k)
			e.heap = topNEntryHeap(key, len(v), len(e.rows))
			live.bytes += e.heap
			part.rows[key] = e
			if e.timed {
				part.due.push(e.at, key)
			}
			return true
		})
		if err == nil {
			err = bad
		}
		if err != nil {
			return fmt.Errorf("arrowstream: rebuild the state of operator %d partition %d from version %d: %w", t.state.opID, p, version, err)
		}
	}
	t.live = live
	return nil
}

func (t *statefulTopN) State() StateDecl { return t.state.decl() }

// Committed: the live rankings now mirror the committed version.
func (t *statefulTopN) Committed(c StateCommit) {
	t.state.committed(&t.progress, c)
	if t.live != nil {
		t.live.version = t.pending
		t.progress.MemoryUsedBytes += t.live.bytes
	}
	t.acct.report(&t.progress.CustomMetrics)
}

// Abort: the live rankings are rebuilt from the version the next epoch
// reads.
func (t *statefulTopN) Abort() {
	t.state.release()
	t.live = nil
	t.acct.release()
}

// Close lets go of the kept rows and their reservation (the query
// stopped).
func (t *statefulTopN) Close() error {
	t.live = nil
	t.acct.release()
	return nil
}

func (t *statefulTopN) ShouldRunAnotherBatch(newWm int64) bool {
	return t.timeCol >= 0 && newWm > t.lastEvictWm
}

// Report implements Op.
func (t *statefulTopN) Report() stream.StateOperatorProgress { return t.progress }

// topNCandidateBytes is the Go-heap bytes of copying the n rows c has
// encoded: each row's bytes and its slice header.
func topNCandidateBytes(c *rowCodec, n int) int64 {
	b := int64(n) * int64(unsafe.Sizeof([]byte(nil)))
	for i := range n {
		b += int64(len(c.at(i)))
	}
	return b
}
