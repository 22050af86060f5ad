package stateful

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"time"

	"github.com/apache/arrow/go/v17/arrow"
	"github.com/apache/arrow/go/v17/arrow/array"
	"github.com/apache/arrow/go/v17/arrow/memory"

	"github.com/arrowstream/arrowstream/arrowstream/stream"
	"github.com/arrowstream/arrowstream/checkpoint"
	"github.com/arrowstream/arrowstream/vector"
)

// statefulDedup is streaming deduplication (docs/semantics.md §6):
// dropDuplicates(cols) emits the first row of every key and drops later
// ones; dropDuplicatesWithinWatermark(cols) does so only while the first
// row's eventTime + delay is above the watermark.
//
// State: key → the time (µs) at which the entry may be evicted: the key's
// event time when the event-time column is a key, eventTime + delay within
// the watermark, nothing otherwise (state then grows forever, as Spark's).
type statefulDedup struct {
	mem     memory.Allocator
	input   *arrow.Schema
	keys    []int // key columns of the input
	timeCol int   // the input's event-time column, -1 without a watermark
	// evictable: entries carry an eviction time (the event-time column is
	// a key, or within-watermark dedup).
	evictable       bool
	withinWatermark bool
	delayMicros     int64

	keyCodec   *rowCodec   // splits the input by partition
	partCodecs []*rowCodec // one per partition, see codecFor
	state      statePartitions
	live       *dedupLive // nil until the first epoch loads it
	pending    int64      // the version live mirrors once this epoch commits
	// acct reserves the live keys' Go-heap bytes against the query's
	// limit.
	acct stateAccount
	// views reserves the live snapshot views handed to the stores.
	views viewAccount

	lastEvictWm int64
	progress    stream.StateOperatorProgress
}

func newStatefulDedup(mem memory.Allocator, opID int, input *arrow.Schema, keys []int, timeCol int, withinWatermark bool, delay time.Duration) (*statefulDedup, error) {
	if withinWatermark && timeCol < 0 {
		return nil, fmt.Errorf("arrowstream: dropDuplicatesWithinWatermark requires a watermark on the input")
	}
	if len(keys) == 0 {
		for i := 0; i < input.NumFields(); i++ {
			keys = append(keys, i)
		}
	}
	codec, err := newRowCodec(mem, input, keys)
	if err != nil {
		return nil, fmt.Errorf("arrowstream: dropDuplicates: %w", err)
	}
	d := &statefulDedup{
		mem: mem, input: input, keys: keys, timeCol: timeCol, withinWatermark: withinWatermark,
		delayMicros: delay.Microseconds(), keyCodec: codec, lastEvictWm: -1,
		state: statePartitions{opID: opID},
	}
	d.acct = newStateAccount(mem, "deduplication state ("+d.name()+")")
	d.views = newViewAccount(mem, "deduplication state ("+d.name()+")")
	kind := "dedup"
	if withinWatermark {
		kind = "dedupWithinWatermark"
	}
	d.state.schema = describeState(kind, codec.schema, nil)
	if timeCol >= 0 {
		// A window struct is the event time of an aggregation's output
		// (a dedup after a windowed aggregation): Spark compares its end.
		if t := input.Field(timeCol).Type; t.ID() != arrow.TIMESTAMP && !arrow.TypeEqual(t, vector.WindowType) {
			return nil, fmt.Errorf("arrowstream: dropDuplicates: event-time column %s is %s, not a timestamp or window", input.Field(timeCol).Name, vector.TypeName(t))
		}
		for _, k := range keys {
			if k == timeCol {
				d.evictable = true
			}
		}
		d.evictable = d.evictable || withinWatermark
	}
	return d, nil
}

func (d *statefulDedup) name() string {
	if d.withinWatermark {
		return "dedupeWithinWatermark"
	}
	return "dedupe"
}

// dedupCounts are one partition's counters of an epoch.
type dedupCounts struct{ late, dups, updated, removed int64 }

// codecFor returns partition p's own key codec, creating it on first use
// (a codec holds encode buffers, so partitions running in parallel cannot
// share one).
func (d *statefulDedup) codecFor(p int) (*rowCodec, error) {
	for len(d.partCodecs) <= p {
		c, err := newRowCodec(d.mem, d.input, d.keys)
		if err != nil {
			return nil, err
		}
		d.partCodecs = append(d.partCodecs, c)
	}
	return d.partCodecs[p], nil
}

