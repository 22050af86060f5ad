package stateful

import (
	"context"
	"encoding/binary"
	"fmt"
	"time"

	"github.com/apache/arrow/go/v17/arrow"
	"github.com/apache/arrow/go/v17/arrow/array"
	"github.com/apache/arrow/go/v17/arrow/bitutil"
	"github.com/apache/arrow/go/v17/arrow/memory"

	"github.com/arrowstream/arrowstream/arrowstream/stream"
	"github.com/arrowstream/arrowstream/checkpoint"
	"github.com/arrowstream/arrowstream/plan"
	"github.com/arrowstream/arrowstream/vector"
)

// statefulDistinctMark runs a plan.DistinctMark: the state of a streaming
// distinct aggregate (an extension beyond Spark, docs/semantics.md). For
// every distinct set j it remembers the tuples (grouping keys, distinct
// arguments) seen so far, and nulls set j's marked column in every row
// whose tuple was seen before (in an earlier epoch or earlier in this
// one), so that the plain aggregate above counts each value once per
// group.
//
// State: key = j (one byte) + the encoded tuple → the eviction time (µs,
// 8 bytes) when the group carries a watermarked time key, nothing
// otherwise. Tuples are routed to partitions by their own hash. In Append
// and Update mode a tuple is evicted when the watermark reaches its
// group's time (as the aggregation evicts the group), and late rows (at
// or below the late watermark, which the aggregation drops) are not
// remembered; in Complete mode nothing is evicted. The live sets mirror
// the stores between epochs (dedupPart, as the deduplication's); the
// stores take the epoch's new and evicted tuples through the changelog
// when they support it.
type statefulDistinctMark struct {
	mem      memory.Allocator
	input    *arrow.Schema
	sets     []plan.DistinctSet
	codecs   []*rowCodec // by set: keys + the set's columns
	timeCol  int
	window   bool // the time column is a window struct (its end counts)
	evicting bool

	state   statePartitions
	live    *dedupLive
	pending int64
	// acct reserves the live sets' Go-heap bytes against the query's
	// limit.
	acct stateAccount
	// meter reserves the epoch's growth as it happens; est is the
	// live state's estimate it follows (the partitions run in turn).
	meter growthMeter
	est   int64

	lastEvictWm int64
	progress    stream.StateOperatorProgress
}

func newStatefulDistinctMark(mem memory.Allocator, opID int, d *plan.DistinctMark, mode stream.OutputMode) (*statefulDistinctMark, error) {
	in := d.Input.Schema()
	if len(d.Sets) == 0 || len(d.Sets) > 255 {
		return nil, fmt.Errorf("arrowstream: distinct aggregate: %d distinct argument lists (1 to 255 supported)", len(d.Sets))
	}
	s := &statefulDistinctMark{
		mem: mem, input: in, sets: d.Sets, timeCol: d.TimeCol, lastEvictWm: -1,
		evicting: d.TimeCol >= 0 && mode != stream.Complete,
		state:    statePartitions{opID: opID},
	}
	s.acct = newStateAccount(mem, "streaming DISTINCT aggregate state")
	if d.TimeCol >= 0 {
		switch dt := in.Field(d.TimeCol).Type.(type) {
		case *arrow.TimestampType:
		case *arrow.StructType:
			if !arrow.TypeEqual(dt, vector.WindowType) {
				return nil, fmt.Errorf("arrowstream: distinct aggregate: time key %s is a %s, not a timestamp or window", in.Field(d.TimeCol).Name, vector.TypeName(dt))
			}
			s.window = true
		default:
			return nil, fmt.Errorf("arrowstream: distinct aggregate: time key %s is a %s, not a timestamp or window", in.Field(d.TimeCol).Name, vector.TypeName(dt))
		}
	}
	var desc string
	for _, set := range d.Sets {
		cols := append(append([]int(nil), d.Keys...), set.Cols...)
		c, err := newRowCodec(mem, in, cols)
		if err != nil {
			return nil, fmt.Errorf("arrowstream: distinct aggregate: %w", err)
		}
		s.codecs = append(s.codecs, c)
		desc += describeState("", c.schema, nil)
	}
	s.state.schema = "distinctMark" + desc
	return s, nil
}

