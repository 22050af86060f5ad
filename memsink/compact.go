package memsink

import (
	"context"
	"errors"
	"fmt"

	"github.com/apache/arrow/go/v17/arrow"
	"github.com/apache/arrow/go/v17/arrow/array"
	"github.com/apache/arrow/go/v17/arrow/memory"

	"github.com/arrowstream/arrowstream/arrowstream/stream"
	"github.com/arrowstream/arrowstream/vector"
)

// Compaction merges the small records of consecutive Append and Update
// epochs into large ones, so that a table fed many small epochs holds a
// few large records (buffers of a known size from the table's allocator)
// and 16 bytes per epoch, instead of a segment, records, arrays and
// buffers per epoch. The merged segment, a run, keeps each epoch as a row
// range, so time travel (AsOf), Since (table_changes) and History see
// exactly the epochs they saw before. A run is built from immutable
// segments without the writer lock and published by swapping it in for
// its members in a new version, only if they are all still there
// (retention or Clear may have dropped some meanwhile); snapshots of
// older versions keep the members they list until released.
//
// Background merges are tiered: a run is merged again only with at least
// as many rows after it (see planCompaction), so that each row is copied
// O(log n) times on its way into a full run instead of once per round (a
// run grown by 32 epochs of 20 rows per round was copied some fifty times
// before it filled, half of a small-epoch table's allocations, all of it
// garbage the collector must chase). Compact merges everything at once.
//
// Views compact themselves (update.go); Complete-mode epochs replace each
// other and are not merged.

const (
	// defaultCompactAfter small epochs committed since the last compaction
	// start one in the background.
	defaultCompactAfter = 32
	// maxRunBytes bounds the buffers of one merged record (with
	// MaxRecordRows rows), well under Flight's 16 MiB message limit.
	maxRunBytes = 8 << 20
	// smallSegmentBytes: an epoch of this many bytes or more is not
	// merged whatever its row count. Merging saves an epoch's bookkeeping
	// (a segment, its records, arrays and buffers: a few KB) and gives
	// readers longer records; for an epoch of a megabyte or more (wide
	// rows, such as a join's output with its strings) that is under half a
	// per cent of its bytes, while each merge copies all of them again:
	// Nexmark q20's 1.5 MB epochs were copied about three times each on
	// their way into full runs, a third of its CPU per event over long runs.
	smallSegmentBytes = maxRunBytes / 8
)

// small reports whether s is worth merging with its neighbours: fewer than
// half a full record's rows and under smallSegmentBytes, or a trimmed run
// pinning evicted rows.
func (s *segment) small() bool {
	return !s.info.Replaced && (s.pinned || s.info.Rows < MaxRecordRows/2 && s.info.Bytes < smallSegmentBytes)
}

// compactAfter is the table's trigger (0: never in the background).
func (t *Table) compactAfter() int {
	switch n := t.opts.CompactAfter; {
	case n < 0:
		return 0
	case n == 0:
		return defaultCompactAfter
	default:
		return n
	}
}

// compactIfDue counts v's newest segment and starts a background
// compaction when enough small epochs have been committed since the last
// one, or when retention trimmed a run to less than half the rows its
// buffers hold. A table that retains no more epochs than the trigger is
// never compacted: merging epochs retention is about to evict would only
// pin their buffers. Called with t.mu held after publishing v.
func (t *Table) compactIfDue(v *version) {
	n := t.compactAfter()
	if l := t.limits(); n == 0 || t.info.Mode == stream.Complete || len(v.segs) == 0 || l.epochs > 0 && l.epochs <= n {
		return
	}
	if v.segs[len(v.segs)-1].small() {
		t.smallEpochs++
	}
	head := v.segs[0]
	wasted := head.pinned && head.info.Rows*2 < head.held
	if !wasted && t.smallEpochs < n || t.compacting {
		return
	}
	t.smallEpochs = 0
	t.compacting = true
	t.bg.Add(1)
	go t.compactInBackground()
}

