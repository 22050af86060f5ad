package memsink_test

import (
	"context"
	"errors"
	"io"
	"testing"

	"github.com/apache/arrow/go/v17/arrow"

	"github.com/arrowstream/arrowstream/arrowstream"
	"github.com/arrowstream/arrowstream/memsink"
	"github.com/arrowstream/arrowstream/vector"
	vt "github.com/arrowstream/arrowstream/vector/vectortest"
)

// drainScan reads op to io.EOF and returns its rows; the records are
// released.
func drainScan(t *testing.T, op vector.Operator) []vt.Row {
	t.Helper()
	recs, err := vector.Drain(context.Background(), op)
	if err != nil {
		t.Fatal(err)
	}
	defer func() {
		for _, r := range recs {
			r.Release()
		}
	}()
	for _, r := range recs {
		if r.NumRows() == 0 {
			t.Error("the scan returned an empty record")
		}
		if !r.Schema().Equal(op.Schema()) {
			t.Errorf("record schema %s, operator schema %s", r.Schema(), op.Schema())
		}
	}
	return vt.RowsOf(recs...)
}

// TestSnapshotScanHoldsTheSnapshot: the scan reads the epochs of its
// snapshot even after a Complete table has replaced them, and Close
// releases everything (the checked allocator ends at zero).
func TestSnapshotScanHoldsTheSnapshot(t *testing.T) {
	mem := vt.NewAllocator(t)
	tbl := newTable(t, mem, arrowstream.SinkInfo{Mode: arrowstream.Complete}, memsink.Options{})
	add(t, tbl, mem, 0, r(1, "a"), r(2, nil))
	op, err := memsink.NewSnapshotScan(tbl.Snapshot(), false, mem)
	if err != nil {
		t.Fatal(err)
	}
	add(t, tbl, mem, 1, r(3, "c"))
	if !op.Schema().Equal(kv) {
		t.Fatalf("schema %s, want %s", op.Schema(), kv)
	}
	checkOrdered(t, "scan of epoch 0", []vt.Row{r(1, "a"), r(2, nil)}, drainScan(t, op))
	if rec, err := op.Next(context.Background()); rec != nil || !errors.Is(err, io.EOF) {
		t.Fatalf("Next after the end = %v, %v", rec, err)
	}
	if err := op.Close(); err != nil {
		t.Fatal(err)
	}
	if err := op.Close(); err != nil {
		t.Fatalf("second Close: %v", err)
	}
	checkRows(t, "table after the scan", []vt.Row{r(3, "c")}, rowsOf(tbl.Snapshot()))
}

// TestSnapshotScanEpochColumns: with epoch columns the records carry
// _epoch and _commit_timestamp (the planner's table_changes schema).
func TestSnapshotScanEpochColumns(t *testing.T) {
	mem := vt.NewAllocator(t)
	tbl := newTable(t, mem, arrowstream.SinkInfo{Mode: arrowstream.Append}, memsink.Options{Now: clock()})
	add(t, tbl, mem, 0, r(1, "a"))
	add(t, tbl, mem, 1, r(2, "b"))
	op, err := memsink.NewSnapshotScan(tbl.Snapshot(), true, mem)
	if err != nil {
		t.Fatal(err)
	}
	defer op.Close()
	if want := memsink.WithEpochSchema(kv); !op.Schema().Equal(want) {
		t.Fatalf("schema %s, want %s", op.Schema(), want)
	}
	if f := op.Schema().Field(2); f.Name != memsink.EpochColumn || !arrow.TypeEqual(f.Type, vector.Int64) {
		t.Fatalf("third column %s", f)
	}
	want := []vt.Row{
		r(1, "a", 0, commitTime(1).UnixMicro()),
		r(2, "b", 1, commitTime(2).UnixMicro()),
	}
	checkOrdered(t, "scan with epoch columns", want, drainScan(t, op))
}

// TestSnapshotScanCancelled: a cancelled context stops the scan with the
// context's error; Close still releases the snapshot.
func TestSnapshotScanCancelled(t *testing.T) {
	mem := vt.NewAllocator(t)
	tbl := newTable(t, mem, arrowstream.SinkInfo{Mode: arrowstream.Append}, memsink.Options{})
	add(t, tbl, mem, 0, r(1, "a"))
	op, err := memsink.NewSnapshotScan(tbl.Snapshot(), false, mem)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if rec, err := op.Next(ctx); rec != nil || !errors.Is(err, context.Canceled) {
		t.Fatalf("Next on a cancelled context = %v, %v", rec, err)
	}
	if err := op.Close(); err != nil {
		t.Fatal(err)
	}
}
