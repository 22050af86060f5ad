package memsink

import (
	"math"
	"sort"
	"sync/atomic"
	"time"

	"github.com/apache/arrow/go/v17/arrow"
	"github.com/apache/arrow/go/v17/arrow/memory"

	"github.com/arrowstream/arrowstream/vector"
)

// segment holds committed epochs of an Append, Update or Complete table:
// one epoch as the operator returned its records (sliced when long), or,
// once compaction merged small epochs, a run of consecutive epochs whose
// rows are the run's records taken in order, each epoch a row range.
type segment struct {
	refs atomic.Int64
	// info is the epoch of a single-epoch segment. For a run, Epoch,
	// CommitTime and Replaced are the first epoch's and Rows and Bytes the
	// run's totals.
	info EpochInfo
	recs []arrow.Record
	run  *epochRun // nil: one epoch
	// overhead estimates the Go memory the segment's bookkeeping takes
	// (record, array and buffer structs, the epoch list), see overhead.go.
	overhead int64
	// pinned is set on a run that retention trimmed: its records still
	// reference the evicted rows' buffers until compaction copies them.
	// held is the rows those buffers hold (info.Rows when not pinned).
	pinned bool
	held   int64
}

// epochRun lists the epochs of a compacted segment: epoch i holds the rows
// ends[i-1] (base for the first) to ends[i], less base, of the run's
// records. Sixteen bytes per epoch are all a run keeps of it: the epoch id
// as an offset from the run's first (planCompaction keeps a run's ids
// within 2^32 of each other), the row end (a run holds at most
// MaxRecordRows rows) and the commit time in µs. A run trimmed by
// retention shares its predecessor's arrays from the first epoch kept,
// with base its first row and the same first id.
type epochRun struct {
	first   int64    // the id epoch offsets count from
	epochs  []uint32 // epoch ids less first
	ends    []uint32
	commits []int64 // commit times, µs since the Unix epoch (UTC)
	base    int64
}

// maxRunEpochSpan is the most a run's epoch ids may differ by.
const maxRunEpochSpan = math.MaxUint32

// len is the number of epochs the run lists.
func (r *epochRun) len() int { return len(r.ends) }

// epoch is the id of epoch i.
func (r *epochRun) epoch(i int) int64 { return r.first + int64(r.epochs[i]) }

// commit is epoch i's commit time in µs since the Unix epoch.
func (r *epochRun) commit(i int) int64 { return r.commits[i] }

// add appends an epoch; the caller keeps ids within maxRunEpochSpan of
// first and rows within MaxRecordRows.
func (r *epochRun) add(epoch, end, commit int64) {
	r.epochs = append(r.epochs, uint32(epoch-r.first))
	r.ends = append(r.ends, uint32(end))
	r.commits = append(r.commits, commit)
}

// end is the end of epoch i's rows in the run's records.
func (r *epochRun) end(i int) int64 { return int64(r.ends[i]) - r.base }

// find is the index of the epoch holding row off of the run's records
// (len() when off is past the end).
func (r *epochRun) find(off int64) int {
	return sort.Search(len(r.ends), func(i int) bool { return r.end(i) > off })
}

// findEpoch is the index of the run's last epoch at or before epoch, or -1.
func (r *epochRun) findEpoch(epoch int64) int {
	return sort.Search(r.len(), func(i int) bool { return r.epoch(i) > epoch }) - 1
}

// newSegment takes ownership of recs; the caller holds the one reference.
func newSegment(info EpochInfo, recs []arrow.Record) *segment {
	s := &segment{info: info, recs: recs, held: info.Rows}
	s.overhead = segmentOverhead(recs, 0)
	s.refs.Store(1)
	return s
}

// newRun returns a run segment over recs (owned) with the given epochs;
// bytes are the distinct buffer bytes of recs.
func newRun(run *epochRun, recs []arrow.Record, bytes int64) *segment {
	n := run.len()
	s := &segment{recs: recs, run: run, info: EpochInfo{
		Epoch:      run.epoch(0),
		Rows:       run.end(n - 1),
		Bytes:      bytes,
		CommitTime: time.UnixMicro(run.commit(0)).UTC(),
	}}
	s.overhead = segmentOverhead(recs, n)
	s.held = s.info.Rows
	s.refs.Store(1)
	return s
}

func (s *segment) release() {
	if s.refs.Add(-1) == 0 {
		releaseAll(s.recs)
		s.recs = nil
	}
}

// numEpochs is the number of epochs the segment holds.
func (s *segment) numEpochs() int {
	if s.run == nil {
		return 1
	}
	return s.run.len()
}

// epochID is the id of the segment's i-th epoch.
func (s *segment) epochID(i int) int64 {
	if s.run == nil {
		return s.info.Epoch
	}
	return s.run.epoch(i)
}

func (s *segment) lastEpoch() int64 { return s.epochID(s.numEpochs() - 1) }

// rowSpan is the row range of the segment's i-th epoch.
func (s *segment) rowSpan(i int) (lo, hi int64) {
	if s.run == nil {
		return 0, s.info.Rows
	}
	if i > 0 {
		lo = s.run.end(i - 1)
	}
	return lo, s.run.end(i)
}

// epochInfo describes the segment's i-th epoch; a run's epochs share its
// bytes in proportion to their rows.
func (s *segment) epochInfo(i int) EpochInfo {
	if s.run == nil {
		return s.info
	}
	lo, hi := s.rowSpan(i)
	return EpochInfo{
		Epoch:      s.run.epoch(i),
		Rows:       hi - lo,
		Bytes:      share(s.info.Bytes, hi-lo, s.info.Rows),
		CommitTime: time.UnixMicro(s.run.commit(i)).UTC(),
	}
}

