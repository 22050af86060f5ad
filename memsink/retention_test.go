package memsink_test

import (
	"fmt"
	"testing"

	"github.com/arrowstream/arrowstream/arrowstream"
	"github.com/arrowstream/arrowstream/memsink"
	vt "github.com/arrowstream/arrowstream/vector/vectortest"
)

// epochRows returns n rows for epoch e.
func epochRows(e int64, n int) []vt.Row {
	rows := make([]vt.Row, n)
	for i := range rows {
		rows[i] = r(e*1000+int64(i), fmt.Sprintf("e%d-%d", e, i))
	}
	return rows
}

func TestRetention(t *testing.T) {
	// Every epoch below has the same layout, so the same size: MaxBytes
	// counts its buffers and its bookkeeping.
	one := func() int64 {
		mem := vt.NewAllocator(t)
		tbl := newTable(t, mem, arrowstream.SinkInfo{Mode: arrowstream.Append}, memsink.Options{})
		add(t, tbl, mem, 0, epochRows(0, 3)...)
		defer tbl.Close()
		sz := tbl.Size()
		if sz.Overhead <= 0 {
			t.Fatalf("Size = %+v: no bookkeeping counted", sz)
		}
		return sz.Bytes + sz.Overhead
	}()
	cases := []struct {
		name       string
		mode       arrowstream.OutputMode
		opts       memsink.Options
		sizes      []int // rows per epoch 0, 1, ...
		wantEpochs string
	}{
		{"no limit", arrowstream.Append, memsink.Options{}, []int{3, 3, 3, 3}, "[0 1 2 3]"},
		{"max epochs", arrowstream.Append, memsink.Options{MaxEpochs: 2}, []int{3, 3, 3, 3}, "[2 3]"},
		{"max rows", arrowstream.Append, memsink.Options{MaxRows: 7}, []int{3, 3, 3, 3}, "[2 3]"},
		{"max rows exact", arrowstream.Append, memsink.Options{MaxRows: 6}, []int{3, 3, 3, 3}, "[2 3]"},
		{"latest epoch over the limit is kept", arrowstream.Append, memsink.Options{MaxRows: 5}, []int{3, 3, 10}, "[2]"},
		{"max bytes", arrowstream.Append, memsink.Options{MaxBytes: 2*one + one/2}, []int{3, 3, 3, 3}, "[2 3]"},
		{"empty epochs count as epochs", arrowstream.Append, memsink.Options{MaxEpochs: 2}, []int{3, 0, 0}, "[1 2]"},
		{"complete default", arrowstream.Complete, memsink.Options{}, []int{3, 3, 3}, "[2]"},
		{"complete history by rows", arrowstream.Complete, memsink.Options{MaxEpochs: 10, MaxRows: 7}, []int{3, 3, 3, 3}, "[2 3]"},
		{"update by epochs", arrowstream.Update, memsink.Options{MaxEpochs: 3}, []int{1, 2, 3, 4}, "[1 2 3]"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			mem := vt.NewAllocator(t)
			tbl := newTable(t, mem, arrowstream.SinkInfo{Mode: c.mode}, c.opts)
			var held []*memsink.Snapshot
			var heldRows [][]vt.Row
			var all []vt.Row
			for e, n := range c.sizes {
				rows := epochRows(int64(e), n)
				add(t, tbl, mem, int64(e), rows...)
				all = append(all, rows...)
				// Readers hold a snapshot of every version; eviction must
				// not disturb them.
				s := tbl.Snapshot()
				held = append(held, s)
				heldRows = append(heldRows, vt.RowsOf(s.Records()...))
			}
			var epochs []int64
			var wantRows, wantBytes int64
			for _, h := range tbl.History() {
				epochs = append(epochs, h.Epoch)
				wantRows += h.Rows
				wantBytes += h.Bytes
			}
			if fmt.Sprint(epochs) != c.wantEpochs {
				t.Fatalf("retained epochs %v, want %s", epochs, c.wantEpochs)
			}
			sz := tbl.Size()
			if sz.Epochs != len(epochs) || sz.Rows != wantRows || sz.Bytes != wantBytes {
				t.Errorf("Size = %+v, want %d epochs, %d rows, %d bytes", sz, len(epochs), wantRows, wantBytes)
			}
			for i, s := range held {
				checkOrdered(t, fmt.Sprintf("snapshot %d after eviction", i), heldRows[i], vt.RowsOf(s.Records()...))
				s.Release()
			}
			// With every snapshot released the table holds exactly the
			// retained epochs' buffers: evicted ones were released.
			if got := mem.CurrentAlloc(); int64(got) != sz.Bytes {
				t.Errorf("allocator holds %d bytes, table reports %d", got, sz.Bytes)
			}
			if c.mode != arrowstream.Complete {
				// The contents are the retained epochs' rows.
				s := tbl.Snapshot()
				if s.NumRows() != wantRows {
					t.Errorf("snapshot has %d rows, want %d", s.NumRows(), wantRows)
				}
				s.Release()
			}
		})
	}
}