func (s *statefulDistinctMark) Execute(ctx context.Context, ep Epoch, input vector.Operator) (vector.Operator, error) {
	defer input.Close()
	start := time.Now()
	s.progress = stream.StateOperatorProgress{OperatorName: "distinctMark", CustomMetrics: map[string]int64{"numRepeatedDistinctValues": 0}}
	if err := s.state.bind(ep); err != nil {
		return nil, err
	}
	if err := s.loadLive(ep.ID); err != nil {
		return nil, err
	}
	if err := s.acct.set(s.live.bytes()); err != nil {
		return nil, err
	}
	s.live.version, s.pending = -1, ep.ID+1
	s.est = s.live.bytes()
	s.meter = newGrowthMeter(&s.acct, s.est, 1)
	recs, err := vector.Drain(ctx, input)
	if err != nil {
		return nil, err
	}
	out := make([]arrow.Record, 0, len(recs))
	for _, rec := range recs {
		marked, err := s.mark(ep, rec)
		rec.Release()
		if err != nil {
			releaseRecords(out)
			for _, r := range recs[len(out)+1:] {
				r.Release()
			}
			return nil, err
		}
		out = append(out, marked)
	}
	s.progress.AllUpdatesTimeMs = time.Since(start).Milliseconds()
	if s.evicting && ep.HasWatermark {
		if err := s.evict(ep.WatermarkMs); err != nil {
			releaseRecords(out)
			return nil, err
		}
	}
	if err := s.acct.set(s.live.bytes()); err != nil {
		releaseRecords(out)
		return nil, err
	}
	for p, st := range s.state.stores {
		if cw, ok := st.(checkpoint.ChangelogWriter); ok {
			cw.SetLiveRows(int64(len(s.live.parts[p].seen)))
		}
	}
	s.lastEvictWm = ep.WatermarkMs
	scan, err := vector.NewScan(s.input, out...)
	releaseRecords(out)
	return scan, err
}

// mark remembers rec's new tuples and returns rec with every set's column
// nulled where the tuple was seen before.
func (s *statefulDistinctMark) mark(ep Epoch, rec arrow.Record) (arrow.Record, error) {
	n := int(rec.NumRows())
	var times []arrow.Timestamp
	var timeArr arrow.Array
	if s.timeCol >= 0 {
		timeArr = rec.Column(s.timeCol)
		if s.window {
			timeArr = timeArr.(*array.Struct).Field(1)
		}
		times = timeArr.(*array.Timestamp).TimestampValues()
	}
	lateLimit := arrow.Timestamp(ep.LateWatermarkMs * 1000)
	cols := rec.Columns()
	var replaced []arrow.Array
	defer func() {
		for _, a := range replaced {
			a.Release()
		}
	}()
	key := make([]byte, 0, 64)
	var evictAt [8]byte
	for j, set := range s.sets {
		codec := s.codecs[j]
		if err := codec.encode(rec); err != nil {
			return nil, fmt.Errorf("arrowstream: distinct aggregate of operator %d: %w", s.state.opID, err)
		}
		args := make([]arrow.Array, len(set.Cols))
		for i, c := range set.Cols {
			args[i] = rec.Column(c)
		}
		var repeated []int32
		for i := 0; i < n; i++ {
			if anyNull(args, i) {
				continue // the aggregate functions skip the row anyway
			}
			timed := times != nil && timeArr.IsValid(i)
			if s.evicting && ep.HasWatermark && timed && times[i] <= lateLimit {
				continue // late: the aggregation drops it
			}
			key = append(append(key[:0], byte(j)), codec.at(i)...)
			p := s.state.scheme.of(codec, i, len(s.state.stores))
			part := &s.live.parts[p]
			if _, seen := part.seen[string(key)]; seen {
				repeated = append(repeated, int32(i))
				continue
			}
			var value []byte
			var at int64
			evictable := s.evicting && timed
			if evictable {
				at = int64(times[i])
				binary.LittleEndian.PutUint64(evictAt[:], uint64(at))
				value = evictAt[:]
			}
			part.add(key, at, evictable)
			s.est += int64(len(key)) + dedupEntryOverhead
			if err := s.meter.note(s.est); err != nil {
				return nil, err
			}
			st := s.state.stores[p]
			if cw, ok := st.(checkpoint.ChangelogWriter); ok {
				cw.LogUpsert(key, value)
			} else if err := st.Put(key, value); err != nil {
				return nil, fmt.Errorf("arrowstream: write state of operator %d: %w", s.state.opID, err)
			}
			s.progress.NumRowsUpdated++
		}
		s.progress.CustomMetrics["numRepeatedDistinctValues"] += int64(len(repeated))
		if len(repeated) > 0 {
			nulled, err := withNulls(s.mem, cols[set.Null], repeated)
			if err != nil {
				return nil, fmt.Errorf("arrowstream: distinct aggregate of operator %d: %w", s.state.opID, err)
			}
			replaced = append(replaced, nulled)
			if len(replaced) == 1 {
				cols = append([]arrow.Array(nil), cols...)
			}
			cols[set.Null] = nulled
		}
	}
	if len(replaced) == 0 {
		rec.Retain()
		return rec, nil
	}
	return array.NewRecord(rec.Schema(), cols, rec.NumRows()), nil
}

func anyNull(cols []arrow.Array, i int) bool {
	for _, c := range cols {
		if c.IsNull(i) {
			return true
		}
	}
	return false
}

