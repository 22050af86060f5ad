package agg

import (
	"unsafe"

	"github.com/arrowstream/arrowstream/bench/gen"
)

// winRowsChunk is the rows of one chunk of WinRows.
const winRowsChunk = 8192

// WinRows is the output of the windowed query, the engine's or the Go
// peer's, kept in chunks of a fixed size: appending a row never copies
// the rows before it. A doubling slice copied the whole output at each
// doubling into fresh memory, which costs a page fault per 4 KiB here: a
// cost per event that grew with the run (47 CPU ns per event at 3.2M
// events against 9 at 200K in the engine's profile), charged to the
// query. Both sides collect their rows this way, and Rows, which makes
// one slice for the answer check, runs outside the measured spans.
type WinRows struct {
	chunks [][]gen.WinRow
	n      int
}

// add appends r.
func (w *WinRows) add(r gen.WinRow) {
	if len(w.chunks) == 0 || len(w.chunks[len(w.chunks)-1]) == winRowsChunk {
		w.chunks = append(w.chunks, make([]gen.WinRow, 0, winRowsChunk))
	}
	last := &w.chunks[len(w.chunks)-1]
	*last = append(*last, r)
	w.n++
}

// Len is the number of rows.
func (w *WinRows) Len() int { return w.n }

// bytes is what the rows hold, chunk capacity included.
func (w *WinRows) bytes() int64 {
	return int64(len(w.chunks)) * winRowsChunk * int64(unsafe.Sizeof(gen.WinRow{}))
}

// Rows returns the rows in one slice (a copy); nil for a nil w.
func (w *WinRows) Rows() []gen.WinRow {
	if w == nil {
		return nil
	}
	out := make([]gen.WinRow, 0, w.n)
	for _, c := range w.chunks {
		out = append(out, c...)
	}
	return out
}
