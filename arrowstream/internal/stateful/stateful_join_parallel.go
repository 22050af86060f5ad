package stateful

import (
	"context"
	"fmt"
	"runtime"
	"time"

	"github.com/apache/arrow/go/v17/arrow"
	"github.com/apache/arrow/go/v17/arrow/array"

	"github.com/arrowstream/arrowstream/checkpoint"
)

// The stream-stream join's partitions: every row belongs to the state
// partition of its join key's hash, and rows join only rows of the same
// key, so each partition's epoch (matching, state update, eviction, outer
// rows, matched flags) is independent of the others. The partitions run in
// parallel (runEachPartition: at most GOMAXPROCS at a time, as Spark runs
// one task per shuffle partition), each with its own cache, codecs and
// store; their outputs are concatenated in partition order.

// joinPart is one state partition of the join as kept between epochs.
type joinPart struct {
	codecs [2]*rowCodec // each side's row codec, this partition's own
	// The live state: words with fixedKeys, else strs.
	words *joinLivePart[uint64]
	strs  *joinLivePart[string]
	// ipcScratch is the space the partition's batches are encoded into
	// for a changelog (which copies them).
	ipcScratch []byte
	// enc encodes each side's batches as IPC streams (the schema message
	// built once, not per batch); made at the side's first batch.
	enc [2]*ipcStreamEncoder
}

// encoder returns the partition's stream encoder of side tag for schema,
// made (again) when the side has none for that schema: a clone of the
// side's template encoder (sideEncoder).
func (jp *joinPart) encoder(s *statefulJoin, tag byte, schema *arrow.Schema) (*ipcStreamEncoder, error) {
	if e := jp.enc[tag]; e != nil && e.schema == schema {
		return e, nil
	}
	proto, err := s.sideEncoder(tag, schema)
	if err != nil {
		return nil, err
	}
	e, err := proto.clone()
	if err != nil {
		return nil, err
	}
	jp.enc[tag] = e
	return e, nil
}

// sideEncoder returns side tag's template encoder for schema, started
// when the side has none for that schema. It only ever gives clones
// (each partition's encoder, encoder): the partitions run in parallel.
func (s *statefulJoin) sideEncoder(tag byte, schema *arrow.Schema) (*ipcStreamEncoder, error) {
	s.encMu.Lock()
	defer s.encMu.Unlock()
	if e := s.encProto[tag]; e != nil && e.schema == schema {
		return e, nil
	}
	e, err := newIPCStreamEncoder(s.mem, schema)
	if err != nil {
		return nil, err
	}
	s.encProto[tag] = e
	return e, nil
}

func (jp *joinPart) release() {
	if jp.words != nil {
		jp.words.release()
		jp.words = nil
	}
	if jp.strs != nil {
		jp.strs.release()
		jp.strs = nil
	}
}

// joinPartResult is what one partition's epoch produced.
type joinPartResult struct {
	out []arrow.Record
	// pairs are output pairs to gather (stateful_join_output.go), output
	// before out.
	pairs              []joinOutPairs
	updated, removed   int64
	updateNs, removeNs int64
}

// ensureParts creates the partitions' codecs for n partitions.
func (s *statefulJoin) ensureParts(n int) error {
	if len(s.parts) == n {
		return nil
	}
	s.dropLive()
	s.parts = make([]*joinPart, n)
	for p := range s.parts {
		jp := &joinPart{}
		for i, side := range s.sides {
			c, err := newValueCodec(s.mem, side.schema, side.codec.cols)
			if err != nil {
				return err
			}
			jp.codecs[i] = c
		}
		s.parts[p] = jp
	}
	return nil
}

// dropLive frees every partition's live state.
func (s *statefulJoin) dropLive() {
	for _, jp := range s.parts {
		jp.release()
	}
	s.liveVersion = -1
	s.acct.release()
}

// liveSize is the rows and approximate memory of the live state: the
// input records that batches view counted whole, once each, in place of
// the views' shares (stateful_join_view.go).
func (s *statefulJoin) liveSize() (rows, bytes int64) {
	for _, jp := range s.parts {
		for i := 0; i < 2; i++ {
			switch {
			case jp.words != nil:
				rows += jp.words.sides[i].rows
				bytes += jp.words.sides[i].bytes - jp.words.sides[i].arrow
			case jp.strs != nil:
				rows += jp.strs.sides[i].rows
				bytes += jp.strs.sides[i].bytes - jp.strs.sides[i].arrow
			}
		}
	}
	return rows, bytes + s.heldArrow()
}

