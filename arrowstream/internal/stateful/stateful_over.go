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

// statefulOver runs a plan.StreamingOver: aggregates over a ROWS frame of
// the n preceding rows and the current one, per partition, over an
// append-only stream ordered by a watermarked event-time column, an
// extension beyond Spark (docs/semantics.md §5.6), as Flink's
// OverAggregate.
//
// A row waits until the watermark passes its time (it is then final: a
// row at or below the late watermark is dropped on arrival, so no row can
// come before it any more). Each epoch the partitions with rows the
// watermark passed are evaluated by the batch Window operator the plan
// describes, over their kept history (the last n rows emitted, which all
// come before the new rows in event time) followed by the passed rows in
// arrival order; the history's rows are only context, the passed rows
// are emitted with their aggregates, in (ORDER BY, arrival) order per
// partition, and the partition's last n rows become its history. So
// frames, NULL handling and result types are the batch query's.
//
// State: key = the encoded partition key → uvarint(history rows), the
// history rows (uvarint length, encoded row), then the waiting rows
// (8-byte time in µs, uvarint length, encoded row), in arrival order. The
// live copy (overPart) mirrors the stores between epochs and is rebuilt
// from them after a restart or an aborted epoch.
type statefulOver struct {
	mem       memory.Allocator
	node      *plan.StreamingOver
	input     *arrow.Schema
	out       *arrow.Schema
	partCodec *rowCodec // partition columns
	rowCodec  *rowCodec // every input column

	state   statePartitions
	live    *overLive
	pending int64
	// acct reserves the live entries' Go-heap bytes (overLive.bytes)
	// against the query's limit.
	acct stateAccount

	lastWm   int64
	progress stream.StateOperatorProgress
}

type overLive struct {
	version int64
	parts   []overPart
	waiting int64 // rows waiting for the watermark, every partition's
	// bytes approximates the Go-heap memory of every entry, maintained
	// as entries are written and removed (overEntry.heap).
	bytes int64
}

type overPart struct {
	rows map[string]*overEntry
	// wait are the keys with waiting rows.
	wait map[string]struct{}
}

type overEntry struct {
	hist [][]byte  // the last n rows emitted, in order
	wait []overRow // rows the watermark has not passed, in arrival order
	// heap approximates its memory as last written (overEntryHeap).
	heap int64
}

// overEntryHeap approximates the memory of an entry whose encoded state
// value is valueLen bytes: the rows' bytes (about the value's) with a
// row header each, the key, the entry and its map slots.
func overEntryHeap(key string, valueLen, rows int) int64 {
	return int64(len(key)+valueLen) + int64(rows)*32 + 160
}

type overRow struct {
	at  int64 // time column (µs)
	row []byte
}

func newStatefulOver(mem memory.Allocator, opID int, n *plan.StreamingOver) (*statefulOver, error) {
	in := n.Input.Schema()
	for _, f := range in.Fields() {
		if f.Type.ID() == arrow.DICTIONARY {
			return nil, fmt.Errorf("arrowstream: streaming OVER: column %s is dictionary-encoded, which it does not keep: cast it to its value type", f.Name)
		}
	}
	all := make([]int, in.NumFields())
	for i := range all {
		all[i] = i
	}
	partCodec, err := newRowCodec(mem, in, n.PartCols)
	if err != nil {
		return nil, fmt.Errorf("arrowstream: streaming OVER: %w", err)
	}
	rowCodec, err := newValueCodec(mem, in, all)
	if err != nil {
		return nil, fmt.Errorf("arrowstream: streaming OVER: %w", err)
	}
	o := &statefulOver{mem: mem, node: n, input: in, out: n.Schema(), partCodec: partCodec, rowCodec: rowCodec,
		lastWm: -1, state: statePartitions{opID: opID}, acct: newStateAccount(mem, "streaming OVER state")}
	o.state.schema = fmt.Sprintf("over(%d)", n.Preceding) + describeState("", partCodec.schema, rowCodec.schema)
	return o, nil
}

