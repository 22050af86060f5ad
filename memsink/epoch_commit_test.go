package memsink_test

import (
	"context"
	"errors"
	"fmt"
	"testing"

	"github.com/apache/arrow/go/v17/arrow"

	"github.com/arrowstream/arrowstream/arrowstream"
	"github.com/arrowstream/arrowstream/checkpoint"
	"github.com/arrowstream/arrowstream/memsink"
	"github.com/arrowstream/arrowstream/vector"
	vt "github.com/arrowstream/arrowstream/vector/vectortest"
)

// windowed is a windowed query's output (Nexmark q7's shape): a window
// struct, a timestamp and integers.
var windowed = arrow.NewSchema([]arrow.Field{
	{Name: "window", Type: arrow.StructOf(
		arrow.Field{Name: "start", Type: arrow.FixedWidthTypes.Timestamp_us, Nullable: true},
		arrow.Field{Name: "end", Type: arrow.FixedWidthTypes.Timestamp_us, Nullable: true})},
	{Name: "auction", Type: vector.Int64},
	{Name: "price", Type: vector.Int64},
	{Name: "dateTime", Type: arrow.FixedWidthTypes.Timestamp_us},
}, nil)

// TestEmptyEpochCommitAllocations bounds what committing an epoch
// without rows allocates (the memory sink's part of every stateful
// epoch, and of the no-data batch after it) and checks that snapshots
// taken along the way keep their epochs. On main (a2483876) an empty
// epoch allocated 11 times with 200 epochs retained: the new version's
// segment list was a fresh copy of every retained segment's pointer, and
// the schema check's arrow.TypeEqual allocated for every column; now
// the list grows in place (appendSegment) and the check does not
// allocate (vector.TypesEqual): 4.
func TestEmptyEpochCommitAllocations(t *testing.T) {
	if raceEnabled {
		t.Skip("the race detector allocates on its own")
	}
	mem := vt.NewAllocator(t)
	tbl := newTable(t, mem, arrowstream.SinkInfo{Schema: windowed, Mode: arrowstream.Append}, memsink.Options{CompactAfter: -1})
	ctx := context.Background()
	epoch := int64(0)
	commit := func() {
		in, err := vector.NewScan(windowed)
		if err != nil {
			t.Fatal(err)
		}
		if err := tbl.AddBatch(ctx, epoch, in); err != nil {
			t.Fatal(err)
		}
		epoch++
	}
	for range 200 {
		commit()
	}
	allocs := testing.AllocsPerRun(200, commit)
	t.Logf("%.1f allocations per empty epoch", allocs)
	if allocs > maxEmptyCommitAllocs {
		t.Errorf("an empty epoch's commit allocates %.1f times, want at most %.1f", allocs, maxEmptyCommitAllocs)
	}
	if got := len(tbl.History()); got != int(epoch) {
		t.Fatalf("%d epochs in the history, want %d", got, epoch)
	}
}

// maxEmptyCommitAllocs is TestEmptyEpochCommitAllocations' bound: the
// commit is deterministic here (no background merge), and the copy of
// the segment list alone is one allocation per epoch.
const maxEmptyCommitAllocs = 4.5

// TestSnapshotsKeepEpochsAcrossInPlaceAppends: the segment lists of
// successive versions share an array (appendSegment); a snapshot of any
// version reads exactly its epochs after later commits, after a commit
// that failed (its persist write) once it had placed its segment, after
// evictions and a Clear, against a model of the epochs committed.
func TestSnapshotsKeepEpochsAcrossInPlaceAppends(t *testing.T) {
	mem := vt.NewAllocator(t)
	fail := false
	opts := persistOpts(memsink.Options{MaxEpochs: 12, CompactAfter: -1})
	opts.Writer.Hook = func(s checkpoint.WriteStep, path string) error {
		if fail && s == checkpoint.AfterTempWrite {
			return errors.New("disk on fire")
		}
		return nil
	}
	info := arrowstream.SinkInfo{QueryName: "q", Schema: kv, Mode: arrowstream.Append, CheckpointDir: t.TempDir()}
	tbl := newTable(t, mem, info, opts)
	type held struct {
		snap *memsink.Snapshot
		want []vt.Row
	}
	var snaps []held
	var model []vt.Row // the rows of the epochs retained, in order
	firstKept := []int64{}
	ctx := context.Background()
	for e := int64(0); e < 60; e++ {
		row := r(e, fmt.Sprint("v", e))
		if e%7 == 3 {
			// A failed commit: nothing of it is visible, and its slot in
			// the shared array is taken by the retry.
			fail = true
			if err := tbl.AddBatch(ctx, e, op(t, mem, kv, []vt.Row{r(-e, "lost")}, vt.Shape{})); err == nil {
				t.Fatalf("epoch %d: the failing write did not fail the commit", e)
			}
			fail = false
		}
		if e == 40 {
			if err := tbl.Clear(); err != nil {
				t.Fatal(err)
			}
			model = nil
			firstKept = firstKept[:0]
		}
		add(t, tbl, mem, e, row)
		model = append(model, row)
		firstKept = append(firstKept, e)
		if len(model) > 12 {
			model, firstKept = model[1:], firstKept[1:]
		}
		if e%5 == 0 {
			snaps = append(snaps, held{tbl.Snapshot(), append([]vt.Row(nil), model...)})
		}
		checkOrdered(t, fmt.Sprintf("epoch %d", e), model, rowsOf(tbl.Snapshot()))
	}
	for i, h := range snaps {
		checkOrdered(t, fmt.Sprintf("snapshot %d after later commits", i), h.want, rowsOf(h.snap))
	}
}