// heldArrow is the Arrow bytes the live state holds: its batches' own
// buffers, and the input records its views hold, each counted whole and
// once (stateful_join_view.go).
func (s *statefulJoin) heldArrow() int64 {
	var n int64
	for _, jp := range s.parts {
		for i := 0; i < 2; i++ {
			switch {
			case jp.words != nil:
				n += jp.words.sides[i].arrow - jp.words.sides[i].viewShares()
			case jp.strs != nil:
				n += jp.strs.sides[i].arrow - jp.strs.sides[i].viewShares()
			}
		}
	}
	return n + s.viewHeld.Load()
}

// liveHeap is the live state's Go-heap bytes: its approximate memory
// without the Arrow buffers of its batches (those count in the query's
// allocator as they are allocated). A sum over partitions, not rows.
func (s *statefulJoin) liveHeap() int64 {
	var n int64
	for _, jp := range s.parts {
		for i := 0; i < 2; i++ {
			switch {
			case jp.words != nil:
				n += jp.words.sides[i].bytes - jp.words.sides[i].arrow
			case jp.strs != nil:
				n += jp.strs.sides[i].bytes - jp.strs.sides[i].arrow
			}
		}
	}
	return n
}

// logLiveRows declares every partition's entry count to its store, changed
// or not, when the epoch logs changelogs: the stores then keep no decoded
// copy of the batches the live state holds.
func (s *statefulJoin) logLiveRows() {
	if !s.log {
		return
	}
	for p, st := range s.state.stores {
		n, bytes := s.partLive(p)
		st.(checkpoint.ChangelogWriter).SetLiveRows(n)
		if ls, ok := st.(checkpoint.LiveBytesSetter); ok {
			// A stored batch is its rows' Arrow buffers as an IPC
			// stream, a meta entry a few bytes: the partition
			// snapshots only once a load would replay twice this
			// (checkpoint.LiveBytesSetter).
			ls.SetLiveBytes(bytes)
		}
	}
}

// partActive tells whether partition p has work this epoch: new rows on
// either side, or stored rows at or below a side's eviction threshold.
func (s *statefulJoin) partActive(ep Epoch, p int, split [2][]*sideRows) bool {
	for i := range s.sides {
		if split[i][p] != nil || s.evictDue(ep, p, i) {
			return true
		}
	}
	return false
}

// evictDue reports whether side i of partition p holds rows the epoch's
// watermark evicts.
func (s *statefulJoin) evictDue(ep Epoch, p, i int) bool {
	thr, evict := s.evictThreshold(ep, s.sides[i])
	if !evict {
		return false
	}
	jp := s.parts[p]
	return (jp.words != nil && jp.words.sides[i].due.due(thr)) || (jp.strs != nil && jp.strs.sides[i].due.due(thr))
}

// nothingToDo reports whether an epoch with no new rows on either side
// leaves every partition as it is: no partition has rows due for
// eviction. Such an epoch (a no-data batch whose watermark evicts nothing
// here, or an epoch whose inputs brought no rows) joins nothing and
// changes no state, so joinPartitions skips the split and the
// partitions' run and their per-epoch slices.
func (s *statefulJoin) nothingToDo(ep Epoch, fresh [2]*sideRows) bool {
	if fresh[0].count() != 0 || fresh[1].count() != 0 {
		return false
	}
	for p := range s.parts {
		for i := range s.sides {
			if s.evictDue(ep, p, i) {
				return false
			}
		}
	}
	return true
}

// joinSerialRows is the epoch size, in new rows of both sides, below
// which the join's partitions run one after another on the caller
// (parallelMinRows: a 10K-event Nexmark epoch brings about 300 rows to
// q3's join and 10K to q4's and q20's, all below it). Above it the
// partitions run in parallel, as Spark's tasks, for the epoch's latency.
// Eviction is not counted: a row is evicted once, so an epoch's evictions
// are about as many as its new rows over time.
const joinSerialRows = parallelMinRows

