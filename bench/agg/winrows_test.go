package agg

import (
	"testing"

	"github.com/arrowstream/arrowstream/bench/gen"
)

// TestWinRows appends across chunk boundaries and checks that Rows gives
// back every row in order, and that Len and bytes follow.
func TestWinRows(t *testing.T) {
	for _, n := range []int{0, 1, winRowsChunk - 1, winRowsChunk, winRowsChunk + 1, 3*winRowsChunk + 17} {
		var w WinRows
		for i := range n {
			w.add(gen.WinRow{Key: int64(i), Start: int64(2 * i), N: int64(3 * i)})
		}
		rows := w.Rows()
		if w.Len() != n || len(rows) != n {
			t.Fatalf("%d rows added: Len %d, Rows %d", n, w.Len(), len(rows))
		}
		for i, r := range rows {
			if r != (gen.WinRow{Key: int64(i), Start: int64(2 * i), N: int64(3 * i)}) {
				t.Fatalf("%d rows added: row %d is %+v", n, i, r)
			}
		}
		chunks := (n + winRowsChunk - 1) / winRowsChunk
		if want := int64(chunks * winRowsChunk * 24); w.bytes() != want {
			t.Errorf("%d rows added: bytes %d, want %d", n, w.bytes(), want)
		}
	}
	var nilRows *WinRows
	if nilRows.Rows() != nil {
		t.Error("a nil WinRows has rows")
	}
}