func (t *Table) compactInBackground() {
	defer t.bg.Done()
	for {
		dropped, err := t.compactRound(t.bgCtx, true)
		if err != nil && !errors.Is(err, context.Canceled) {
			t.log.Warn("memory sink compaction failed; epochs stay as they are", "err", err)
		}
		// New small epochs start another round at once, and so does a
		// round whose work was dropped because retention trimmed or
		// evicted a member meanwhile: without it, the epochs that round
		// merged waited for the next commit, and a table whose writer
		// had stopped kept them unmerged. Neither spins: a round is
		// dropped only by a commit made while it ran.
		t.mu.Lock()
		if t.closed.Load() || !dropped && t.smallEpochs < t.compactAfter() {
			t.compacting = false
			t.mu.Unlock()
			return
		}
		t.smallEpochs = 0
		t.mu.Unlock()
	}
}

// Compact merges the table's small epochs now (a background compaction
// does the same after Options.CompactAfter small epochs). Readers are
// never blocked and see the same rows and epochs before and after. It
// returns the first error building a merged record (those epochs stay
// as they were) or ctx's error.
func (t *Table) Compact(ctx context.Context) error {
	_, err := t.compactRound(ctx, false)
	return err
}

// compactRound merges the table's small epochs, tiered (see
// planCompaction) or all at once. dropped says that some merged runs were
// not swapped in because their members left the table meanwhile.
func (t *Table) compactRound(ctx context.Context, tiered bool) (dropped bool, err error) {
	if t.view != nil || t.info.Mode == stream.Complete {
		return false, nil
	}
	v := t.acquire()
	defer v.release()
	var runs, members [][]*segment
	var errs []error
	for _, g := range planCompaction(v.segs, tiered) {
		if err := ctx.Err(); err != nil {
			errs = append(errs, err)
			break
		}
		run, err := t.buildRun(ctx, g)
		if err != nil {
			errs = append(errs, fmt.Errorf("memsink: table %q: compact epochs %d..%d: %w", t.Name(), g[0].info.Epoch, g[len(g)-1].lastEpoch(), err))
			continue
		}
		runs = append(runs, []*segment{run})
		members = append(members, g)
	}
	if len(runs) > 0 {
		dropped = t.swapIn(runs, members)
	}
	return dropped, errors.Join(errs...)
}

// planCompaction groups consecutive small segments into the members of
// merged runs, each within MaxRecordRows rows and maxRunBytes bytes. A
// group is worth building when it merges several segments or copies
// several records or a trimmed run into one.
//
// Tiered, a group leaves out its leading segments while each has more
// rows than the segments after it in the group (unless it is a trimmed
// run, which is copied to free what it pins): a row is then copied only
// into a run at least twice the size of the one it was in, so at most
// log2(MaxRecordRows/epoch rows) times, and the runs waiting to fill
// stay few (each has more rows than all the runs after it).
func planCompaction(segs []*segment, tiered bool) [][]*segment {
	var out [][]*segment
	var cur []*segment
	var rows, bytes int64
	flush := func() {
		for tiered && len(cur) > 1 && !cur[0].pinned && cur[0].info.Rows > rows-cur[0].info.Rows {
			rows -= cur[0].info.Rows
			cur = cur[1:]
		}
		if len(cur) > 1 || len(cur) == 1 && (cur[0].pinned || len(cur[0].recs) > 1) {
			out = append(out, cur)
		}
		cur, rows, bytes = nil, 0, 0
	}
	for _, s := range segs {
		if !s.small() {
			flush()
			continue
		}
		if len(cur) > 0 && (rows+s.info.Rows > MaxRecordRows || bytes+s.info.Bytes > maxRunBytes ||
			s.lastEpoch()-cur[0].info.Epoch > maxRunEpochSpan) {
			flush()
		}
		cur = append(cur, s)
		rows += s.info.Rows
		bytes += s.info.Bytes
	}
	flush()
	return out
}