func (o *statefulOver) Execute(ctx context.Context, ep Epoch, input vector.Operator) (vector.Operator, error) {
	defer input.Close()
	start := time.Now()
	o.progress = stream.StateOperatorProgress{OperatorName: "over"}
	if err := o.state.bind(ep); err != nil {
		return nil, err
	}
	if err := o.loadLive(ep.ID); err != nil {
		return nil, err
	}
	if err := o.acct.set(o.live.bytes); err != nil {
		return nil, err
	}
	o.live.version, o.pending = -1, ep.ID+1
	recs, err := vector.Drain(ctx, input)
	if err != nil {
		return nil, err
	}
	// Rows without a time, or at or below the late watermark, are dropped.
	late := int64(-1 << 63)
	if ep.HasWatermark {
		late = ep.LateWatermarkMs*1000 + o.node.TimeShift
	}
	dropped, err := dropLate(o.mem, recs, func(rec arrow.Record) []int32 {
		col := rec.Column(o.node.TimeCol).(*array.Timestamp)
		times := col.TimestampValues()
		keep := make([]int32, 0, len(times))
		for i, ts := range times {
			if col.IsValid(i) && int64(ts) > late {
				keep = append(keep, int32(i))
			}
		}
		return keep
	})
	o.progress.NumRowsDroppedByWatermark = dropped
	if err != nil {
		releaseRecords(recs)
		return nil, err
	}
	dirty := make([]map[string]struct{}, len(o.state.stores))
	for p := range dirty {
		dirty[p] = map[string]struct{}{}
	}
	// One meter for the epoch: the waiting rows are reserved as add
	// copies them, and write's entries count them without reserving them
	// again (grown).
	meter := newGrowthMeter(&o.acct, o.live.bytes, 1)
	err = o.add(recs, dirty, &meter)
	releaseRecords(recs)
	if err != nil {
		return nil, err
	}
	var out []arrow.Record
	if ep.HasWatermark {
		if out, err = o.emit(ctx, ep, ep.WatermarkMs*1000+o.node.TimeShift, dirty); err != nil {
			return nil, err
		}
	}
	err = o.write(dirty, &meter)
	if err == nil {
		err = o.acct.set(o.live.bytes)
	}
	if err != nil {
		releaseRecords(out)
		return nil, err
	}
	o.progress.AllUpdatesTimeMs = time.Since(start).Milliseconds()
	o.progress.CustomMetrics = map[string]int64{"numWaitingRows": o.live.waiting}
	o.lastWm = ep.WatermarkMs
	scan, err := vector.NewScan(o.out, out...)
	releaseRecords(out)
	return scan, err
}

// add appends recs' rows to their partitions' waiting rows.
func (o *statefulOver) add(recs []arrow.Record, dirty []map[string]struct{}, meter *growthMeter) error {
	var added int64 // the rows copied, before their entries count them
	for _, rec := range recs {
		if err := o.partCodec.encode(rec); err != nil {
			return err
		}
		if err := o.rowCodec.encode(rec); err != nil {
			return err
		}
		times := rec.Column(o.node.TimeCol).(*array.Timestamp).TimestampValues()
		for i := 0; i < int(rec.NumRows()); i++ {
			p := o.state.scheme.of(o.partCodec, i, len(o.state.stores))
			part := &o.live.parts[p]
			key := string(o.partCodec.at(i))
			row := o.rowCodec.at(i)
			added += int64(len(row)) + overRowBytes
			e := part.rows[key]
			if e == nil {
				e = &overEntry{}
				part.rows[key] = e
				added += int64(len(key)) + overNewEntryBytes
			}
			if err := meter.note(o.live.bytes + added); err != nil {
				return err
			}
			e.wait = append(e.wait, overRow{int64(times[i]), append([]byte(nil), row...)})
			part.wait[key] = struct{}{}
			dirty[p][key] = struct{}{}
			o.live.waiting++
		}
	}
	return nil
}