// joinWorkers is how many workers run an epoch of rows new rows.
func (s *statefulJoin) joinWorkers(rows int) int {
	if rows < s.serialRows {
		return 1
	}
	return runtime.GOMAXPROCS(0)
}

// joinPartition runs partition p's epoch over its new rows of each side
// (fresh[i] nil: none; owned by the caller).
func (s *statefulJoin) joinPartition(ctx context.Context, ep Epoch, p int, fresh [2]*sideRows) (joinPartResult, error) {
	jp := s.parts[p]
	for i := range fresh {
		if fresh[i] == nil {
			e := &sideRows{}
			if err := s.decodeSide(jp.codecs[i], e, nil); err != nil {
				return joinPartResult{}, err
			}
			defer e.release()
			fresh[i] = e
		}
	}
	if s.fixedKeys {
		return joinEpoch(ctx, s, ep, p, jp.words, fresh)
	}
	return joinEpoch(ctx, s, ep, p, jp.strs, fresh)
}

// joinPartitions splits both sides' new rows by partition, runs the
// active partitions (in parallel unless the epoch is small: joinWorkers)
// and returns their outputs in partition order, adding their metrics to
// the progress.
func (s *statefulJoin) joinPartitions(ctx context.Context, ep Epoch, fresh [2]*sideRows) ([]arrow.Record, error) {
	n := len(s.state.stores)
	if len(s.parts) == n && s.nothingToDo(ep, fresh) {
		fresh[0].release()
		fresh[1].release()
		return nil, nil
	}
	var split [2][]*sideRows
	defer func() {
		for _, parts := range split {
			for _, r := range parts {
				if r != nil {
					r.release()
				}
			}
		}
	}()
	rows := 0
	for i := range fresh {
		rows += fresh[i].count()
		parts, err := s.splitSide(i, fresh[i], n)
		if err != nil {
			return nil, err
		}
		split[i] = parts
		// The parts hold the rows now: free the whole before the
		// partitions run, so the epoch's peak memory does not hold both.
		fresh[i].release()
	}
	results := make([]joinPartResult, n)
	workers := s.joinWorkers(rows)
	errs := runEachPartitionOn(s.state.opID, n, workers, func(p int) bool { return s.partActive(ep, p, split) }, func(p int) error {
		var err error
		results[p], err = s.joinPartition(ctx, ep, p, [2]*sideRows{split[0][p], split[1][p]})
		return err
	})
	var out []arrow.Record
	var pairs []joinOutPairs
	defer func() { releaseOutPairs(pairs) }()
	var firstErr error
	var updateNs, removeNs int64
	for p, r := range results {
		if errs[p] != nil && firstErr == nil {
			firstErr = errs[p]
		}
		out = append(out, r.out...)
		pairs = append(pairs, r.pairs...)
		s.progress.NumRowsUpdated += r.updated
		s.progress.NumRowsRemoved += r.removed
		updateNs += r.updateNs
		removeNs += r.removeNs
	}
	// As Spark's, the times are summed over the partitions' tasks.
	s.progress.AllUpdatesTimeMs += time.Duration(updateNs).Milliseconds()
	s.progress.AllRemovalsTimeMs += time.Duration(removeNs).Milliseconds()
	if firstErr != nil {
		releaseRecords(out)
		return nil, firstErr
	}
	if err := s.copyOutSparse(split); err != nil {
		releaseRecords(out)
		return nil, err
	}
	matched, err := s.gatherOutPairs(ctx, pairs)
	if err != nil {
		releaseRecords(out)
		return nil, err
	}
	return append(matched, out...), nil
}

// rebuildLive reads both sides' state from the open stores into the
// partitions' live state, the partitions in parallel: on the first epoch
// of a run (start or restart) and after an epoch that did not commit.
func (s *statefulJoin) rebuildLive(ctx context.Context, ep Epoch) error {
	n := len(s.state.stores)
	if err := s.ensureParts(n); err != nil {
		return err
	}
	s.dropLive()
	errs := runEachPartition(s.state.opID, n, func(int) bool { return true }, func(p int) error {
		if s.fixedKeys {
			return loadJoinPart(ctx, s, ep, p, &s.parts[p].words)
		}
		return loadJoinPart(ctx, s, ep, p, &s.parts[p].strs)
	})
	for _, err := range errs {
		if err != nil {
			s.dropLive()
			return err
		}
	}
	return nil
}

