package arrowstream

import (
	"context"
	"encoding/binary"
	"fmt"
	"time"

	"github.com/apache/arrow/go/v17/arrow"
	"github.com/apache/arrow/go/v17/arrow/array"
	"github.com/apache/arrow/go/v17/arrow/memory"

	"github.com/arrowstream/arrowstream/checkpoint"
	"github.com/arrowstream/arrowstream/vector"
)

// statefulDedup is streaming deduplication (SEMANTICS.md §6):
// dropDuplicates(cols) emits the first row of every key and drops later
// ones; dropDuplicatesWithinWatermark(cols) does so only while the first
// row's eventTime + delay is above the watermark.
//
// State: key → the time (µs) at which the entry may be evicted: the key's
// event time when the event-time column is a key, eventTime + delay within
// the watermark, nothing otherwise (state then grows forever, as Spark's).
type statefulDedup struct {
	mem     memory.Allocator
	keys    []int // key columns of the input
	timeCol int   // the input's event-time column, -1 without a watermark
	// evictable: entries carry an eviction time (the event-time column is
	// a key, or within-watermark dedup).
	evictable       bool
	withinWatermark bool
	delayMicros     int64

	keyCodec *rowCodec
	state    statePartitions

	lastEvictWm int64
	progress    StateOperatorProgress
}

func newStatefulDedup(mem memory.Allocator, opID int, input *arrow.Schema, keys []int, timeCol int, withinWatermark bool, delay time.Duration, writer *checkpoint.Writer) (*statefulDedup, error) {
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
		mem: mem, keys: keys, timeCol: timeCol, withinWatermark: withinWatermark,
		delayMicros: delay.Microseconds(), keyCodec: codec, lastEvictWm: -1,
		state: statePartitions{opID: opID, writer: writer, opts: checkpoint.StoreOptions{Allocator: mem}},
	}
	kind := "dedup"
	if withinWatermark {
		kind = "dedupWithinWatermark"
	}
	d.state.schema = describeState(kind, codec.schema, nil)
	if timeCol >= 0 {
		if input.Field(timeCol).Type.ID() != arrow.TIMESTAMP {
			return nil, fmt.Errorf("arrowstream: dropDuplicates: event-time column %s is %s, not a timestamp", input.Field(timeCol).Name, vector.TypeName(input.Field(timeCol).Type))
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

func (d *statefulDedup) execute(ctx context.Context, ep EpochInfo, input vector.Operator) (vector.Operator, error) {
	defer input.Close()
	start := time.Now()
	d.progress = StateOperatorProgress{OperatorName: d.name(), CustomMetrics: map[string]int64{"numDroppedDuplicateRows": 0}}
	if err := d.state.open(ep); err != nil {
		return nil, err
	}
	var out []arrow.Record
	fail := func(err error) (vector.Operator, error) {
		releaseRecords(out)
		return nil, err
	}
	lateLimit := arrow.Timestamp(ep.LateWatermarkMs * 1000)
	var evictAt [8]byte
	for {
		rec, err := input.Next(ctx)
		if err != nil {
			if isEOF(err) {
				break
			}
			return fail(err)
		}
		if err := d.keyCodec.encode(rec); err != nil {
			rec.Release()
			return fail(err)
		}
		var times []arrow.Timestamp
		var timeArr arrow.Array
		if d.timeCol >= 0 {
			timeArr = rec.Column(d.timeCol)
			times = timeArr.(*array.Timestamp).TimestampValues()
		}
		sel := make([]int32, 0, rec.NumRows())
		for i := 0; i < int(rec.NumRows()); i++ {
			if times != nil && ep.HasWatermark && timeArr.IsValid(i) && times[i] <= lateLimit {
				d.progress.NumRowsDroppedByWatermark++
				continue
			}
			key := d.keyCodec.at(i)
			st := d.state.store(d.keyCodec.hash(i))
			if _, dup := st.Get(key); dup {
				d.progress.CustomMetrics["numDroppedDuplicateRows"]++
				continue
			}
			var value []byte
			if d.evictable && timeArr.IsValid(i) {
				at := int64(times[i])
				if d.withinWatermark {
					at += d.delayMicros
				}
				binary.LittleEndian.PutUint64(evictAt[:], uint64(at))
				value = evictAt[:]
			}
			st.Put(key, value)
			d.progress.NumRowsUpdated++
			sel = append(sel, int32(i))
		}
		if len(sel) > 0 {
			kept, err := vector.TakeRecord(d.mem, rec, sel)
			if err != nil {
				rec.Release()
				return fail(err)
			}
			out = append(out, kept)
		}
		rec.Release()
	}
	d.progress.AllUpdatesTimeMs = time.Since(start).Milliseconds()
	if d.evictable && ep.HasWatermark {
		d.evict(ep.WatermarkMs)
	}
	d.lastEvictWm = ep.WatermarkMs
	scan, err := vector.NewScan(input.Schema(), out...)
	releaseRecords(out)
	return scan, err
}

// evict removes the entries whose eviction time is at or below the
// watermark (inclusive, as Spark's predicate).
func (d *statefulDedup) evict(wmMs int64) {
	start := time.Now()
	limit := wmMs * 1000
	removed := 0
	for _, st := range d.state.stores {
		// Collect first: a store is not modified while it is ranged over.
		var gone [][]byte
		st.Scan(func(k, v []byte) bool {
			if len(v) == 8 && int64(binary.LittleEndian.Uint64(v)) <= limit {
				gone = append(gone, append([]byte(nil), k...))
			}
			return true
		})
		for _, k := range gone {
			st.Delete(k)
		}
		removed += len(gone)
	}
	d.progress.NumRowsRemoved += int64(removed)
	d.progress.AllRemovalsTimeMs = time.Since(start).Milliseconds()
}

func (d *statefulDedup) commit(ctx context.Context) error { return d.state.commit(ctx, &d.progress) }
func (d *statefulDedup) abort()                           { d.state.abort() }

func (d *statefulDedup) shouldRunAnotherBatch(newWm int64) bool {
	return d.evictable && newWm > d.lastEvictWm
}
