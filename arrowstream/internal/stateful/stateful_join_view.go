package stateful

import (
	"sync/atomic"

	"github.com/apache/arrow/go/v17/arrow"
	"github.com/apache/arrow/go/v17/arrow/memory"

	"github.com/arrowstream/arrowstream/vector"
)

// Stored join batches as views of the epoch's input. A side's new rows of
// an epoch are one record (loadNew); the split by partition
// (stateful_join_split.go) no longer copies them into partition order, it
// gives each partition a row selection of that record, and a partition's
// new batch keeps the record (retained) with the selection of the rows it
// stores. Nexmark q20 so stores every bid without a copy (the split's
// Take was a third of its join's samples, most of it the first touch of
// the copy's fresh pages). What needs a batch's rows as a record of their
// own gathers them through the selection when it runs: the changelog (a
// temporary record per batch, released once written), a live snapshot,
// a merge (one gather of the merged batches), a compaction.
//
// The record a view holds is held as a whole, whatever share of its rows
// the views select, so the held bytes are counted per record, once
// (joinInput, statefulJoin.viewHeld), not per batch; a batch's own Arrow
// figure stays its rows' share (what its store entry holds). A view is
// copied out (its rows [base, end) gathered into a record of their own,
// under the same numbers, so the store and the key index do not change)
// when the live rows of all views of its record fall below half of the
// record's rows: at the end of the epoch that made it (rows the epoch did
// not store) and when an eviction of its batch leaves them there. Whether
// a batch is a view never changes what is stored: a restarted query, whose
// batches are read back as records of their own, writes the same entries.

// joinInput is an epoch's input record of one side shared by the views
// of it (one per partition batch).
type joinInput struct {
	rec   arrow.Record // borrowed from the epoch's rows; views retain it
	bytes int64        // the record's buffers (capacity), held while viewed
	rows  int64
	// live is the live rows of the views of the record; holders is how
	// many views there are.
	live    atomic.Int64
	holders atomic.Int32
	// held is the operator's count of bytes held by viewed records.
	held *atomic.Int64
}

func newJoinInput(rec arrow.Record, held *atomic.Int64) *joinInput {
	return &joinInput{rec: rec, bytes: heldRecordBytes(rec), rows: rec.NumRows(), held: held}
}

// hold adds a view of live rows; the first makes the record's bytes held.
func (in *joinInput) hold(live int64) {
	in.live.Add(live)
	if in.holders.Add(1) == 1 {
		in.held.Add(in.bytes)
	}
}

// unhold removes a view that still had live rows; the last one frees the
// record's bytes.
func (in *joinInput) unhold(live int64) {
	in.live.Add(-live)
	if in.holders.Add(-1) == 0 {
		in.held.Add(-in.bytes)
	}
}

// sparse: the views' live rows are under half of the record's rows.
func (in *joinInput) sparse() bool { return 2*in.live.Load() < in.rows }

// heldRecordBytes is what rec's buffers take in memory: their capacity
// (an allocator pool rounds a buffer up) and their children's. A record
// made of slices of larger buffers counts the buffers: they are what it
// holds.
func heldRecordBytes(rec arrow.Record) int64 {
	var n int64
	for _, c := range rec.Columns() {
		n += heldDataBytes(c.Data())
	}
	return n
}

func heldDataBytes(d arrow.ArrayData) int64 {
	var n int64
	for _, b := range d.Buffers() {
		if b != nil {
			// The slice's capacity: a pool's size class, which
			// Len and Cap (the length asked for) do not show.
			n += int64(max(b.Len(), cap(b.Buf())))
		}
	}
	for _, c := range d.Children() {
		n += heldDataBytes(c)
	}
	return n
}

// selRows maps rows of a selection to rows of its record: rows itself
// when sel is nil (the identity), else a new slice.
func selRows(sel, rows []int32) []int32 {
	if sel == nil || rows == nil {
		return rows
	}
	out := make([]int32, len(rows))
	for k, r := range rows {
		out[k] = sel[r]
	}
	return out
}

// selRowsInPlace is selRows writing the records' rows over rows.
func selRowsInPlace(sel, rows []int32) {
	if sel == nil {
		return
	}
	for k, r := range rows {
		rows[k] = sel[r]
	}
}

// selRow maps one row of a selection to its record's row.
func selRow(sel []int32, row int) int {
	if sel == nil {
		return row
	}
	return int(sel[row])
}

// gatherSel returns a record of rows sel of rec (rec itself, retained,
// for a nil selection).
func gatherSel(mem memory.Allocator, rec arrow.Record, sel []int32) (arrow.Record, error) {
	if sel == nil {
		rec.Retain()
		return rec, nil
	}
	t, err := vector.TakeRecord(mem, rec, sel)
	if err != nil {
		return nil, err
	}
	settleNullCounts(t)
	return t, nil
}

// viewShare is the Arrow bytes of n of in's rows: their share of the
// record (what a stored entry of them about holds).
func (in *joinInput) viewShare(n int) int64 {
	if in.rows == 0 {
		return 0
	}
	return in.bytes * int64(n) / in.rows
}

// dropView ends b's view of its input (its live rows leave the input's
// count); b.rec is left to the caller.
func (b *joinBatch[K]) dropView() {
	if b.in != nil {
		b.in.unhold(int64(b.end - b.cursor))
		b.in, b.sel = nil, nil
	}
}

// copyOut replaces b's view by a record of its rows [base, end) of its
// own: the same rows under the same numbers, so neither its store entry
// nor the key index changes.
func (s *joinSideLive[K]) copyOut(mem memory.Allocator, b *joinBatch[K]) error {
	if b.in == nil || b.rec == nil {
		return nil
	}
	rec, err := gatherSel(mem, b.rec, b.sel)
	if err != nil {
		return err
	}
	b.rec.Release()
	b.dropView()
	b.rec = rec
	s.resized(b, b.bytes, b.arrow)
	return nil
}

// copyOutSparse copies out the side's views of a sparse input.
func (s *joinSideLive[K]) copyOutSparse(mem memory.Allocator, in *joinInput) error {
	for _, b := range s.batches {
		if b.in == in {
			if err := s.copyOut(mem, b); err != nil {
				return err
			}
		}
	}
	return nil
}

// viewShares is the part of the side's Arrow bytes that its views count
// (their rows' shares of the records they view).
func (s *joinSideLive[K]) viewShares() int64 {
	var n int64
	for _, b := range s.batches {
		if b.in != nil {
			n += b.arrow
		}
	}
	return n
}