// buildRun merges the epochs of members (consecutive segments) into one
// run with one record (none when every epoch is empty), allocated from
// the table's allocator for long-lived records (see longLived).
func (t *Table) buildRun(ctx context.Context, members []*segment) (*segment, error) {
	n := 0
	for _, m := range members {
		n += m.numEpochs()
	}
	run := &epochRun{first: members[0].info.Epoch, epochs: make([]uint32, 0, n), ends: make([]uint32, 0, n), commits: make([]int64, 0, n)}
	var recs []arrow.Record
	var base int64
	for _, m := range members {
		for j := range m.numEpochs() {
			_, hi := m.rowSpan(j)
			run.add(m.epochID(j), base+hi, m.epochInfo(j).CommitTime.UnixMicro())
		}
		base += m.info.Rows
		recs = append(recs, m.recs...)
	}
	if base == 0 {
		return newRun(run, nil, 0), nil
	}
	rec, err := concatRecords(ctx, t.long, t.schema, recs, base)
	if err != nil {
		return nil, err
	}
	return newRun(run, []arrow.Record{rec}, recordBytes(map[*memory.Buffer]struct{}{}, rec)), nil
}

// longLived is the allocator for merged records: the one under a pool
// (vector.PoolAllocator), whose size classes would round each buffer up
// to a power of two and whose free lists would keep the buffers a later
// merge replaces; and with Options.OffHeap, when that is Go's allocator,
// large buffers (offHeapMin bytes and more) are mapped outside the Go heap.
// offHeapMin is the smallest merged buffer worth a mapping (16 pages).
const offHeapMin = 64 << 10

func longLived(mem memory.Allocator, offHeap bool) memory.Allocator {
	if p, ok := mem.(interface{ Underlying() memory.Allocator }); ok {
		mem = p.Underlying()
	}
	if g, ok := mem.(*memory.GoAllocator); ok && offHeap {
		return vector.NewMappedAllocatorAbove(offHeapMin, g)
	}
	return mem
}

// concatRecords copies the rows of recs (rows in all) into one record.
func concatRecords(ctx context.Context, mem memory.Allocator, schema *arrow.Schema, recs []arrow.Record, rows int64) (arrow.Record, error) {
	cols := make([]arrow.Array, schema.NumFields())
	defer func() {
		for _, c := range cols {
			if c != nil {
				c.Release()
			}
		}
	}()
	parts := make([]arrow.Array, len(recs))
	for i := range cols {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		for j, r := range recs {
			parts[j] = r.Column(i)
		}
		c, err := array.Concatenate(parts, mem)
		if err != nil {
			return nil, fmt.Errorf("column %s: %w", schema.Field(i).Name, err)
		}
		cols[i] = c
	}
	return array.NewRecord(schema, cols, rows), nil
}

// swapIn publishes a version in which each run replaces its members, for
// the runs whose members are all still current; the others are dropped
// (reported). It takes the creator's reference of every run.
func (t *Table) swapIn(runs, members [][]*segment) (dropped bool) {
	defer func() {
		for _, r := range runs {
			r[0].release()
		}
	}()
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.closed.Load() {
		return false
	}
	cur := t.cur.Load()
	segs := cur.segs
	swapped := 0
	for i, g := range members {
		at := indexOf(segs, g)
		if at < 0 {
			continue // retention or Clear dropped some members meanwhile
		}
		next := make([]*segment, 0, len(segs)-len(g)+1)
		next = append(append(append(next, segs[:at]...), runs[i][0]), segs[at+len(g):]...)
		segs = next
		swapped++
	}
	dropped = swapped < len(members)
	if swapped == 0 {
		return dropped
	}
	v := newVersion(cur.latest, cur.evicted, segs, nil, nil)
	v.keepPending(cur.pend, cur.latest)
	// The rows are the same: readers following the table are not woken.
	t.cur.Swap(v).release()
	t.log.Debug("compacted epochs", "runs", swapped, "segments", len(segs))
	return dropped
}

// indexOf returns where g appears, contiguous, in segs, or -1.
func indexOf(segs, g []*segment) int {
	for i, s := range segs {
		if s != g[0] {
			continue
		}
		if i+len(g) > len(segs) {
			return -1
		}
		for j := range g {
			if segs[i+j] != g[j] {
				return -1
			}
		}
		return i
	}
	return -1
}