func (d *statefulDedup) Execute(ctx context.Context, ep Epoch, input vector.Operator) (vector.Operator, error) {
	defer input.Close()
	start := time.Now()
	d.progress = stream.StateOperatorProgress{OperatorName: d.name(), CustomMetrics: map[string]int64{"numDroppedDuplicateRows": 0}}
	if err := d.state.bind(ep); err != nil {
		return nil, err
	}
	if err := d.loadLiveFor(ep); err != nil {
		return nil, err
	}
	if err := d.acct.set(d.live.bytes() + d.live.spilledBytes()); err != nil {
		return nil, err
	}
	d.live.version, d.pending = -1, ep.ID+1
	recs, err := vector.Drain(ctx, input)
	if err != nil {
		return nil, err
	}
	// Rows are split by their key's partition (keeping their order, so the
	// first row of a key in the epoch is the one kept) and the partitions
	// deduplicated in parallel, as Spark runs one task per partition.
	n := len(d.state.stores)
	byPart := [][]arrow.Record{recs}
	if n > 1 {
		byPart, err = splitByPartition(d.mem, d.state.scheme, d.keyCodec, recs, n)
		releaseRecords(recs)
		if err != nil {
			return nil, err
		}
	}
	defer func() {
		for _, part := range byPart {
			releaseRecords(part)
		}
	}()
	codecs := make([]*rowCodec, n)
	for p := range codecs {
		if codecs[p], err = d.codecFor(p); err != nil {
			return nil, err
		}
	}
	results := make([][]arrow.Record, n)
	counts := make([]dedupCounts, n)
	errs := runPartitions(d.state.opID, byPart, func(p int) error {
		var err error
		results[p], err = d.dedupPartition(ep, d.state.stores[p], &d.live.parts[p], codecs[p], byPart[p], &counts[p])
		return err
	})
	var out []arrow.Record
	for p := range results {
		out = append(out, results[p]...)
		d.progress.NumRowsDroppedByWatermark += counts[p].late
		d.progress.CustomMetrics["numDroppedDuplicateRows"] += counts[p].dups
		d.progress.NumRowsUpdated += counts[p].updated
	}
	if err := errors.Join(errs...); err != nil {
		releaseRecords(out)
		return nil, err
	}
	d.progress.AllUpdatesTimeMs = time.Since(start).Milliseconds()
	if d.evictable && ep.HasWatermark {
		if err := d.evict(ep.WatermarkMs); err != nil {
			releaseRecords(out)
			return nil, err
		}
	}
	// Stores that take a changelog learn their key count (every epoch,
	// so that they keep no decoded copy of the keys the live maps hold).
	for p, st := range d.state.stores {
		if cw, ok := st.(checkpoint.ChangelogWriter); ok && d.live.parts[p].spill == nil {
			cw.SetLiveRows(int64(len(d.live.parts[p].seen)))
		}
	}
	if err := d.offerLive(); err != nil {
		releaseRecords(out)
		return nil, err
	}
	d.live.trimSpilled()
	if err := d.acct.set(d.live.bytes() + d.live.spilledBytes()); err != nil {
		releaseRecords(out)
		return nil, err
	}
	d.lastEvictWm = ep.WatermarkMs
	scan, err := vector.NewScan(input.Schema(), out...)
	releaseRecords(out)
	return scan, err
}