// withNulls returns a with rows (ascending) made NULL: the same data
// buffers under a new validity bitmap.
func withNulls(mem memory.Allocator, a arrow.Array, rows []int32) (arrow.Array, error) {
	data := a.Data()
	if len(data.Buffers()) == 0 || data.DataType().ID() == arrow.NULL ||
		data.DataType().ID() == arrow.SPARSE_UNION || data.DataType().ID() == arrow.DENSE_UNION || data.DataType().ID() == arrow.RUN_END_ENCODED {
		return nil, fmt.Errorf("cannot mark values of type %s", vector.TypeName(a.DataType()))
	}
	off, n := data.Offset(), data.Len()
	bits := memory.NewResizableBuffer(mem)
	bits.Resize(int(bitutil.BytesForBits(int64(off + n))))
	buf := bits.Bytes()
	if old := data.Buffers()[0]; old != nil && a.NullN() > 0 {
		copy(buf, old.Bytes()[:len(buf)])
	} else {
		bitutil.SetBitsTo(buf, 0, int64(off+n), true)
	}
	for _, r := range rows {
		bitutil.ClearBit(buf, off+int(r))
	}
	buffers := append([]*memory.Buffer{bits}, data.Buffers()[1:]...)
	var nd *array.Data
	// Dictionary() is a typed nil for other types (an interface holding a
	// nil *Data), so the type decides; a list or struct keeps its children.
	if d := data.Dictionary(); data.DataType().ID() == arrow.DICTIONARY && d != nil {
		nd = array.NewDataWithDictionary(data.DataType(), n, buffers, array.UnknownNullCount, off, d.(*array.Data))
	} else {
		nd = array.NewData(data.DataType(), n, buffers, data.Children(), array.UnknownNullCount, off)
	}
	bits.Release()
	defer nd.Release()
	return array.MakeFromData(nd), nil
}

// evict removes the tuples whose group time is at or below the watermark.
func (s *statefulDistinctMark) evict(wmMs int64) error {
	start := time.Now()
	for p, st := range s.state.stores {
		gone := s.live.parts[p].evict(wmMs * 1000)
		cw, logged := st.(checkpoint.ChangelogWriter)
		for _, k := range gone {
			if logged {
				cw.LogDelete([]byte(k))
			} else if err := st.Delete([]byte(k)); err != nil {
				return fmt.Errorf("arrowstream: delete state of operator %d partition %d: %w", s.state.opID, p, err)
			}
		}
		s.progress.NumRowsRemoved += int64(len(gone))
	}
	s.progress.AllRemovalsTimeMs = time.Since(start).Milliseconds()
	return nil
}

// loadLive makes the live sets mirror version, rebuilding them from the
// open stores when they do not.
func (s *statefulDistinctMark) loadLive(version int64) error {
	if s.live != nil && s.live.version == version && len(s.live.parts) == len(s.state.stores) {
		return nil
	}
	s.live = nil
	live := &dedupLive{version: version, parts: make([]dedupPart, len(s.state.stores))}
	for p, st := range s.state.stores {
		part := &live.parts[p]
		part.seen = make(map[string]int64, st.Len())
		var bad error
		err := st.Scan(func(k, v []byte) bool {
			if len(k) == 0 || int(k[0]) >= len(s.sets) {
				bad = fmt.Errorf("key %x names no distinct set", k)
				return false
			}
			if len(v) == 8 {
				part.add(k, int64(binary.LittleEndian.Uint64(v)), true)
			} else {
				part.add(k, 0, false)
			}
			return true
		})
		if err == nil {
			err = bad
		}
		if err != nil {
			return fmt.Errorf("arrowstream: rebuild the state of operator %d partition %d from version %d: %w", s.state.opID, p, version, err)
		}
	}
	s.live = live
	return nil
}

func (s *statefulDistinctMark) State() StateDecl { return s.state.decl() }

// Committed: the live sets now mirror the committed version.
func (s *statefulDistinctMark) Committed(c StateCommit) {
	s.state.committed(&s.progress, c)
	if s.live != nil {
		s.live.version = s.pending
		s.progress.MemoryUsedBytes += s.live.bytes()
	}
	s.acct.report(&s.progress.CustomMetrics)
}

// Abort: the epoch's updates were discarded; the live sets are rebuilt
// from the version the next epoch reads.
func (s *statefulDistinctMark) Abort() {
	s.state.release()
	s.live = nil
	s.acct.release()
}

// Close lets go of the live sets and their reservation (the query
// stopped).
func (s *statefulDistinctMark) Close() error {
	s.live = nil
	s.acct.release()
	return nil
}

func (s *statefulDistinctMark) ShouldRunAnotherBatch(newWm int64) bool {
	return s.evicting && newWm > s.lastEvictWm
}

// Report implements Op.
func (s *statefulDistinctMark) Report() stream.StateOperatorProgress { return s.progress }