// emit evaluates the rows at or below limit (µs) of every partition and
// returns them with their aggregates.
func (o *statefulOver) emit(ctx context.Context, ep Epoch, limit int64, dirty []map[string]struct{}) ([]arrow.Record, error) {
	type ready struct {
		key  string
		p    int
		hist int
	}
	var parts []ready
	var rows [][]byte
	histOf := map[string]int{}
	for p := range o.live.parts {
		part := &o.live.parts[p]
		for key := range part.wait {
			e := part.rows[key]
			var passed, rest []overRow
			for _, r := range e.wait {
				if r.at <= limit {
					passed = append(passed, r)
				} else {
					rest = append(rest, r)
				}
			}
			if len(passed) == 0 {
				continue
			}
			parts = append(parts, ready{key, p, len(e.hist)})
			histOf[key] = len(e.hist)
			rows = append(rows, e.hist...)
			for _, r := range passed {
				rows = append(rows, r.row)
			}
			e.wait = rest
			o.live.waiting -= int64(len(passed))
			if len(rest) == 0 {
				delete(part.wait, key)
			}
			dirty[p][key] = struct{}{}
		}
	}
	if len(parts) == 0 {
		return nil, nil
	}
	cols, err := o.rowCodec.decode(o.mem, rows)
	if err != nil {
		return nil, fmt.Errorf("arrowstream: state of operator %d: decode kept rows: %w", o.state.opID, err)
	}
	cand := assemble(o.input, cols, nil, len(rows))
	evaluated, err := o.evaluate(ctx, ep, cand)
	cand.Release()
	if err != nil {
		return nil, err
	}
	defer releaseRecords(evaluated)
	// Per partition, in output order: skip the history rows, emit the
	// rest, and keep the last n rows as the new history.
	seen := map[string]int{}
	last := map[string][][]byte{}
	n := int(o.node.Preceding)
	var out []arrow.Record
	for _, rec := range evaluated {
		if err := o.partCodec.encode(rec); err != nil {
			releaseRecords(out)
			return nil, err
		}
		if err := o.rowCodec.encode(rec); err != nil {
			releaseRecords(out)
			return nil, err
		}
		sel := make([]int32, 0, rec.NumRows())
		for i := 0; i < int(rec.NumRows()); i++ {
			key := string(o.partCodec.at(i))
			if seen[key] >= histOf[key] {
				sel = append(sel, int32(i))
			}
			seen[key]++
			if n > 0 {
				l := append(last[key], append([]byte(nil), o.rowCodec.at(i)...))
				if len(l) > 2*n {
					l = append(l[:0:0], l[len(l)-n:]...)
				}
				last[key] = l
			}
		}
		if len(sel) == 0 {
			continue
		}
		taken, err := vector.TakeRecord(o.mem, rec, sel)
		if err != nil {
			releaseRecords(out)
			return nil, err
		}
		out = append(out, taken)
	}
	for _, r := range parts {
		l := last[r.key]
		if len(l) > n {
			l = l[len(l)-n:]
		}
		o.live.parts[r.p].rows[r.key].hist = l
	}
	return out, nil
}

// evaluate runs the plan's Window over cand (owned by the caller).
func (o *statefulOver) evaluate(ctx context.Context, ep Epoch, cand arrow.Record) ([]arrow.Record, error) {
	scan, err := vector.NewScan(o.input, cand)
	if err != nil {
		return nil, err
	}
	env := &plan.Env{BatchTimestamp: time.UnixMilli(ep.BatchTimestampMs)}
	win, err := plan.BuildOperator(ctx, o.mem, o.node.Window, []vector.Operator{scan}, env)
	if err != nil {
		scan.Close()
		return nil, fmt.Errorf("arrowstream: streaming OVER: %w", err)
	}
	defer win.Close()
	return vector.Drain(ctx, win)
}

// write stores the dirty partitions' entries.
func (o *statefulOver) write(dirty []map[string]struct{}, meter *growthMeter) error {
	var value []byte
	for p, keys := range dirty {
		st := o.state.stores[p]
		cw, logged := st.(checkpoint.ChangelogWriter)
		for key := range keys {
			e := o.live.parts[p].rows[key]
			if len(e.hist) == 0 && len(e.wait) == 0 {
				delete(o.live.parts[p].rows, key)
				o.live.bytes -= e.heap
				if logged {
					cw.LogDelete([]byte(key))
				} else if err := st.Delete([]byte(key)); err != nil {
					return fmt.Errorf("arrowstream: delete state of operator %d partition %d: %w", o.state.opID, p, err)
				}
				continue
			}
			value = e.encode(value[:0])
			heap := overEntryHeap(key, len(value), len(e.hist)+len(e.wait))
			o.live.bytes += heap - e.heap
			e.heap = heap
			if err := meter.grown(o.live.bytes); err != nil {
				return err
			}
			if logged {
				cw.LogUpsert([]byte(key), value)
			} else if err := st.Put([]byte(key), value); err != nil {
				return fmt.Errorf("arrowstream: write state of operator %d: %w", o.state.opID, err)
			}
			o.progress.NumRowsUpdated++
		}
		if logged {
			cw.SetLiveRows(int64(len(o.live.parts[p].rows)))
		}
	}
	return nil
}