// dedupPartition keeps the rows of recs (one partition's, in input order)
// whose key has not been seen (live: the partition's keys, which mirror
// st) and records their keys in both; it returns the kept rows (owned by
// the caller).
func (d *statefulDedup) dedupPartition(ep Epoch, st checkpoint.StateStore, live *dedupPart, codec *rowCodec, recs []arrow.Record, c *dedupCounts) ([]arrow.Record, error) {
	var out []arrow.Record
	lateLimit := arrow.Timestamp(ep.LateWatermarkMs * 1000)
	var evictAt [8]byte
	cw, logged := st.(checkpoint.ChangelogWriter)
	logged = logged && live.spill == nil
	meter := newGrowthMeter(&d.acct, live.bytes, len(d.state.stores))
	for _, rec := range recs {
		if err := codec.encode(rec); err != nil {
			releaseRecords(out)
			return nil, err
		}
		if live.spill != nil {
			if err := readBackSeen(st, live, codec, int(rec.NumRows())); err != nil {
				releaseRecords(out)
				return nil, fmt.Errorf("arrowstream: read back state of operator %d: %w", d.state.opID, err)
			}
		}
		var times []arrow.Timestamp
		var timeValid func(int) bool
		if d.timeCol >= 0 {
			times, timeValid = eventTimes(rec.Column(d.timeCol))
		}
		sel := make([]int32, 0, rec.NumRows())
		for i := 0; i < int(rec.NumRows()); i++ {
			if times != nil && ep.HasWatermark && timeValid(i) && times[i] <= lateLimit {
				c.late++
				continue
			}
			key := codec.at(i)
			if _, dup := live.seen[string(key)]; dup {
				c.dups++
				continue
			}
			var value []byte
			var at int64
			timed := d.evictable && timeValid(i)
			if timed {
				at = int64(times[i])
				if d.withinWatermark {
					at += d.delayMicros
				}
				binary.LittleEndian.PutUint64(evictAt[:], uint64(at))
				value = evictAt[:]
			}
			live.add(key, at, timed)
			if err := meter.note(live.bytes); err != nil {
				releaseRecords(out)
				return nil, err
			}
			if logged {
				cw.LogUpsert(key, value)
			} else if err := st.Put(key, value); err != nil {
				releaseRecords(out)
				return nil, fmt.Errorf("arrowstream: write state of operator %d: %w", d.state.opID, err)
			}
			c.updated++
			sel = append(sel, int32(i))
		}
		if len(sel) > 0 {
			kept, err := vector.TakeRecord(d.mem, rec, sel)
			if err != nil {
				releaseRecords(out)
				return nil, err
			}
			out = append(out, kept)
		}
	}
	return out, nil
}

// evict removes the entries whose eviction time is at or below the
// watermark (inclusive, as Spark's predicate): each partition pops its due
// keys from its time index, partitions in parallel.
func (d *statefulDedup) evict(wmMs int64) error {
	start := time.Now()
	limit := wmMs * 1000
	removed := make([]int64, len(d.state.stores))
	errs := runEachPartition(d.state.opID, len(d.state.stores), func(int) bool { return true }, func(p int) error {
		st := d.state.stores[p]
		gone := d.live.parts[p].evict(limit)
		cw, logged := st.(checkpoint.ChangelogWriter)
		logged = logged && d.live.parts[p].spill == nil
		for _, k := range gone {
			if logged {
				cw.LogDelete([]byte(k))
			} else if err := st.Delete([]byte(k)); err != nil {
				return fmt.Errorf("arrowstream: delete state of operator %d partition %d: %w", d.state.opID, p, err)
			}
		}
		removed[p] = int64(len(gone))
		return nil
	})
	for _, r := range removed {
		d.progress.NumRowsRemoved += r
	}
	d.progress.AllRemovalsTimeMs = time.Since(start).Milliseconds()
	return errors.Join(errs...)
}

func (d *statefulDedup) State() StateDecl { return d.state.decl() }

// Committed: the live keys now mirror the committed version; their bytes
// count in the operator's memory.
func (d *statefulDedup) Committed(c StateCommit) {
	d.state.committed(&d.progress, c)
	if d.live != nil {
		d.live.version = d.pending
		d.progress.MemoryUsedBytes += d.live.bytes() + d.live.spilledBytes()
	}
	d.acct.report(&d.progress.CustomMetrics)
}

// Abort: the epoch's updates were discarded; the live keys are rebuilt
// from the version the next epoch reads.
func (d *statefulDedup) Abort() {
	d.state.release()
	d.live = nil
	d.acct.release()
}

// Close lets go of the live keys and their reservation (the query
// stopped).
func (d *statefulDedup) Close() error {
	d.live = nil
	d.acct.release()
	return nil
}

// ShouldRunAnotherBatch asks for a no-data epoch whenever the watermark
// the operator sees rose, evictable or not: Spark's
// StreamingDeduplicateExec always has an eviction watermark, so a dedup
// whose keys hold no event time still runs the empty epoch after a
// watermark on another column moved (SEMANTICS.md §3.5).
func (d *statefulDedup) ShouldRunAnotherBatch(newWm int64) bool {
	return newWm > d.lastEvictWm
}

// Report implements Op.
func (d *statefulDedup) Report() stream.StateOperatorProgress { return d.progress }

// eventTimes returns the event time (µs) of every row of an event-time
// column and whether a row has one: a timestamp's value, or a window's
// end (Spark's watermark predicate compares window.end).
func eventTimes(col arrow.Array) ([]arrow.Timestamp, func(int) bool) {
	if st, ok := col.(*array.Struct); ok {
		end := st.Field(1)
		return end.(*array.Timestamp).TimestampValues(), func(i int) bool { return st.IsValid(i) && end.IsValid(i) }
	}
	return col.(*array.Timestamp).TimestampValues(), col.IsValid
}