// epochCost is what evicting the segment's i-th epoch frees, as retention
// counts it: its Arrow bytes and its share of the bookkeeping.
func (s *segment) epochCost(i int) (rows, bytes int64) {
	if s.run == nil {
		return s.info.Rows, s.info.Bytes + s.overhead
	}
	lo, hi := s.rowSpan(i)
	fixed := s.overhead - runEpochOverhead*int64(s.run.len())
	return hi - lo, share(s.info.Bytes+fixed, hi-lo, s.info.Rows) + runEpochOverhead
}

// findEpoch returns the index of the segment's last epoch at or before
// epoch, or -1.
func (s *segment) findEpoch(epoch int64) int {
	if s.run == nil {
		if s.info.Epoch <= epoch {
			return 0
		}
		return -1
	}
	return s.run.findEpoch(epoch)
}

// pos is an epoch's position in a list of segments: segment seg, epoch ep
// of it.
type pos struct{ seg, ep int }

// locate returns the position of the last epoch at or before epoch in
// segs, or ok=false when every epoch is after it.
func locate(segs []*segment, epoch int64) (p pos, ok bool) {
	j := sort.Search(len(segs), func(i int) bool { return segs[i].info.Epoch > epoch }) - 1
	if j < 0 {
		return pos{}, false
	}
	return pos{j, segs[j].findEpoch(epoch)}, true
}

// next is the position after p (possibly past the end of segs).
func (p pos) next(segs []*segment) pos {
	if p.ep+1 < segs[p.seg].numEpochs() {
		return pos{p.seg, p.ep + 1}
	}
	return pos{p.seg + 1, 0}
}

// rangeParts returns the parts of the epochs of segs from position lo to
// position hi, both included. Whole segments share their records; a
// partly selected run is sliced (zero-copy) into records the caller owns.
func rangeParts(segs []*segment, lo, hi pos) (parts []part, owned []arrow.Record) {
	if lo.seg > hi.seg || lo.seg == hi.seg && lo.ep > hi.ep {
		return nil, nil
	}
	for i := lo.seg; i <= hi.seg; i++ {
		s := segs[i]
		from, to := 0, s.numEpochs()-1
		if i == lo.seg {
			from = lo.ep
		}
		if i == hi.seg {
			to = hi.ep
		}
		if from == 0 && to == s.numEpochs()-1 {
			parts = s.appendParts(parts)
			continue
		}
		rlo, _ := s.rowSpan(from)
		_, rhi := s.rowSpan(to)
		recs := sliceRows(s.recs, rlo, rhi)
		owned = append(owned, recs...)
		off := rlo
		for _, r := range recs {
			parts = append(parts, s.partAt(r, off))
			off += r.NumRows()
		}
	}
	return parts, owned
}

// sliceRows returns new (owned) records holding rows lo to hi of recs
// taken in order, sharing their buffers, with their null counts settled
// (a kept segment's and a snapshot's records are read by several
// goroutines: see appendSplit).
func sliceRows(recs []arrow.Record, lo, hi int64) []arrow.Record {
	var out []arrow.Record
	var off int64
	for _, r := range recs {
		n := r.NumRows()
		a, b := max(lo-off, 0), min(hi-off, n)
		if a < b {
			piece := r.NewSlice(a, b)
			vector.SettleNullCounts(piece)
			out = append(out, piece)
		}
		off += n
		if off >= hi {
			break
		}
	}
	return out
}

// appendParts appends a part per record of s.
func (s *segment) appendParts(out []part) []part {
	var off int64
	for _, r := range s.recs {
		out = append(out, s.partAt(r, off))
		off += r.NumRows()
	}
	return out
}

// partAt describes rec, rows off.. of s (a record of s or a slice of
// them). A run's record that spans several epochs has epoch -1; the part
// then keeps the segment so that RecordsWithEpoch can tell each row's
// epoch.
func (s *segment) partAt(rec arrow.Record, off int64) part {
	n := rec.NumRows()
	p := part{rec: rec, rows: n, bytes: share(s.info.Bytes, n, s.info.Rows)}
	if s.run == nil {
		p.epoch, p.commit = s.info.Epoch, s.info.CommitTime
		return p
	}
	first := s.run.find(off)
	if first < s.run.len() && s.run.end(first) >= off+n {
		p.epoch, p.commit = s.run.epoch(first), time.UnixMicro(s.run.commit(first)).UTC()
		return p
	}
	p.epoch, p.seg, p.off = -1, s, off
	return p
}

// epochColumns builds the _epoch and _commit_timestamp columns of rows
// off..off+n of run s.
func (s *segment) epochColumns(mem memory.Allocator, off int64, n int) (arrow.Array, arrow.Array) {
	return buildEpochColumns(mem, n, func(ep, ts []int64) {
		i := s.run.find(off)
		for r := range ep {
			for s.run.end(i) <= off+int64(r) {
				i++
			}
			ep[r], ts[r] = s.run.epoch(i), s.run.commit(i)
		}
	})
}

// dropEpochs returns a new segment (one reference, the caller's) without
// the first m epochs of run s: its records are slices of s's and its
// epoch list shares s's arrays, so the evicted rows' buffers stay held
// (pinned) until compaction copies the rest. Bytes are apportioned to the
// rows kept.
func (s *segment) dropEpochs(m int) *segment {
	_, cut := s.rowSpan(m - 1)
	rows := s.info.Rows - cut
	run := &epochRun{
		first:   s.run.first,
		epochs:  s.run.epochs[m:],
		ends:    s.run.ends[m:],
		commits: s.run.commits[m:],
		base:    s.run.base + cut,
	}
	t := newRun(run, sliceRows(s.recs, cut, s.info.Rows), share(s.info.Bytes, rows, s.info.Rows))
	t.pinned, t.held = true, s.held
	return t
}