func (e *overEntry) encode(dst []byte) []byte {
	dst = binary.AppendUvarint(dst, uint64(len(e.hist)))
	for _, r := range e.hist {
		dst = binary.AppendUvarint(dst, uint64(len(r)))
		dst = append(dst, r...)
	}
	for _, r := range e.wait {
		dst = binary.LittleEndian.AppendUint64(dst, uint64(r.at))
		dst = binary.AppendUvarint(dst, uint64(len(r.row)))
		dst = append(dst, r.row...)
	}
	return dst
}

var errBadOver = errors.New("malformed streaming OVER state value")

func decodeOverEntry(v []byte) (*overEntry, error) {
	nh, k := binary.Uvarint(v)
	if k <= 0 {
		return nil, errBadOver
	}
	v = v[k:]
	e := &overEntry{}
	chunk := func() ([]byte, error) {
		n, k := binary.Uvarint(v)
		if k <= 0 || uint64(len(v)-k) < n {
			return nil, errBadOver
		}
		r := append([]byte(nil), v[k:k+int(n)]...)
		v = v[k+int(n):]
		return r, nil
	}
	for i := uint64(0); i < nh; i++ {
		r, err := chunk()
		if err != nil {
			return nil, err
		}
		e.hist = append(e.hist, r)
	}
	for len(v) > 0 {
		if len(v) < 8 {
			return nil, errBadOver
		}
		at := int64(binary.LittleEndian.Uint64(v))
		v = v[8:]
		r, err := chunk()
		if err != nil {
			return nil, err
		}
		e.wait = append(e.wait, overRow{at, r})
	}
	return e, nil
}

// loadLive makes the live state mirror version, rebuilding it from the
// open stores when it does not.
func (o *statefulOver) loadLive(version int64) error {
	if o.live != nil && o.live.version == version && len(o.live.parts) == len(o.state.stores) {
		return nil
	}
	o.live = nil
	live := &overLive{version: version, parts: make([]overPart, len(o.state.stores))}
	for p, st := range o.state.stores {
		part := &live.parts[p]
		part.rows = make(map[string]*overEntry, st.Len())
		part.wait = map[string]struct{}{}
		var bad error
		err := st.Scan(func(k, v []byte) bool {
			e, err := decodeOverEntry(v)
			if err != nil {
				bad = fmt.Errorf("key %x: %w", k, err)
				return false
			}
			key := string(k)
			e.heap = overEntryHeap(key, len(v), len(e.hist)+len(e.wait))
			live.bytes += e.heap
			part.rows[key] = e
			if len(e.wait) > 0 {
				part.wait[key] = struct{}{}
				live.waiting += int64(len(e.wait))
			}
			return true
		})
		if err == nil {
			err = bad
		}
		if err != nil {
			return fmt.Errorf("arrowstream: rebuild the state of operator %d partition %d from version %d: %w", o.state.opID, p, version, err)
		}
	}
	o.live = live
	return nil
}

func (o *statefulOver) State() StateDecl { return o.state.decl() }

// Committed: the live state now mirrors the committed version.
func (o *statefulOver) Committed(c StateCommit) {
	o.state.committed(&o.progress, c)
	if o.live != nil {
		o.live.version = o.pending
		o.progress.MemoryUsedBytes += o.live.bytes
	}
	o.acct.report(&o.progress.CustomMetrics)
}

// Abort: the live state is rebuilt from the version the next epoch reads.
func (o *statefulOver) Abort() {
	o.state.release()
	o.live = nil
	o.acct.release()
}

// Close lets go of the live entries and their reservation (the query
// stopped).
func (o *statefulOver) Close() error {
	o.live = nil
	o.acct.release()
	return nil
}

// ShouldRunAnotherBatch: rows wait for a watermark that has moved.
func (o *statefulOver) ShouldRunAnotherBatch(newWm int64) bool {
	return newWm > o.lastWm && (o.live == nil || o.live.waiting > 0)
}

// Report implements Op.
func (o *statefulOver) Report() stream.StateOperatorProgress { return o.progress }

// A waiting row's bytes besides its encoded row (its time and slice
// header, its share of the list's growth), and a new partition entry's
// besides its key (the map slot, the string, the entry).
const (
	overRowBytes      = int64(unsafe.Sizeof(overRow{})) * 3 / 2
	overNewEntryBytes = 160
)