// loadJoinPart rebuilds partition p's live state into *dst.
func loadJoinPart[K joinKey](ctx context.Context, s *statefulJoin, ep Epoch, p int, dst **joinLivePart[K]) error {
	lp := &joinLivePart[K]{}
	for i := range s.sides {
		live, err := loadJoinSide[K](ctx, s, ep, p, i)
		if err != nil {
			lp.release()
			return err
		}
		lp.sides[i] = live
	}
	*dst = lp
	return nil
}

// partLive returns partition p's entries in the store and about how many
// key and value bytes they hold: a batch entry is its rows' Arrow bytes
// and the framing of an IPC stream of the side's schema, a meta entry a
// few bytes (its bitmap of matched flags is not counted).
func (s *statefulJoin) partLive(p int) (entries, bytes int64) {
	jp := s.parts[p]
	for i := 0; i < 2; i++ {
		var n, metas, arrow int64
		switch {
		case jp.words != nil:
			side := jp.words.sides[i]
			n, metas, arrow = side.entries, side.metas, side.arrow
		case jp.strs != nil:
			side := jp.strs.sides[i]
			n, metas, arrow = side.entries, side.metas, side.arrow
		}
		entries += n
		bytes += arrow + metas*joinMetaBytes
		if n > metas {
			bytes += (n - metas) * s.batchFraming(i)
		}
	}
	return entries, bytes
}

// joinMetaBytes is about what a meta entry holds: its key, the cursor
// and the has-flags byte.
const joinMetaBytes = 9 + 5

// batchFraming returns what a stored batch of side i holds beside its
// rows' buffers: its key, the magic, the record batch message's header
// and the end marker (the estimate joinIPCSize reserves was over twice it
// for a two-column side). It is the length of the side's template
// message, which the partitions' encoders share (sideEncoder), so it
// costs no encode; for a side without one (dictionaries, nested
// columns), what an empty batch encodes to.
func (s *statefulJoin) batchFraming(i int) int64 {
	if s.framing[i] > 0 {
		return s.framing[i]
	}
	schema := s.sides[i].codec.schema
	s.encMu.Lock()
	proto := s.encProto[i]
	s.encMu.Unlock()
	if proto == nil {
		// A restored state's batches, none written yet: the template
		// the side's first write needs anyway.
		proto, _ = s.sideEncoder(byte(i), schema)
	}
	if proto != nil {
		if f, ok := proto.framing(); ok {
			s.framing[i] = f + 9
			return s.framing[i]
		}
	}
	cols := make([]arrow.Array, schema.NumFields())
	for c, f := range schema.Fields() {
		cols[c] = array.MakeArrayOfNull(s.mem, f.Type, 0)
	}
	rec := array.NewRecord(schema, cols, 0)
	for _, c := range cols {
		c.Release()
	}
	defer rec.Release()
	var n countingWriter
	if err := writeJoinRecord(s.mem, &n, rec); err != nil {
		// Not expected for an empty batch; the reserve's estimate then.
		return int64(joinIPCSize(rec)) + 9
	}
	s.framing[i] = int64(n) + 9
	return s.framing[i]
}

// countingWriter counts the bytes written to it.
type countingWriter int

func (w *countingWriter) Write(p []byte) (int, error) {
	*w += countingWriter(len(p))
	return len(p), nil
}

// copyOutSparse copies out the epoch's new batches that view an input
// record whose stored rows are under half of it (the rest not stored:
// unmatched, evicted on arrival, failing the side's own condition), so
// that the state does not hold an input for a few of its rows
// (stateful_join_view.go).
func (s *statefulJoin) copyOutSparse(split [2][]*sideRows) error {
	for i, parts := range split {
		for p, r := range parts {
			if r == nil || r.in == nil || !r.in.sparse() {
				continue
			}
			var err error
			switch jp := s.parts[p]; {
			case jp.words != nil:
				err = jp.words.sides[i].copyOutSparse(s.keep, r.in)
			case jp.strs != nil:
				err = jp.strs.sides[i].copyOutSparse(s.keep, r.in)
			}
			if err != nil {
				return fmt.Errorf("arrowstream: copy join state of operator %d partition %d: %w", s.state.opID, p, err)
			}
		}
	}
	return nil
}
