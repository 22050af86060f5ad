package memsink

import (
	"github.com/apache/arrow/go/v17/arrow"

	"github.com/arrowstream/arrowstream/arrowstream/stream"
)

// Size is what a table holds in memory.
type Size struct {
	// Epochs is the number of epochs retained (readable with AsOf).
	Epochs int
	// Records is the number of distinct records held.
	Records int
	// Rows is the number of rows held, superseded ones included (older
	// Complete results kept for time travel, view rows replaced by a later
	// update but not yet compacted away).
	Rows int64
	// Bytes is the size of the Arrow buffers held.
	Bytes int64
	// Overhead estimates the Go memory of the bookkeeping besides the
	// buffers (record, array and buffer structs, epoch lists): what small
	// epochs cost beyond their bytes until compaction merges them.
	// MaxBytes counts Bytes + Overhead for Append, Update and Complete
	// tables (a view's retention counts its chunks' Bytes).
	Overhead int64
	// DeadRows is, for a view, the rows of the current version replaced by
	// a later update and awaiting compaction.
	DeadRows int64
}

// Size reports what the table holds now.
func (t *Table) Size() Size {
	v := t.acquire()
	defer v.release()
	return v.held
}

// limits are a table's effective retention limits (0: none).
type limits struct {
	epochs      int
	rows, bytes int64
}

func (t *Table) limits() limits {
	l := limits{epochs: t.opts.MaxEpochs, rows: t.opts.MaxRows, bytes: t.opts.MaxBytes}
	if l.epochs == 0 && (t.info.Mode == stream.Complete || t.view != nil) {
		// Older results are superseded: keep them only when asked to
		// (time travel), as Spark keeps only the latest.
		l.epochs = 1
	}
	return l
}

func (l limits) exceeded(epochs int, rows, bytes int64) bool {
	return l.epochs > 0 && epochs > l.epochs ||
		l.rows > 0 && rows > l.rows ||
		l.bytes > 0 && bytes > l.bytes
}

// evictSegments returns how many of the oldest epochs to evict so that
// the rest fit the limits: the first k segments whole and the first m
// epochs of segs[k] (a run). Bytes count the bookkeeping too. The newest
// epoch is always kept.
func (l limits) evictSegments(segs []*segment) (k, m int) {
	var rows, bytes int64
	epochs := 0
	for _, s := range segs {
		rows += s.info.Rows
		bytes += s.info.Bytes + s.overhead
		epochs += s.numEpochs()
	}
	for epochs > 1 && l.exceeded(epochs, rows, bytes) {
		s := segs[k]
		r, b := s.epochCost(m)
		rows -= r
		bytes -= b
		epochs--
		if m++; m == s.numEpochs() {
			k, m = k+1, 0
		}
	}
	return k, m
}

// evictStates returns how many of the oldest view states to evict so that
// the rest fit the limits. States share records, so a state's eviction
// frees only the records no later state lists. The newest state is always
// kept.
func (l limits) evictStates(states []*viewState) int {
	uses := map[arrow.Record]int{}
	var rows, bytes int64
	for _, s := range states {
		for _, c := range s.chunks {
			if uses[c.rec] == 0 {
				rows += c.held
				bytes += c.bytes
			}
			uses[c.rec]++
		}
	}
	k := 0
	for len(states)-k > 1 && l.exceeded(len(states)-k, rows, bytes) {
		for _, c := range states[k].chunks {
			if uses[c.rec]--; uses[c.rec] == 0 {
				rows -= c.held
				bytes -= c.bytes
			}
		}
		k++
	}
	return k
}

// heldSize measures a version's retained data: its segments, or its view
// states plus the records the view writer holds (w, may be nil).
func heldSize(segs []*segment, states []*viewState, w *viewWriter) Size {
	var z Size
	if len(states) == 0 {
		for _, s := range segs {
			z.Epochs += s.numEpochs()
			z.Records += len(s.recs)
			z.Rows += s.info.Rows
			z.Bytes += s.info.Bytes
			z.Overhead += s.overhead
		}
		return z
	}
	z.Epochs = len(states)
	seen := map[arrow.Record]bool{}
	add := func(rec arrow.Record, bytes int64) {
		if !seen[rec] {
			seen[rec] = true
			z.Records++
			z.Rows += rec.NumRows()
			z.Bytes += bytes
			z.Overhead += recordOverhead(rec)
		}
	}
	for _, s := range states {
		for _, c := range s.chunks {
			add(c.rec, c.bytes)
		}
	}
	if w != nil {
		for _, id := range w.order {
			c := w.chunks[id]
			add(c.rec, c.bytes)
			z.Overhead += int64(cap(c.keys)) * 4 // the rows' key numbers
		}
		z.DeadRows = w.dead
	}
	return z
}
